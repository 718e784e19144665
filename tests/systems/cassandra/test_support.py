"""The Cassandra adapter's support code, without a server: the heap rule and the knob defaults
it rescales, the port check, per-node JMX ports and memory locking, local hosts of an
inventory, the catalogue check against the installed Cassandra, and YCSB's client JVM options.

Pure or on fake executors (canned command output); the only external program run here is
``javap``, on the installed ``cassandra-all`` jar, and only when ``.installs/cassandra`` exists.
Nothing is started.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest
import yaml

from harness.errors import ConfigError, ExecutorError
from harness.executor import CommandResult, Executor, LocalExecutor
from harness.hosts import connect
from harness.hosts.cluster import Cluster
from harness.hosts.inventory import Host, Inventory
from harness.hosts.machine import Machine, install_dir
from harness.space import load_catalogue
from systems.cassandra import (
    CassandraSystem,
    YCSBWorkload,
    catalogue_check,
    commands,
    heap,
    render,
    ycsb,
)
from systems.cassandra.commands import NodePaths
from systems.cassandra.node import busy_ports
from tests.conftest import CONF, ROOT

LAUNCHER = ROOT / "systems" / "cassandra" / "java" / "server" / "layout" / "bin" / "cassandra"
GIB_KB = 1024 * 1024
ON_HEAP = ("memtable_heap_space_in_mb", "key_cache_size_in_mb", "index_summary_capacity_in_mb")


class FakeHost(Executor):
    """An executor that runs nothing: ``ss -Hltn`` prints ``ss``, the machine facts and
    /proc/meminfo hold ``ram_kib``, every other command succeeds silently and is recorded."""

    def __init__(
        self,
        host: str,
        address: str,
        ss: str = "",
        ss_exit: int = 0,
        ram_kib: int | None = 24 * GIB_KB,
    ) -> None:
        self.host = host
        self.address = address
        self.ss = ss
        self.ss_exit = ss_exit
        self.ram_kib = ram_kib
        self.commands: list[list[str]] = []

    def run(
        self,
        command: Sequence[str],
        *,
        timeout_s: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        user: str | None = None,
        check: bool = True,
        input_text: str | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> CommandResult:
        argv = [str(part) for part in command]
        self.commands.append(argv)
        if argv[:2] == ["sh", "-c"] and "MemTotal" in argv[2]:  # harness.hosts.machine's facts
            if self.ram_kib is None:
                raise ExecutorError(f"on {self.host}: cannot read /proc/meminfo")
            facts = f"mem_kib={self.ram_kib}\ncores=2\n"
            return CommandResult(self.host, tuple(argv), 0, facts, "", 0.0)
        if argv == ["ss", "-Hltn"]:
            return CommandResult(self.host, tuple(argv), self.ss_exit, self.ss, "", 0.0)
        return CommandResult(self.host, tuple(argv), 0, "", "", 0.0)

    def write_text(self, path: str | Path, text: str, mode: int = 0o644) -> None:
        raise AssertionError(f"FakeHost {self.host} cannot write {path}")

    def read_text(self, path: str | Path) -> str:
        if str(path) == "/proc/meminfo" and self.ram_kib is not None:
            return f"MemTotal:       {self.ram_kib} kB\nMemFree:         1024 kB\n"
        raise ExecutorError(f"on {self.host}: cannot read {path}")

    def exists(self, path: str | Path) -> bool:
        return False


# -- heap --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ram_mib", "nodes", "expected"),
    [
        (24 * 1024, 1, 6144),  # RAM/4
        (24 * 1024, 3, 2048),  # three nodes of a local ring share the host: 8 GiB each
        (1024, 1, 512),  # RAM/2 below 2 GiB
        (2048, 1, 1024),
        (4096, 1, 1024),  # min(RAM/2, 1 GiB) wins up to 4 GiB
        (64 * 1024, 1, 8192),  # capped at 8 GiB
        (256 * 1024, 4, 8192),
    ],
)
def test_auto_heap_is_cassandras_rule(ram_mib: int, nodes: int, expected: int) -> None:
    """cassandra-env.sh: max(min(RAM/2, 1 GiB), min(RAM/4, 8 GiB)) of each node's share."""
    assert heap.auto_heap_mb(ram_mib, nodes) == expected


