"""Hive-Hadoop and HDFS/YARN adapters without a cluster: catalogue, site XML, resource
consistency, command builders, parsers on text in the real formats, and the whole lifecycle
against stand-in Hadoop/HiBench installs (shell scripts, tests/data/hadoop/standin) run by
LocalExecutors posing as cluster nodes. No Hadoop, Hive or HiBench runs here."""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import signal
import socket
import stat
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from omegaconf import DictConfig

from harness.builder.session import make_workload
from harness.conf.schema import workloads_of
from harness.errors import ConfigError, KnobError, SystemStartError, WorkloadError
from harness.executor import LocalExecutor
from harness.hosts.cluster import Cluster
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from harness.space import Space, load_catalogue
from systems.hadoop import (
    DFSIOeWorkload,
    HDFSYarnSystem,
    HiBenchWorkload,
    HiveHadoopSystem,
    TeraSortWorkload,
    TestDFSIOWorkload,
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
from tests.helpers.sshd import PrivateSSHD

DATA = Path(__file__).resolve().parents[2] / "data" / "hadoop"
ARFF = Path(__file__).resolve().parents[3] / "systems" / "dataset" / "data" / "bestconf"
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
    # The NameNode's folder is the master's own; the other folders are per node (nodes.py).
    assert parsed["hdfs-site"]["dfs.namenode.name.dir"] == "file:///data/hadoop/10.0.0.11/dfs/name"
    assert parsed["hdfs-site"]["dfs.namenode.http-address"] == "10.0.0.11:9870"
    assert parsed["hdfs-site"]["dfs.namenode.secondary.http-address"] == "10.0.0.11:9868"
    assert parsed["hdfs-site"]["dfs.namenode.safemode.extension"] == "1000"
    per_node = {"hadoop.tmp.dir", "dfs.datanode.data.dir", "yarn.nodemanager.local-dirs"}
    assert not per_node & set(seen)
    assert "yarn.application.classpath" not in seen  # a tarball install: its defaults hold
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
    node = "/data/hadoop/10.0.0.12"
    once = render.hadoop_env_sh(original, node, "/usr/lib/jvm/java-11", 1024)
    assert once.startswith(original.rstrip("\n"))
    assert "export HADOOP_LOG_DIR=/data/hadoop/10.0.0.12/logs" in once
    assert "export HADOOP_PID_DIR=/data/hadoop/10.0.0.12/pids" in once
    assert "export JAVA_HOME=/usr/lib/jvm/java-11" in once
    assert "export HADOOP_HEAPSIZE_MAX=1024m" in once
    assert render.hadoop_env_sh(once, node, "/usr/lib/jvm/java-11", 1024) == once
    bare = render.hadoop_env_sh(once, node)  # no JDK, no heap: the install's own choices
    assert "JAVA_HOME=/usr" not in bare and "HADOOP_HEAPSIZE_MAX" not in bare
    with pytest.raises(ConfigError):
        render.hadoop_env_sh(original, "/data/hadoop/x;id")


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


def test_the_disk_health_threshold_is_raised_to_this_disks_use_plus_headroom(
    tmp_path: Path,
) -> None:
    from systems.hadoop.health import disk_floor, disk_use_percent

    df = (
        "Filesystem     1024-blocks     Used Available Capacity Mounted on\n"
        "/dev/vda        264128000 12582912  84000000      13% /\n"
    )
    # YARN counts (size - available) / size: the root-reserved blocks are "used" too.
    assert disk_use_percent(df) == pytest.approx(100 * (264128000 - 84000000) / 264128000)
    floor = disk_floor([(LocalExecutor(), str(tmp_path))], 5.0)
    assert floor is not None and 5.0 < floor <= 100.0
    assert disk_floor([(LocalExecutor(), str(tmp_path))], None) is None
    low = complete({render.DISK_KNOB: 17.2})
    fixed, changes = render.reconcile(low, datanodes=1, policy="reject", disk_floor=73.456)
    assert fixed[render.DISK_KNOB] == 73.46 and changes[render.DISK_KNOB] == (17.2, 73.46)
    high = complete({render.DISK_KNOB: 90.0})
    assert render.reconcile(high, datanodes=1, disk_floor=73.4)[0][render.DISK_KNOB] == 90.0


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
Compose = Callable[..., DictConfig]


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
        if issubclass(cls, HiveHadoopSystem):
            options.setdefault("hive_home", str(base / "inst" / "hive"))
        return cls(**options)

    return _make  # type: ignore[return-value]


def calls(state: Path) -> list[str]:
    return (state / "calls").read_text().splitlines()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: it waits for init to reap it)."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_line.rsplit(")", 1)[1].split()[0] != "Z"


