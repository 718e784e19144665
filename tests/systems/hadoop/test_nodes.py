"""The per-node pieces of the Hadoop adapter, without a cluster: each node's folders, addresses
and port block (nodes.py, topology.py), the site files rendered for a node and for a Maven
install, the daemons' order and command lines (daemons.py), the TestDFSIO and TeraSort
workloads' settings and command lines (jobs.py), the Maven install's launcher on its paths that
need no Java, and the port check in its own module (systems/ports.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.executor import CommandResult, Executor, LocalExecutor
from harness.hosts.cluster import Cluster
from harness.space import Config, Knob, Space
from harness.system import System
from systems import ports
from systems.hadoop import HDFSYarnSystem, TeraSortWorkload, TestDFSIOWorkload, daemons, render
from systems.hadoop.jobs import DFSIO_CLASS
from systems.hadoop.nodes import PORT_STEP, WorkerPorts, node_properties

ROOT = Path(__file__).resolve().parents[3]
LAUNCHER = ROOT / "systems/hadoop/java/hadoop/layout/bin/hadoop-launch"
LAYOUT = render.Layout("10.0.0.11", ("10.0.0.11", "10.0.0.12"), "/opt/hadoop", "/data/hadoop")
#: What the master serves on (NameNode RPC and web UIs, ResourceManager).
MASTER_PORTS = {8020, 9870, 9868, 8030, 8031, 8032, 8033, 8088}


def parse_xml(text: str) -> dict[str, str]:
    root = ET.fromstring(text)
    return {p.findtext("name") or "": p.findtext("value") or "" for p in root.findall("property")}


def sites(files: Mapping[str, str]) -> dict[str, dict[str, str]]:
    return {name.removesuffix(".xml"): parse_xml(text) for name, text in files.items()}


def defaults() -> dict:
    full = render.full_catalogue()
    return full.subspace(
        [k for k in full.names if render.site_of(k) in render.HADOOP_SITES]
    ).default()


class Remote(Executor):
    """A host reached over the network (not a LocalExecutor); it runs nothing here."""

    def __init__(self, host: str, address: str) -> None:
        self.host, self.address = host, address

    def run(self, command: Sequence[str], **_: object) -> CommandResult:  # type: ignore[override]
        raise AssertionError(f"{self.host} ran {command}")

    def write_text(self, path: str | Path, text: str, mode: int = 0o644) -> None:
        raise AssertionError(f"{self.host} wrote {path}")

    def read_text(self, path: str | Path) -> str:
        raise AssertionError(f"{self.host} read {path}")

    def exists(self, path: str | Path) -> bool:
        return False


class Canned(Remote):
    """A host whose commands print ``stdout`` and exit ``code``."""

    def __init__(self, stdout: str, code: int = 0) -> None:
        super().__init__("node1", "127.0.0.2")
        self.stdout, self.code = stdout, code

    def run(self, command: Sequence[str], **_: object) -> CommandResult:  # type: ignore[override]
        return CommandResult(self.host, tuple(command), self.code, self.stdout, "", 0.01)


# -- nodes.py: a node's folders, names and ports ------------------------------------------------
def test_a_worker_gets_its_folders_its_name_and_its_port_block() -> None:
    props = node_properties(LAYOUT, "10.0.0.12", WorkerPorts(2 * PORT_STEP))
    root = "/data/hadoop/10.0.0.12"
    assert props["core-site"] == {"hadoop.tmp.dir": f"{root}/tmp"}
    assert props["hdfs-site"] == {
        "dfs.client.use.datanode.hostname": "true",
        "dfs.datanode.use.datanode.hostname": "true",
        "dfs.namenode.datanode.registration.ip-hostname-check": "false",
        "dfs.datanode.data.dir": f"file://{root}/dfs/data",
        "dfs.datanode.hostname": "10.0.0.12",
        "dfs.datanode.address": "10.0.0.12:9886",
        "dfs.datanode.http.address": "10.0.0.12:9884",
        "dfs.datanode.ipc.address": "10.0.0.12:9887",
    }
    assert props["yarn-site"] == {
        "yarn.nodemanager.hostname": "10.0.0.12",
        "yarn.nodemanager.local-dirs": f"{root}/yarn/local",
        "yarn.nodemanager.log-dirs": f"{root}/yarn/logs",
        "yarn.nodemanager.address": "10.0.0.12:8061",
        "yarn.nodemanager.localizer.address": "10.0.0.12:8060",
        "yarn.nodemanager.webapp.address": "10.0.0.12:8062",
    }
    # binds every address, so it differs between co-hosted workers; in mapred-site, which
    # the NodeManager reads after yarn-site (mapred-default.xml would win over yarn-site)
    assert props["mapred-site"] == {"mapreduce.shuffle.port": "13582"}
    assert node_properties(LAYOUT, "10.0.0.12", WorkerPorts())["hdfs-site"][
        "dfs.datanode.address"
    ] == ("10.0.0.12:9866")  # Hadoop's default port without a block


def test_a_node_without_daemons_gets_its_folder_and_the_client_settings() -> None:
    props = node_properties(LAYOUT, "10.0.0.9", None)  # a load host apart, or a master only
    assert props["core-site"] == {"hadoop.tmp.dir": "/data/hadoop/10.0.0.9/tmp"}
    assert props["hdfs-site"]["dfs.client.use.datanode.hostname"] == "true"
    assert not [k for k in props["hdfs-site"] if k.startswith("dfs.datanode.") and "use" not in k]
    assert props["yarn-site"] == {} and not props.get("mapred-site")


def test_port_blocks_never_collide_with_each_other_or_the_master() -> None:
    assert WorkerPorts().all() == {  # Hadoop 3's defaults
        "dfs.datanode.address": 9866,
        "dfs.datanode.http.address": 9864,
        "dfs.datanode.ipc.address": 9867,
        "yarn.nodemanager.address": 8041,
        "yarn.nodemanager.localizer.address": 8040,
        "yarn.nodemanager.webapp.address": 8042,
        "mapreduce.shuffle.port": 13562,
    }
    blocks = [set(WorkerPorts(i * PORT_STEP).all().values()) for i in range(16)]
    seen: set[int] = set(MASTER_PORTS)
    for block in blocks:
        assert len(block) == 7 and not block & seen
        seen |= block


def test_node_folders_are_below_the_data_root_and_refuse_hostile_addresses() -> None:
    assert LAYOUT.node_root("10.0.0.12") == "/data/hadoop/10.0.0.12"
    assert LAYOUT.conf_dir("10.0.0.12") == "/data/hadoop/10.0.0.12/conf"
    assert LAYOUT.name_dir == "/data/hadoop/10.0.0.11/dfs/name"  # the master's
    for address in ("../etc", "a b", "node1;id", ""):
        with pytest.raises(ConfigError, match="host name"):
            LAYOUT.node_root(address)
        with pytest.raises(ConfigError, match="host name"):
            node_properties(LAYOUT, address, None)


# -- render.py: a node's site files, a Maven install ---------------------------------------------
def test_a_nodes_site_files_are_the_base_plus_its_own_settings() -> None:
    values = defaults()
    base = sites(render.render_sites(values, LAYOUT, render.HADOOP_SITES))
    per_node = node_properties(LAYOUT, "10.0.0.12", WorkerPorts(PORT_STEP))
    mine = sites(render.render_sites(values, LAYOUT, render.HADOOP_SITES, node=per_node))
    for site, props in per_node.items():
        assert not props.keys() & base[site].keys()  # base holds no per-node setting
        assert props.items() <= mine[site].items()
        assert base[site].items() <= mine[site].items()  # and keeps every base setting
    assert mine["core-site"]["fs.defaultFS"] == "hdfs://10.0.0.11:8020"
    # site_properties still win: the port check tells users to move a port with them
    extra = {"hdfs-site": {"dfs.datanode.address": "10.0.0.12:19866"}}
    moved = render.render_sites(values, LAYOUT, render.HADOOP_SITES, extra, per_node)
    assert parse_xml(moved["hdfs-site.xml"])["dfs.datanode.address"] == "10.0.0.12:19866"
    # a node's hive-site settings are dropped where hive-site is not written
    hive = {**per_node, "hive-site": {"hive.exec.scratchdir": "/tmp/x"}}
    assert "hive-site.xml" not in render.render_sites(
        values, LAYOUT, render.HADOOP_SITES, node=hive
    )


def test_a_maven_install_spells_out_the_containers_classpath() -> None:
    maven = render.Layout(LAYOUT.master, LAYOUT.workers, "/srv/hadoop", "/data/hadoop", maven=True)
    files = sites(render.render_sites(defaults(), maven, render.HADOOP_SITES))
    assert files["yarn-site"]["yarn.application.classpath"] == "$HADOOP_CONF_DIR,/srv/hadoop/lib/*"
    assert files["mapred-site"]["mapreduce.application.classpath"] == "/srv/hadoop/lib/*"
    assert files["mapred-site"]["mapreduce.map.env"] == "HADOOP_MAPRED_HOME=/srv/hadoop"
    tarball = sites(render.render_sites(defaults(), LAYOUT, render.HADOOP_SITES))
    assert "yarn.application.classpath" not in tarball["yarn-site"]
    assert "mapreduce.application.classpath" not in tarball["mapred-site"]


def test_hadoop_env_sets_the_daemons_heap_and_the_nodes_folders() -> None:
    text = render.hadoop_env_sh("", "/data/hadoop/10.0.0.12", None, 2048)
    assert text.splitlines() == [
        render.ENV_MARK,
        "export HADOOP_LOG_DIR=/data/hadoop/10.0.0.12/logs",
        "export HADOOP_PID_DIR=/data/hadoop/10.0.0.12/pids",
        "export HADOOP_HEAPSIZE_MAX=2048m",
    ]
    assert "HEAPSIZE" not in render.hadoop_env_sh("", "/data/hadoop/10.0.0.12")


# -- topology.py: which node is what ------------------------------------------------------------
def test_port_blocks_only_for_workers_that_share_this_machine() -> None:
    local = tuple(LocalExecutor(f"node{i}", f"127.0.0.{i}") for i in (1, 2, 3))
    ring = HDFSYarnSystem(cluster=Cluster(local, LocalExecutor("client", "127.0.0.9")))
    assert [ring._ports(n) for n in local] == [WorkerPorts(0), WorkerPorts(10), WorkerPorts(20)]
    assert ring._ports(ring.load) is None  # the load host apart runs no daemon
    apart = HDFSYarnSystem(cluster=Cluster(local, local[0]), master_is_worker=False)
    assert [apart._ports(n) for n in local] == [None, WorkerPorts(0), WorkerPorts(10)]
    single = HDFSYarnSystem(cluster=Cluster(local[:1], local[0]))
    assert single._ports(local[0]) == WorkerPorts(0)
    remote = tuple(Remote(f"node{i}", f"10.0.0.{i}") for i in (1, 2, 3))
    cluster = HDFSYarnSystem(cluster=Cluster(remote, remote[0]))
    assert [cluster._ports(n) for n in remote] == [WorkerPorts(0)] * 3  # a machine each
    with pytest.raises(ConfigError, match="at least two SUT hosts"):
        HDFSYarnSystem(cluster=Cluster(local[:1], local[0]), master_is_worker=False)._ports(
            local[0]
        )


def test_every_node_has_its_folder_and_the_daemons_theirs(tmp_path: Path) -> None:
    home = tmp_path / "hadoop"
    (home / "bin").mkdir(parents=True)
    nodes = (Remote("node1", "10.0.0.1"), Remote("node2", "10.0.0.2"))
    load = Remote("client", "10.0.0.9")
    system = HDFSYarnSystem(
        hadoop_home=str(home), data_root="/d", cluster=Cluster(nodes, load), daemon_heap_mb=0
    )
    layout = system._resolve_layout(tmp_path / "work")
    assert (layout.master, layout.workers, layout.maven) == (
        "10.0.0.1",
        ("10.0.0.1", "10.0.0.2"),
        False,
    )
    assert system.daemon_heap_mb is None  # 0/null: the JVM's own default
    assert [system.root_of(n) for n in (*nodes, load)] == [
        "/d/10.0.0.1",
        "/d/10.0.0.2",
        "/d/10.0.0.9",
    ]
    assert system.conf_dir == "/d/10.0.0.1/conf" and system.log_dir == "/d/10.0.0.1/logs"
    assert system.client_env() == {"HADOOP_CONF_DIR": "/d/10.0.0.9/conf"}
    assert system.hibench_conf_dir == "/d/10.0.0.9/hibench-conf"
    assert system._nodes() == [*nodes, load]
    assert [(d.label(), d.root) for d in system._daemons()] == [
        ("namenode on node1", "/d/10.0.0.1"),
        ("datanode on node1", "/d/10.0.0.1"),
        ("datanode on node2", "/d/10.0.0.2"),
        ("resourcemanager on node1", "/d/10.0.0.1"),
        ("nodemanager on node1", "/d/10.0.0.1"),
        ("nodemanager on node2", "/d/10.0.0.2"),
    ]
    local = LocalExecutor("node1", "10.0.0.1")  # a Maven install is known by its launcher
    (home / "bin/hadoop-launch").touch()
    maven = HDFSYarnSystem(hadoop_home=str(home), data_root="/d", cluster=Cluster((local,), local))
    assert maven._resolve_layout(tmp_path / "work").maven
    with pytest.raises(ConfigError, match="start_mode 'ssh': use daemons or sbin"):
        HDFSYarnSystem(start_mode="ssh")


# -- daemons.py ---------------------------------------------------------------------------------
def test_cluster_daemons_in_start_order_and_their_commands() -> None:
    master, second = LocalExecutor("node1", "10.0.0.11"), LocalExecutor("node2", "10.0.0.12")
    found = daemons.cluster_daemons(
        (master, "/d/10.0.0.11"), [(master, "/d/10.0.0.11"), (second, "/d/10.0.0.12")]
    )
    assert [(d.name, d.node, d.tool) for d in found] == [
        ("namenode", master, "hdfs"),
        ("datanode", master, "hdfs"),
        ("datanode", second, "hdfs"),
        ("resourcemanager", master, "yarn"),
        ("nodemanager", master, "yarn"),
        ("nodemanager", second, "yarn"),
    ]
    worker = found[5]
    assert worker.conf_dir == "/d/10.0.0.12/conf" and worker.label() == "nodemanager on node2"
    for action in ("start", "stop", "status"):
        assert daemons.daemon_command("/opt/hadoop", worker, action) == [
            "/opt/hadoop/bin/yarn",
            "--daemon",
            action,
            "nodemanager",
        ]
    assert daemons.daemon_command("/opt/hadoop", found[0], "start")[0] == "/opt/hadoop/bin/hdfs"
    for bad in ("restart", "start; id", ""):
        with pytest.raises(ValueError, match="not a daemon action"):
            daemons.daemon_command("/opt/hadoop", worker, bad)
    assert daemons.pid_file(found[2], "hdfs") == "/d/10.0.0.12/pids/hadoop-hdfs-datanode.pid"


def test_running_pid_is_the_live_process_of_the_pid_file(tmp_path: Path) -> None:
    daemon = daemons.Daemon("datanode", LocalExecutor(), str(tmp_path))
    assert daemons.running_pid(daemon, "me") is None  # no pid file
    (tmp_path / "pids").mkdir()
    path = tmp_path / "pids/hadoop-me-datanode.pid"
    path.write_text("not a pid\n")
    assert daemons.running_pid(daemon, "me") is None
    with subprocess.Popen(["sleep", "600"]) as proc:
        try:
            path.write_text(f"{proc.pid}\n")
            assert daemons.running_pid(daemon, "me") == proc.pid
            assert daemons.running_pid(daemon, "other") is None  # another user's file
        finally:
            proc.kill()
    assert daemons.running_pid(daemon, "me") is None  # gone (and reaped)


class Wrapped(LocalExecutor):
    """Runs each command under ``timeout``, as the SSH executor does remotely; keeps results."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[CommandResult] = []

    def run(self, command: Sequence[str], **kwargs: object) -> CommandResult:  # type: ignore[override]
        result = super().run(["timeout", "60", *command], **kwargs)  # type: ignore[arg-type]
        self.results.append(result)
        return result


