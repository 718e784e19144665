"""Cassandra 5.0 adapter without a server: catalogue, renderers, command builders, parsers.

Everything here is pure or touches only temporary files; no test starts Cassandra, YCSB or any
other server, so the file runs in seconds on any machine. The renderers are tested on copies of
our install's JVM option files, the parsers on outputs in the real formats
(tests/data/cassandra/, see its README). The adapter's lifecycle against a real Cassandra 5.0.9
and YCSB (setup, load, snapshot, reset, a local ring, faults) is tested in
tests/systems/cassandra/test_real.py; the heap rule, port checks, local hosts and the catalogue
check against the installed jar in tests/systems/cassandra/test_support.py.
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

from harness.errors import ConfigError, WorkloadError, WorkloadTimeout
from harness.executor import LocalExecutor
from harness.hosts.cluster import Cluster
from harness.hosts.machine import Machine, install_dir
from harness.space import Config, load_catalogue
from systems.cassandra import CassandraSystem, YCSBWorkload, commands, heap, render, ycsb
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "cassandra"
LAYOUT_CONF = ROOT / "systems" / "cassandra" / "java" / "server" / "layout" / "conf"
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
    assert sets["30"] - sets["28"] == {"jvm.heap_mb", "jvm.gc"}  # no jvm.young_mb in 5.0
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
    assert space["jvm.gc"].values == ("G1", "ZGC") and space["jvm.gc"].default == "G1"


def test_yaml_values_carry_unit_suffixes() -> None:
    """The unit-suffixed values of cassandra.yaml (the style of 4.1 and later, so of 5.0)."""
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
def test_every_knob_is_written_once_at_its_5_0_key() -> None:
    """Each knob lands once at its 5.0 key (the names 4.1 introduced), never at the old alias."""
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


def test_default_render_keeps_the_template_defaults() -> None:
    """The default configuration renders the 5.0 base template's own values."""
    assert render.TEMPLATE.name == "cassandra-5.0.base.yaml"
    space = render.full_catalogue()
    tree = yaml.safe_load(
        render.render_cassandra_yaml(render.TEMPLATE.read_text(), space.default(), layout())
    )
    base = yaml.safe_load(render.TEMPLATE.read_text())
    for key in (
        "concurrent_writes",
        "concurrent_reads",
        "commitlog_segment_size",
        "write_request_timeout",
        "read_request_timeout",
        "commitlog_sync_period",
        "column_index_size",
        "compaction_throughput",
        "index_summary_resize_interval",
        "memtable_allocation_type",
    ):
        assert tree[key] == base[key], key
    assert tree["stream_throughput_outbound"] == "24414KiB/s"  # Cassandra's 24MiB/s, in KiB/s


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


@pytest.mark.parametrize("name", ["jvm-server.options", "jvm17-server.options"])
def test_jvm_fixtures_are_copies_of_our_layout(name: str) -> None:
    """The fixtures are what scripts/setup.sh installs into .installs/cassandra/conf."""
    assert fixture(name) == (LAYOUT_CONF / name).read_text(), f"copy {LAYOUT_CONF / name} again"


@pytest.mark.parametrize("gc", ["G1", "ZGC"])
def test_jvm_options_heap_and_collector(gc: str) -> None:
    config = {**render.full_catalogue().default(), "jvm.gc": gc, "jvm.heap_mb": 4096}
    original = fixture("jvm-server.options")
    server = render.render_jvm_server_options(original, config)
    flags = active(server)
    assert flags.count("-Xms4096M") == 1 and flags.count("-Xmx4096M") == 1
    assert not any(f.startswith("-Xmn") for f in flags)  # G1 and ZGC size the young gen
    assert sum(f.startswith("-Xm") for f in flags) == 2
    assert set(active(original)) <= set(flags)  # nothing else lost
    assert "-XX:+ExitOnOutOfMemoryError" in flags
    # An install's own heap lines (e.g. a 4.1-style -Xmn) are switched off, not kept.
    legacy = render.render_jvm_server_options(original + "-Xms1G\n-Xmx1G\n-Xmn800M\n", config)
    assert [f for f in active(legacy) if f.startswith("-Xm")] == ["-Xms4096M", "-Xmx4096M"]
    assert "#harness-off# -Xmn800M" in legacy

    collector = fixture("jvm17-server.options")
    gc_text = render.render_jvm_gc_options(collector, config)
    gc_flags = active(gc_text)
    selectors = [f for f in gc_flags if f.endswith("GC") and f.startswith("-XX:+Use")]
    assert selectors == ["-XX:+UseG1GC" if gc == "G1" else "-XX:+UseZGC"]
    # Exactly the chosen collector's flags, once each: no G1 tuning lingers under ZGC.
    managed = [f for f in gc_flags if render.GC_LINE.match(f)]
    assert managed == list(render.GC_FLAGS[gc])
    assert any("G1" in f for f in gc_flags) == (gc == "G1")
    jpms = [f for f in active(collector) if not render.GC_LINE.match(f)]
    assert "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED" in jpms
    assert "-Djdk.attach.allowAttachSelf=true" in jpms
    assert [f for f in gc_flags if not render.GC_LINE.match(f)] == jpms  # JPMS lines kept
    assert "#harness-off# -XX:+UseG1GC" in gc_text
    # Rendering from an already-rendered file gives the same file (no second block), and
    # switching collectors from it gives what the install's file gives.
    assert render.render_jvm_gc_options(gc_text, config) == gc_text
    assert render.render_jvm_server_options(server, config) == server
    assert gc_text.count(render.JVM_MARKER) == server.count(render.JVM_MARKER) == 1
    other = {**config, "jvm.gc": "ZGC" if gc == "G1" else "G1"}
    assert render.render_jvm_gc_options(gc_text, other) == render.render_jvm_gc_options(
        collector, other
    )


