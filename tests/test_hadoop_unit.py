"""Hive-Hadoop and HDFS/YARN adapters without a cluster: catalogue, site XML, resource
consistency, command builders, parsers on text in the real formats, and the whole lifecycle
against stand-in Hadoop/HiBench installs (shell scripts, tests/data/hadoop/standin) run by
LocalExecutors posing as cluster nodes. No Hadoop, Hive or HiBench runs here."""

from __future__ import annotations

import functools
import shutil
import stat
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from omegaconf import DictConfig

from harness.build import make_workload
from harness.config import workloads_of
from harness.errors import ConfigError, KnobError, SystemStartError, WorkloadError
from harness.executor import LocalExecutor
from harness.objective import Objective
from harness.records import Status
from harness.remote.cluster import Cluster
from harness.space import Space, load_catalogue
from harness.trial import run_test
from systems.hadoop import (
    DFSIOWorkload,
    HDFSYarnSystem,
    HiBenchWorkload,
    HiveHadoopSystem,
    commands,
    render,
)
from systems.hadoop.hibench import harness_conf, hibench_hadoop_conf
from systems.hadoop.parse import (
    job_failure,
    new_report_rows,
    parse_dfsadmin_report,
    parse_dfsio_results,
    parse_hibench_report,
    parse_yarn_nodes,
    safemode_off,
)
from tests.sshd import PrivateSSHD

DATA = Path(__file__).parent / "data" / "hadoop"
ARFF = Path(__file__).parent.parent / "systems" / "dataset" / "data" / "bestconf"
LAYOUT = render.Layout(
    "10.0.0.11", ("10.0.0.11", "10.0.0.12", "10.0.0.13"), "/opt/hadoop", "/data/hadoop"
)


def fixture(name: str) -> str:
    return (DATA / name).read_text()


@functools.lru_cache(maxsize=4)
def catalogue_of(sites: tuple[str, ...]) -> Space:
    full = render.full_catalogue()
    return full.subspace([k for k in full.names if render.site_of(k) in sites])


def complete(config: dict | None = None, sites: tuple[str, ...] = render.SITES) -> dict:
    return catalogue_of(sites).complete(config or {})


def parse_xml(text: str) -> dict[str, str]:
    root = ET.fromstring(text)
    assert root.tag == "configuration"
    names = [p.findtext("name") for p in root.findall("property")]
    assert len(names) == len(set(names)), "a property is written twice"
    return {p.findtext("name"): p.findtext("value") for p in root.findall("property")}  # type: ignore[misc]


def arff_knobs(name: str) -> set[str]:
    lines = (ARFF / name).read_text().splitlines()
    attrs = [line.split()[1] for line in lines if line.lower().startswith("@attribute")]
    return {
        a.removeprefix("mapred") if a.startswith("mapred") else a.removeprefix("yarn")
        for a in attrs
        if a != "performance"
    }


# -- catalogue ------------------------------------------------------------------------------------
def test_catalogue_holds_every_recorded_knob_with_its_range() -> None:
    recorded = arff_knobs("hive_hadoopJoin.arff") | arff_knobs("hive_hadoopPageRank.arff")
    assert len(recorded) == 110
    space = render.full_catalogue()
    assert recorded <= set(space.names)
    rows = [
        line.split(",")
        for line in (ARFF / "hive_hadoopJoin.arff").read_text().split("@data", 1)[1].split()
    ]
    names = [
        line.split()[1]
        for line in (ARFF / "hive_hadoopJoin.arff").read_text().splitlines()
        if line.lower().startswith("@attribute")
    ]
    for i, raw in enumerate(names[:-1]):
        knob = space[
            raw.removeprefix("mapred") if raw.startswith("mapred") else raw.removeprefix("yarn")
        ]
        column = [float(r[i]) for r in rows]
        assert knob.low is not None and knob.high is not None
        assert knob.low <= min(column) + 1e-9 and max(column) <= knob.high + 1e-6, knob.name