def test_leftover_tasks_of_the_node_are_ended_but_nothing_else(tmp_path: Path) -> None:
    root, other = tmp_path / "node", tmp_path / "node2"
    for folder in (root, other):
        (folder / "yarn/local").mkdir(parents=True)
        (folder / "yarn/local/stdout").touch()
    # task JVMs stand-ins: their command lines name the node's YARN folders
    task = subprocess.Popen(["tail", "-f", str(root / "yarn/local/stdout")])
    bystander = subprocess.Popen(["tail", "-f", str(other / "yarn/local/stdout")])
    node = Wrapped()
    try:
        daemons.end_leftovers(node, str(root))
        assert task.wait(timeout=10) == -9
        assert bystander.poll() is None  # another node's folder
        # the wrapper (whose command line holds the pattern) survived: pkill said it killed
        assert [r.exit_code for r in node.results] == [0]
    finally:
        for proc in (task, bystander):
            proc.kill()
            proc.wait()
    pattern = daemons.leftover_pattern("/d/127.0.0.1")
    assert pattern == "/d/127[.]0[.]0[.]1/yar[n]/"


def test_stop_daemon_says_whether_the_command_succeeded(tmp_path: Path) -> None:
    home = tmp_path / "hadoop"
    (home / "bin").mkdir(parents=True)
    tool = home / "bin/hdfs"
    daemon = daemons.Daemon("namenode", LocalExecutor(), str(tmp_path / "node"))
    tool.write_text('#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\n')
    tool.chmod(0o755)
    assert daemons.stop_daemon(str(home), daemon, {"HADOOP_CONF_DIR": "/c"})
    assert (home / "bin/args").read_text() == "--daemon stop namenode\n"
    tool.write_text("#!/bin/sh\nexit 3\n")
    assert not daemons.stop_daemon(str(home), daemon, {})
    tool.unlink()  # cannot run at all: logged, not raised
    assert not daemons.stop_daemon(str(home), daemon, {})


