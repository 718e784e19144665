"""Cassandra adapter without Cassandra: catalogue, renderers, command builders, parsers, lifecycle.

Cassandra and YCSB cannot be installed on this machine. The renderers, command builders and
parsers are tested on text in the real formats (tests/data/cassandra/, see its README). The
lifecycle tests drive the real adapter code against STAND-INS of bin/cassandra, bin/nodetool,
bin/cqlsh and YCSB's bin/ycsb.sh (tests/data/cassandra/standin/: shell scripts that fork a
``sleep`` as "the node", print ``nodetool status`` in the real format and cat canned YCSB output)
on a fake cluster of LocalExecutors with distinct names and loopback addresses. They test the
adapter's orchestration, never Cassandra itself.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hydra.utils import instantiate
from omegaconf import DictConfig

from harness.errors import ConfigError, SystemStartError, WorkloadError, WorkloadTimeout
from harness.executor import LocalExecutor
from harness.remote.cluster import Cluster
from harness.space import Config, load_catalogue
from systems.cassandra import CassandraSystem, YCSBWorkload, commands, render, ycsb
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "cassandra"
STANDIN = DATA / "standin"
ARFF = ROOT / "systems" / "dataset" / "data" / "bestconf" / "cassandra_cassandraYcsba.arff"


def fixture(name: str) -> str:
    return (DATA / name).read_text()


def layout(address: str = "10.0.0.12") -> render.NodeLayout:
    return render.NodeLayout(
        cluster_name="bench",
        listen_address=address,
        seeds=("10.0.0.11", "10.0.0.12"),
        data_dir="/srv/c/data",
        commitlog_dir="/srv/c/commitlog",
        saved_caches_dir="/srv/c/caches",
        hints_dir="/srv/c/hints",
        native_transport_port=19042,
        storage_port=17000,
    )


def odd_config(sync: str = "periodic") -> Config:
    """A complete configuration away from the defaults (every value differs from them)."""
    space = render.full_catalogue()
    config = space.decode([0.83] * space.dim)
    config["commitlog_sync"] = sync
    for knob in space.knobs:
        assert config[knob.name] != knob.default or knob.name == "commitlog_sync", knob.name
    return config


# -- catalogue ---------------------------------------------------------------------------------
def test_catalogue_sets_and_bestconfig_names() -> None:
    all_knobs = set(render.full_catalogue().names)
    sets = {name: set(load_catalogue(render.CATALOGUE, name).names) for name in ("10", "28", "30")}
    assert {k: len(v) for k, v in sets.items()} == {"10": 10, "28": 28, "30": 30}
    assert sets["10"] < sets["28"] < sets["30"] < all_knobs
    recorded = [
        line.split()[1]
        for line in ARFF.read_text().splitlines()
        if line.startswith("@attribute") and "performance" not in line
    ]
    renamed = yaml.safe_load(render.CATALOGUE.read_text())["bestconf_names"]
    assert sets["28"] == {renamed.get(name, name) for name in recorded}
    targets = render.yaml_targets()
    assert set(targets) == {k for k in all_knobs if not k.startswith("jvm.")}
    space = render.full_catalogue()
    assert space.validate(space.default()) == space.default()


def test_yaml_values_carry_41_units() -> None:
    targets = render.yaml_targets()
    value = render.yaml_value
    assert value(200, targets["stream_throughput_outbound_megabits_per_sec"]) == "24414KiB/s"
    assert value(14400, targets["key_cache_save_period"]) == "14400s"
    assert value(60, targets["index_summary_resize_interval_in_minutes"]) == "60m"
    assert value(2000, targets["write_request_timeout_in_ms"]) == "2000ms"
    assert value(32, targets["commitlog_segment_size_in_mb"]) == "32MiB"
    assert value(0.25, targets["dynamic_snitch_badness_threshold"]) == 0.25
    assert value(True, targets["trickle_fsync"]) is True
    assert value("offheap_objects", targets["memtable_allocation_type"]) == "offheap_objects"


# -- cassandra.yaml ----------------------------------------------------------------------------
def test_every_knob_is_written_once_at_its_41_key() -> None:
    config = odd_config()
    text = render.render_cassandra_yaml(render.TEMPLATE.read_text(), config, layout())
    tree = yaml.safe_load(text)
    lines = [line.split(":")[0] for line in text.splitlines() if line and line[0].isalpha()]
    assert len(lines) == len(set(lines)), "a top-level key appears twice"
    for name, target in render.yaml_targets().items():
        if name == "commitlog_sync_group_window_in_ms":
            assert target.key not in tree  # periodic mode: the group window must be absent
            continue
        assert tree[target.key] == render.yaml_value(config[name], target), name
        assert lines.count(target.key) == 1
        if name != target.key:
            assert name not in tree  # the old-style alias is never written


def test_default_render_keeps_the_41_defaults() -> None:
    space = render.full_catalogue()
    tree = yaml.safe_load(
        render.render_cassandra_yaml(render.TEMPLATE.read_text(), space.default(), layout())
    )
    base = yaml.safe_load(render.TEMPLATE.read_text())
    for key in (
        "concurrent_writes",
        "commitlog_segment_size",
        "write_request_timeout",
        "commitlog_sync_period",
        "column_index_size",
        "compaction_throughput",
    ):
        assert tree[key] == base[key], key
    assert tree["stream_throughput_outbound"] == "24414KiB/s"  # 4.1's 24MiB/s, in KiB/s


def test_node_keys_are_set_per_node() -> None:
    tree = yaml.safe_load(
        render.render_cassandra_yaml(
            render.TEMPLATE.read_text(), render.full_catalogue().default(), layout("10.0.0.12")
        )
    )
    assert tree["listen_address"] == tree["rpc_address"] == "10.0.0.12"
    assert tree["cluster_name"] == "bench"
    assert tree["seed_provider"][0]["parameters"][0]["seeds"] == "10.0.0.11,10.0.0.12"
    assert tree["data_file_directories"] == ["/srv/c/data"]
    assert (tree["commitlog_directory"], tree["hints_directory"]) == (
        "/srv/c/commitlog",
        "/srv/c/hints",
    )
    assert (tree["native_transport_port"], tree["storage_port"]) == (19042, 17000)


def test_old_style_template_keys_are_replaced_not_duplicated() -> None:
    template = (
        "cluster_name: old\nwrite_request_timeout_in_ms: 2000\nconcurrent_writes: 32\n"
        "commitlog_sync: periodic\ncommitlog_sync_period_in_ms: 10000\n"
        "listen_interface: eth0\nrpc_interface: eth1\n"
        "seed_provider:\n  - class_name: x\n    parameters:\n      - seeds: a\n"
    )
    config = odd_config()
    tree = yaml.safe_load(render.render_cassandra_yaml(template, config, layout()))
    assert "write_request_timeout_in_ms" not in tree and "commitlog_sync_period_in_ms" not in tree
    assert tree["write_request_timeout"] == f"{config['write_request_timeout_in_ms']}ms"
    assert "listen_interface" not in tree and "rpc_interface" not in tree
    assert tree["seed_provider"][0]["class_name"].endswith("SimpleSeedProvider")


@pytest.mark.parametrize(
    ("mode", "present", "absent"),
    [
        ("periodic", {"commitlog_sync_period"}, {"commitlog_sync_group_window"}),
        ("group", {"commitlog_sync_group_window"}, {"commitlog_sync_period"}),
        ("batch", set(), {"commitlog_sync_period", "commitlog_sync_group_window"}),
    ],
)
def test_commitlog_sync_keys_match_the_mode(
    mode: str, present: set[str], absent: set[str]
) -> None:
    template = render.TEMPLATE.read_text() + "periodic_commitlog_sync_lag_block: 15000ms\n"
    tree = yaml.safe_load(render.render_cassandra_yaml(template, odd_config(mode), layout()))
    assert tree["commitlog_sync"] == mode
    assert present <= set(tree) and not absent & set(tree)
    assert ("periodic_commitlog_sync_lag_block" in tree) == (mode == "periodic")


def test_overrides_reach_nested_keys_and_cannot_touch_managed_ones() -> None:
    overrides = {
        "endpoint_snitch": "GossipingPropertyFileSnitch",
        "client_encryption_options.enabled": True,
        "new_section.inner": 3,
    }
    tree = yaml.safe_load(
        render.render_cassandra_yaml(
            render.TEMPLATE.read_text(), odd_config(), layout(), overrides
        )
    )
    assert tree["endpoint_snitch"] == "GossipingPropertyFileSnitch"
    assert tree["client_encryption_options"] == {"enabled": True}
    assert tree["new_section"] == {"inner": 3}
    for key in ("listen_address", "concurrent_writes", "commitlog_sync_group_window"):
        with pytest.raises(ConfigError, match=key):
            render.render_cassandra_yaml(
                render.TEMPLATE.read_text(), odd_config(), layout(), {key: 1}
            )
    with pytest.raises(ConfigError, match="not valid YAML"):
        render.render_cassandra_yaml("a: [b", odd_config(), layout())


# -- JVM options -------------------------------------------------------------------------------
def active(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("-")]


@pytest.mark.parametrize("gc", ["CMS", "G1"])
def test_jvm_options_heap_and_collector(gc: str) -> None:
    config = {
        **render.full_catalogue().default(),
        "jvm.gc": gc,
        "jvm.heap_mb": 4096,
        "jvm.young_mb": 512,
    }
    server = render.render_jvm_server_options(fixture("jvm-server.options"), config)
    flags = active(server)
    assert flags.count("-Xms4096M") == 1 and flags.count("-Xmx4096M") == 1
    assert ("-Xmn512M" in flags) == (gc == "CMS")
    assert sum(f.startswith("-Xm") for f in flags) == (3 if gc == "CMS" else 2)
    assert set(active(fixture("jvm-server.options"))) <= set(flags)  # nothing else lost
    gc_text = render.render_jvm_gc_options(fixture("jvm11-server.options"), config)
    gc_flags = active(gc_text)
    selectors = [f for f in gc_flags if f.endswith("GC") and f.startswith("-XX:+Use")]
    assert selectors == ["-XX:+UseConcMarkSweepGC" if gc == "CMS" else "-XX:+UseG1GC"]
    assert any(f.startswith("-XX:+CMS") or f.startswith("-XX:CMS") for f in gc_flags) == (
        gc == "CMS"
    )
    assert "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED" in gc_flags  # JPMS kept
    assert "#harness-off# -XX:+UseConcMarkSweepGC" in gc_text
    # Rendering from an already-rendered file gives the same file (no second block).
    assert render.render_jvm_gc_options(gc_text, config) == gc_text
    assert render.render_jvm_server_options(server, config) == server


# -- command builders and validation -----------------------------------------------------------
def test_start_command_is_an_argument_list() -> None:
    paths = commands.NodePaths("/srv/c/node1")
    argv = commands.start_command(
        "/opt/cassandra", paths, "/usr/lib/jvm/java-11", "-Dcassandra.ring_delay_ms=1000 -Da=b"
    )
    assert argv[:4] == [
        "sh",
        "-c",
        'exec "$@" > "$0" 2>&1 < /dev/null',
        "/srv/c/node1/logs/stdout.log",
    ]
    assert argv[4] == "env" and "CASSANDRA_CONF=/srv/c/node1/conf" in argv
    assert "JVM_EXTRA_OPTS=-Dcassandra.ring_delay_ms=1000 -Da=b" in argv  # one argument
    assert argv[-3:] == ["/opt/cassandra/bin/cassandra", "-p", "/srv/c/node1/cassandra.pid"]
    tool = commands.nodetool_command("/opt/cassandra", paths, "status", jmx_port=7299)
    assert tool[-6:] == ["/opt/cassandra/bin/nodetool", "-h", "127.0.0.1", "-p", "7299", "status"]
    assert commands.reset_commands(paths)[-1] == [
        "cp",
        "-a",
        "/srv/c/node1/pristine-data",
        "/srv/c/node1/data",
    ]


@pytest.mark.parametrize(
    "bad",
    [
        "/opt/cass andra",
        "/opt/x;rm -rf /",
        "/opt/$(id)",
        "opt/rel",
        "/opt/a/../../etc",
        "/opt/`id`",
        "/opt/a\nb",
    ],
)
def test_unsafe_paths_are_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="install_dir"):
        commands.start_command(bad, commands.NodePaths("/srv/c"))
    with pytest.raises(ConfigError, match="install_dir"):
        CassandraSystem(install_dir=bad)


@pytest.mark.parametrize("bad", ["a b", "host;reboot", "$(id)", "-oProxyCommand=x", ""])
def test_unsafe_hosts_are_refused(bad: str) -> None:
    with pytest.raises(ConfigError):
        commands.check_host(bad, "address")
    node = NodeExecutor("n1", bad)
    with pytest.raises(ConfigError, match="address of SUT host n1"):
        CassandraSystem(cluster=Cluster((node,), node))


def test_ycsb_arguments_survive_its_word_splitting_or_are_refused() -> None:
    argv = ycsb.ycsb_command(
        "/opt/ycsb",
        "run",
        "cassandra-cql",
        "workloads/workloada",
        {"hosts": "10.0.0.1,10.0.0.2", "maxexecutiontime": 60},
        16,
        java_home="/usr/lib/jvm/java-11",
    )
    assert argv == [
        "env",
        "JAVA_HOME=/usr/lib/jvm/java-11",
        "/opt/ycsb/bin/ycsb.sh",
        "run",
        "cassandra-cql",
        "-P",
        "/opt/ycsb/workloads/workloada",
        "-p",
        "hosts=10.0.0.1,10.0.0.2",
        "-p",
        "maxexecutiontime=60",
        "-threads",
        "16",
        "-s",
    ]
    for bad in ("a b", "x*", "$(id)", "a;b"):
        with pytest.raises(ConfigError, match="re-splits"):
            ycsb.ycsb_command(
                "/opt/ycsb", "run", "cassandra-cql", "workloads/workloada", {"hosts": bad}, 1
            )
    with pytest.raises(ConfigError):
        YCSBWorkload(properties={"cassandra.username": "two words"})
    with pytest.raises(ConfigError, match="keyspace"):
        YCSBWorkload(keyspace="ycsb; DROP KEYSPACE x")


def test_cql_with_shell_syntax_reaches_cqlsh_verbatim(tmp_path: Path) -> None:
    """A statement full of shell syntax is one argument: the stand-in cqlsh logs it unchanged."""
    install = make_install(tmp_path)
    statement = "SELECT * FROM ks.t WHERE k = 'it''s $(id) `x` ; * | rm -rf /';"
    argv = commands.cqlsh_command(str(install), "127.0.0.1", 9042, statement)
    assert argv[-2:] == ["-e", statement]
    LocalExecutor().run(argv)
    assert (install / "cql.log").read_text() == statement + "\n"


def test_schema_cql() -> None:
    cql = ycsb.create_schema_cql("ycsb", 3, 2)
    assert "'replication_factor': 3" in cql
    assert "usertable (y_id varchar PRIMARY KEY, field0 varchar, field1 varchar)" in cql


# -- nodetool and logs -------------------------------------------------------------------------
def test_nodetool_status_parser() -> None:
    members = commands.parse_nodetool_status(fixture("nodetool_status_up.txt"))
    assert [(m.state, m.address) for m in members] == [
        ("UN", "10.0.0.11"),
        ("UN", "10.0.0.12"),
        ("UN", "10.0.0.13"),
    ]
    addresses = ("10.0.0.11", "10.0.0.12", "10.0.0.13")
    assert commands.ring_problem(members, 3, addresses) is None
    assert "expected 4" in str(commands.ring_problem(members, 4))
    assert "differ" in str(commands.ring_problem(members, 3, ("10.0.0.11", "10.0.0.12", "x")))
    joining = commands.parse_nodetool_status(fixture("nodetool_status_joining.txt"))
    assert commands.ring_problem(joining, 3) == "not Up/Normal: 10.0.0.12 UJ, 10.0.0.13 DN"
    assert commands.ring_problem([], 1) == "nodetool status listed no node"
    assert commands.parse_statusbinary("running\n")
    assert not commands.parse_statusbinary("not running\n")


def test_start_failure_markers() -> None:
    log = (
        "INFO  [main] JVM Arguments: [-XX:+HeapDumpOnOutOfMemoryError, "
        "-XX:OnOutOfMemoryError=kill -9 %p]\n"
        "ERROR [main] CassandraDaemon.java:911 - Exception encountered during startup\n"
    )
    assert commands.start_failure(log) == (
        "ERROR [main] CassandraDaemon.java:911 - Exception encountered during startup"
    )
    assert commands.start_failure(log.splitlines()[0]) is None


# -- YCSB output -------------------------------------------------------------------------------
def test_ycsb_parser_on_a_workload_a_run() -> None:
    metrics = ycsb.ycsb_metrics(fixture("ycsb_run_workloada.txt"))
    assert metrics["throughput_ops"] == pytest.approx((642517 + 642617) / 60.004)
    assert metrics["read_latency_avg_ms"] == pytest.approx(1.5128831548101)
    assert metrics["update_latency_avg_ms"] == pytest.approx(1.4382407486453)
    assert (metrics["read_latency_p95_ms"], metrics["update_latency_p99_ms"]) == (3.093, 6.027)
    assert (metrics["latency_p95_ms"], metrics["latency_p99_ms"]) == (3.093, 6.731)
    assert metrics["errors"] == 0
    names = {spec.name for spec in YCSBWorkload.metrics}
    assert names == set(metrics)


def test_ycsb_parser_counts_errors_and_only_successes_as_throughput() -> None:
    text = fixture("ycsb_run_errors.txt")
    metrics = ycsb.ycsb_metrics(text)
    assert metrics["errors"] == 1203 + 1720
    assert metrics["throughput_ops"] == pytest.approx((131244 + 130968) / 60.118)
    reported = ycsb.parse_ycsb(text)[("OVERALL", "Throughput(ops/sec)")]
    assert metrics["throughput_ops"] < reported  # YCSB counts failed operations too
    assert metrics["latency_p99_ms"] == 48.127  # latencies of successful operations only


def test_ycsb_parser_rejects_runs_without_results() -> None:
    with pytest.raises(WorkloadError, match="NoHostAvailableException"):
        ycsb.ycsb_metrics(fixture("ycsb_run_noconnect.txt"))
    with pytest.raises(WorkloadError, match=r"no \[OVERALL\] results"):
        ycsb.ycsb_metrics("[ERROR] Java executable not found. Exiting.\n")
    only_reads = fixture("ycsb_run_workloada.txt").replace(
        "[UPDATE], Return=OK, 642617", "[UPDATE], Return=ERROR, 642617"
    )
    with pytest.raises(WorkloadError, match="no successful YCSB UPDATE operation"):
        ycsb.ycsb_metrics(only_reads)


def test_ycsb_parser_on_a_load_phase() -> None:
    metrics = ycsb.ycsb_metrics(fixture("ycsb_load.txt"), ("INSERT",))
    assert metrics["throughput_ops"] == pytest.approx(100000 / 9.217)
    assert metrics["insert_latency_p99_ms"] == 13.231 and metrics["errors"] == 0
    assert not math.isnan(metrics["latency_p95_ms"])


# -- lifecycle against stand-ins ---------------------------------------------------------------
class NodeExecutor(LocalExecutor):
    """A LocalExecutor posing as a separate host (own name and address)."""

    def __init__(self, host: str, address: str) -> None:
        self.host = host
        self.address = address


def make_install(tmp_path: Path, fail: bool = False) -> Path:
    install = tmp_path / "cassandra-standin"
    shutil.copytree(STANDIN / "cassandra", install)
    conf = install / "conf"
    conf.mkdir()
    (conf / "cassandra-env.sh").write_text("# stand-in\n")
    (conf / "logback.xml").write_text("<configuration/>\n")
    for name in ("jvm-server.options", "jvm11-server.options"):
        shutil.copy(DATA / name, conf / name)
    if fail:
        (install / "FAIL_START").write_text("")
    return install


def make_ycsb(tmp_path: Path) -> Path:
    home = tmp_path / "ycsb-standin"
    shutil.copytree(STANDIN / "ycsb", home)
    (home / "cassandra-binding").mkdir()
    (home / "workloads").mkdir()
    (home / "workloads" / "workloada").write_text("workload=site.ycsb.workloads.CoreWorkload\n")
    shutil.copy(DATA / "ycsb_load.txt", home / "out-load.txt")
    shutil.copy(DATA / "ycsb_run_workloada.txt", home / "out-run.txt")
    return home


def two_nodes() -> Cluster:
    return Cluster(
        (NodeExecutor("node1", "127.0.0.1"), NodeExecutor("node2", "127.0.0.2")),
        NodeExecutor("loadgen", "127.0.0.3"),
    )


def live_pids(system: CassandraSystem) -> list[int]:
    pids = [system._pid(i) for i in range(len(system.paths))]
    return [p for i, p in enumerate(pids) if p is not None and system._alive(i, p)]


def test_lifecycle_on_two_standin_nodes(tmp_path: Path) -> None:
    install, home = make_install(tmp_path), make_ycsb(tmp_path)
    system = CassandraSystem(
        install_dir=str(install),
        cluster=two_nodes(),
        poll_s=0.05,
        stop_timeout_s=5,
        setup_timeout_s=30,
    )
    workload = YCSBWorkload(ycsb_dir=str(home), recordcount=100000, duration_s=5, warmup_s=0)
    try:
        system.setup(tmp_path / "work", workload)
        assert live_pids(system) == []  # drained, stopped and snapshotted
        assert "'replication_factor': 2" in (install / "cql.log").read_text()
        load_args = (home / "args-load.txt").read_text()
        assert "hosts=127.0.0.1,127.0.0.2" in load_args
        assert "cassandra.writeconsistencylevel=ALL" in load_args
        assert (install / "nodetool.log").read_text().split("\n")[:4] == [
            "127.0.0.1 flush",
            "127.0.0.1 drain",
            "127.0.0.2 flush",
            "127.0.0.2 drain",
        ]
        node2 = Path(system.paths[1].base)
        assert node2.parent == (tmp_path / "work" / "cassandra").absolute()
        (Path(system.paths[0].pristine) / "marker").write_text("loaded")

        system.reset()
        assert (Path(system.paths[0].data) / "marker").read_text() == "loaded"
        config: Config = {"concurrent_writes": 64, "commitlog_segment_size_in_mb": 16}
        system.apply(config)
        tree = yaml.safe_load((node2 / "conf" / "cassandra.yaml").read_text())
        assert (tree["listen_address"], tree["concurrent_writes"]) == ("127.0.0.2", 64)
        assert tree["seed_provider"][0]["parameters"][0]["seeds"] == "127.0.0.1"
        assert tree["commitlog_segment_size"] == "16MiB"
        assert "-Xmx8192M" in active((node2 / "conf" / "jvm-server.options").read_text())
        assert (node2 / "conf" / "logback.xml").exists()  # the rest of the install's conf

        system.space = system.space.with_overrides({"key_cache_size_in_mb": {"max": 8192}})
        system.apply({**config, "key_cache_size_in_mb": 6000})  # beyond the catalogue's max
        tree = yaml.safe_load((node2 / "conf" / "cassandra.yaml").read_text())
        assert tree["key_cache_size"] == "6000MiB"

        system.start(30)
        assert len(live_pids(system)) == 2
        ring = [line.split()[0] for line in (install / "ring").read_text().splitlines()]
        assert ring[-2:] == ["127.0.0.1", "127.0.0.2"]  # the seed started first
        metrics = workload.run(system, timeout_s=30)
        assert metrics == ycsb.ycsb_metrics(fixture("ycsb_run_workloada.txt"))
        run_args = (home / "args-run.txt").read_text()
        assert "maxexecutiontime=5" in run_args and "-threads 32" in run_args

        (Path(system.paths[0].data) / "junk").write_text("written by a test")
        system.reset()  # stops the nodes and restores the snapshot
        assert live_pids(system) == []
        assert not (Path(system.paths[0].data) / "junk").exists()
        assert (Path(system.paths[0].data) / "marker").exists()
    finally:
        system.teardown()
    assert live_pids(system) == []
    assert not Path(system.paths[0].pristine).exists()
    assert Path(system.paths[0].logs).exists()


def test_a_node_that_fails_to_start_raises_with_its_log_tail(tmp_path: Path) -> None:
    node = NodeExecutor("node1", "127.0.0.1")
    system = CassandraSystem(
        install_dir=str(make_install(tmp_path, fail=True)),
        cluster=Cluster((node,), node),
        poll_s=0.05,
        stop_timeout_s=5,
        setup_timeout_s=20,
    )
    try:
        with pytest.raises(
            SystemStartError, match=r"host node1 did not start: .*Exception encountered"
        ) as err:
            system.setup(tmp_path / "work", YCSBWorkload(ycsb_dir=str(make_ycsb(tmp_path))))
        assert "Invalid yaml (stand-in)" in err.value.log_tail
        assert "system.log" in err.value.log_tail
        assert live_pids(system) == []
    finally:
        system.teardown()


def test_missing_installs_name_host_path_and_key(tmp_path: Path) -> None:
    cluster = two_nodes()
    system = CassandraSystem(install_dir=str(tmp_path / "nowhere"), cluster=cluster)
    with pytest.raises(ConfigError) as err:
        system.setup(tmp_path / "work", YCSBWorkload())
    message = str(err.value)
    assert "host node1" in message and f"{tmp_path}/nowhere/bin/cassandra" in message
    assert "system.adapter.install_dir" in message
    system = CassandraSystem(
        install_dir=str(make_install(tmp_path)),
        cluster=cluster,
        poll_s=0.05,
        stop_timeout_s=5,
        setup_timeout_s=20,
    )
    try:
        with pytest.raises(
            ConfigError,
            match=r"YCSB not found on load host loadgen: .*"
            r"workload\.ycsb_dir",
        ):
            system.setup(tmp_path / "work", YCSBWorkload(ycsb_dir=str(tmp_path / "no-ycsb")))
        assert live_pids(system) == []  # the nodes started for setup were stopped again
    finally:
        system.teardown()


def test_ycsb_past_its_time_limit_is_a_workload_timeout(tmp_path: Path) -> None:
    home = make_ycsb(tmp_path)
    (home / "bin" / "ycsb.sh").write_text("#!/bin/sh\nsleep 30\n")
    system = CassandraSystem(cluster=Cluster.local())
    workload = YCSBWorkload(ycsb_dir=str(home), duration_s=1, warmup_s=0, startup_slack_s=0.5)
    with pytest.raises(WorkloadTimeout, match=r"exceeded 1\.5s .*killed"):
        workload.run(system, timeout_s=None)


# -- configuration -----------------------------------------------------------------------------
def test_cassandra_composes_with_its_workload(compose_cfg: Callable[..., DictConfig]) -> None:
    cfg = compose_cfg("system=cassandra", "system.adapter.knob_set=28")
    assert cfg.workload.name == "ycsb_a" and cfg.workload.duration_s == 60
    assert cfg.system.adapter.install_dir == "/opt/cassandra"
    system = instantiate(cfg.system.adapter)
    assert system.space.dim == 28 and system.kind == "remote"


@pytest.mark.slow
def test_cli_prints_the_composed_job() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harness", "system=cassandra", "--cfg", "job"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "_target_: systems.cassandra.CassandraSystem" in out.stdout
    assert "_target_: systems.cassandra.YCSBWorkload" in out.stdout