def test_sets_and_hadoop3_defaults() -> None:
    dims = {s: load_catalogue(render.CATALOGUE, s).dim for s in ("10", "30", "hdfs", "hdfs_yarn")}
    assert dims == {"10": 10, "30": 30, "hdfs": 10, "hdfs_yarn": 20}
    space = render.full_catalogue()
    # Hadoop 3 changed these from the 2.x values BestConfig's default row has.
    assert space["yarn.scheduler.maximum-allocation-vcores"].default == 4
    assert space["yarn.resourcemanager.max-completed-applications"].default == 1000
    assert space["mapreduce.job.max.split.locations"].default == 15
    assert space["yarn.nodemanager.process-kill-wait.ms"].default == 5000
    assert space["mapreduce.map.memory.mb"].default == 1024
    mr1 = [k.name for k in space.knobs if k.description.startswith("MR1 only")]
    for name in ("10", "30", "hdfs", "hdfs_yarn"):
        assert not set(mr1) & set(load_catalogue(render.CATALOGUE, name).names)


def test_every_knob_goes_to_the_file_of_its_default_xml() -> None:
    expected = {
        "yarn.app.mapreduce.am.resource.mb": "mapred-site",
        "yarn.nodemanager.resource.memory-mb": "yarn-site",
        "mapreduce.task.io.sort.mb": "mapred-site",
        "dfs.blocksize": "hdfs-site",
        "io.file.buffer.size": "core-site",
        "hive.exec.parallel": "hive-site",
    }
    assert {k: render.site_of(k) for k in expected} == expected
    assert {render.site_of(k) for k in render.full_catalogue().names} == set(render.SITES)
    with pytest.raises(KnobError, match="no site file"):
        render.site_of("spark.executor.memory")


# -- site XML -------------------------------------------------------------------------------------
def test_each_knob_once_in_its_file_with_the_base_settings() -> None:
    values = complete(
        {
            "dfs.blocksize": 256,
            "hive.exec.parallel": True,
            "mapreduce.job.reduce.slowstart.completedmaps": 0.5,
        }
    )
    files = render.render_sites(values, LAYOUT)
    assert sorted(files) == sorted(f"{s}.xml" for s in render.SITES)
    parsed = {name.removesuffix(".xml"): parse_xml(text) for name, text in files.items()}
    seen: dict[str, str] = {}
    for site, props in parsed.items():
        for name in props:
            assert name not in seen, f"{name} in {seen.get(name)} and {site}"
            seen[name] = site
    for knob in values:
        assert seen[knob] == render.site_of(knob)
    assert parsed["hdfs-site"]["dfs.blocksize"] == str(256 * 2**20)
    assert parsed["hive-site"]["hive.exec.parallel"] == "true"
    assert parsed["mapred-site"]["mapreduce.job.reduce.slowstart.completedmaps"] == "0.5"
    assert parsed["core-site"]["fs.defaultFS"] == "hdfs://10.0.0.11:8020"
    assert parsed["yarn-site"]["yarn.resourcemanager.hostname"] == "10.0.0.11"
    assert parsed["hdfs-site"]["dfs.namenode.name.dir"] == "file:///data/hadoop/dfs/name"
    assert parsed["mapred-site"]["mapreduce.framework.name"] == "yarn"
    assert parsed["yarn-site"]["yarn.nodemanager.aux-services"] == "mapreduce_shuffle"


def test_values_are_xml_escaped() -> None:
    nasty = 'a<b>&"c"\'</value><name>x'
    files = render.render_sites(
        complete(), LAYOUT, extra={"core-site": {"hadoop.proxyuser.t.hosts": nasty}}
    )
    assert parse_xml(files["core-site.xml"])["hadoop.proxyuser.t.hosts"] == nasty


def test_site_properties_may_not_set_knobs_or_unknown_files() -> None:
    with pytest.raises(ConfigError, match="is a knob"):
        render.render_sites(
            complete(), LAYOUT, extra={"mapred-site": {"mapreduce.task.io.sort.mb": 200}}
        )
    with pytest.raises(ConfigError, match="unknown or unused"):
        render.render_sites(
            complete(sites=render.HADOOP_SITES),
            LAYOUT,
            render.HADOOP_SITES,
            extra={"hive-site": {"x": 1}},
        )


def test_a_knob_of_an_unwritten_file_is_refused_not_dropped() -> None:
    values = complete(sites=render.HADOOP_SITES)
    assert "hive-site.xml" not in render.render_sites(values, LAYOUT, render.HADOOP_SITES)
    with pytest.raises(KnobError, match=r"hive-site\.xml"):
        render.render_sites({**values, "hive.exec.parallel": True}, LAYOUT, render.HADOOP_SITES)