# -- jobs.py ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"mode": "append"}, "workload.mode"),
        ({"mode": "Write"}, "workload.mode"),
        ({"files": 0}, "workload.files"),
        ({"files": True}, "workload.files"),
        ({"files": 2.5}, "workload.files"),
        ({"files": "4"}, "workload.files"),
        ({"files": 10_001}, "workload.files"),
        ({"file_mb": 0}, "workload.file_mb"),
        ({"file_mb": False}, "workload.file_mb"),
        ({"base_dir": "/x;rm -rf /"}, "workload.base_dir"),
        ({"base_dir": "relative"}, "workload.base_dir"),
        ({"base_dir": "/a b"}, "workload.base_dir"),
        ({"base_dir": "/x\n-write"}, "workload.base_dir"),
        ({"base_dir": "/$(id)"}, "workload.base_dir"),
        ({"base_dir": "hdfs://nn/x"}, "workload.base_dir"),
        ({"base_dir": 7}, "workload.base_dir"),
    ],
)
def test_testdfsio_refuses_bad_settings(kwargs: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        TestDFSIOWorkload(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"rows": 999}, "workload.rows"),
        ({"rows": True}, "workload.rows"),
        ({"rows": 1000.5}, "workload.rows"),  # 1e6 is 1,000,000 rows: a whole float counts
        ({"base_dir": "/t;id"}, "workload.base_dir"),
        ({"base_dir": "t"}, "workload.base_dir"),
    ],
)
def test_terasort_refuses_bad_settings(kwargs: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        TeraSortWorkload(**kwargs)  # type: ignore[arg-type]


def test_job_names_params_and_testdfsio_arguments() -> None:
    write, read = TestDFSIOWorkload(), TestDFSIOWorkload("read", 3, 64, 30, "/b/dfs-io_1.x")
    assert (write.name, read.name) == ("dfsio", "dfsio_read")
    assert {"mode": "read", "files": 3, "file_mb": 64, "job": DFSIO_CLASS}.items() <= (
        read.params().items()
    )
    sort = TeraSortWorkload()
    assert (sort.name, sort.rows, sort.base_dir) == ("terasort", 1_000_000, "/harness/terasort")
    node = LocalExecutor("node1", "127.0.0.1")
    system = HDFSYarnSystem(cluster=Cluster((node,), node))
    system.layout = render.Layout("127.0.0.1", ("127.0.0.1",), "/opt/hadoop", "/data/h")
    assert read._args(system, "write") == [
        DFSIO_CLASS,
        "-D",
        "test.build.data=/b/dfs-io_1.x",
        "-write",
        "-nrFiles",
        "3",
        "-size",
        "64MB",
        "-resFile",
        "/data/h/127.0.0.1/dfsio_results.txt",  # on the load host, in its own folder
    ]
    assert write._args(system, "read")[3:5] == ["-read", "-nrFiles"]


class Postgres(System):
    name = "postgres"

    def apply(self, config: Config) -> None:
        raise AssertionError("not applied")


def test_hadoop_jobs_need_a_hadoop_system(tmp_path: Path) -> None:
    other = Postgres(Space((Knob("k", "float", 0.5, low=0.0, high=1.0),)))
    for workload in (TestDFSIOWorkload("read"), TeraSortWorkload()):
        with pytest.raises(ConfigError, match="need system=hdfs or system=hive, not 'postgres'"):
            workload.prepare(other, tmp_path)
        with pytest.raises(ConfigError, match="need system=hdfs or system=hive"):
            workload.run(other, 10.0)


# -- the Maven install's launcher (bin/hadoop-launch) --------------------------------------------
def launch(conf: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The launcher with an empty or given conf folder and a JDK that is not there: the paths
    tested here must neither need Java nor reach it."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HADOOP_", "JAVA_"))}
    return subprocess.run(
        ["bash", str(LAUNCHER), *args],
        env={**clean, "HADOOP_CONF_DIR": str(conf), "JAVA_HOME": "/nonexistent/jdk", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_launcher_and_its_wrappers_parse() -> None:
    for script in sorted(LAUNCHER.parent.iterdir()):
        done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, f"{script.name}: {done.stderr}"
        assert os.access(script, os.X_OK), f"{script.name} is not executable"
    for tool in ("hadoop", "hdfs", "yarn", "mapred"):
        assert f'hadoop-launch" {tool} "$@"' in (LAUNCHER.parent / tool).read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hadoop", "a.B;rm"], "hadoop: bad class name"),
        (["hadoop", "org.x.Y$(id)"], "hadoop: bad class name"),
        (["hadoop", "frobnicate"], "hadoop: unknown command 'frobnicate'"),
        (["hdfs", "org.apache.hadoop.fs.FsShell"], "hdfs: unknown command"),  # hadoop only
        (["hdfs", "--daemon", "start", "dfsadmin"], "hdfs: 'dfsadmin' is not a daemon"),
        (["hdfs", "--daemon", "restart", "namenode"], "usage: hdfs [--daemon"),
        (["yarn"], "usage: yarn [--daemon"),
        (["yarn", "--daemon"], "usage: yarn [--daemon"),
    ],
)
def test_the_launcher_refuses_bad_commands_without_java(
    tmp_path: Path, args: list[str], message: str
) -> None:
    done = launch(tmp_path, *args)
    assert done.returncode != 0
    assert message in done.stderr
    assert "java" not in done.stderr.lower().replace("java.", "")  # never reached the JVM


