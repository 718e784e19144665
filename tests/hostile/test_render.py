"""Hostile values never reach a config file, a SQL statement or a shell as syntax (issue 15).

Unit tests feed each renderer values that would start a new directive in its format (a newline
and a directive, quotes, ``#``/``;`` comments, ``$(...)`` and backticks, XML ``]]>``/``<!--``/
``&``, YAML ``: ``/``{``) and check that the value is refused with a one-line HarnessError or
written so that it reads back as exactly itself. The real tests start Tomcat with shell
syntax in its JVM options, run the launcher snippet, and run the CLI with a newline in a knob
choice.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ConfigError, HarnessError, KnobError
from harness.executor import LocalExecutor
from harness.space import SAFE_CHOICE, Knob, Space, load_catalogue
from systems.cassandra import commands as cassandra_commands
from systems.cassandra import render as cassandra
from systems.hadoop import render as hadoop
from systems.java_text import jvm_options
from systems.mapreduce import render as mapreduce
from systems.spark import conf as spark
from systems.sqlite import pragmas
from systems.tomcat import launch
from systems.tomcat import render as tomcat
from tests.helpers.requirements import NEEDS_TOMCAT

ROOT = Path(__file__).resolve().parents[2]
#: Values that would end a line, an attribute, a comment or a quoted string, or run a command.
HOSTILE = [
    "wal\nbind-address=0.0.0.0",
    "on\r\nport = 1",
    'on" address="0.0.0.0',
    "on' x='y",
    "on # listen_addresses = '*'",
    "on; DROP TABLE sbtest1",
    "$(touch /tmp/harness-pwned)",
    "`touch /tmp/harness-pwned`",
    "]]><x/>",
    "<!-- -->",
    "a&b",
    "a: b",
    "{x: 1}",
    "-Dinjected=1",
    "\u2028next",
]


def one_line(error: pytest.ExceptionInfo[HarnessError]) -> str:
    message = str(error.value)
    assert "\n" not in message and "\r" not in message, message
    return message


# -- the knob space ----------------------------------------------------------------------------
@pytest.mark.parametrize("choice", HOSTILE)
def test_catalogue_knobs_refuse_hostile_enum_choices(choice: str) -> None:
    with pytest.raises(KnobError) as info:
        Knob("journal_mode", "enum", "delete", values=("delete", choice), strict=True)
    assert "journal_mode" in one_line(info)


def test_every_knob_refuses_a_choice_with_a_newline_or_control_character() -> None:
    # Data-inferred knobs are not strict (spaces and quotes are real categorical values) but a
    # line break is never one.
    Knob("isolation", "enum", "read committed", values=("read committed", "it's"))
    for bad in ("a\nb", "a\rb", "a\tb", "a\x00b", "a\u2028b", "a\x85b", ""):
        with pytest.raises(KnobError, match="isolation"):
            Knob("isolation", "enum", "x", values=("x", bad))


def test_realistic_choices_pass_the_strict_pattern() -> None:
    for choice in (
        "O_DIRECT_NO_FSYNC",
        "index_merge=on,mrr=off",
        "org.apache.x.Y",
        "128k",
        "zstd",
        "1.5",
        "ISO-8859-1",
        "text/html",
        "a:b",
        "c++",
    ):
        Knob("k", "enum", choice, values=(choice, "other"), strict=True)


@given(st.text(max_size=12))
def test_strict_choices_are_exactly_the_safe_pattern(choice: str) -> None:
    try:
        Knob("k", "enum", "x0", values=("x0", choice), strict=True)
    except KnobError:
        assert choice == "x0" or not SAFE_CHOICE.fullmatch(choice)
        return
    assert SAFE_CHOICE.fullmatch(choice)
    assert not any(c in choice for c in " \t\r\n\"'`$;#&|<>(){}[]*?\\~!")


def test_every_repository_catalogue_is_strict_and_loads() -> None:
    for path in sorted((ROOT / "systems").glob("*/knobs.yaml")):
        space = load_catalogue(path)
        assert all(knob.strict for knob in space.knobs), path


def test_overrides_cannot_smuggle_hostile_text() -> None:
    space = load_catalogue(ROOT / "systems" / "sqlite" / "knobs.yaml")
    for changes in (
        {"values": ["delete", "wal\nport=1"]},
        {"values": ["delete", 'wal"']},
        {"values": "wal"},
        {"default": "wal\n"},
    ):
        with pytest.raises(KnobError) as info:
            space.with_overrides({"journal_mode": changes})
        assert "journal_mode" in one_line(info)
    for bounds in ({"max": "10\nx"}, {"min": float("nan")}, {"log": "yes"}):
        with pytest.raises(KnobError) as info:
            space.with_overrides({"cache_size": bounds})
        assert "cache_size" in one_line(info)
    with pytest.raises(KnobError) as info:  # +system.fixed.<knob>=... goes through validate
        space.validate({"journal_mode": "wal\nbind-address=0.0.0.0"}, partial=True)
    assert "journal_mode" in one_line(info)
    narrowed = space.with_overrides({"journal_mode": {"values": ["delete", "wal"]}})
    assert narrowed["journal_mode"].strict  # a widened space stays strict


# -- Tomcat: server.xml, context.xml, JVM options -------------------------------------------------
def _connector(xml: str) -> dict[str, str]:
    return dict(ET.fromstring(xml).find("Service/Connector").attrib)  # type: ignore[union-attr]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_server_xml_attribute_is_refused_or_reads_back_exactly(value: str) -> None:
    config = {**tomcat.full_catalogue().default(), "compression": value}
    try:
        xml = tomcat.render_server_xml(config, 8080)
    except KnobError as error:
        assert "\n" not in str(error)
        return
    attrs = _connector(xml)
    assert attrs["compression"] == value and attrs["address"] == "127.0.0.1"
    assert len(ET.fromstring(xml).findall(".//Connector")) == 1


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_tomcat_values(value: str) -> None:
    defaults = tomcat.full_catalogue().default()
    try:
        xml = tomcat.render_server_xml({**defaults, "compression": value}, 8080)
        assert _connector(xml)["compression"] == value
    except KnobError as error:
        assert "compression" in str(error) and "\n" not in str(error)
    try:
        context = tomcat.render_context_xml({**defaults, "cacheMaxSize": value})
        resources = ET.fromstring(context).find("Resources")
        assert resources is not None and resources.get("cacheMaxSize") == value
    except KnobError:
        pass
    with pytest.raises(KnobError, match="protocol"):
        tomcat.render_server_xml({**defaults, "protocol": value}, 8080)
    with pytest.raises(KnobError, match=r"jvm\.gc"):
        tomcat.java_opts({**defaults, "jvm.gc": value})
    with pytest.raises(ConfigError):
        tomcat.render_server_xml(defaults, 8080, address=value)


def test_tomcat_property_references_are_refused() -> None:
    with pytest.raises(KnobError, match="system property"):
        tomcat.render_server_xml(
            {**tomcat.full_catalogue().default(), "compression": "${env.HOME}"}, 8080
        )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-Dx=1\n-Dy=2", "newline"),
        ("-Xmx1g\tfoo", "newline or control"),
        ("com.evil.Main", "not a JVM option"),
        ("@/tmp/args", "not a JVM option"),
        ("-Dx=$(touch /tmp/m)", "not a JVM option"),  # split at the space: "/tmp/m)" is no option
        ("-XX:OnOutOfMemoryError=reboot", "shell command"),
        ("-XX:OnError=sh", "shell command"),
    ],
)
def test_jvm_options_refusals_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        jvm_options(text, "system.adapter.extra_java_opts")
    assert "extra_java_opts" in one_line(info)


def test_shell_syntax_in_one_jvm_option_stays_one_literal_argument() -> None:
    options = "-Dx=$(touch${IFS}/tmp/m) -Dy=`id` -XX:+UseG1GC"
    assert jvm_options(options, "k") == ["-Dx=$(touch${IFS}/tmp/m)", "-Dy=`id`", "-XX:+UseG1GC"]
    command = launch.jvm_command(
        "/usr/bin/java", "/usr/share/tomcat10", "/b", jvm_options(options, "k")
    )
    assert "-Dx=$(touch${IFS}/tmp/m)" in command and "-Dy=`id`" in command
    assert command[-2:] == [launch.MAIN_CLASS, "start"] and "-Dcatalina.base=/b" in command
    wrapped = launch.launch_command("/b/logs/catalina.out", "/b/tomcat.pid", command)
    assert wrapped[:3] == ["sh", "-c", launch.LAUNCH_SCRIPT]  # the script holds no value
    assert wrapped[4:] == ["/b/logs/catalina.out", "/b/tomcat.pid", *command]


def test_tomcat_system_refuses_bad_extra_java_opts_at_construction() -> None:
    from systems.tomcat import TomcatSystem

    with pytest.raises(ConfigError) as info:
        TomcatSystem(extra_java_opts="-Dx=1\n$(reboot)")
    assert "extra_java_opts" in one_line(info)


def test_launch_snippet_keeps_every_value_an_argument(tmp_path: Path) -> None:
    """The real ``sh -c`` snippet with a stand-in for java that prints its arguments."""
    marker = tmp_path / "marker"
    args = [
        f"-Dx=$(touch {marker})",
        f"-Dy=`touch {marker}`",
        "a b; touch " + str(marker),
        "'\"",
        "*",
    ]
    printer = [sys.executable, "-c", "import sys; print(repr(sys.argv[1:]))", *args]
    out, pid_file = tmp_path / "my logs" / "catalina.out", tmp_path / "tomcat $(x).pid"
    out.parent.mkdir()
    result = LocalExecutor().run(launch.launch_command(out, pid_file, printer), timeout_s=30)
    pid = int(result.stdout.strip())
    assert pid_file.read_text().strip() == str(pid)
    deadline = time.monotonic() + 20
    while not (out.exists() and out.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert out.read_text().strip() == repr(args)
    assert not marker.exists()
    assert oct(out.stat().st_mode & 0o777) == "0o640"  # catalina.sh's umask 0027


# -- Hadoop / Hive site XML, MapReduce -D options -------------------------------------------------
LAYOUT = hadoop.Layout("10.0.0.11", ("10.0.0.12",), "/opt/hadoop", "/data/hadoop")


def _properties(xml: str) -> dict[str, str]:
    root = ET.fromstring(xml)
    return {p.findtext("name") or "": p.findtext("value") or "" for p in root.findall("property")}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_site_xml_value_is_refused_or_reads_back_exactly(value: str) -> None:
    try:
        xml = hadoop.site_xml({"a.b": value, "c.d": "1"})
    except ConfigError as error:
        assert "\n" not in str(error)
        return
    assert _properties(xml) == {"a.b": value, "c.d": "1"}


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_hadoop_values(value: str) -> None:
    try:
        xml = hadoop.site_xml({"dfs.checksum.type": value})
        assert _properties(xml) == {"dfs.checksum.type": value}
    except ConfigError as error:
        assert "\n" not in str(error)
    if not value.isprintable():
        with pytest.raises(KnobError, match=r"dfs\.checksum\.type"):
            hadoop.property_values({"dfs.checksum.type": value})
        with pytest.raises(ConfigError, match="site_properties"):
            hadoop.render_sites(
                {},
                LAYOUT,
                hadoop.HADOOP_SITES,
                extra={"core-site": {"hadoop.proxyuser.t.hosts": value}},
            )


def test_site_property_jvm_options_reach_no_shell() -> None:
    for value in ("-Xmx1g $(touch /tmp/m)", "-Dx=`id`", "-Xlog:gc*", "-XX:OnError=sh"):
        with pytest.raises(ConfigError, match=r"mapreduce\.map\.java\.opts"):
            hadoop.render_sites(
                {},
                LAYOUT,
                hadoop.HADOOP_SITES,
                extra={"mapred-site": {"mapreduce.map.java.opts": value}},
            )
    files = hadoop.render_sites(
        {},
        LAYOUT,
        hadoop.HADOOP_SITES,
        extra={"mapred-site": {"mapreduce.map.java.opts": "-Xmx800m -XX:+UseG1GC"}},
    )
    assert (
        _properties(files["mapred-site.xml"])["mapreduce.map.java.opts"] == "-Xmx800m -XX:+UseG1GC"
    )


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_mapreduce_values(value: str, tmp_path: Path) -> None:
    defaults = mapreduce.full_catalogue().default()
    with pytest.raises(KnobError, match="codec"):
        mapreduce.hadoop_options(
            {**defaults, "mapreduce.map.output.compress.codec": value}, tmp_path
        )
    with pytest.raises(KnobError, match=r"jvm\.gc"):
        mapreduce.java_opts({**defaults, "jvm.gc": value})
    name = "mapreduce.fileoutputcommitter.algorithm.version"
    if value.isprintable():  # one argv entry, no shell: the literal text is fine
        assert mapreduce.hadoop_options({**defaults, name: value}, tmp_path)[name] == value
    else:
        with pytest.raises(KnobError, match=name):
            mapreduce.hadoop_options({**defaults, name: value}, tmp_path)


def test_mapreduce_system_refuses_bad_extra_java_opts() -> None:
    from systems.mapreduce import MapReduceSystem

    with pytest.raises(ConfigError, match="extra_java_opts"):
        MapReduceSystem(extra_java_opts="-Xmx1g\n-cp /tmp/evil Evil")


# -- Spark properties ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_spark_values(value: str, tmp_path: Path) -> None:
    defaults = spark.full_catalogue().default()
    with pytest.raises(KnobError, match=r"spark\.serializer"):
        spark.spark_properties({**defaults, "spark.serializer": value}, tmp_path)
    name = "spark.io.compression.codec"
    if value.isprintable():  # a --conf argument of an argv list: no shell, no file
        assert spark.spark_properties({**defaults, name: value}, tmp_path)[1][name] == value
    else:
        with pytest.raises(KnobError, match=name):
            spark.spark_properties({**defaults, name: value}, tmp_path)


# -- Cassandra: cassandra.yaml, JVM_EXTRA_OPTS ----------------------------------------------------
NODE = cassandra.NodeLayout(
    cluster_name="bench",
    listen_address="10.0.0.12",
    seeds=("10.0.0.12",),
    data_dir="/srv/c/data",
    commitlog_dir="/srv/c/commitlog",
    saved_caches_dir="/srv/c/caches",
    hints_dir="/srv/c/hints",
)


def _cassandra_tree(knob_value: str | None, override: str | None) -> dict:
    config = cassandra.full_catalogue().default()
    if knob_value is not None:
        config["memtable_allocation_type"] = knob_value
    overrides = {} if override is None else {"cdc_raw_directory": override}
    text = cassandra.render_cassandra_yaml(cassandra.TEMPLATE.read_text(), config, NODE, overrides)
    tree = yaml.safe_load(text)
    # Whatever the value, the node's own keys are untouched and no key was added by it.
    assert tree["listen_address"] == tree["rpc_address"] == "10.0.0.12"
    assert tree["seed_provider"][0]["parameters"] == [{"seeds": "10.0.0.12"}]
    clean = yaml.safe_load(
        cassandra.render_cassandra_yaml(
            cassandra.TEMPLATE.read_text(), cassandra.full_catalogue().default(), NODE
        )
    )
    assert set(tree) <= set(clean) | {"cdc_raw_directory"}
    return tree


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=30))
def test_cassandra_yaml_value_is_refused_or_reads_back_exactly(value: str) -> None:
    try:
        assert _cassandra_tree(value, None)["memtable_allocation_type"] == value
    except ConfigError as error:  # KnobError included: a newline or control character
        assert not value.isprintable() and "\n" not in str(error)
    # An override is the user's own YAML value: PyYAML quotes and escapes whatever it holds.
    try:
        assert _cassandra_tree(None, value)["cdc_raw_directory"] == value
    except ConfigError as error:  # only if PyYAML could not represent it faithfully
        assert "does not load back" in str(error)


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_cassandra_yaml_values(value: str) -> None:
    assert _cassandra_tree(None, value)["cdc_raw_directory"] == value
    if value.isprintable():
        assert _cassandra_tree(value, None)["memtable_allocation_type"] == value
    else:
        with pytest.raises(KnobError, match="memtable_allocation_type") as info:
            _cassandra_tree(value, None)
        one_line(info)
    with pytest.raises(ConfigError, match=r"jvm\.gc"):
        cassandra.gc_flags({**cassandra.full_catalogue().default(), "jvm.gc": value})


@pytest.mark.parametrize(
    "text",
    [
        "-Dx=$(touch /tmp/m)",
        "-Dx=$(touch${IFS}/tmp/m)",
        "-Dx=`id`",
        "-Dx=*",
        "-Dx=1;id",
        "-Dx=a\n-Dy=b",
        "x",
    ],
)
def test_cassandra_extra_jvm_opts_must_be_shell_inert(text: str) -> None:
    paths = cassandra_commands.NodePaths("/srv/c")
    with pytest.raises(ConfigError) as info:
        cassandra_commands.start_command("/opt/cassandra", paths, extra_jvm_opts=text)
    assert "extra_jvm_opts" in one_line(info)
    from systems.cassandra import CassandraSystem

    with pytest.raises(ConfigError, match="extra_jvm_opts"):
        CassandraSystem(extra_jvm_opts=text)
    fine = cassandra_commands.start_command(
        "/opt/cassandra", paths, extra_jvm_opts="-Dcassandra.skip_wait_for_gossip_to_settle=0"
    )
    assert "JVM_EXTRA_OPTS=-Dcassandra.skip_wait_for_gossip_to_settle=0" in fine


# -- SQLite PRAGMAs -------------------------------------------------------------------------------
SQLITE = load_catalogue(ROOT / "systems" / "sqlite" / "knobs.yaml", "all")


def _widened(name: str, *values: str) -> Space:
    """The SQLite space with a non-strict knob ``name`` (as if widened some other way), so
    that the renderer's own check is what is tested."""
    return Space(
        tuple(
            Knob(name, "enum", k.default, values=(k.default, *values)) if k.name == name else k
            for k in SQLITE.knobs
        )
    )


