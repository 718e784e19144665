"""Our TPC-C: schema, loader, the five transactions and a multi-process DB-API driver, written
from the TPC-C specification; it serves PostgreSQL, MySQL/MariaDB and SQLite."""

from systems.tpcc.schema import Scale
from systems.tpcc.workload import TPCCWorkload

__all__ = ["Scale", "TPCCWorkload"]