def test_the_launcher_reads_the_conf_folder_and_manages_pid_files(tmp_path: Path) -> None:
    conf, pids = tmp_path / "conf", tmp_path / "pids"
    conf.mkdir()
    done = launch(tmp_path / "elsewhere", "hadoop", "--config", str(conf), "classpath")
    assert done.returncode == 0 and done.stdout.startswith(f"{conf}:")  # --config wins
    assert done.stdout.rstrip().endswith("/lib/*")
    (conf / "hadoop-env.sh").write_text(
        f"export HADOOP_PID_DIR={pids}\nexport HADOOP_IDENT_STRING=tester\n"
    )
    status = launch(conf, "hdfs", "--daemon", "status", "namenode")
    assert (status.returncode, status.stdout) == (1, "namenode is stopped.\n")
    stop = launch(conf, "hdfs", "--daemon", "stop", "namenode")
    assert (stop.returncode, stop.stdout) == (0, "no namenode to stop\n")
    with subprocess.Popen(["sleep", "600"]) as victim:
        reaper = threading.Thread(target=victim.wait, daemon=True)  # no zombie to wait for
        reaper.start()
        try:
            pids.mkdir()
            (pids / "hadoop-tester-namenode.pid").write_text(f"{victim.pid}\n")
            status = launch(conf, "hdfs", "--daemon", "status", "namenode")
            assert status.returncode == 0
            assert status.stdout == f"namenode is running as process {victim.pid}.\n"
            again = launch(conf, "hdfs", "--daemon", "start", "namenode")
            assert again.returncode == 1 and "Stop it first" in again.stderr
            stop = launch(conf, "hdfs", "--daemon", "stop", "namenode", HADOOP_STOP_TIMEOUT="5")
            assert stop.returncode == 0 and "kill -9" not in stop.stdout
            reaper.join(timeout=10)
            assert victim.returncode == -15  # TERM first
            assert not (pids / "hadoop-tester-namenode.pid").exists()
        finally:
            victim.kill()