@pytest.mark.parametrize(
    "value", ["wal; DROP TABLE sbtest1", "wal--", "wal'", "wal /*", "x" * 21, "$(id)"]
)
def test_pragmas_refuse_anything_but_a_bare_word_or_integer(value: str) -> None:
    space = _widened("journal_mode", value)
    with pytest.raises(KnobError, match="journal_mode") as info:
        pragmas.render({"journal_mode": value}, space, SQLITE.default())
    one_line(info)
    with pytest.raises(KnobError, match="not supported"):
        pragmas.expected_readback(
            {"synchronous": value}, _widened("synchronous", value), SQLITE.default()
        )
    assert (
        dict(pragmas.render({"journal_mode": "wal"}, SQLITE, SQLITE.default()))["journal_mode"]
        == "WAL"
    )


# -- real: Tomcat started with shell syntax in its JVM options ------------------------------------
@pytest.mark.integration
@NEEDS_TOMCAT[0]
@NEEDS_TOMCAT[1]
@NEEDS_TOMCAT[2]
def test_real_tomcat_keeps_shell_syntax_in_jvm_options_literal(tmp_path: Path) -> None:
    from systems.tomcat import TomcatSystem, WebExploration

    tag = uuid.uuid4().hex
    dollar, tick, spaced = (Path(f"/tmp/harness-{tag}-{n}") for n in ("dollar", "tick", "spc"))
    # With a space the option splits and is refused before anything runs ...
    with pytest.raises(ConfigError) as info:
        TomcatSystem(extra_java_opts=f"-Dharness.x=$(touch {spaced})")
    one_line(info)
    # ... without one it is a single literal argument of the JVM, which Tomcat ignores.
    options = f"-Dharness.a=$(touch${{IFS}}{dollar}) -Dharness.b=`touch${{IFS}}{tick}`"
    system = TomcatSystem(extra_java_opts=options)
    system.setup(tmp_path, WebExploration(duration_s=1, warmup_s=0))
    try:
        system.start(60)
        assert system._http_status("/") == 200
        pid = system._pid()
        assert pid is not None
        alive, args = system._process(pid)
        assert alive and system._ours(args)
        assert f"-Dharness.a=$(touch${{IFS}}{dollar})" in args
        assert f"-Dharness.b=`touch${{IFS}}{tick}`" in args
    finally:
        system.teardown()
    assert system._pid() is None
    for marker in (dollar, tick, spaced):
        assert not marker.exists(), f"{marker} was created: a shell evaluated a JVM option"