def live_daemons(state: Path) -> list[str]:
    """The stand-in daemons still registered (``<daemon>-<node>``) with a live process, or
    registered by the sbin scripts."""
    live = []
    for entry in sorted((state / "live").glob("*")):
        text = entry.read_text().strip()
        if text == "sbin" or (text.isdigit() and _alive(int(text))):
            live.append(entry.name)
    return live


def kill_daemon(state: Path, name: str) -> None:
    """Kill a stand-in daemon behind the adapter's back, and wait until it is gone for good
    (``kill -0`` fails), as after a crash."""
    pid = int((state / "live" / name).read_text())
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30  # orphans are reaped by init, here after a second or two
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError(f"stand-in daemon {name} (pid {pid}) was not reaped")


USER = pwd.getpwuid(os.getuid()).pw_name
#: What `start_mode=daemons` runs on a two-node cluster, in order: each daemon on its node,
#: the second node's DataNode and NodeManager on their own port block (nodes.PORT_STEP).
DAEMON_STARTS = [
    "hdfs --daemon start namenode 127.0.0.1",
    "hdfs --daemon start datanode 127.0.0.1 127.0.0.1:9866",
    "hdfs --daemon start datanode 127.0.0.2 127.0.0.2:9876",
    "yarn --daemon start resourcemanager 127.0.0.1",
    "yarn --daemon start nodemanager 127.0.0.1 127.0.0.1:8041",
    "yarn --daemon start nodemanager 127.0.0.2 127.0.0.2:8051",
]
DAEMON_STOPS = [
    "yarn --daemon stop nodemanager 127.0.0.2",
    "yarn --daemon stop nodemanager 127.0.0.1",
    "yarn --daemon stop resourcemanager 127.0.0.1",
    "hdfs --daemon stop datanode 127.0.0.2",
    "hdfs --daemon stop datanode 127.0.0.1",
    "hdfs --daemon stop namenode 127.0.0.1",
]
TWO_NODES = [
    "datanode-127.0.0.1",
    "datanode-127.0.0.2",
    "namenode-127.0.0.1",
    "nodemanager-127.0.0.1",
    "nodemanager-127.0.0.2",
    "resourcemanager-127.0.0.1",
]