def test_workers_and_hadoop_env() -> None:
    assert render.workers_file(LAYOUT.workers) == "10.0.0.11\n10.0.0.12\n10.0.0.13\n"
    original = "# export JAVA_HOME=\nexport HADOOP_OPTS=-Xmx1g\n"
    once = render.hadoop_env_sh(original, "/data/hadoop", "/usr/lib/jvm/java-11")
    assert once.startswith(original.rstrip("\n"))
    assert "export HADOOP_LOG_DIR=/data/hadoop/logs" in once
    assert "export JAVA_HOME=/usr/lib/jvm/java-11" in once
    assert render.hadoop_env_sh(once, "/data/hadoop", "/usr/lib/jvm/java-11") == once


# -- resource consistency -------------------------------------------------------------------------
def test_containers_clamped_to_the_largest_container_and_sort_buffer_to_the_heap() -> None:
    values = complete(
        {
            "yarn.nodemanager.resource.memory-mb": 8192,
            "yarn.scheduler.maximum-allocation-mb": 20000,
            "mapreduce.map.memory.mb": 1024,
            "mapreduce.reduce.memory.mb": 4000,
            "yarn.app.mapreduce.am.resource.mb": 16000,
            "yarn.nodemanager.resource.cpu-vcores": 2,
            "mapreduce.map.cpu.vcores": 6,
            "dfs.replication": 3,
        }
    )
    values["mapreduce.task.io.sort.mb"] = 500  # beyond the catalogue's range: a user's widening
    fixed, changes = render.reconcile(values, datanodes=2)
    assert fixed["yarn.scheduler.maximum-allocation-mb"] == 8192
    assert fixed["yarn.app.mapreduce.am.resource.mb"] == 8192
    assert fixed["mapreduce.reduce.memory.mb"] == 4000  # fits: untouched
    assert fixed["mapreduce.task.io.sort.mb"] == 409  # 1024 * 0.8 / 2
    assert fixed["yarn.scheduler.maximum-allocation-vcores"] == 2
    assert fixed["mapreduce.map.cpu.vcores"] == 2
    assert fixed["dfs.replication"] == 2
    assert changes["mapreduce.task.io.sort.mb"] == (500, 409)
    assert render.reconcile(complete(), datanodes=3) == (complete(), {})  # defaults consistent


def test_reject_policy_names_the_knob_and_the_limit() -> None:
    values = {**complete({"mapreduce.map.memory.mb": 1024}), "mapreduce.task.io.sort.mb": 410}
    with pytest.raises(KnobError, match=r"mapreduce.task.io.sort.mb.*410 exceeds 409"):
        render.reconcile(values, datanodes=3, policy="reject")
    big_am = complete({"yarn.app.mapreduce.am.resource.mb": 9000})
    with pytest.raises(KnobError, match=r"am.resource.mb.*9000 exceeds 8192"):
        render.reconcile(big_am, datanodes=3, policy="reject")
    assert render.reconcile(complete(), datanodes=1, policy="reject")[0]["dfs.replication"] == 1


def test_every_sampled_configuration_is_consistent_after_reconcile() -> None:
    space = load_catalogue(render.CATALOGUE, "30")
    for point in space.decode_many(np.random.default_rng(1).random((200, space.dim))):
        fixed, changed = render.reconcile(complete(point), datanodes=3)
        v: dict[str, Any] = dict(fixed)
        largest = min(
            v["yarn.scheduler.maximum-allocation-mb"], v["yarn.nodemanager.resource.memory-mb"]
        )
        assert (
            max(
                v["mapreduce.map.memory.mb"],
                v["mapreduce.reduce.memory.mb"],
                v["yarn.app.mapreduce.am.resource.mb"],
            )
            <= largest
        )
        assert v["mapreduce.task.io.sort.mb"] <= v["mapreduce.map.memory.mb"] * 0.4
        assert v["mapreduce.map.cpu.vcores"] <= v["yarn.nodemanager.resource.cpu-vcores"]
        assert all(isinstance(v[k], int) and v[k] >= 1 for k in changed)  # whole limits


