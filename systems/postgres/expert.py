"""Expert PostgreSQL settings: ``manual`` (common published guidance for an OLTP server) and
``script`` (our own pgtune-style rules of thumb, written from pgtune's documented inputs).

Both return partial configurations of valid knob values: knobs outside ``space`` are left out,
and every value is clamped into the knob's range before validation.
"""

from __future__ import annotations

from harness.hosts.machine import Machine
from harness.space import Config, Space

__all__ = ["manual", "script"]


def manual(space: Space, machine: Machine) -> Config:
    """The PostgreSQL manual's and wiki's usual starting points for a dedicated server:
    shared_buffers 25 % of RAM, effective_cache_size 50-75 %, a larger WAL, spread checkpoints."""
    mib = machine.ram_mib
    return space.fit(
        {
            "shared_buffers": mib // 4,
            "effective_cache_size": mib // 2,
            "maintenance_work_mem": min(mib // 20, 1024),
            "wal_buffers": 16384,
            "checkpoint_timeout": 900,
            "max_wal_size": 4096,
            "checkpoint_completion_target": 0.9,
        }
    )


def script(space: Space, machine: Machine, connections: int = 20, ssd: bool = True) -> Config:
    """Rules of thumb in the spirit of pgtune (OLTP profile), with our own arithmetic:

    shared_buffers = RAM/4; effective_cache_size = 3/4 RAM; maintenance_work_mem = RAM/16
    (at most 2 GB); wal_buffers = 3 % of shared_buffers (at most 16 MB); work_mem =
    (RAM - shared_buffers) / (3 * connections * parallel workers); random_page_cost 1.1 and
    effective_io_concurrency 200 on SSDs; min/max_wal_size 2 GB / 8 GB; checkpoint target 0.9.
    """
    mib = machine.ram_mib
    shared = mib // 4
    workers = max(2, min(4, machine.cores // 2))
    work_mem_kb = (mib - shared) * 1024 // (3 * connections * workers)
    return space.fit(
        {
            "shared_buffers": shared,
            "effective_cache_size": mib * 3 // 4,
            "maintenance_work_mem": min(mib // 16, 2048),
            "wal_buffers": min(shared * 1024 * 3 // 100, 16384),
            "work_mem": max(work_mem_kb, 4096),
            "random_page_cost": 1.1 if ssd else 4.0,
            "effective_io_concurrency": 200 if ssd else 2,
            "min_wal_size": 2048,
            "max_wal_size": 8192,
            "checkpoint_completion_target": 0.9,
            "default_statistics_target": 100,
            "max_parallel_workers_per_gather": max(1, workers // 2),
        }
    )
