"""Hive 4.1 on Hadoop 3.4 against the real thing: HiBench's SQL Join, measured, a setting Hive
refuses, and our PageRank and KMeans MapReduce jobs with their results checked.

Hive 4.1.0 and Hadoop 3.4.2 come from Maven Central (``scripts/setup.sh --full`` installs them
into ``.installs/hive`` and ``.installs/hadoop``); the cluster is pseudo-distributed on
127.0.0.1 (NameNode, DataNode, ResourceManager, NodeManager, each its own JVM) and each query is
a Hive client with its metastore on Derby in the session folder, compiling to MapReduce jobs on
YARN. The inputs are small (2000 visits, 2000 pages, 3000 points), so a job takes 20-30 s,
nearly all of it JVM starts (the daemons, Hive's client, each job's application master and
tasks); the four workloads share one cluster.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness.objective import Objective
from harness.records import Status
from harness.trial import run_test
from systems.hadoop import (
    HiveHadoopSystem,
    HiveQueryWorkload,
    KMeansWorkload,
    PageRankWorkload,
    datagen,
)
from tests.requirements import NEEDS_HIVE
from tests.test_hadoop_real import our_jvms

pytestmark = [pytest.mark.integration, pytest.mark.slow, NEEDS_HIVE]

OBJECTIVE = Objective("duration_s", "min")


@pytest.fixture(scope="module")
def hive(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[HiveHadoopSystem, HiveQueryWorkload]]:
    """A set-up cluster with the tables generated and declared (the workload prepared), shared
    by the tests of this module (each leaves it stopped)."""
    tmp_path = tmp_path_factory.mktemp("hive")
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
    system.site_properties = {}


def hdfs_cat(system: HiveHadoopSystem, pattern: str) -> list[str]:
    result = system.load.run(
        [f"{system.hadoop_home}/bin/hdfs", "dfs", "-cat", pattern],
        env=system.client_env(),
        timeout_s=120,
    )
    return result.stdout.splitlines()


def check_pagerank(system: HiveHadoopSystem, nodes: int) -> None:
    lines = hdfs_cat(system, "/harness/pagerank/work/iteration-1/part-*")
    ranks = {int(n): float(r) for n, r, _ in (line.split("\t") for line in lines)}
    assert len(ranks) == nodes  # every page, also those nobody links to
    # Rank leaks only through dangling pages: the total is below 1 and well above (1 - d).
    assert 0.5 < sum(ranks.values()) <= 1.0 + 1e-9
    inbound: dict[int, int] = {}
    for line in datagen.graph(nodes).splitlines():
        for target in filter(None, line.split("\t")[2].split(",")):
            inbound[int(target)] = inbound.get(int(target), 0) + 1
    most_linked = max(inbound, key=lambda n: inbound[n])
    assert ranks[most_linked] > 10 * np.median(list(ranks.values()))


def check_kmeans(system: HiveHadoopSystem, dims: int, clusters: int) -> None:
    last = hdfs_cat(system, "/harness/kmeans/work/iteration-*/part-*")[-clusters:]
    found = np.array([[float(x) for x in line.split("\t")[1].split(",")] for line in last])
    assert found.shape == (clusters, dims)
    # The centres found are points near the data: one at least within the spread around a
    # true centre (two first points from one cluster may leave another centre between two).
    true = datagen.cluster_centres(dims, clusters)
    assert (np.abs(found) < 130).all()
    assert min(np.linalg.norm(true - f, axis=1).min() for f in found) < 15


def test_pagerank_and_kmeans_jobs_compute_what_they_claim(
    hive: tuple[HiveHadoopSystem, HiveQueryWorkload], tmp_path: Path
) -> None:
    # On the running cluster, without a test's restart around each job: run_test's part is
    # the join's (above); these check that the jobs compute what they say.
    system, _ = hive
    system.start(300)
    try:
        pagerank = PageRankWorkload(nodes=2000, iterations=1)
        pagerank.prepare(system, tmp_path)
        ranked = pagerank.run(system, 300)
        print(f"PageRank: {ranked}")
        assert 0 < ranked["iteration_s"] == ranked["duration_s"] < ranked["client_s"]
        check_pagerank(system, 2000)
        kmeans = KMeansWorkload(samples=3000, dimensions=4, clusters=3, iterations=1)
        kmeans.prepare(system, tmp_path)
        clustered = kmeans.run(system, 300)
        print(f"KMeans: {clustered}")
        assert 0 < clustered["duration_s"] < clustered["client_s"]
        check_kmeans(system, 4, 3)
    finally:
        system.stop()
