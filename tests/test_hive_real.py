"""Hive 4.1 on Hadoop 3.4 against the real thing: HiBench's SQL Join, measured, and a setting
Hive refuses.

Hive 4.1.0 and Hadoop 3.4.2 come from Maven Central (``scripts/setup.sh --full`` installs them
into ``.installs/hive`` and ``.installs/hadoop``); the cluster is pseudo-distributed on
127.0.0.1 (NameNode, DataNode, ResourceManager, NodeManager, each its own JVM) and each query is
a Hive client with its metastore on Derby in the session folder, compiling to MapReduce jobs on
YARN. The tables are small (2000 visits), so a test takes about two minutes, nearly all of it
JVM starts (the daemons, Hive's client, each job's application master and tasks).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.objective import Objective
from harness.records import Status
from harness.trial import run_test
from systems.hadoop import HiveHadoopSystem, HiveQueryWorkload
from tests.requirements import NEEDS_HIVE
from tests.test_hadoop_real import our_jvms

pytestmark = [pytest.mark.integration, pytest.mark.slow, NEEDS_HIVE]

OBJECTIVE = Objective("duration_s", "min")


@pytest.fixture
def hive(tmp_path: Path) -> Iterator[tuple[HiveHadoopSystem, HiveQueryWorkload]]:
    """A set-up cluster with the tables generated and declared (the workload prepared)."""
    system = HiveHadoopSystem(poll_s=1.0)
    workload = HiveQueryWorkload(query="join", visits=2000)
    system.preflight()
    began = time.monotonic()
    system.setup(tmp_path / "work", workload)
    print(f"setup (format, start, generate, put, DDL) {time.monotonic() - began:.0f}s")
    try:
        yield system, workload
    finally:
        system.teardown()
        assert our_jvms(tmp_path) == []  # daemons, Hive clients and task JVMs all stopped


def test_hive_join_is_measured_and_a_refused_query_fails_alone(
    hive: tuple[HiveHadoopSystem, HiveQueryWorkload],
) -> None:
    system, workload = hive
    default = system.space.default()
    began = time.monotonic()
    measured = run_test(system, workload, OBJECTIVE, default, 0)
    print(f"join test {time.monotonic() - began:.0f}s: {measured.metrics}")
    assert measured.status is Status.SUCCEEDED, measured.message
    metrics = measured.metrics
    assert 0 < metrics["duration_s"] < metrics["client_s"]  # the query, without Hive's start
    assert metrics["rows_per_s"] == pytest.approx(2000 / metrics["duration_s"])
    # Strict mode refuses ORDER BY without LIMIT at compile time: FAILED with Hive's reason,
    # before any job runs; the cluster itself was fine.
    system.site_properties = {
        "hive-site": {"hive.strict.checks.orderby.no.limit": "true", "hive.mapred.mode": "strict"}
    }
    began = time.monotonic()
    refused = run_test(system, workload, OBJECTIVE, default, 1)
    print(f"refused in {time.monotonic() - began:.0f}s: {refused.message}")
    assert refused.status is Status.FAILED, refused.message
    assert "FAILED" in refused.message
    assert "limit" in (refused.message + refused.extra.get("output_tail", "")).lower()