def test_unknown_collector_and_removed_young_gen_knob() -> None:
    config = {**render.full_catalogue().default(), "jvm.gc": "CMS"}
    with pytest.raises(ConfigError, match=r"^jvm\.gc 'CMS': use one of G1, ZGC$"):
        render.render_jvm_gc_options(fixture("jvm17-server.options"), config)
    assert "jvm.young_mb" not in render.full_catalogue()
    assert render.heap_flags({"jvm.heap_mb": 2048, "jvm.young_mb": 512}) == [
        "-Xms2048M",
        "-Xmx2048M",
    ]


# -- command builders and validation -----------------------------------------------------------
def test_start_command_is_an_argument_list() -> None:
    paths = commands.NodePaths("/srv/c/node1")
    argv = commands.start_command(
        "/opt/cassandra",
        paths,
        "/usr/lib/jvm/java-17",
        "-Dcassandra.ring_delay_ms=1000 -Da=b",
        jmx_port=7201,
    )
    assert argv == [
        "sh",
        "-c",
        'exec "$@" > "$0" 2>&1 < /dev/null',
        "/srv/c/node1/logs/stdout.log",
        "env",
        "CASSANDRA_HOME=/opt/cassandra",
        "CASSANDRA_CONF=/srv/c/node1/conf",
        "CASSANDRA_LOG_DIR=/srv/c/node1/logs",
        "JAVA_HOME=/usr/lib/jvm/java-17",
        "JVM_EXTRA_OPTS=-Dcassandra.ring_delay_ms=1000 -Da=b",  # one argument
        "JMX_PORT=7201",
        "CASSANDRA_LOCK_MEMORY=no",
        "/opt/cassandra/bin/cassandra",
        "-p",
        "/srv/c/node1/cassandra.pid",
    ]
    for bad in ("-Da=$(id)", "-Da=*", "-XX:OnOutOfMemoryError=reboot", "notanoption"):
        with pytest.raises(ConfigError, match="extra_jvm_opts"):
            commands.start_command("/opt/cassandra", paths, extra_jvm_opts=bad)
    tool = commands.nodetool_command("/opt/cassandra", paths, "status", jmx_port=7299)
    assert tool[-6:] == ["/opt/cassandra/bin/nodetool", "-h", "127.0.0.1", "-p", "7299", "status"]
    assert "CASSANDRA_CONF=/srv/c/node1/conf" in tool
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
    node = LocalExecutor("n1", bad)
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
        java_home="/usr/lib/jvm/java-17",
    )
    assert argv == [
        "env",
        "JAVA_HOME=/usr/lib/jvm/java-17",
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
    with pytest.raises(ConfigError, match="client_jvm_opts"):
        YCSBWorkload(client_jvm_opts="-XX:+UseSerialGC -Dx=$(id)")


def test_workload_commands_carry_the_cluster_and_the_client_jvm_options() -> None:
    nodes = (LocalExecutor("node1", "127.0.0.2"), LocalExecutor("node2", "127.0.0.3"))
    system = CassandraSystem(cluster=Cluster(nodes, LocalExecutor()), heap_mb=1024)
    workload = YCSBWorkload(ycsb_dir="/opt/ycsb/", threads=8, recordcount=5000)
    run = workload.command(system, "run", 9.2)
    assert run[:2] == ["env", "JAVA_OPTS=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"]
    assert run[2:4] == ["/opt/ycsb/bin/ycsb.sh", "run"]
    assert "hosts=127.0.0.2,127.0.0.3" in run and "maxexecutiontime=10" in run
    assert "cassandra.writeconsistencylevel=ONE" in run and run[-3:] == ["-threads", "8", "-s"]
    load = workload.command(system, "load")
    assert "cassandra.writeconsistencylevel=ALL" in load and "recordcount=5000" in load
    assert not any(arg.startswith(("maxexecutiontime=", "operationcount=")) for arg in load)
    plain = YCSBWorkload(client_jvm_opts="").command(system, "run", 5)
    assert plain[0].endswith("/bin/ycsb.sh")  # no env at all without options or java_home
    with pytest.raises(ConfigError, match="only on the cassandra system"):
        workload.command(object(), "run")  # type: ignore[arg-type]


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
    jvm = "Unrecognized VM option 'UseConcMarkSweepGC'\nError: Could not create the Java VM"
    assert commands.start_failure(jvm) == "Unrecognized VM option 'UseConcMarkSweepGC'"


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


# -- installs and time limits (temporary files only, nothing is started) ----------------------
def ring_of_two() -> Cluster:
    """Two SUT "hosts" and a load host of a local ring (this machine on loopback addresses)."""
    return Cluster(
        (LocalExecutor("node1", "127.0.0.2"), LocalExecutor("node2", "127.0.0.3")),
        LocalExecutor("loadgen", "127.0.0.1"),
    )


def test_missing_installs_name_host_path_and_the_fix(tmp_path: Path) -> None:
    system = CassandraSystem(
        install_dir=str(tmp_path / "nowhere"), cluster=ring_of_two(), heap_mb=1024
    )
    with pytest.raises(ConfigError) as err:
        system.setup(tmp_path / "work", YCSBWorkload())  # fails before anything is started
    message = str(err.value)
    assert "Cassandra not found on host node1" in message
    assert f"{tmp_path}/nowhere/bin/cassandra is missing" in message
    assert "scripts/setup.sh --full" in message and "system.adapter.install_dir" in message
    assert "\n" not in message and not (tmp_path / "work").exists()

    # An install of 4.1's layout without a collector options file of 5.0.
    partial = tmp_path / "partial"
    for folder in ("bin", "conf", "lib"):
        (partial / folder).mkdir(parents=True)
    for name in ("bin/cassandra", "bin/nodetool", "conf/jvm-server.options"):
        (partial / name).write_text("")
    system = CassandraSystem(install_dir=str(partial), cluster=ring_of_two(), heap_mb=1024)
    with pytest.raises(ConfigError, match=r"^host node1: .* has neither jvm17-server\.options"):
        system.check_installed()
    (partial / "conf" / "jvm17-server.options").write_text("")
    system = CassandraSystem(
        install_dir=str(partial), cluster=ring_of_two(), heap_mb=1024, java_home="/no/jdk"
    )
    with pytest.raises(ConfigError, match=r"^java not found on host node1: .*java_home="):
        system.check_installed()

    # A complete Cassandra (the real install if there is one) but no YCSB on the load host:
    # prepare() checks the load host before it runs anything.
    real = Path(install_dir("cassandra"))
    if (real / "bin" / "cassandra").exists() and shutil.which("java"):
        system = CassandraSystem(install_dir=str(real), cluster=ring_of_two(), heap_mb=1024)
        system.check_installed()  # only looks at files
    with pytest.raises(
        ConfigError,
        match=r"^YCSB not found on load host loadgen: \S*/no-ycsb/bin/ycsb\.sh is missing; "
        r".*scripts/setup\.sh --full.*workload\.ycsb_dir=",
    ):
        YCSBWorkload(ycsb_dir=str(tmp_path / "no-ycsb")).prepare(system, tmp_path / "work")


def test_ycsb_past_its_time_limit_is_a_workload_timeout(tmp_path: Path) -> None:
    home = tmp_path / "ycsb"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "ycsb.sh"
    script.write_text("#!/bin/sh\nsleep 30\n")  # a child of the script: killed with its group
    script.chmod(0o755)
    system = CassandraSystem(cluster=Cluster.local(), heap_mb=1024)
    workload = YCSBWorkload(ycsb_dir=str(home), duration_s=1, warmup_s=0, startup_slack_s=0.5)
    with pytest.raises(WorkloadTimeout, match=r"exceeded 1\.5s .*killed"):
        workload.run(system, timeout_s=None)


# -- configuration -----------------------------------------------------------------------------
@pytest.mark.parametrize("own_installs", [False, True])
def test_cassandra_composes_with_its_workload(
    compose_cfg: Callable[..., DictConfig],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    own_installs: bool,
) -> None:
    """install_dir and ycsb_dir are <HARNESS_INSTALLS, else the repo's .installs>/<name>."""
    if own_installs:
        monkeypatch.setenv("HARNESS_INSTALLS", str(tmp_path / "shared"))
        root = tmp_path / "shared"
    else:
        monkeypatch.delenv("HARNESS_INSTALLS", raising=False)
        root = ROOT / ".installs"
    cfg = compose_cfg("system=cassandra", "system.adapter.knob_set=28")
    assert cfg.workload.name == "ycsb_a" and cfg.workload.duration_s == 60
    assert cfg.system.adapter.install_dir == str(root / "cassandra")
    assert cfg.workload.ycsb_dir == str(root / "ycsb")
    assert cfg.system.adapter.heap_mb is None and cfg.system.adapter.lock_memory is False
    system = instantiate(cfg.system.adapter)
    assert system.heap_mb is None  # the constructor does no I/O: the heap comes in preflight
    heap_mb = system.fit_heap()  # what preflight does after its checks: this machine's memory
    assert system.space.dim == 28 and system.kind == "remote"
    assert system.install_dir == str(root / "cassandra")
    ram_mib = Machine.of(LocalExecutor()).ram_mib  # control-group limit applied
    assert heap_mb == system.heap_mb == heap.auto_heap_mb(ram_mib)
    assert system.catalogue["jvm.heap_mb"].default == min(max(heap_mb, 1024), 31744)


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