# -- commands -------------------------------------------------------------------------------------
def test_command_builders() -> None:
    assert commands.start_commands("/opt/hadoop") == [
        ["/opt/hadoop/sbin/start-dfs.sh"],
        ["/opt/hadoop/sbin/start-yarn.sh"],
    ]
    assert commands.stop_commands("/opt/hadoop") == [
        ["/opt/hadoop/sbin/stop-yarn.sh"],
        ["/opt/hadoop/sbin/stop-dfs.sh"],
    ]
    assert commands.safemode_wait("/opt/hadoop", "/d/conf") == [
        "/opt/hadoop/bin/hdfs",
        "--config",
        "/d/conf",
        "dfsadmin",
        "-safemode",
        "wait",
    ]
    assert commands.yarn_node_list("/opt/hadoop", "/d/conf")[-3:] == ["node", "-list", "-all"]
    assert commands.hadoop_env("/d/conf", "/usr/lib/jvm/j11") == {
        "HADOOP_CONF_DIR": "/d/conf",
        "JAVA_HOME": "/usr/lib/jvm/j11",
    }
    assert commands.hibench_prepare("/opt/HiBench", "sql", "join") == [
        "/opt/HiBench/bin/workloads/sql/join/prepare/prepare.sh"
    ]
    assert commands.hibench_run("/opt/HiBench", "micro", "dfsioe", "run_write.sh") == [
        "/opt/HiBench/bin/workloads/micro/dfsioe/hadoop/run_write.sh"
    ]
    with pytest.raises(ValueError):
        commands.sbin("/opt/hadoop", "hadoop-daemon.sh")


@pytest.mark.parametrize(
    "path",
    [
        "/opt/hadoop; rm -rf /",
        "/opt/had oop",
        "opt/hadoop",
        "/opt/$(id)",
        "/opt/a,b",
        "/opt/../etc",
        "/opt/x\nexport",
    ],
)
def test_hostile_paths_never_reach_a_command(path: str) -> None:
    with pytest.raises(ConfigError, match="absolute path"):
        commands.safemode_wait(path, "/d/conf")
    with pytest.raises(ConfigError):
        commands.hibench_run(path, "sql", "join")


@pytest.mark.parametrize(
    "host", ["node1\nnode2", "a b", "-oProxyCommand=x", "node1;id", "[::1]", "node1:8020", ""]
)
def test_hostile_host_names_are_refused(host: str) -> None:
    with pytest.raises(ConfigError, match="host name"):
        render.Layout(host, ("10.0.0.12",), "/opt/hadoop", "/data/hadoop")
    with pytest.raises(ConfigError, match="host name"):
        render.workers_file(["10.0.0.12", host])


@pytest.mark.parametrize(
    ("category", "name", "script"),
    [
        ("sql", "../../etc", "run.sh"),
        ("sql;id", "join", "run.sh"),
        ("sql", "join", "run.sh; id"),
        ("sql", "join", "../run.sh"),
    ],
)
def test_hostile_workload_names_are_refused(category: str, name: str, script: str) -> None:
    with pytest.raises(ConfigError):
        commands.hibench_run("/opt/HiBench", category, name, script)


def test_hibench_conf_files() -> None:
    text = hibench_hadoop_conf("/opt/hadoop", "/data/hadoop/conf", LAYOUT.default_fs)
    pairs = dict(line.split(None, 1) for line in text.splitlines() if not line.startswith("#"))
    assert pairs == {
        "hibench.hadoop.home": "/opt/hadoop",
        "hibench.hadoop.executable": "/opt/hadoop/bin/hadoop",
        "hibench.hadoop.configure.dir": "/data/hadoop/conf",
        "hibench.hdfs.master": "hdfs://10.0.0.11:8020",
        "hibench.hadoop.release": "apache",
    }
    ours = harness_conf(
        "large", 12, 3, ["10.0.0.11"], ["10.0.0.12", "10.0.0.13"], hive_home="/opt/hive"
    )
    pairs = dict(line.split(None, 1) for line in ours.splitlines() if not line.startswith("#"))
    assert pairs["hibench.scale.profile"] == "large"
    assert pairs["hibench.default.map.parallelism"] == "12"
    assert pairs["hibench.default.shuffle.parallelism"] == "3"
    assert pairs["hibench.slaves.hostnames"] == "10.0.0.12 10.0.0.13"
    assert pairs["hibench.hive.home"] == "/opt/hive"
    with pytest.raises(ConfigError, match="scale profile"):
        harness_conf("medium", 2, 1, ["a"], ["b"])
    with pytest.raises(ConfigError, match="host name"):
        harness_conf("tiny", 2, 1, ["a\nhibench.hadoop.home /tmp/evil"], ["b"])