@pytest.mark.parametrize("mode", ["daemons", "sbin"])
def test_hive_session_lifecycle_on_standins(
    make: Make, standin: tuple[Path, Path], mode: str
) -> None:
    base, state = standin
    system = make(start_mode=mode)
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    system.setup(base / "work", join)
    master, second = base / "data/127.0.0.1", base / "data/127.0.0.2"
    assert (master / "dfs/name/current/VERSION").exists()  # formatted once
    for node in (master, second):  # every node has its own folder
        assert (node / "conf/log4j.properties").exists()  # the install's files copied
        assert "stand.in.user.setting" not in (node / "conf/core-site.xml").read_text()
        assert (node / "conf/workers").read_text() == "127.0.0.1\n127.0.0.2\n"
        env_sh = (node / "conf/hadoop-env.sh").read_text()
        assert f"HADOOP_LOG_DIR={node}/logs" in env_sh and f"HADOOP_PID_DIR={node}/pids" in env_sh
        assert "HADOOP_HEAPSIZE_MAX=1024m" in env_sh  # daemon_heap_mb's default
    hdfs2 = parse_xml((second / "conf/hdfs-site.xml").read_text())
    assert hdfs2["dfs.namenode.name.dir"] == f"file://{master}/dfs/name"
    assert hdfs2["dfs.datanode.data.dir"] == f"file://{second}/dfs/data"
    assert hdfs2["dfs.datanode.hostname"] == "127.0.0.2"
    assert parse_xml((second / "conf/core-site.xml").read_text())["hadoop.tmp.dir"] == (
        f"{second}/tmp"
    )
    yarn2 = parse_xml((second / "conf/yarn-site.xml").read_text())
    assert yarn2["yarn.nodemanager.local-dirs"] == f"{second}/yarn/local"
    mapred2 = parse_xml((second / "conf/mapred-site.xml").read_text())
    assert mapred2["mapreduce.shuffle.port"] == "13572"  # its own port block on this machine
    assert "/PATH/TO/YOUR" not in (master / "hibench-conf/hadoop.conf").read_text()
    assert (master / "hibench-conf/hibench.conf").exists()
    log = calls(state)
    formatted = log.index("hdfs namenode -format -nonInteractive")
    if mode == "daemons":
        assert [c for c in log if " --daemon " in c] == DAEMON_STARTS
        assert formatted < log.index(DAEMON_STARTS[0])
        assert not [c for c in log if c.startswith("start-")]
        assert (master / f"pids/hadoop-{USER}-namenode.pid").exists()
        assert (second / f"pids/hadoop-{USER}-datanode.pid").exists()
        assert (second / f"logs/hadoop-{USER}-nodemanager-127.0.0.2.log").exists()
    else:
        assert (
            formatted
            < log.index(f"start-dfs {master}/conf")
            < log.index(f"start-yarn {master}/conf")
        )
        assert not [c for c in log if " --daemon " in c]
    assert live_daemons(state) == TWO_NODES
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
    for node in (master, second):  # the knobs reach every node
        assert (
            parse_xml((node / "conf/mapred-site.xml").read_text())["mapreduce.job.reduces"] == "7"
        )
    assert (
        parse_xml((master / "hive-conf/hive-site.xml").read_text())["hive.execution.engine"]
        == "mr"
    )
    assert "run join tiny maps=2 reduces=7" in calls(state)  # HiBench follows the knobs
    if mode == "daemons":
        # the trial stopped the cluster (every daemon at once: in any order)
        assert sorted(calls(state)[-6:]) == sorted(DAEMON_STOPS)
    else:
        assert calls(state)[-2:] == [f"stop-yarn {master}/conf", f"stop-dfs {master}/conf"]
    assert live_daemons(state) == []
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
    assert live_daemons(state) == []


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("daemons", "namenode on node1 exited 1 on node1"),
        ("sbin", "start-dfs.sh exited 1 on node1"),
    ],
)
def test_daemon_that_will_not_start_is_a_crash_with_its_log(
    make: Make, standin: tuple[Path, Path], mode: str, message: str
) -> None:
    base, state = standin
    system = make(start_mode=mode)
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    system.setup(base / "work", join)
    (state / "namenode_fails").touch()
    objective = Objective.for_workload(join.metrics)
    observation = run_test(
        system, join, objective, system.space.default(), trial=1, start_timeout_s=120
    )
    assert observation.status is Status.CRASHED
    assert message in observation.message
    assert "BindException" in observation.extra["log_tail"]
    (state / "namenode_fails").unlink()
    if mode == "daemons":  # a worker's daemon: named with its host
        (state / "datanode_fails").write_text("127.0.0.2")
        with pytest.raises(SystemStartError, match="datanode on node2 exited 1 on node2"):
            system.start(10.0)
        (state / "datanode_fails").unlink()
    (state / "unhealthy").touch()  # YARN's disk check failed: no use waiting for the limit
    began = time.monotonic()
    with pytest.raises(SystemStartError, match=r"NodeManager \S+ UNHEALTHY") as info:
        system.start(60.0)
    assert time.monotonic() - began < 30
    assert "resourcemanager" in info.value.log_tail
    (state / "unhealthy").unlink()
    (state / "datanodes").write_text("1")
    with pytest.raises(SystemStartError, match="1/2 DataNodes live"):
        system.start(3.0)
    system.teardown()
    assert live_daemons(state) == []


def test_a_daemon_that_dies_is_found_and_health_says_so(
    make: Make, standin: tuple[Path, Path]
) -> None:
    base, state = standin
    system = make(HDFSYarnSystem)
    system.setup(base / "work", TestDFSIOWorkload())
    system.check_daemons()  # all running
    assert system.health(30) is None
    kill_daemon(state, "datanode-127.0.0.2")
    with pytest.raises(WorkloadError, match="datanode on node2 stopped during the test") as info:
        system.check_daemons()
    assert f"hadoop-{USER}-datanode-127.0.0.2.log" in info.value.output_tail  # its own log
    assert system.health(30) == "1/2 DataNodes live (0 dead)"
    system.start(30)  # a restart brings it back
    system.check_daemons()
    system.teardown()
    assert live_daemons(state) == []


