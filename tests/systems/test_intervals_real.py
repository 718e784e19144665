"""Interval samples from real runs: the SQLite worker, the TPC-C driver on SQLite, a job's elapsed
bound around a real command, sysbench + TPC-C on a private MariaDB, pgbench + sysbench on a
private PostgreSQL, wrk on a real Tomcat, a Spark job's elapsed bound, and YCSB on a real
Cassandra node.

What is checked is that samples arrive and agree with the run's own accounting, never how fast
anything ran.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness.executor import LocalExecutor
from harness.intervals import ELAPSED, IntervalRecorder, IntervalSample, elapsed_bound
from systems.sqlite import SQLiteOLTP, SQLiteSystem
from systems.tpcc.driver import run_clients
from systems.tpcc.loader import load
from systems.tpcc.schema import Scale, connect, dialect_of
from tests.helpers.requirements import NEEDS_CASSANDRA

pytestmark = pytest.mark.integration


def _check_rate_series(samples: tuple[IntervalSample, ...], metric: str) -> list[float]:
    series = [s for s in samples if s.metric == metric]
    offsets = [s.offset_s for s in series]
    assert len(series) >= 2, samples
    assert offsets == sorted(offsets) and offsets[0] > 0
    assert all(s.value >= 0 for s in series)
    return [s.value for s in series]


def test_sqlite_worker_reports_every_second_of_a_real_run(tmp_path: Path) -> None:
    system = SQLiteSystem()
    workload = SQLiteOLTP(mix="readwrite", duration_s=2.5, rows=2000, seed=1)
    heard: list[IntervalSample] = []
    workload.intervals.subscribe(heard.append)
    system.setup(tmp_path / "work", workload)
    try:
        system.reset()
        system.apply(system.space.default())
        system.start(30)
        metrics = workload.run(system, timeout_s=60)
    finally:
        system.teardown()
    samples = workload.intervals.samples
    assert tuple(heard) == samples
    rates = _check_rate_series(samples, "tps")
    assert max(rates) > 0 and metrics["tps"] > 0
    assert {s.metric for s in samples} == {"tps", "qps", "latency_avg_ms", "errors_per_s"}
    # the last report covers the end of the run (the worker stops at its first commit after it)
    assert max(s.offset_s for s in samples) >= 2.5


def test_tpcc_driver_intervals_count_every_completed_transaction(tmp_path: Path) -> None:
    scale = Scale(warehouses=1, items=100, customers=30)
    target = {"dialect": "sqlite", "path": str(tmp_path / "tpcc.db")}
    conn = connect(target)
    load(conn, dialect_of(target), scale)
    conn.close()
    records: list[dict[str, float]] = []
    summary = run_clients(target, scale, 2, 2.0, report=records.append, interval_s=0.5)
    assert len(records) >= 2
    assert [r["t"] for r in records] == sorted(r["t"] for r in records)
    completed = sum(summary["counts"].values())
    assert completed > 0
    assert sum(r["transactions"] for r in records) == completed


def test_elapsed_bound_arrives_while_a_real_command_runs() -> None:
    recorder = IntervalRecorder("elapsed", target="duration_s")
    running = threading.Event()
    during: list[IntervalSample] = []
    recorder.subscribe(lambda sample: during.append(sample) if running.is_set() else None)
    with elapsed_bound(recorder, period_s=0.1):
        running.set()
        LocalExecutor().run(["sleep", "1"], timeout_s=30)
        running.clear()
    assert during and all(s.metric == ELAPSED for s in during)
    last = recorder.samples[-1]
    assert last.value >= 1.0  # the command slept a full second inside the block
    assert all(s.value <= last.value for s in recorder.samples)


@pytest.mark.slow
def test_sysbench_and_tpcc_on_real_mariadb_report_intervals(tmp_path: Path) -> None:
    from systems.dbserver.sysbench import SysbenchOLTP
    from systems.mysql import MySQLSystem
    from systems.tpcc import TPCCWorkload

    system = MySQLSystem()
    sysbench = SysbenchOLTP("readwrite", duration_s=3, tables=2, table_size=10_000)
    tpcc = TPCCWorkload(duration_s=3, items=2_000, customers=100)
    try:
        system.setup(tmp_path, sysbench)
        system.start(120)
        tpcc.prepare(system, tmp_path)
        final = sysbench.run(system, timeout_s=120)
        tpcc_final = tpcc.run(system, timeout_s=120)
    finally:
        system.teardown()
    rates = _check_rate_series(sysbench.intervals.samples, "tps")
    assert len(rates) >= 2 and final["tps"] > 0  # one report per second of a 3 s run
    assert {s.metric for s in sysbench.intervals.samples} >= {"tps", "qps", "latency_p95_ms"}
    tpm = _check_rate_series(tpcc.intervals.samples, "tpmC")
    assert max(tpm) > 0 and tpcc_final["tpmC"] > 0


@pytest.mark.slow
def test_pgbench_and_sysbench_on_real_postgres_report_intervals(tmp_path: Path) -> None:
    from systems.dbserver.sysbench import SysbenchOLTP
    from systems.postgres import PgBench, PostgresSystem

    system = PostgresSystem()
    sysbench = SysbenchOLTP("readonly", duration_s=3, tables=2, table_size=10_000)
    pgbench = PgBench("tpcb", duration_s=3, scale=1)
    try:
        system.setup(tmp_path, sysbench)
        system.start(120)
        pgbench.prepare(system, tmp_path)
        final = pgbench.run(system, timeout_s=120)
        sysbench.run(system, timeout_s=120)
    finally:
        system.teardown()
    rates = _check_rate_series(pgbench.intervals.samples, "tps")
    assert max(rates) > 0 and final["tps"] > 0
    metrics = {s.metric for s in pgbench.intervals.samples}
    assert {"tps", "latency_avg_ms"} <= metrics <= {"tps", "latency_avg_ms", "errors_per_s"}
    assert _check_rate_series(sysbench.intervals.samples, "qps")


@pytest.mark.slow
def test_wrk_on_real_tomcat_reports_whole_seconds(tmp_path: Path) -> None:
    from systems.tomcat.system import TomcatSystem
    from systems.tomcat.workload import WebExploration

    system = TomcatSystem(knob_set="10")
    workload = WebExploration(duration_s=4, warmup_s=1)
    try:
        system.setup(tmp_path, workload)
        system.apply(system.space.default())
        system.start(120)
        final = workload.run(system, timeout_s=120)
    finally:
        system.teardown()
    rates = _check_rate_series(workload.intervals.samples, "requests_per_s")
    assert max(rates) > 0 and final["requests_per_s"] > 0
    # a 4 s run spans at least 4 wall-clock seconds; the first and last are partial
    assert len(rates) >= 3


@pytest.mark.slow
def test_spark_job_emits_its_elapsed_bound(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from systems.spark import SparkJob, SparkSystem

    system = SparkSystem(knob_set="30")
    workload = SparkJob(job="wordcount", scale=0.05)
    try:
        system.setup(tmp_path, workload)
        system.apply(system.space.default())
        system.start(120)
        final = workload.run(system, timeout_s=300)
    finally:
        system.teardown()
    samples = workload.intervals.samples
    assert samples and all(s.metric == ELAPSED and s.value == s.offset_s for s in samples)
    assert [s.value for s in samples] == sorted(s.value for s in samples)
    # the bound ends at (just above) the job process's wall time, which it never undercuts
    assert samples[-1].value >= final["total_wall_s"] > 0


@pytest.mark.slow
@NEEDS_CASSANDRA
def test_ycsb_on_a_real_cassandra_node_reports_its_status_lines(tmp_path: Path) -> None:
    from systems.cassandra import CassandraSystem, YCSBWorkload

    system = CassandraSystem(knob_set="30", heap_mb=1024, poll_s=1.0)
    workload = YCSBWorkload(recordcount=2000, threads=4, load_threads=4, duration_s=4, warmup_s=1)
    try:
        system.setup(tmp_path / "work", workload)
        system.apply(system.space.default())
        system.start(300)
        final = workload.run(system, timeout_s=300)
    finally:
        system.teardown()
    samples = workload.intervals.samples
    rates = _check_rate_series(samples, "throughput_ops")
    assert max(rates) > 0 and final["throughput_ops"] > 0
    assert {"read_latency_avg_ms", "update_latency_avg_ms"} <= {s.metric for s in samples}
