"""PostgreSQL on a real private cluster: a short LHS session per workload, the crash path
(shared_buffers beyond RAM) and the timeout path (a workload blocked by a table lock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.hosts.machine import Machine
from harness.objectives.objective import Objective
from harness.records import Status
from harness.system import Workload
from systems.dbserver.reuse import reads_only
from systems.dbserver.sysbench import SysbenchOLTP
from systems.postgres import PgBench, PostgresSystem
from systems.tpcc import TPCCWorkload
from tests.helpers.dbserver_session import LockedWorkload, check_session, short_session

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WORKLOADS = {
    "readonly": lambda: SysbenchOLTP("readonly", duration_s=3, tables=2, table_size=10_000),
    "readwrite": lambda: SysbenchOLTP("readwrite", duration_s=3, tables=2, table_size=10_000),
    "pgbench": lambda: PgBench("tpcb", duration_s=3, scale=1),
    "tpcc": lambda: TPCCWorkload(duration_s=3, items=2_000, customers=100),
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_short_session(name: str, tmp_path: Path) -> None:
    system = PostgresSystem()
    workload: Workload = WORKLOADS[name]()
    observations = short_session(system, workload, tmp_path)
    check_session(observations, workload)
    # the first test meets the snapshot's data; after a read-only workload nothing is copied
    assert system.restores_skipped == (3 if reads_only(workload) else 1)
    assert len(system.restore_times) == 3 - system.restores_skipped
    assert not system._running() if system.instance else True


def test_crash_then_timeout_then_recovery(tmp_path: Path) -> None:
    import psycopg

    from harness.session.trial import run_test

    system = PostgresSystem()
    workload = SysbenchOLTP("readonly", duration_s=3, tables=2, table_size=10_000)
    objective = Objective.for_workload(workload.metrics)
    try:
        system.setup(tmp_path, workload)
        # Crash: a range widened past the machine (as system.ranges allows) and used.
        too_big = 4 * Machine.detect().ram_mib
        system.space = system.space.with_overrides({"shared_buffers": {"max": too_big}})
        crashed = run_test(system, workload, objective, {"shared_buffers": too_big}, 0)
        assert crashed.status is Status.CRASHED, crashed.message
        assert "shared memory" in crashed.extra["log_tail"] or "FATAL" in crashed.extra["log_tail"]

        def lock() -> psycopg.Connection:
            conn = psycopg.connect(
                **{
                    k: v
                    for k, v in system.dbapi_target().items()
                    if k in ("host", "port", "user", "password")
                },
                dbname="bench",
            )
            conn.execute("LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE")
            return conn

        hung = run_test(
            system,
            LockedWorkload(workload, lock),
            objective,
            system.space.default(),
            1,
            timeout_s=8.0,
        )
        assert hung.status is Status.TIMED_OUT, hung.message
        assert hung.duration_s < 40
        # the session goes on: the next test succeeds
        fine = run_test(system, workload, objective, system.space.default(), 2, timeout_s=60)
        assert fine.status is Status.SUCCEEDED, fine.message
    finally:
        system.teardown()
    assert not system._running() if system.instance else True