@pytest.mark.parametrize("heap_mb", [1024, 2048, 6144, 8192, 16384, 31744])
def test_heap_overrides_are_cassandras_auto_values_within_bounds(heap_mb: int) -> None:
    space = render.full_catalogue()
    changes = heap.heap_overrides(space, heap_mb)
    fitted = space.with_overrides(changes)  # every changed knob passes the catalogue's checks
    assert fitted["jvm.heap_mb"].default == heap_mb
    auto = {
        "memtable_heap_space_in_mb": heap_mb // 4,
        "memtable_offheap_space_in_mb": heap_mb // 4,
        "key_cache_size_in_mb": min(heap_mb * 5 // 100, 100),
        "file_cache_size_in_mb": min(heap_mb // 4, 512),
        "index_summary_capacity_in_mb": heap_mb * 5 // 100,
    }
    assert set(changes) == {"jvm.heap_mb", *auto}
    for name, value in auto.items():
        knob, original = fitted[name], space[name]
        assert knob.default == value, name
        assert knob.low is not None and knob.high is not None
        assert knob.low <= value <= knob.high, name
        assert knob.low == original.low, name
        if name in ON_HEAP:
            scaled = int(original.high or 0) * heap_mb // heap.REFERENCE_HEAP_MB
            assert knob.high == max(2 * int(knob.low), scaled), name  # on-heap: scaled
        else:
            assert knob.high == original.high, name  # off-heap: not scaled
    if heap_mb == heap.REFERENCE_HEAP_MB:  # the catalogue is written for this heap
        for name in auto:
            assert fitted[name].high == space[name].high
            # index_summary: 5% of 8192 MiB is 409.6, which the catalogue rounds up
            assert abs(float(fitted[name].default) - float(space[name].default)) <= 1


def test_heap_overrides_touch_only_knobs_of_the_space() -> None:
    ten = load_catalogue(render.CATALOGUE, "10")
    changes = heap.heap_overrides(ten, 2048)
    assert set(changes) == {
        "memtable_heap_space_in_mb",
        "key_cache_size_in_mb",
        "file_cache_size_in_mb",
    }
    assert changes["memtable_heap_space_in_mb"] == {"max": 1024, "default": 512}


def test_heap_clamps_to_the_heap_knobs_range() -> None:
    space = render.full_catalogue()
    low, high = int(space["jvm.heap_mb"].low or 0), int(space["jvm.heap_mb"].high or 0)
    assert heap.clamp_heap_mb(space, 512) == low
    assert heap.clamp_heap_mb(space, 65536) == high
    assert heap.clamp_heap_mb(space, 4096) == 4096
    # The adapter clamps before it derives the other defaults, so they match the real heap.
    system = CassandraSystem(knob_set="30", heap_mb=512)
    assert system.heap_mb == low and system.space.default()["jvm.heap_mb"] == low
    assert system.space.default()["memtable_heap_space_in_mb"] == low // 4


@pytest.mark.parametrize("knob_set", ["10", "30"])
def test_a_systems_defaults_follow_its_heap(knob_set: str) -> None:
    system = CassandraSystem(knob_set=knob_set, heap_mb=2048, install_dir="/opt/cassandra")
    assert system.heap_mb == 2048 and system.describe()["heap_mb"] == "2048"
    defaults = system.space.default()
    assert defaults["memtable_heap_space_in_mb"] == 512
    assert system.space["memtable_heap_space_in_mb"].high == 1024
    assert defaults["key_cache_size_in_mb"] == 100 and defaults["file_cache_size_in_mb"] == 512
    # Knobs outside the set take the catalogue's defaults in apply(): rescaled there too.
    assert system.catalogue["jvm.heap_mb"].default == 2048
    assert system.catalogue["index_summary_capacity_in_mb"].default == 102
    if knob_set == "30":
        assert defaults["jvm.heap_mb"] == 2048 and defaults["jvm.gc"] == "G1"
    else:
        assert "jvm.heap_mb" not in system.space


def test_the_automatic_heap_is_read_from_the_first_host() -> None:
    one_host = Cluster(tuple(FakeHost(f"n{i}", "10.0.0.5") for i in range(3)), FakeHost("l", "x"))
    assert CassandraSystem(cluster=one_host).fit_heap() == 2048  # three nodes share 24 GiB
    spread = Cluster(tuple(FakeHost(f"n{i}", f"10.0.0.{i}") for i in range(3)), FakeHost("l", "x"))
    assert CassandraSystem(cluster=spread).fit_heap() == 6144
    ring = Cluster(
        tuple(LocalExecutor(f"n{i}", f"127.0.0.{i + 2}") for i in range(3)), LocalExecutor()
    )
    ram_mib = Machine.of(LocalExecutor()).ram_mib  # control-group limit applied
    assert CassandraSystem(cluster=ring).fit_heap() == heap.auto_heap_mb(ram_mib, 3)
    blind = FakeHost("node1", "10.0.0.1", ram_kib=None)
    with pytest.raises(ConfigError, match=r"memory of SUT host node1 .*heap_mb=") as err:
        CassandraSystem(cluster=Cluster((blind,), blind)).fit_heap()
    assert "\n" not in str(err.value)
    assert CassandraSystem(cluster=Cluster((blind,), blind)).heap_mb is None  # no I/O here
    assert CassandraSystem(cluster=Cluster((blind,), blind), heap_mb=3000).heap_mb == 3000


# -- ports -------------------------------------------------------------------------------------
SS = """\
LISTEN 0      4096   127.0.0.53%lo:53             0.0.0.0:*
LISTEN 0      128          0.0.0.0:22             0.0.0.0:*
LISTEN 0      4096            [::]:8080              [::]:*
LISTEN 0      50   [::ffff:127.0.0.1]:9042              *:*
LISTEN 0      50         127.0.0.2:7000           0.0.0.0:*
LISTEN 0      50         127.0.0.1:7199           0.0.0.0:*
LISTEN 0      4096               *:9100                 *:*
LISTEN 0      50             [::1]:6000              [::]:*
"""


@pytest.mark.parametrize(
    ("address", "busy"),
    [
        ("127.0.0.1", [22, 7199, 8080, 9042, 9100]),  # 9042: IPv4-mapped, as Java binds
        ("127.0.0.2", [22, 7000, 8080, 9100]),
        ("127.0.0.3", [22, 8080, 9100]),  # only the wildcards
        ("::1", [22, 6000, 8080, 9100]),
    ],
)
def test_busy_ports_from_ss(address: str, busy: list[int]) -> None:
    node = FakeHost("node1", address, ss=SS)
    wanted = [22, 53, 6000, 7000, 7199, 8080, 9042, 9100, 5555]
    assert busy_ports(node, address, wanted) == busy
    assert busy_ports(node, address, [5555, 7001]) == []
    assert node.commands == [["ss", "-Hltn"], ["ss", "-Hltn"]]
    assert busy_ports(FakeHost("n", address, ss=SS, ss_exit=127), address, wanted) == []  # no ss


def test_check_ports_names_the_node_the_address_and_the_key() -> None:
    def ring(ss: str) -> CassandraSystem:
        nodes = (FakeHost("node1", "127.0.0.2", ss=ss), FakeHost("node2", "127.0.0.3", ss=ss))
        return CassandraSystem(cluster=Cluster(nodes, nodes[0]), heap_mb=1024)

    ring("LISTEN 0 50 127.0.0.1:7201 0.0.0.0:*\n").check_ports()  # not one of ours: 7199, 7200
    with pytest.raises(ConfigError) as err:
        ring("LISTEN 0 50 127.0.0.1:7200 0.0.0.0:*\n").check_ports()
    assert str(err.value) == (
        "host node2: 127.0.0.1:7200 is already in use; stop what listens there (`ss -ltnp`) "
        "or set system.adapter.jmx_port (+1 on this node) to a free port"
    )
    with pytest.raises(ConfigError, match=r"host node1: 127\.0\.0\.2:9042 .*native_transport"):
        ring("LISTEN 0 4096 0.0.0.0:9042 0.0.0.0:*\n").check_ports()
    with pytest.raises(ConfigError, match=r"host node2: 127\.0\.0\.3:7000 .*storage_port"):
        ring("LISTEN 0 50 127.0.0.3:7000 0.0.0.0:*\n").check_ports()


def test_each_node_has_its_own_jmx_port() -> None:
    nodes = tuple(FakeHost(f"node{i}", f"127.0.0.{i + 2}") for i in range(3))
    system = CassandraSystem(cluster=Cluster(nodes, nodes[0]), jmx_port=7299, heap_mb=1024)
    assert [system.jmx_port(i) for i in range(3)] == [7299, 7300, 7301]
    system.paths = [NodePaths(f"/srv/c/node{i}") for i in range(3)]
    system._launch(2)
    start = nodes[2].commands[-1]
    assert start[-3:] == [
        f"{system.install_dir}/bin/cassandra",
        "-p",
        "/srv/c/node2/cassandra.pid",
    ]
    assert "JMX_PORT=7301" in start and "CASSANDRA_LOCK_MEMORY=no" in start
    system._nodetool(1, "status")
    assert nodes[1].commands[-1][-4:] == ["127.0.0.1", "-p", "7300", "status"]
    with pytest.raises(ConfigError, match="jmx_port=70000 is not a TCP port"):
        CassandraSystem(jmx_port=70000, heap_mb=1024)


def test_start_command_sets_jmx_port_and_memory_locking() -> None:
    paths = NodePaths("/srv/c/node1")

    def env(**kwargs: object) -> list[str]:
        argv = commands.start_command("/opt/cassandra", paths, **kwargs)  # type: ignore[arg-type]
        return argv[argv.index("env") + 1 : argv.index("/opt/cassandra/bin/cassandra")]

    assert env()[-2:] == ["JMX_PORT=7199", "CASSANDRA_LOCK_MEMORY=no"]
    assert env(jmx_port=7301, lock_memory=True)[-2:] == [
        "JMX_PORT=7301",
        "CASSANDRA_LOCK_MEMORY=yes",
    ]
    nodes = (FakeHost("node1", "127.0.0.2"),)
    system = CassandraSystem(cluster=Cluster(nodes, nodes[0]), heap_mb=1024, lock_memory=True)
    system.paths = [paths]
    system._launch(0)
    assert "CASSANDRA_LOCK_MEMORY=yes" in nodes[0].commands[-1]
    # Our launcher reads exactly these variables.
    launcher = LAUNCHER.read_text()
    assert '"-Dcassandra.jmx.local.port=$JMX_PORT"' in launcher
    assert '"${CASSANDRA_LOCK_MEMORY:-yes}" = no' in launcher


# -- local hosts of an inventory ---------------------------------------------------------------
def test_a_local_host_serves_on_a_loopback_address() -> None:
    assert Host("node1", "127.0.0.3", connection="local").connection == "local"
    assert Host("node1", "10.0.0.5").connection == "ssh"  # the default
    for address in ("10.0.0.5", "node1.example.org"):
        with pytest.raises(ConfigError, match="loopback address"):
            Host("node1", address, connection="local")
    with pytest.raises(ConfigError) as err:
        Host.from_mapping({"name": "node1", "address": "127.0.0.2"}, {"connection": "telnet"})
    assert str(err.value) == "host 'node1': connection 'telnet' — use one of ssh, local"


def test_connect_inventory_builds_local_executors_without_ssh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class NoSSH(connect.SSHExecutor):
        def __init__(self, host: Host) -> None:
            raise AssertionError(f"SSH to {host.name}")

    monkeypatch.setattr(connect, "SSHExecutor", NoSSH)
    data = yaml.safe_load((CONF / "hosts" / "local_ring.yaml").read_text())
    inventory = Inventory.from_config(data["name"], data["hosts"], data["common"])
    cluster = connect.connect_inventory(inventory)
    assert all(type(e) is LocalExecutor for e in (*cluster.sut, cluster.load))
    assert [(e.host, e.address) for e in cluster.sut] == [
        ("node1", "127.0.0.2"),
        ("node2", "127.0.0.3"),
        ("node3", "127.0.0.4"),
    ]
    assert (cluster.load.host, cluster.load.address) == ("loadgen", "127.0.0.1")
    assert not cluster.remote
    two = Inventory.from_config(
        "pair",
        [{"name": "a", "address": "127.0.0.5"}, {"name": "b", "address": "127.0.0.6"}],
        {"connection": "local"},
    )
    cluster = connect.connect_inventory(two)
    assert cluster.load is cluster.sut[0]  # no load host: the first SUT host


def test_install_dir_is_under_harness_installs_or_the_repo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("HARNESS_INSTALLS", raising=False)
    assert install_dir("cassandra") == str(ROOT / ".installs" / "cassandra")
    assert CassandraSystem(heap_mb=1024).install_dir == install_dir("cassandra")  # the default
    assert YCSBWorkload().ycsb_dir == install_dir("ycsb")
    monkeypatch.setenv("HARNESS_INSTALLS", str(tmp_path))
    assert install_dir("ycsb") == str(tmp_path / "ycsb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_INSTALLS", "relative")
    assert install_dir("cassandra") == str(tmp_path / "relative" / "cassandra")


# -- the catalogue against Cassandra's settings ------------------------------------------------
def known_fields() -> set[str]:
    """Every key the catalogue and the base template use (a Config that knows them all)."""
    template = yaml.safe_load(render.TEMPLATE.read_text())
    return {t.key for t in render.yaml_targets().values()} | set(template)


def test_unknown_keys_reports_what_a_version_lacks() -> None:
    fields = known_fields()
    assert catalogue_check.unknown_keys(fields) == {
        "knob catalogue": [],
        "cassandra-5.0.base.yaml": [],
    }
    lacking = catalogue_check.unknown_keys(fields - {"memtable_heap_space", "num_tokens"})
    assert lacking == {
        "knob catalogue": ["memtable_heap_space_in_mb -> memtable_heap_space"],
        "cassandra-5.0.base.yaml": ["num_tokens"],
    }
    both = catalogue_check.unknown_keys(fields - {"concurrent_writes"})
    assert both["knob catalogue"] == ["concurrent_writes -> concurrent_writes"]
    assert both["cassandra-5.0.base.yaml"] == ["concurrent_writes"]


def test_catalogue_check_main_reports_and_fails(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "cassandra-all-5.0.9.jar").write_text("")
    fields = known_fields()
    monkeypatch.setattr(catalogue_check, "config_fields", lambda _install: fields)
    assert catalogue_check.main([str(tmp_path)]) == 0
    assert "Cassandra 5.0.9: all 34 catalogue keys" in capsys.readouterr().out
    monkeypatch.setattr(
        catalogue_check, "config_fields", lambda _install: fields - {"trickle_fsync"}
    )
    assert catalogue_check.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "Cassandra 5.0.9 does not know these knob catalogue keys (renamed or removed):" in out
    assert "  trickle_fsync -> trickle_fsync" in out


def test_config_fields_needs_the_jar(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"no lib/cassandra-all-\*\.jar under .*setup\.sh --full"
    ):
        catalogue_check.config_fields(tmp_path)


def test_every_catalogue_key_is_a_setting_of_the_installed_cassandra() -> None:
    """The "renamed or removed keys" check against the real 5.0.9 jar (javap, no server)."""
    install = Path(install_dir("cassandra"))
    if not list((install / "lib").glob("cassandra-all-*.jar")):
        pytest.skip(f"no Cassandra installed at {install} (bash scripts/setup.sh --full)")
    if shutil.which("javap") is None:
        pytest.skip("javap (a JDK) is not on PATH")
    fields = catalogue_check.config_fields(install)
    assert len(fields) > 300  # Config has ~400 settings; a parse failure would find few
    assert catalogue_check.unknown_keys(fields) == {
        "knob catalogue": [],
        render.TEMPLATE.name: [],
    }
    # Old-style names are accepted by 5.0 only as replaced aliases, never as fields (which is
    # why the renderer writes the new keys and removes the old ones).
    assert "write_request_timeout_in_ms" not in fields and "write_request_timeout" in fields
    assert "thrift_framed_transport_size_in_mb" not in fields  # Thrift is gone since 4.0


# -- YCSB's client JVM ------------------------------------------------------------------------
def test_client_jvm_options_are_one_env_argument() -> None:
    def command(java_opts: str, java_home: str | None = None) -> list[str]:
        return ycsb.ycsb_command(
            "/opt/ycsb",
            "run",
            "cassandra-cql",
            "workloads/workloada",
            {},
            4,
            java_home=java_home,
            java_opts=java_opts,
        )

    argv = command("-XX:TieredStopAtLevel=1   -XX:+UseSerialGC -Dfoo=a,b")
    assert argv[:3] == [
        "env",
        "JAVA_OPTS=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dfoo=a,b",
        "/opt/ycsb/bin/ycsb.sh",
    ]
    argv = command("-Xmx256m", java_home="/usr/lib/jvm/java-17")
    assert argv[:3] == ["env", "JAVA_HOME=/usr/lib/jvm/java-17", "JAVA_OPTS=-Xmx256m"]
    assert command("  ")[0] == "/opt/ycsb/bin/ycsb.sh"  # no options: no env
    for bad in ('-Dx="a b"', "-Dx='a'", "-Dx=$(id)", "-Dx=`id`", "-Dx=*", "-Dx=a;b", "-D[x]"):
        with pytest.raises(ConfigError, match=r"client_jvm_opts"):
            command(f"-Xmx256m {bad}")
    for bad in ("Main", "-XX:OnOutOfMemoryError=reboot", "@argfile"):  # a class, a command
        with pytest.raises(ConfigError, match=r"client_jvm_opts"):
            command(bad)
