"""Expert settings for SQLite, for the expert baselines.

:func:`manual` is the advice found in SQLite's own documentation and common performance guides
for a single-process application that can lose the last transactions on power loss: WAL with
``synchronous=NORMAL``, a 64 MiB page cache, 256 MiB of memory-mapped I/O and in-memory
temporary tables. :func:`script` is a rule of thumb computed from the machine: cache and mmap as
fixed fractions of RAM (capped), WAL + NORMAL, memory temp store when RAM is plentiful, and
sort helper threads up to the core count. Both return partial configurations restricted to the
knobs of ``space`` and moved onto its allowed values (clamped ranges, nearest enum entry).
"""

from __future__ import annotations

from harness.hosts.machine import Machine
from harness.space import Config, Space

__all__ = ["manual", "script"]

MIB_IN_KIB = 1024


def manual(space: Space, machine: Machine) -> Config:
    """Published guidance for a fast, single-process SQLite application."""
    del machine  # the guidance is the same on every machine
    return space.fit(
        {
            "journal_mode": "wal",
            "synchronous": "normal",
            "cache_size": 64 * MIB_IN_KIB,
            "mmap_size": 256,
            "temp_store": "memory",
            "wal_autocheckpoint": 1000,
        }
    )


def script(space: Space, machine: Machine) -> Config:
    """A rule of thumb from the machine's memory and cores.

    cache_size = RAM/32 capped at 1 GiB; mmap_size = the largest power of 4 MiB ≤ RAM/16 (the
    catalogue caps it at 1 GiB); temp tables in memory with ≥ 4 GiB RAM; a bigger WAL between
    checkpoints (4000 pages) to batch checkpoint I/O; sort threads = cores - 1 (at most 8).
    """
    ram_kib = machine.ram_bytes // 1024
    cache_kib = min(max(ram_kib // 32, 2000), 1024 * MIB_IN_KIB)
    mmap_mib = 0
    while machine.ram_mib >= 16 and (mmap_mib or 1) * 4 <= machine.ram_mib / 16:
        mmap_mib = (mmap_mib or 1) * 4
    return space.fit(
        {
            "journal_mode": "wal",
            "synchronous": "normal",
            "cache_size": cache_kib,
            "mmap_size": mmap_mib,
            "temp_store": "memory" if machine.ram_mib >= 4096 else "default",
            "wal_autocheckpoint": 4000,
            "threads": min(max(machine.cores - 1, 0), 8),
        }
    )