# -- parsers --------------------------------------------------------------------------------------
def test_hibench_report() -> None:
    rows = parse_hibench_report(fixture("hibench.report"))
    assert [r.type for r in rows] == [
        "HadoopJoin",
        "HadoopPagerank",
        "HadoopDfsioe-write",
        "HadoopJoin",
        "HadoopTerasort",
    ]
    assert rows[0].duration_s == 65.362 and rows[0].input_bytes == 1922108460
    assert rows[2].throughput_bytes_s == 48735976 and rows[2].throughput_node_bytes_s == 16245325
    assert rows[4].duration_s == 0.512  # bc prints ".512"
    assert parse_hibench_report("Type Date Time\ngarbage line\nHadoopJoin a b c d e\n") == []


def test_new_report_rows_are_the_appended_ones() -> None:
    text = fixture("hibench.report")
    lines = text.splitlines(keepends=True)
    before = "".join(lines[:4])
    assert [r.duration_s for r in new_report_rows(before, text, "HadoopJoin")] == [58.417]
    assert new_report_rows(text, text, "HadoopJoin") == []
    # the user rotated the report meanwhile: everything in it is new
    assert len(new_report_rows(text, lines[0] + lines[4], "HadoopJoin")) == 1
    assert new_report_rows("", text, "HadoopKmeans") == []


def test_dfsio_results() -> None:
    first, second = parse_dfsio_results(fixture("dfsioe_result_write.txt"))
    assert first.mode == "write" and first.files == 16 and first.total_mb == 4096
    assert first.exec_time_s == 83.372
    assert first.task_throughput_mb_s == pytest.approx(6.9132, abs=1e-4)
    assert first.throughput_mb_s == pytest.approx(4096 / 83.372)
    assert first.aggregated_mb_s == pytest.approx(101.845, abs=1e-3)
    assert second.aggregated_mb_s is None and second.exec_time_s == 102.516
    cut = fixture("dfsioe_result_write.txt").split("Test exec time sec")[0]
    assert parse_dfsio_results(cut) == []  # an unfinished block is no result


def test_dfsadmin_report_and_safemode() -> None:
    healthy = parse_dfsadmin_report(fixture("dfsadmin_report_live3.txt"))
    assert (healthy.live, healthy.dead, healthy.safemode, healthy.valid) == (3, 0, False, True)
    assert healthy.live_hosts == ("node1", "node2", "node3")
    degraded = parse_dfsadmin_report(fixture("dfsadmin_report_safemode_dead1.txt"))
    assert (degraded.live, degraded.dead, degraded.safemode) == (2, 1, True)
    assert degraded.live_hosts == ("node1", "node2")
    down = parse_dfsadmin_report(fixture("dfsadmin_connection_refused.txt"))
    assert (down.live, down.valid) == (0, False)
    assert safemode_off("Safe mode is OFF\n") and not safemode_off("Safe mode is ON\n")


def test_yarn_node_list() -> None:
    nodes = parse_yarn_nodes(fixture("yarn_node_list.txt"))
    assert [(n.node_id, n.state, n.containers) for n in nodes] == [
        ("node1:35827", "RUNNING", 0),
        ("node2:46859", "RUNNING", 0),
        ("node3:39244", "RUNNING", 1),
    ]
    states = [n.state for n in parse_yarn_nodes(fixture("yarn_node_list_unhealthy.txt"))]
    assert states == ["RUNNING", "UNHEALTHY", "RUNNING", "LOST"]
    assert parse_yarn_nodes("Retrying connect to server: node1/10.0.0.11:8032\n") == []