# -- systems/ports.py ---------------------------------------------------------------------------
def test_check_free_names_host_address_and_key() -> None:
    from systems.cassandra import node as cassandra_node

    assert cassandra_node.check_free is ports.check_free  # re-exported from its new home
    node = LocalExecutor("node1", "127.0.0.1")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert ports.busy_ports(node, "127.0.0.1", [port, 1]) == [port]
        with pytest.raises(
            ConfigError,
            match=rf"host node1: 127\.0\.0\.1:{port} is already in use; .* set some\.key",
        ):
            ports.check_free(
                node, [("127.0.0.1", 1, "other.key"), ("127.0.0.1", port, "some.key")]
            )
    ports.check_free(node, [])


def test_busy_ports_reads_ss_output() -> None:
    listing = (
        "LISTEN 0      4096         0.0.0.0:8020       0.0.0.0:*\n"
        "LISTEN 0      50     [::ffff:127.0.0.2]:9866        *:*\n"
        "LISTEN 0      50         127.0.0.3:9876      0.0.0.0:*\n"
        "LISTEN 0      50                 *:8088            *:*\n"
        "LISTEN 0      50              [::]:9870         [::]:*\n"
        "garbage\n"
    )
    wanted = [8020, 9866, 9876, 8088, 9870, 1]
    assert ports.busy_ports(Canned(listing), "127.0.0.2", wanted) == [8020, 8088, 9866, 9870]
    assert ports.busy_ports(Canned(listing), "127.0.0.3", [9876, 9866]) == [9876]
    assert ports.busy_ports(Canned("", code=127), "127.0.0.2", wanted) == []  # no ss