def test_reject_policy_crashes_the_test_without_starting(
    make: Make, standin: tuple[Path, Path]
) -> None:
    base, state = standin
    system = make(memory_policy="reject")
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    system.setup(base / "work", join)
    starts = calls(state).count(DAEMON_STARTS[0])
    assert starts == 1
    config = {**system.space.default(), "yarn.app.mapreduce.am.resource.mb": 12000}
    observation = run_test(system, join, Objective.for_workload(join.metrics), config, trial=1)
    assert observation.status is Status.CRASHED
    assert "12000 exceeds 8192" in observation.message
    assert calls(state).count(DAEMON_STARTS[0]) == starts
    system.teardown()


def test_hdfs_dfsioe_on_standins(make: Make, standin: tuple[Path, Path]) -> None:
    base, state = standin
    system = make(HDFSYarnSystem, nodes=3)
    dfsio = DFSIOeWorkload("write", scale_profile="tiny")
    system.setup(base / "work", dfsio)
    assert dfsio.run_script == "run-write.sh"  # found the release's name
    master = base / "data/127.0.0.1"
    assert not (master / "hive-conf").exists()
    assert "hdfs --daemon start datanode 127.0.0.3 127.0.0.3:9886" in calls(state)
    assert system.apply({"dfs.blocksize": 64, "dfs.replication": 3}) is None  # as asked
    ran = system.apply({render.DISK_KNOB: 1.0})  # below this disk's use: the node is UNHEALTHY
    assert system.floor is not None and ran == {render.DISK_KNOB: round(system.floor, 2)}
    system.apply({"dfs.blocksize": 64, "dfs.replication": 3})
    for address in ("127.0.0.1", "127.0.0.2", "127.0.0.3"):
        hdfs = parse_xml((base / "data" / address / "conf/hdfs-site.xml").read_text())
        assert hdfs["dfs.blocksize"] == str(64 * 2**20)
    system.start(120)
    (state / "dfsio_exec_s").write_text("64")
    metrics = dfsio.run(system, 120)
    assert metrics["throughput_mb_s"] == pytest.approx(4096 / 64)
    assert metrics["exec_time_s"] == 64 and metrics["duration_s"] == 88.127
    (state / "dfsio_exec_s").write_text("128")
    assert dfsio.run(system, 120)["throughput_mb_s"] == pytest.approx(32.0)  # the new block
    system.teardown()
    assert live_daemons(state) == []


def test_testdfsio_on_standins_needs_no_hibench(make: Make, standin: tuple[Path, Path]) -> None:
    base, state = standin
    system = make(HDFSYarnSystem, hibench_home="/nonexistent/HiBench")
    write = TestDFSIOWorkload("write", files=2, file_mb=16, base_dir="/bench/dfsio")
    system.setup(base / "work", write)  # HiBench is checked by HiBench workloads only
    results = base / "data/127.0.0.1/dfsio_results.txt"  # on the load host, in its folder
    (state / "dfsio_exec_s").write_text("8")
    assert write.run(system, 60) == {
        "throughput_mb_s": 4.0,  # 2 x 16 MB in 8 s
        "task_throughput_mb_s": 31.5,
        "avg_io_rate_mb_s": 33.08,
        "exec_time_s": 8.0,
    }
    assert (
        "hadoop org.apache.hadoop.fs.TestDFSIO -D test.build.data=/bench/dfsio -write "
        f"-nrFiles 2 -size 16MB -resFile {results}"
    ) in calls(state)
    (state / "dfsio_exec_s").write_text("16")
    assert write.run(system, 60)["throughput_mb_s"] == 2.0  # this run's block, not the first
    read = TestDFSIOWorkload("read", files=3, file_mb=16, base_dir="/bench/dfsio")
    with pytest.raises(
        WorkloadError, match=r"TestDFSIO read failed on node1 \(Job job_\S+ failed"
    ):
        read.run(system, 60)  # no files of that size were written
    read.prepare(system, base / "work")  # writes the files it reads
    assert read.run(system, 60)["throughput_mb_s"] == 3.0
    (state / "job_fails").touch()
    with pytest.raises(WorkloadError, match="failed with state FAILED") as info:
        write.run(system, 60)
    assert "Job failed!" in info.value.output_tail
    (state / "job_fails").unlink()
    kill_daemon(state, "nodemanager-127.0.0.2")  # a run on a crippled cluster does not count
    with pytest.raises(WorkloadError, match="nodemanager on node2 stopped during the test"):
        write.run(system, 60)
    system.teardown()
    assert live_daemons(state) == []


