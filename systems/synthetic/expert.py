"""Expert settings for the synthetic system (paper/expert.py), written like a DBA would for
a database with these knobs, without looking at the response function.

* ``manual``: fixed values in the spirit of common published guidance (a 1 GiB cache, direct
  I/O, a 16 MiB log buffer, a 15-minute checkpoint interval, a few workers per core).
* ``script``: rules of thumb computed from the machine, in the style of pgtune: cache = 25% of
  RAM, log buffer = 3% of the cache capped at 16 MiB, per-query sort memory = (RAM - cache) /
  (3 x workers), I/O threads = cores, workers = 4 x cores.
"""

from __future__ import annotations

from typing import Any

from harness.hosts.machine import Machine
from harness.space import Space

__all__ = ["manual", "script"]


def manual(space: Space, machine: Machine) -> dict[str, Any]:
    """Fixed settings from common guidance (knobs not mentioned keep their defaults)."""
    return {
        "buffer_pool_mb": 1024,
        "io_threads": 8,
        "flush_policy": "o_direct",
        "log_buffer_kb": 16 * 1024,
        "worker_threads": 8 * max(machine.cores, 1),
        "checkpoint_s": 900.0,
        "sort_buffer_kb": 2048,
    }


def script(space: Space, machine: Machine) -> dict[str, Any]:
    """Settings computed from the machine's memory and cores (pgtune-like rules)."""
    cores = max(machine.cores, 1)
    cache_mb = machine.ram_mib // 4
    workers = 4 * cores
    return {
        "buffer_pool_mb": cache_mb,
        "log_buffer_kb": min(cache_mb * 1024 * 3 // 100, 16 * 1024),
        "sort_buffer_kb": max((machine.ram_mib - cache_mb) * 1024 // (3 * workers), 64),
        "io_threads": cores,
        "worker_threads": workers,
    }