def test_an_unhealthy_nodemanager_is_named_with_the_line_that_says_why() -> None:
    from systems.hadoop.health import NodeUnhealthy, unhealthy_notice

    # As Hadoop 3.4.2's NodeManager logged it here (a disk threshold below this disk's use).
    log = (
        "2026-12-02 04:08:58,755 INFO org.apache.hadoop.yarn.server.nodemanager."
        "LocalDirsHandlerService: Disk(s) failed: 1/1 local-dirs usable space is below "
        "configured utilization percentage/no more usable space [ /d/yarn/local : used space "
        "above threshold of 12.696836% ]\n"
    )
    notice = unhealthy_notice(NodeUnhealthy(["localhost:8041"]), [log])
    assert notice.startswith(
        "NodeManager localhost:8041 UNHEALTHY: Disk(s) failed: 1/1 local-dirs"
    )
    assert "12.696836%" in notice
    assert unhealthy_notice(NodeUnhealthy(["a:1", "b:2"]), []) == "NodeManager a:1, b:2 UNHEALTHY"


def test_yarn_health_report_says_why_before_the_log_does() -> None:
    from systems.hadoop.health import NodeUnhealthy, unhealthy_notice

    # `yarn node -status` of a NodeManager that started with its disks over the threshold
    # (Hadoop 3.4's NodeCLI layout); its log has no line about it yet.
    status = (
        "Node Report : \n\tNode-Id : localhost:8041\n\tRack : /default-rack\n"
        "\tNode-State : UNHEALTHY\n\tLast-Health-Update : Wed 02/Dec/26 04:33:40:000UTC\n"
        "\tHealth-Report : 1/1 local-dirs usable space is below configured utilization "
        "percentage/no more usable space [ /d/yarn/local : used space above threshold of "
        "2.0577462% ] \n\tContainers : 0\n"
    )
    notice = unhealthy_notice(NodeUnhealthy(["localhost:8041"], [status]), ["(no line)"])
    assert notice.startswith("NodeManager localhost:8041 UNHEALTHY: 1/1 local-dirs usable space")
    assert notice.endswith("2.0577462% ]")
    with pytest.raises(ValueError):
        from systems.hadoop.commands import yarn_node_status

        yarn_node_status("/opt/hadoop", "/c", "host; rm -rf /:1")