def test_terasort_on_standins(make: Make, standin: tuple[Path, Path]) -> None:
    base, state = standin
    system = make(HDFSYarnSystem)
    sort = TeraSortWorkload(rows=5000, base_dir="/bench/ts")
    system.setup(base / "work", sort)  # TeraGen, once
    log = calls(state)
    cleaned = log.index("hdfs dfs -rm -r -f -skipTrash /bench/ts/in")
    assert cleaned < log.index(
        "hadoop org.apache.hadoop.examples.terasort.TeraGen 5000 /bench/ts/in"
    )
    metrics = sort.run(system, 60)
    assert calls(state)[-2:] == [
        "hdfs dfs -rm -r -f -skipTrash /bench/ts/out",
        "hadoop org.apache.hadoop.examples.terasort.TeraSort /bench/ts/in /bench/ts/out",
    ]
    assert metrics["duration_s"] > 0
    assert metrics["rows_per_s"] == pytest.approx(5000 / metrics["duration_s"])
    other = TeraSortWorkload(rows=5000, base_dir="/bench/elsewhere")  # no TeraGen ran for it
    with pytest.raises(WorkloadError, match="TeraSort failed on node1"):
        other.run(system, 60)
    system.teardown()
    assert live_daemons(state) == []


def test_a_load_host_apart_gets_a_client_folder(make: Make, standin: tuple[Path, Path]) -> None:
    base, state = standin
    sut = (Node("node1", "127.0.0.1"), Node("node2", "127.0.0.2"))
    system = make(cluster=Cluster(sut, Node("client", "127.0.0.9")))
    system.setup(base / "work", HiBenchWorkload("sql", "join", scale_profile="tiny"))
    client = base / "data/127.0.0.9"
    env_sh = (client / "conf/hadoop-env.sh").read_text()
    assert f"HADOOP_LOG_DIR={client}/logs" in env_sh
    hdfs = parse_xml((client / "conf/hdfs-site.xml").read_text())
    assert hdfs["dfs.client.use.datanode.hostname"] == "true"  # a client of the DataNodes
    assert "dfs.datanode.hostname" not in hdfs and "dfs.datanode.data.dir" not in hdfs
    assert "yarn.nodemanager.hostname" not in parse_xml(
        (client / "conf/yarn-site.xml").read_text()
    )
    assert (client / "hive-conf/hive-site.xml").exists()  # Hive runs on the load host
    assert not (base / "data/127.0.0.1/hive-conf").exists()
    assert (client / "hibench-conf/hibench.conf").exists()
    assert not [c for c in calls(state) if "--daemon" in c and "127.0.0.9" in c]  # no daemon
    system.teardown()
    assert live_daemons(state) == []


def test_hibench_on_a_load_host_apart_uses_the_load_hosts_conf(
    make: Make, standin: tuple[Path, Path]
) -> None:
    """HiBench runs on the load host: its HADOOP_CONF_DIR and hadoop.conf name the load
    host's folder (a load host on another machine has no copy of the master's)."""
    base, state = standin
    sut = (Node("node1", "127.0.0.1"), Node("node2", "127.0.0.2"))
    system = make(cluster=Cluster(sut, Node("client", "127.0.0.9")))
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    try:
        system.setup(base / "work", join)
        join.run(system, 60)
        conf = base / "data/127.0.0.9/conf"
        assert f"join conf {conf} {conf}" in calls(state)  # HADOOP_CONF_DIR, configure.dir
    finally:
        system.teardown()


def test_a_load_host_on_a_sut_nodes_address_keeps_the_nodes_settings(
    make: Make, standin: tuple[Path, Path]
) -> None:
    """A load host at a SUT node's address is that node's machine and folder: its client-only
    site files must not replace the node's."""
    base, _ = standin
    sut = (Node("node1", "127.0.0.1"), Node("node2", "127.0.0.2"))
    system = make(HDFSYarnSystem, cluster=Cluster(sut, Node("client", "127.0.0.1")))
    try:
        system.setup(base / "work", TestDFSIOWorkload())
        hdfs = parse_xml((base / "data/127.0.0.1/conf/hdfs-site.xml").read_text())
        assert hdfs.get("dfs.datanode.hostname") == "127.0.0.1"
    finally:
        system.teardown()