# -- real: the CLI refuses a newline in a knob choice before any test -----------------------------
def _harness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable,
        "-m",
        "harness",
        *args,
        f"results_dir={tmp_path / 'results'}",
        "tracking=none",
        "session.progress=false",
        "budget=2",
        "session.name=hostile",
    ]
    return subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
    )


@pytest.mark.integration
@pytest.mark.parametrize("how", ["cli-ranges", "cli-fixed", "yaml-recipe", "tomcat-opts"])
def test_cli_refuses_a_newline_before_any_test(tmp_path: Path, how: str) -> None:
    hostile = "wal\nbind-address = 0.0.0.0"
    if how == "cli-ranges":
        done = _harness(
            tmp_path, "system=sqlite", f'+system.ranges.journal_mode.values=[delete,"{hostile}"]'
        )
    elif how == "cli-fixed":
        done = _harness(tmp_path, "system=sqlite", f"+system.fixed.journal_mode='{hostile}'")
    elif how == "yaml-recipe":  # a recipe file, as shared between users
        recipes = tmp_path / "recipes" / "experiment"
        recipes.mkdir(parents=True)
        (recipes / "hostile.yaml").write_text(
            "# @package _global_\nsystem:\n  ranges:\n    journal_mode:\n"
            '      values: [delete, "wal\\nbind-address = 0.0.0.0"]\n'
        )
        done = _harness(
            tmp_path,
            "--config-dir",
            str(tmp_path / "recipes"),
            "+experiment=hostile",
            "system=sqlite",
        )
    else:
        done = _harness(
            tmp_path, "system=tomcat", "system.adapter.extra_java_opts='-Xmx1g\n$(touch /tmp/x)'"
        )
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, done.stderr
    assert ("journal_mode" if how != "tomcat-opts" else "extra_java_opts") in errors[0]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results" / "sessions" / "hostile" / "samples.csv").exists()
