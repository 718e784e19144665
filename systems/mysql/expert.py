"""Expert MySQL/MariaDB settings: ``manual`` (common published guidance for a dedicated InnoDB
server) and ``script`` (our own rules of thumb in the spirit of mysql-tuning-primer /
MySQLTuner checks, written from their documented recommendations).

Both return partial configurations of valid knob values (knobs outside ``space`` dropped,
numbers clamped into range).
"""

from __future__ import annotations

from harness.hosts.machine import Machine
from harness.space import Config, Space

__all__ = ["manual", "script"]


def manual(space: Space, machine: Machine) -> Config:
    """The reference manuals' advice for a dedicated database host: a buffer pool of 50-75 %
    of RAM (we take 50 %: the client shares this host), a redo log of about an hour of writes
    (we take 1 GB), O_DIRECT to avoid double buffering, and durable commits kept."""
    return space.fit(
        {
            "innodb_buffer_pool_size": machine.ram_mib // 2,
            "innodb_log_file_size": 1024,
            "innodb_flush_method": "O_DIRECT",
            "innodb_flush_log_at_trx_commit": 1,
            "innodb_io_capacity": 1000,
        }
    )


def script(space: Space, machine: Machine, ssd: bool = True) -> Config:
    """Primer-style rules of thumb:

    buffer pool = 70 % of RAM (leave room for per-connection buffers), redo log = 1/4 of the
    buffer pool (at most 2 GB), log buffer 64 MB, io_capacity 2000 on SSDs (200 on disks),
    flush_neighbors off on SSDs, tmp_table_size = max_heap_table_size = 64 MB (so temp tables
    stay in memory), thread cache 100, table_open_cache 4000, flush_log_at_trx_commit 2
    (primers accept losing up to one second of commits for throughput).
    """
    pool = machine.ram_mib * 7 // 10
    return space.fit(
        {
            "innodb_buffer_pool_size": pool,
            "innodb_log_file_size": min(pool // 4, 2048),
            "innodb_log_buffer_size": 64,
            "innodb_flush_log_at_trx_commit": 2,
            "innodb_io_capacity": 2000 if ssd else 200,
            "innodb_flush_neighbors": 0 if ssd else 1,
            "tmp_table_size": 64,
            "max_heap_table_size": 64,
            "thread_cache_size": 100,
            "table_open_cache": 4000,
            "innodb_read_io_threads": max(4, machine.cores),
            "innodb_write_io_threads": max(4, machine.cores),
        }
    )
