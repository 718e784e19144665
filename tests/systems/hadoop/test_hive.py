"""The Hive pieces of the Hadoop adapter without a cluster: the input generators (datagen.py),
the HiveQL workloads' settings, scripts and output parsing (hive_sql.py, parse.py), the
PageRank and KMeans jobs' settings and command lines (mr_jobs.py), and the Hive client's command
line, environment and hive-site.xml (hive.py), on the stand-in Hadoop of tests/data/hadoop.
The real thing is tests/systems/hadoop/test_hive_real.py."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ConfigError, WorkloadError
from systems.hadoop import (
    HiBenchWorkload,
    HiveHadoopSystem,
    HiveQueryWorkload,
    TestDFSIOWorkload,
    datagen,
)
from systems.hadoop.hive_sql import QUERIES
from systems.hadoop.mr_jobs import KMeansWorkload, PageRankWorkload, iteration_seconds
from systems.hadoop.parse import hiveql_timings
from tests.systems.hadoop.test_unit import Make, make, standin  # noqa: F401 - pytest fixtures


def test_the_generator_is_seeded_and_sized() -> None:
    assert datagen.uservisits(500, 50, seed=3) == datagen.uservisits(500, 50, seed=3)
    assert datagen.uservisits(500, 50, seed=3) != datagen.uservisits(500, 50, seed=4)
    ranks = datagen.rankings(50, seed=3).splitlines()
    visits = datagen.uservisits(2000, 50, seed=3).splitlines()
    assert len(ranks) == 50 and len(visits) == 2000
    pages = {line.split(",")[0] for line in ranks}
    fields = [line.split(",") for line in visits]
    assert all(len(f) == 9 for f in fields)
    assert {f[1] for f in fields} <= pages  # every visit is to a ranked page: the join matches
    dates = sorted(f[2] for f in fields)
    assert dates[0] >= "1998-01-01" and dates[-1] < "2002-01-01"
    in_year = sum("1999-01-01" <= d <= "2000-01-01" for d in dates) / len(dates)
    assert 0.15 < in_year < 0.35  # the join's filter keeps about a quarter
    # Zipf-like: the most visited page gets far more than its even share
    counts: dict[str, int] = {}
    for f in fields:
        counts[f[1]] = counts.get(f[1], 0) + 1
    assert max(counts.values()) > 5 * len(fields) / len(pages)


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"query": "drop"}, "workload.query"),
        ({"visits": 10}, "workload.visits"),
        ({"visits": "many"}, "workload.visits"),
        ({"pages": 0}, "workload.pages"),
        ({"seed": -1}, "workload.seed"),
        ({"seed": True}, "workload.seed"),
    ],
)
def test_hive_workloads_refuse_bad_settings(kwargs: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        HiveQueryWorkload(**kwargs)  # type: ignore[arg-type]


def test_the_per_test_script_times_the_query_and_counts_its_rows() -> None:
    for query, (table, _, select) in QUERIES.items():
        workload = HiveQueryWorkload(query=query, visits=1000)
        assert workload.pages == 100  # a tenth of the visits
        statements = [s for s in workload.script().split(";\n") if s.strip()]
        assert statements[workload.QUERY_STATEMENT - 1].startswith(
            f"INSERT OVERWRITE TABLE {table}"
        )
        assert select in statements[workload.QUERY_STATEMENT - 1]
        assert statements[-1] == f"SELECT COUNT(*) FROM {table}"
        assert workload.params()["query"] == query


def test_runner_timings_and_the_row_count_are_read_from_the_output() -> None:
    output = (
        "x\t2\n42\n\nHIVEQL 1 0.120 DROP TABLE IF EXISTS t\n"
        "26/12/02 03:18:03 WARN mapreduce.Counters: HIVEQL 7 not ours\n"
        "HIVEQL 3 61.500 INSERT OVERWRITE TABLE t SELECT\n"
    )
    assert hiveql_timings(output) == {1: 0.12, 3: 61.5}
    assert HiveQueryWorkload._row_count(output) == 42
    with pytest.raises(WorkloadError, match="no row count"):
        HiveQueryWorkload._row_count("HIVEQL 1 0.1 x\n")


def test_hibench_workloads_may_be_named_apart_from_the_benchmark() -> None:
    workload = HiBenchWorkload("sql", "hibench_join", benchmark="join")
    assert workload.benchmark == "join" and workload.report_type == "HadoopJoin"
    assert HiBenchWorkload("sql", "join").benchmark == "join"


def maven_hive(base: Path) -> Path:
    home = base / "hive"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    (home / "bin" / "hive-ql").write_text("#!/bin/sh\n")
    return home


def site(text: str) -> dict[str, str]:
    root = ET.fromstring(text)
    return {p.findtext("name") or "": p.findtext("value") or "" for p in root.findall("property")}


def test_hive_site_keeps_the_metastore_and_scratch_in_the_session(
    make: Make,  # noqa: F811
    standin: tuple[Path, Path],  # noqa: F811
) -> None:
    base, _ = standin
    home = maven_hive(base)
    system = make(HiveHadoopSystem, hive_home=str(home), knob_set="all")
    assert isinstance(system, HiveHadoopSystem)
    system.setup(base / "work", TestDFSIOWorkload())  # prepares nothing
    system.apply(system.space.default())
    props = site(Path(system.hive_conf_dir, "hive-site.xml").read_text())
    assert props["javax.jdo.option.ConnectionURL"].startswith(
        f"jdbc:derby:;databaseName={system.hive_root}/metastore_db;"
    )
    assert system.hive_root.startswith(str(base / "data"))
    assert props["hive.exec.local.scratchdir"].startswith(system.hive_root)
    assert props["hive.execution.engine"] == "mr"
    assert props["hive.aux.jars.path"] == f"file://{home}/lib/commons-collections-3.2.2.jar"
    assert props["hive.async.log.enabled"] == "false"
    knobs = [k for k in system.space.names if k.startswith("hive.")]
    assert knobs and all(k in props for k in knobs)  # the Hive knobs land in hive-site too
    command = system.hive_command("/s/q.hql", {"hive.exec.parallel": "true"})
    assert command == [
        f"{home}/bin/hive-ql",
        "-f",
        "/s/q.hql",
        "--hiveconf",
        "hive.exec.parallel=true",
    ]
    env = system.hive_env()
    assert env["HIVE_CONF_DIR"] == system.hive_conf_dir
    assert env["HADOOP_HOME"] == system.hadoop_home
    assert f"-Dderby.stream.error.file={system.hive_root}/derby.log" in env["HADOOP_OPTS"]
    system.stop()
    system.teardown()


def test_a_hive_tarball_gets_bin_hive_and_no_task_jars(
    make: Make,  # noqa: F811
    standin: tuple[Path, Path],  # noqa: F811
) -> None:
    base, _ = standin
    home = base / "tarball"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "hive").write_text("#!/bin/sh\n")
    system = make(HiveHadoopSystem, hive_home=str(home))
    assert isinstance(system, HiveHadoopSystem)
    system._check_installs()  # a tarball's bin/hive will do (not preflight: it checks ports)
    system.setup(base / "work", TestDFSIOWorkload())  # prepares nothing
    system.apply(system.space.default())
    props = site(Path(system.hive_conf_dir, "hive-site.xml").read_text())
    assert "hive.aux.jars.path" not in props
    assert system.hive_command("/s/q.hql")[0] == f"{home}/bin/hive"
    system.stop()
    system.teardown()


def test_a_missing_hive_names_the_setup_command(
    make: Make,  # noqa: F811
    standin: tuple[Path, Path],  # noqa: F811
) -> None:
    base, _ = standin
    system = make(HiveHadoopSystem, hive_home=str(base / "nowhere"))
    with pytest.raises(ConfigError, match=r"hive_home.*scripts/setup\.sh --full"):
        system.preflight()


def test_the_graph_and_the_points_are_seeded_and_shaped() -> None:
    graph = datagen.graph(300, seed=1)
    assert graph == datagen.graph(300, seed=1) != datagen.graph(300, seed=2)
    rows = [line.split("\t") for line in graph.splitlines()]
    assert [int(r[0]) for r in rows] == list(range(300))
    assert all(float(r[1]) == 1 / 300 for r in rows)
    links = [[int(t) for t in r[2].split(",") if t] for r in rows]
    assert all(n not in out and all(0 <= t < 300 for t in out) for n, out in enumerate(links))
    assert any(not out for out in links)  # some pages are dangling
    points = [list(map(float, line.split(","))) for line in datagen.points(600, 3, 4).splitlines()]
    assert len(points) == 600 and {len(p) for p in points} == {3}
    centres = datagen.cluster_centres(3, 4)
    nearest = [
        min(sum((a - b) ** 2 for a, b in zip(p, c, strict=True)) for c in centres) for p in points
    ]
    assert sorted(nearest)[len(nearest) // 2] < 30**2  # most points lie near a centre


@pytest.mark.parametrize(
    ("cls", "kwargs", "key"),
    [
        (PageRankWorkload, {"nodes": 1}, "workload.nodes"),
        (PageRankWorkload, {"iterations": 0}, "workload.iterations"),
        (
            PageRankWorkload,
            {"iterations": 101},
            r"iterations=101: use a whole number, from 1 to 100",
        ),
        (PageRankWorkload, {"jobs_home": "rel/ative"}, "workload.jobs_home"),
        (KMeansWorkload, {"clusters": 0}, "workload.clusters"),
        (KMeansWorkload, {"samples": 20, "clusters": 30}, "workload.clusters"),
        (KMeansWorkload, {"convergence_delta": -1}, "workload.convergence_delta"),
        (KMeansWorkload, {"dimensions": 1.5}, "workload.dimensions"),
    ],
)
def test_mapreduce_jobs_refuse_bad_settings(
    cls: type, kwargs: dict[str, object], key: str
) -> None:
    with pytest.raises(ConfigError, match=key):
        cls(**kwargs)


def test_mapreduce_jobs_take_whole_floats() -> None:
    """A count written as 2.0 (a YAML float, a sweep's value) is the whole number 2."""
    floats: dict[str, Any] = {"nodes": 2000.0, "iterations": 2.0}
    job = PageRankWorkload(**floats)
    assert (job.nodes, job.iterations) == (2000, 2) and isinstance(job.nodes, int)


def test_mapreduce_jobs_iterations_are_read_from_their_output() -> None:
    output = (
        "26/12/02 INFO mapreduce.Job: map 100% reduce 100%\n"
        "PAGERANK iteration 1 21.500\nPAGERANK iteration 2 20.250\n"
        "KMEANS iteration 1 19.000 0.250000\n"
    )
    assert iteration_seconds(output) == [21.5, 20.25, 19.0]
    assert KMeansWorkload(jobs_home="/opt/jobs").params()["job"] == "org.classytune.jobs.KMeans"


def test_mapreduce_jobs_name_the_setup_command_when_their_jar_is_missing(
    make: Make,  # noqa: F811
    standin: tuple[Path, Path],  # noqa: F811
) -> None:
    base, _ = standin
    system = make(HiveHadoopSystem)
    with pytest.raises(ConfigError, match=r"workload\.jobs_home.*scripts/setup\.sh --full"):
        PageRankWorkload(jobs_home=str(base / "nowhere")).prepare(system, base)


def test_dotted_knob_names_can_be_pinned_and_narrowed_from_the_command_line() -> None:
    # Hydra reads `+system.fixed.mapreduce.job.maps=3` as nested keys; Hadoop's names are dotted.
    from harness import api
    from harness.builder.session import _make_systems, _pins_and_ranges

    cfg = api.compose(
        [
            "system=hive",
            "tracking=none",
            "+system.fixed.mapreduce.job.maps=3",
            "+system.ranges.yarn.nodemanager.resource.memory-mb.max=14336",
        ]
    )
    system = _make_systems(cfg)[0]
    assert _pins_and_ranges(cfg, system) == {"mapreduce.job.maps": 3}
    assert system.space["yarn.nodemanager.resource.memory-mb"].high == 14336
    bad = api.compose(["system=hive", "tracking=none", "+system.fixed.mapreduce.job.mapz=3"])
    with pytest.raises(ConfigError, match=r"unknown knob .mapreduce\.job\.mapz."):
        _pins_and_ranges(bad, _make_systems(bad)[0])
