"""Expert settings for Tomcat: what an administrator sets by hand, and a rule-based script.

``manual`` follows common production guidance for Tomcat's HTTP connector (more worker threads
and spare threads than the defaults, a deeper accept queue, longer keep-alive, compression of
text responses, a fixed-size heap). ``script`` derives values from the machine, as tuning
scripts do: worker threads from the core count (the pages are CPU-bound and wrk shares the
cores), heap from RAM, throughput collector on small machines, access log off. Both return
partial configurations restricted to the knobs of ``space``, clipped into their ranges.
"""

from __future__ import annotations

from harness.hosts.machine import Machine
from harness.space import Config, Space

__all__ = ["manual", "script"]


def manual(space: Space, machine: Machine) -> Config:
    """Hand settings from widely given Tomcat advice (independent of the workload)."""
    heap = max(256, min(machine.ram_mib // 4, 4096))
    return space.fit(
        {
            "maxThreads": 400,
            "minSpareThreads": 25,
            "acceptCount": 200,
            "maxConnections": 10000,
            "maxKeepAliveRequests": 200,
            "keepAliveTimeout": 30000,
            "connectionTimeout": 20000,
            "compression": "on",
            "compressionMinSize": 2048,
            "protocol": "nio",
            "jvm.heap_mb": heap,
            "jvm.heap_prealloc": True,
            "jvm.gc": "G1",
        }
    )


def script(space: Space, machine: Machine) -> Config:
    """Rules of thumb computed from the machine (cores, RAM)."""
    cores = max(1, machine.cores)
    threads = 4 * cores  # CPU-bound pages: a few threads per core avoid context switching
    heap = max(256, min(machine.ram_mib // 8, 2048))
    return space.fit(
        {
            "maxThreads": threads,
            "minSpareThreads": threads,
            "acceptCount": 100,
            "maxConnections": 2048,
            "maxKeepAliveRequests": 1000,
            "keepAliveTimeout": 20000,
            "compression": "off",  # gzip costs CPU the load generator needs on a small machine
            "processorCache": threads,
            "accessLog": False,
            "jvm.heap_mb": heap,
            "jvm.heap_prealloc": True,
            "jvm.gc": "Parallel" if cores <= 2 else "G1",
            "jvm.parallel_gc_threads": cores,
            "jvm.tiered_compilation": True,
        }
    )