def test_a_maven_install_gets_the_containers_classpath(
    make: Make, standin: tuple[Path, Path]
) -> None:
    base, _ = standin
    (base / "inst/hadoop/bin/hadoop-launch").write_text("#!/bin/sh\nexit 1\n")  # its mark
    system = make(HDFSYarnSystem)
    system.setup(base / "work", TestDFSIOWorkload())
    assert system.layout is not None and system.layout.maven
    for address in ("127.0.0.1", "127.0.0.2"):
        conf = base / "data" / address / "conf"
        yarn = parse_xml((conf / "yarn-site.xml").read_text())
        assert yarn["yarn.application.classpath"] == f"$HADOOP_CONF_DIR,{base}/inst/hadoop/lib/*"
        mapred = parse_xml((conf / "mapred-site.xml").read_text())
        assert mapred["mapreduce.application.classpath"] == f"{base}/inst/hadoop/lib/*"
    system.teardown()


@pytest.mark.integration
@pytest.mark.slow
def test_hive_lifecycle_over_ssh_on_standins(
    private_sshd: PrivateSSHD, make: Make, standin: tuple[Path, Path]
) -> None:
    """The same lifecycle through the SSH executor and a real private sshd on 127.0.0.1:
    env passing, remote file writes and reads, remote command quoting. One node (every Hadoop
    node needs an address of its own, and the sshd has one)."""
    from harness.hosts.inventory import Host
    from harness.hosts.ssh import SSHExecutor

    base, state = standin
    node = SSHExecutor(Host.from_mapping(private_sshd.host(name="node1"), {}))
    try:
        system = make(cluster=Cluster((node,), node))
        join = HiBenchWorkload("sql", "join", scale_profile="tiny")
        system.setup(base / "work", join)
        assert (base / "data/127.0.0.1/conf/workers").read_text() == "127.0.0.1\n"
        assert live_daemons(state) == [
            "datanode-127.0.0.1",
            "namenode-127.0.0.1",
            "nodemanager-127.0.0.1",
            "resourcemanager-127.0.0.1",
        ]
        system.check_daemons()  # pid files and `kill -0` over SSH
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
        assert live_daemons(state) == []  # sshd's children carry no leak marker: check here
    finally:
        node.close()


def test_missing_installs_name_host_and_config_key(make: Make, standin: tuple[Path, Path]) -> None:
    base, state = standin
    join = HiBenchWorkload("sql", "join", scale_profile="tiny")
    cases = [
        ({"hadoop_home": "/nonexistent/hadoop"}, "system.adapter.hadoop_home"),
        ({"hibench_home": "/nonexistent/HiBench"}, "system.adapter.hibench_home"),
        ({"hive_home": "/nonexistent/hive"}, "system.adapter.hive_home"),
        ({"java_home": "/nonexistent/jdk"}, "system.adapter.java_home"),
    ]
    for kwargs, key in cases:
        system = make(**kwargs)
        try:
            with pytest.raises(ConfigError, match=rf"not found on host node1: set {key}"):
                system.setup(base / "work", join)
        finally:
            system.teardown()  # HiBench is checked by the workload, on the running cluster
    no_sbin = base / "inst/no-sbin"  # a Hadoop without the sbin scripts: start_mode=sbin only
    shutil.copytree(base / "inst/hadoop", no_sbin, ignore=shutil.ignore_patterns("sbin"))
    with pytest.raises(ConfigError, match=r"sbin/start-dfs\.sh not found on host node1"):
        make(hadoop_home=str(no_sbin), start_mode="sbin").preflight()
    make(hadoop_home=str(no_sbin))._check_installs()  # daemons mode needs no sbin scripts
    fresh = make(format_namenode=False, data_root=str(base / "fresh"))
    with pytest.raises(ConfigError, match="format_namenode=true"):
        fresh.setup(base / "work", join)
    assert live_daemons(state) == []


