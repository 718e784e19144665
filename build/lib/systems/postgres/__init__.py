"""PostgreSQL under tune: a private cluster, its knob catalogue, pgbench and expert settings.

Workloads: sysbench (:class:`systems.dbserver.sysbench.SysbenchOLTP`), pgbench
(:class:`PgBench`) and TPC-C (:class:`systems.tpcc.TPCCWorkload`).
"""

from systems.postgres.pgbench import PgBench
from systems.postgres.system import PostgresSystem, load_space

__all__ = ["PgBench", "PostgresSystem", "load_space"]
