"""Hive 4.1 on Hadoop 3.4 against the real thing: a budget-2 session of HiBench's SQL Join, a
setting Hive refuses, and our PageRank and KMeans MapReduce jobs with their results checked.

Hive 4.1.0 and Hadoop 3.4.2 come from Maven Central (``scripts/setup.sh --full`` installs them
into ``.installs/hive`` and ``.installs/hadoop``); the cluster is pseudo-distributed on
127.0.0.1 (NameNode, DataNode, ResourceManager, NodeManager, each its own JVM) and each query is
a Hive client with its metastore on Derby in the session folder, compiling to MapReduce jobs on
YARN. The inputs are small (2000 visits, 2000 pages, 3000 points), so a job takes 20-30 s,
nearly all of it JVM starts (the daemons, Hive's client, each job's application master and
tasks). The session sets up its own cluster; the other tests share one.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness import api
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from systems.hadoop import (
    HiveHadoopSystem,
    HiveQueryWorkload,
    KMeansWorkload,
    PageRankWorkload,
    datagen,
)
from tests.helpers.requirements import NEEDS_HIVE
from tests.systems.hadoop.test_real import our_jvms

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


#: Every knob of the default set pinned at its default but the sort and shuffle buffers, so the
#: tuner's second test is a configuration that runs (not one whose disk-health threshold is
#: below this disk's use, or whose application master takes all of YARN's memory).
PINS = {
    "yarn.app.mapreduce.am.resource.mb": 1536,
    "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": 90,
    "mapreduce.job.reduce.slowstart.completedmaps": 0.05,
    "yarn.nodemanager.resource.memory-mb": 8192,
    "yarn.nodemanager.resource.cpu-vcores": 8,
    "mapreduce.map.memory.mb": 1024,
    "mapreduce.job.maps": 2,
    "mapreduce.job.reduces": 1,
}


def test_a_hive_join_session_measures_real_queries(tmp_path: Path) -> None:
    cfg = api.compose(
        [
            "system=hive",
            "workload=join",
            "workload.visits=2000",
            "tracking=none",
            "budget=2",
            "tuner=random",
            f"results_dir={tmp_path / 'results'}",
            *(f"+system.fixed.{knob}={value}" for knob, value in PINS.items()),
            # CI's time: small jobs run inside their application master (query 38 s, not 59 s).
            "+system.adapter.site_properties={mapred-site: {mapreduce.job.ubertask.enable: true}}",
        ]
    )
    began = time.monotonic()
    result = api.run(api.prepare(cfg))
    print(f"budget-2 join session {time.monotonic() - began:.0f}s")
    statuses = [o.status for o in result.observations]
    assert statuses == [Status.SUCCEEDED, Status.SUCCEEDED], [
        o.message for o in result.observations
    ]
    first, second = result.observations
    assert first.is_default and first.config != second.config  # the tuner's own choice ran
    for obs in result.observations:
        assert 0 < obs.metrics["duration_s"] < obs.metrics["client_s"]  # the query alone
        assert obs.metrics["rows_per_s"] == pytest.approx(2000 / obs.metrics["duration_s"])
    assert our_jvms(tmp_path) == []  # daemons, Hive clients and task JVMs all stopped


@pytest.mark.deep
def test_a_query_hive_refuses_fails_alone(
    hive: tuple[HiveHadoopSystem, HiveQueryWorkload],
) -> None:
    # Strict mode refuses ORDER BY without LIMIT at compile time: FAILED with Hive's reason,
    # before any job runs; the cluster itself was fine.
    system, workload = hive
    system.site_properties = {
        "hive-site": {"hive.strict.checks.orderby.no.limit": "true", "hive.mapred.mode": "strict"}
    }
    began = time.monotonic()
    refused = run_test(system, workload, OBJECTIVE, system.space.default(), 1)
    print(f"refused in {time.monotonic() - began:.0f}s: {refused.message}")
    system.site_properties = {}
    assert refused.status is Status.FAILED, refused.message
    assert "FAILED" in refused.message
    assert "limit" in (refused.message + refused.extra.get("output_tail", "")).lower()


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


@pytest.mark.deep
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