def test_a_setup_refusal_aborts_the_session_with_its_message(
    compose_cfg: Compose, standin: tuple[Path, Path]
) -> None:
    from harness import api

    base, state = standin
    cfg = compose_cfg(
        "system=hdfs",
        "workload=dfsio",
        "budget=1",
        "tuner=random",
        f"system.adapter.hadoop_home={base}/inst/hadoop",
        f"system.adapter.data_root={base}/fresh",
        "system.adapter.format_namenode=false",
        "system.adapter.start_mode=sbin",  # preflight: no check of this machine's ports
    )
    result = api.run(api.prepare(cfg))
    assert result.status == "ABORTED" and not result.observations
    assert result.message.startswith(f"setup failed: hdfs: no NameNode in {base}/fresh/")
    assert "format_namenode=true" in result.message and "(a bug" not in result.message
    assert live_daemons(state) == []


def test_preflight_names_the_taken_port(make: Make, standin: tuple[Path, Path]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(
            ConfigError, match=rf"127\.0\.0\.1:{port} is already in use.*namenode_port"
        ):
            make(namenode_port=port).preflight()
        make(namenode_port=port, start_mode="sbin").preflight()  # the scripts choose ports
    with pytest.raises(ConfigError, match=r"set system\.adapter\.hadoop_home"):
        make(hadoop_home="/nonexistent/hadoop").preflight()
    with pytest.raises(ConfigError, match="start_mode 'ssh'"):
        make(start_mode="ssh")


def test_bad_cluster_addresses_fail_at_setup(make: Make, standin: tuple[Path, Path]) -> None:
    base, _ = standin
    evil = Node("node9", "10.0.0.9\nhibench.hadoop.home /tmp")
    system = make(cluster=Cluster((evil,), evil))
    with pytest.raises(ConfigError, match="host name"):
        system.setup(base / "work", HiBenchWorkload("sql", "join"))
    twins = (Node("node1", "127.0.0.1"), Node("node2", "127.0.0.1"))
    with pytest.raises(ConfigError, match=r"SUT hosts share an address \(127.0.0.1, 127.0.0.1\)"):
        make(cluster=Cluster(twins, twins[0])).setup(base / "work", HiBenchWorkload("sql", "join"))
    assert not (base / "data").exists()  # refused before anything was made


@pytest.mark.parametrize("cls", [HiveHadoopSystem, HDFSYarnSystem])
def test_the_session_builder_hands_over_the_cluster(cls: type) -> None:
    from harness.hosts.connect import adapter_kwargs

    cluster = Cluster.local()
    assert adapter_kwargs("x", f"{cls.__module__}.{cls.__name__}", cluster) == {"cluster": cluster}
    assert cls(cluster=cluster).cluster is cluster


def test_hdfs_system_refuses_hive_knobs() -> None:
    with pytest.raises(ConfigError, match="does not write"):
        HDFSYarnSystem(knob_set="30")
    assert HDFSYarnSystem(knob_set="hdfs_yarn").space.dim == 20
    assert "hive.exec.parallel" not in HDFSYarnSystem().catalogue


# -- compose --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("system", "workloads", "default"),
    [
        (
            "hive",
            {
                "join",
                "aggregation",
                "pagerank",
                "kmeans",
                "terasort",
                "hibench_join",
                "hibench_pagerank",
                "hibench_kmeans",
            },
            "join",
        ),
        ("hdfs", {"dfsio", "dfsio_read", "dfsioe", "terasort"}, "dfsio"),
    ],
)
def test_compose(compose_cfg: Compose, system: str, workloads: set[str], default: str) -> None:
    cfg = compose_cfg(f"system={system}")
    assert set(workloads_of(system)) == workloads and cfg.workload.name == default
    from hydra.utils import instantiate

    adapter = instantiate(cfg.system.adapter)
    assert adapter.kind == "remote" and adapter.name == system
    assert adapter.start_mode == "daemons" and adapter.daemon_heap_mb == 1024
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


@pytest.mark.parametrize(
    ("name", "cls", "params"),
    [
        ("dfsio", TestDFSIOWorkload, {"mode": "write", "files": 4, "file_mb": 128}),
        ("dfsio_read", TestDFSIOWorkload, {"mode": "read", "files": 4, "file_mb": 128}),
        ("dfsioe", DFSIOeWorkload, {"mode": "write", "scale_profile": "small"}),
        ("terasort", TeraSortWorkload, {"rows": 1000000}),
    ],
)
def test_hdfs_workloads_compose(
    compose_cfg: Compose, name: str, cls: type, params: dict[str, object]
) -> None:
    workload = make_workload(compose_cfg("system=hdfs", f"workload={name}"))
    assert type(workload) is cls and workload.name == name
    assert params.items() <= workload.params().items()