def test_job_failures_in_hibench_output() -> None:
    assert job_failure(fixture("hive_join_ok_output.txt")) is None
    assert job_failure(fixture("hive_join_failed_output.txt")) == (
        "FAILED: Execution Error, return code 2 from org.apache.hadoop.hive.ql.exec.mr.MapRedTask"
    )
    failure = job_failure(fixture("terasort_failed_output.txt"))
    assert failure is not None and failure.startswith("Job job_1709634000000_0007 failed")
    coloured = "\x1b[1;31mERROR\x1b[0m: Hadoop job \x1b[1;33mx.jar sort\x1b[0m failed to run"
    assert job_failure(coloured + " successfully.") == (
        "ERROR: Hadoop job x.jar sort failed to run successfully."
    )


# -- the lifecycle against stand-in installs ------------------------------------------------------
class Node(LocalExecutor):
    """A LocalExecutor posing as a cluster node with its own name and address."""

    def __init__(self, host: str, address: str) -> None:
        self.host, self.address = host, address


@pytest.fixture
def standin(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """Copies of the stand-in installs (plain paths: check_path refuses pytest's brackets)."""
    base = tmp_path_factory.mktemp("hadoop")
    shutil.copytree(DATA / "standin", base / "inst")
    for script in (base / "inst").rglob("*"):
        if script.suffix == ".sh" or script.parent.name == "bin":
            script.chmod(script.stat().st_mode | stat.S_IXUSR)
    state = base / "state"  # the stand-ins' default: <base>/state
    state.mkdir()
    monkeypatch.delenv("STANDIN_STATE", raising=False)
    return base, state


Make = Callable[..., HiveHadoopSystem | HDFSYarnSystem]


@pytest.fixture
def make(standin: tuple[Path, Path]) -> Make:
    base, _ = standin

    def _make(cls: type = HiveHadoopSystem, nodes: int = 2, **kwargs: object) -> object:
        sut = tuple(Node(f"node{i}", f"127.0.0.{i}") for i in range(1, nodes + 1))
        options = {
            "hadoop_home": str(base / "inst" / "hadoop"),
            "hibench_home": str(base / "inst" / "hibench"),
            "data_root": str(base / "data"),
            "poll_s": 0.05,
            "setup_start_timeout_s": 120,
            "cluster": Cluster(sut, sut[0]),
            **kwargs,
        }
        return cls(**options)

    return _make  # type: ignore[return-value]


def calls(state: Path) -> list[str]:
    return (state / "calls").read_text().splitlines()


def test_hive_session_lifecycle_on_standins(make: Make, standin: tuple[Path, Path]) -> None:
    base, state = standin
    system = make()
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    system.setup(base / "work", join)
    data = base / "data"
    assert (data / "dfs/name/current/VERSION").exists()  # formatted once
    assert (data / "conf/log4j.properties").exists()  # the install's files copied
    assert "stand.in.user.setting" not in (data / "conf/core-site.xml").read_text()
    assert (data / "conf/workers").read_text() == "127.0.0.1\n127.0.0.2\n"
    assert "HADOOP_LOG_DIR=" in (data / "conf/hadoop-env.sh").read_text()
    assert "/PATH/TO/YOUR" not in (data / "hibench-conf/hadoop.conf").read_text()
    assert (data / "hibench-conf/hibench.conf").exists()
    log = calls(state)
    assert (
        log.index("hdfs namenode -format -nonInteractive")
        < log.index(f"start-dfs {data}/conf")
        < log.index(f"start-yarn {data}/conf")
    )
    assert "prepare join tiny hdfs://127.0.0.1:8020" in log

    objective = Objective.for_workload(join.metrics)
    config = {**system.space.default(), "mapreduce.job.reduces": 7}
    observation = run_test(system, join, objective, config, trial=1, start_timeout_s=120)
    assert observation.status is Status.SUCCEEDED, observation.message
    assert observation.metrics == {
        "duration_s": 58.417,
        "throughput_bytes_s": 32903168,
        "throughput_node_bytes_s": 10967722,
    }
    mapred = parse_xml((data / "conf/mapred-site.xml").read_text())
    assert mapred["mapreduce.job.reduces"] == "7"
    assert (
        parse_xml((data / "hive-conf/hive-site.xml").read_text())["hive.execution.engine"] == "mr"
    )
    assert "run join tiny maps=2 reduces=7" in calls(state)  # HiBench follows the knobs
    tail = calls(state)[-4:]
    assert tail[-2:] == [f"stop-yarn {data}/conf", f"stop-dfs {data}/conf"]
    system.teardown()


def test_workload_failures_become_failed_tests(make: Make, standin: tuple[Path, Path]) -> None:
    base, state = standin
    system = make()
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    system.setup(base / "work", join)
    system.apply(system.space.default())
    system.start(120)
    (state / "join_hive_fails").touch()
    with pytest.raises(WorkloadError, match="FAILED: Execution Error"):
        join.run(system, 120)
    (state / "join_hive_fails").unlink()
    (state / "join_exit").write_text("2")
    with pytest.raises(WorkloadError, match="exited 2") as info:
        join.run(system, 120)
    assert "Cannot initialize Cluster" in info.value.output_tail  # bench.log's tail
    (state / "join_exit").unlink()
    (state / "join_no_report").touch()
    with pytest.raises(WorkloadError, match="no new HadoopJoin line"):
        join.run(system, 120)
    (state / "join_no_report").unlink()
    (state / "join_duration").write_text(".875")
    assert join.run(system, 120)["duration_s"] == 0.875
    system.stop()


def test_daemon_that_will_not_start_is_a_crash_with_its_log(
    make: Make, standin: tuple[Path, Path]
) -> None:
    base, state = standin
    system = make()
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    system.setup(base / "work", join)
    (state / "namenode_fails").touch()
    objective = Objective.for_workload(join.metrics)
    observation = run_test(
        system, join, objective, system.space.default(), trial=1, start_timeout_s=120
    )
    assert observation.status is Status.CRASHED
    assert "start-dfs.sh exited 1 on node1" in observation.message
    assert "BindException" in observation.extra["log_tail"]
    (state / "namenode_fails").unlink()
    (state / "unhealthy").touch()
    with pytest.raises(SystemStartError, match=r"1/2 NodeManagers RUNNING .*UNHEALTHY") as info:
        system.start(3.0)
    assert "resourcemanager" in info.value.log_tail
    (state / "unhealthy").unlink()
    (state / "datanodes").write_text("1")
    with pytest.raises(SystemStartError, match="1/2 DataNodes live"):
        system.start(3.0)
    system.teardown()


def test_reject_policy_crashes_the_test_without_starting(
    make: Make, standin: tuple[Path, Path]
) -> None:
    base, state = standin
    system = make(memory_policy="reject")
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    system.setup(base / "work", join)
    starts = calls(state).count(f"start-dfs {base}/data/conf")
    config = {**system.space.default(), "yarn.app.mapreduce.am.resource.mb": 12000}
    observation = run_test(system, join, Objective.for_workload(join.metrics), config, trial=1)
    assert observation.status is Status.CRASHED
    assert "12000 exceeds 8192" in observation.message
    assert calls(state).count(f"start-dfs {base}/data/conf") == starts


def test_hdfs_dfsio_on_standins(make: Make, standin: tuple[Path, Path]) -> None:
    base, state = standin
    system = make(HDFSYarnSystem, nodes=3)
    dfsio = DFSIOWorkload("write", scale_profile="tiny")
    system.setup(base / "work", dfsio)
    assert dfsio.run_script == "run-write.sh"  # found the release's name
    assert not (base / "data/hive-conf").exists()
    system.apply({"dfs.blocksize": 64, "dfs.replication": 3})
    assert parse_xml((base / "data/conf/hdfs-site.xml").read_text())["dfs.blocksize"] == str(
        64 * 2**20
    )
    system.start(120)
    (state / "dfsio_exec_s").write_text("64")
    metrics = dfsio.run(system, 120)
    assert metrics["throughput_mb_s"] == pytest.approx(4096 / 64)
    assert metrics["exec_time_s"] == 64 and metrics["duration_s"] == 88.127
    (state / "dfsio_exec_s").write_text("128")
    assert dfsio.run(system, 120)["throughput_mb_s"] == pytest.approx(32.0)  # the new block
    system.teardown()


@pytest.mark.integration
@pytest.mark.slow
def test_hive_lifecycle_over_ssh_on_standins(
    private_sshd: PrivateSSHD, make: Make, standin: tuple[Path, Path]
) -> None:
    """The same lifecycle through the SSH executor and a real private sshd on 127.0.0.1:
    env passing, remote file writes and reads, remote command quoting."""
    from harness.remote import Host
    from harness.remote.ssh import SSHExecutor

    base, state = standin
    nodes = tuple(
        SSHExecutor(Host.from_mapping(private_sshd.host(name=f"node{i}"), {})) for i in (1, 2)
    )
    try:
        system = make(cluster=Cluster(nodes, nodes[0]))
        join = HiBenchWorkload("sql", "join", scale_profile="tiny")
        system.setup(base / "work", join)
        assert (base / "data/conf/workers").read_text() == "127.0.0.1\n"  # one address
        observation = run_test(
            system,
            join,
            Objective.for_workload(join.metrics),
            system.space.default(),
            trial=1,
            start_timeout_s=120,
        )
        assert observation.status is Status.SUCCEEDED, observation.message
        assert observation.metrics["duration_s"] == 58.417
        assert "run join tiny maps=2 reduces=1" in calls(state)
        system.teardown()
    finally:
        for node in nodes:
            node.close()


def test_missing_installs_name_host_and_config_key(make: Make, standin: tuple[Path, Path]) -> None:
    base, _ = standin
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    cases = [
        ({"hadoop_home": "/nonexistent/hadoop"}, "system.adapter.hadoop_home"),
        ({"hibench_home": "/nonexistent/HiBench"}, "system.adapter.hibench_home"),
        ({"hive_home": "/nonexistent/hive"}, "system.adapter.hive_home"),
        ({"java_home": "/nonexistent/jdk"}, "system.adapter.java_home"),
    ]
    for kwargs, key in cases:
        with pytest.raises(ConfigError, match=rf"not found on host node1: set {key}"):
            make(**kwargs).setup(base / "work", join)
    with pytest.raises(ConfigError, match="format_namenode=true"):
        make(format_namenode=False).setup(base / "work", join)


def test_bad_cluster_addresses_fail_at_setup(make: Make, standin: tuple[Path, Path]) -> None:
    base, _ = standin
    evil = Node("node9", "10.0.0.9\nhibench.hadoop.home /tmp")
    system = make(cluster=Cluster((evil,), evil))
    with pytest.raises(ConfigError, match="host name"):
        system.setup(base / "work", HiBenchWorkload("sql", "join"))


@pytest.mark.parametrize("cls", [HiveHadoopSystem, HDFSYarnSystem])
def test_the_session_builder_hands_over_the_cluster(cls: type) -> None:
    from harness.remote.connect import adapter_kwargs

    cluster = Cluster.local()
    assert adapter_kwargs("x", f"{cls.__module__}.{cls.__name__}", cluster) == {"cluster": cluster}
    assert cls(cluster=cluster).cluster is cluster


def test_hdfs_system_refuses_hive_knobs() -> None:
    with pytest.raises(ConfigError, match="does not write"):
        HDFSYarnSystem(knob_set="30")
    assert HDFSYarnSystem(knob_set="hdfs_yarn").space.dim == 20
    assert "hive.exec.parallel" not in HDFSYarnSystem().catalogue


# -- compose --------------------------------------------------------------------------------------
Compose = Callable[..., DictConfig]


@pytest.mark.parametrize(
    ("system", "workloads", "default"),
    [
        ("hive", {"join", "pagerank", "kmeans", "terasort"}, "join"),
        ("hdfs", {"dfsio", "dfsio_read", "terasort"}, "dfsio"),
    ],
)
def test_compose(compose_cfg: Compose, system: str, workloads: set[str], default: str) -> None:
    cfg = compose_cfg(f"system={system}")
    assert set(workloads_of(system)) == workloads and cfg.workload.name == default
    from hydra.utils import instantiate

    adapter = instantiate(cfg.system.adapter)
    assert adapter.kind == "remote" and adapter.name == system
    workload = make_workload(cfg)
    assert workload.name == default
    cfg30 = compose_cfg(
        f"system={system}",
        "system.adapter.knob_set=" + ("30" if system == "hive" else "hdfs_yarn"),
        "system.adapter.hadoop_home=/srv/hadoop-3.3.6",
    )
    adapter = instantiate(cfg30.system.adapter)
    assert adapter.space.dim == (30 if system == "hive" else 20)
    assert adapter.hadoop_home == "/srv/hadoop-3.3.6"
