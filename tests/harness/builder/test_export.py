"""``python -m harness.cli.export``: every family's native files parse back to a test's values.

Each export is read with a real parser of its format (configparser, sqlite3, xml.etree,
yaml.safe_load, line parsers) and compared with what the adapter renders for a test; the
overrides parse back with Hydra's own override parser. No server is started: adapters are
built from the shipped configs and render without I/O.
"""

from __future__ import annotations

import configparser
import json
import shlex
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig

from harness import api
from harness.builder.export import build_adapter, export_config, hydra_override
from harness.errors import ConfigError
from harness.space import Config
from harness.system import System

Compose = Callable[..., DictConfig]


def _adapter(compose_cfg: Compose, system: str) -> System:
    return build_adapter(compose_cfg(f"system={system}"))


def _config(system: System, u: float = 0.73) -> Config:
    """A non-default configuration of every knob (the same point in each dimension)."""
    return system.space.decode([u] * system.space.dim)


def _export(system: System, config: Config, tmp_path: Path) -> dict[str, str]:
    result = export_config(config, tmp_path / "out", system=system, note="session t, trial 3")
    return {p.name: p.read_text() for p in result.files}


def _site(text: str) -> dict[str, str]:
    root = ET.fromstring(text)
    return {p.findtext("name") or "": p.findtext("value") or "" for p in root.iter("property")}


def _lines(text: str, sep: str | None) -> dict[str, str]:
    """``name = value`` / ``key value`` lines, comments and blanks skipped."""
    out = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, value = line.split(sep, 1)
            out[key.strip()] = value.strip()
    return out


def test_mysql_my_cnf(compose_cfg: Compose, tmp_path: Path) -> None:
    from systems.mysql.system import format_value

    system = _adapter(compose_cfg, "mysql")
    config = _config(system)
    parser = configparser.ConfigParser()
    parser.read_string(_export(system, config, tmp_path)["my.cnf"])
    assert dict(parser["mysqld"]) == {
        k.lower(): format_value(system.space[k], v) for k, v in config.items()
    }


def test_postgres_conf(compose_cfg: Compose, tmp_path: Path) -> None:
    from systems.postgres.system import format_value

    system = _adapter(compose_cfg, "postgres")
    config = _config(system)
    lines = _lines(_export(system, config, tmp_path)["postgresql.conf"], "=")
    assert lines == {k: format_value(system.space[k], v) for k, v in config.items()}


def test_sqlite_pragmas_run_on_a_database(compose_cfg: Compose, tmp_path: Path) -> None:
    from systems.sqlite import pragmas

    system = _adapter(compose_cfg, "sqlite")
    config = _config(system, 0.6)
    script = _export(system, config, tmp_path)["pragmas.sql"]
    db = sqlite3.connect(tmp_path / "fresh.db")
    try:
        db.executescript(script)
        actual = {name: db.execute(f"PRAGMA {name}").fetchone()[0] for name in config}
    finally:
        db.close()
    defaults = system.defaults  # type: ignore[attr-defined]
    expected = pragmas.expected_readback(config, system.space, defaults)
    assert pragmas.mismatches({k: expected[k] for k in config}, actual) == []


def test_tomcat_connector_and_jvm(compose_cfg: Compose, tmp_path: Path) -> None:
    from systems.tomcat import render

    system = _adapter(compose_cfg, "tomcat")
    config = _config(system)
    files = _export(system, config, tmp_path)
    values = system.catalogue.complete(config)  # type: ignore[attr-defined]
    ours = ET.fromstring(files["server.xml"]).find(".//Connector")
    theirs = ET.fromstring(render.render_server_xml(values, 8080)).find(".//Connector")
    assert ours is not None and theirs is not None and ours.attrib == theirs.attrib
    assert ours.attrib["maxThreads"] == str(values["maxThreads"])  # a tuned, not a default
    ET.fromstring(files["context.xml"])
    opts = _lines(files["setenv.sh"], "=")["CATALINA_OPTS"]
    assert shlex.split(opts) == [" ".join(render.java_opts(values))]


def test_spark_defaults(compose_cfg: Compose, tmp_path: Path) -> None:
    from systems.spark import conf

    system = _adapter(compose_cfg, "spark")
    config = _config(system)
    lines = _lines(_export(system, config, tmp_path)["spark-defaults.conf"], None)
    master, props = conf.spark_properties(
        system.catalogue.complete(config),  # type: ignore[attr-defined]
        tmp_path,
    )
    expected = {k: props[k] for k in config if k in props}
    if "local_threads" in config:
        expected["spark.master"] = master
    assert lines == expected


@pytest.mark.parametrize(("name", "sites"), [("hive", None), ("hdfs", None)])
def test_hadoop_site_files(compose_cfg: Compose, tmp_path: Path, name: str, sites: object) -> None:
    from systems.hadoop import render

    system = _adapter(compose_cfg, name)
    config = _config(system)
    files = _export(system, config, tmp_path)
    found: dict[str, str] = {}
    for file, text in files.items():
        if file.endswith("-site.xml"):
            props = _site(text)
            assert {render.site_of(k) for k in props} == {file.removesuffix(".xml")}
            found.update(props)
    assert found == render.property_values(config)


def test_mapreduce_site_and_env(compose_cfg: Compose, tmp_path: Path) -> None:
    from systems.mapreduce import render

    system = _adapter(compose_cfg, "mapreduce")
    config = _config(system)
    files = _export(system, config, tmp_path)
    values = system.catalogue.complete(config)  # type: ignore[attr-defined]
    options = render.hadoop_options(values, tmp_path)
    assert _site(files["mapred-site.xml"]) == {k: options[k] for k in config if k in options}
    env = _lines(files["hadoop-env.sh"], "=")["export HADOOP_CLIENT_OPTS"]
    assert shlex.split(env) == [" ".join(render.java_opts(values))]


def test_cassandra_yaml_and_jvm_options(compose_cfg: Compose, tmp_path: Path) -> None:
    from systems.cassandra import render

    system = _adapter(compose_cfg, "cassandra")
    config = _config(system)
    config["jvm.heap_mb"] = system.space["jvm.heap_mb"].default if "jvm.heap_mb" in config else 0
    config = {k: v for k, v in config.items() if v != 0 or k != "jvm.heap_mb"}
    files = _export(system, config, tmp_path)
    values = system.catalogue.complete(config)  # type: ignore[attr-defined]
    tree = render.render_tree({}, values, _layout())
    fragment = yaml.safe_load(files["cassandra.yaml"]) or {}
    assert fragment and all(tree[key] == value for key, value in fragment.items())
    targets = render.yaml_targets()
    assert set(fragment) <= {targets[k].key for k in config if k in targets}
    if "jvm.heap_mb" in config:
        assert _opts(files["jvm-server.options"]) == render.heap_flags(values)
    if "jvm.gc" in config:
        assert _opts(files["jvm17-server.options"]) == render.gc_flags(values)


def _opts(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _layout() -> Any:
    from systems.cassandra.render import NodeLayout

    fields = NodeLayout.__dataclass_fields__
    values: dict[str, Any] = {name: "x" for name in fields}
    values.update(seeds=("x",), native_transport_port=9042, storage_port=7000)
    return NodeLayout(**values)


def test_synthetic_has_no_native_files(compose_cfg: Compose, tmp_path: Path) -> None:
    system = _adapter(compose_cfg, "synthetic10")
    assert set(_export(system, _config(system), tmp_path)) == {
        "best.yaml",
        "best.json",
        "overrides.txt",
    }


@pytest.mark.parametrize(
    "value",
    [
        "on",
        "1",
        "true",
        "null",
        "a,b",
        "index_merge=on,mrr=off",
        "it's",
        "x\\",
        "a'b\\'c",
        1e-05,
        True,
        3,
        "a b",
    ],
)
def test_hydra_override_round_trips(value: Any) -> None:
    line = hydra_override("mapreduce.job.maps", value)
    assert line is not None
    parsed = OverridesParser.create().parse_override(line)
    assert parsed.key_or_group == "system.fixed.mapreduce.job.maps"
    assert parsed.value() == value and type(parsed.value()) is type(value)


def test_interpolation_is_never_an_override() -> None:
    assert hydra_override("k", "${oc.env:HOME}") is None


def test_hostile_values_are_escaped(tmp_path: Path) -> None:
    config: Config = {"a.b": "x'; rm -rf / #\n", "a_b": "$(id)", "n": 2}
    result = export_config(config, tmp_path, fmt="env")
    env = (tmp_path / "best.env").read_text()
    show = '. "$0"; printf "%s|%s" "$HARNESS_KNOB_A_B" "$HARNESS_KNOB_A_B_"'
    run = subprocess.run(
        ["sh", "-c", show, str(tmp_path / "best.env")], capture_output=True, text=True, check=True
    )
    assert run.stdout == "x'; rm -rf / #\n|$(id)"  # sourced as data: nothing ran
    assert "HARNESS_KNOB_N=2" in env
    assert [p.name for p in result.files] == ["best.env", "overrides.txt"]
    export_config(config, tmp_path, fmt="yaml")
    assert yaml.safe_load((tmp_path / "best.yaml").read_text()) == config


def test_adapter_file_names_stay_in_the_folder(tmp_path: Path) -> None:
    class Sneaky(System):
        def apply(self, config: Config) -> None:
            return None

        def native_files(self, config: Config, note: str = "") -> dict[str, str]:
            return {"../escape.cnf": "x"}

    from harness.space import Knob, Space

    space = Space((Knob("n", "int", 1, low=0, high=9),))
    with pytest.raises(ConfigError, match="plain file name"):
        export_config({"n": 2}, tmp_path / "out", system=Sneaky(space))
    assert not (tmp_path / "escape.cnf").exists()


def _run_export(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli.export", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("system", "files"),
    [
        ("synthetic10", {"best.yaml", "best.json", "overrides.txt"}),
        ("sqlite", {"pragmas.sql", "best.yaml", "best.json", "overrides.txt"}),
    ],
)
def test_session_end_to_end(
    compose_cfg: Compose, tmp_path: Path, system: str, files: set[str]
) -> None:
    extra = ["workload.duration_s=0.3", "workload.rows=2000"] if system == "sqlite" else []
    result = api.run(compose_cfg(f"system={system}", "tuner=random", "budget=3", *extra))
    best = result.best
    assert best is not None
    # the session wrote its export at the end
    assert files <= {p.name for p in (result.directory / "export").iterdir()}
    out = tmp_path / "again"
    run = _run_export(str(result.directory), "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert {p.name for p in out.iterdir()} == files
    parser = OverridesParser.create()
    parsed = [
        parser.parse_override(line)
        for line in (out / "overrides.txt").read_text().split("\n")
        if line
    ]
    pins: dict[str, Any] = {}
    for item in parsed:
        assert item.key_or_group.startswith("system.fixed.")
        pins[item.key_or_group.removeprefix("system.fixed.")] = item.value()
    assert pins == best.config
    assert json.loads((out / "best.json").read_text())["config"] == best.config
    assert yaml.safe_load((out / "best.yaml").read_text()) == best.config
    env = _run_export(str(result.directory), "--format", "env", "--out", str(tmp_path / "env"))
    assert env.returncode == 0 and (tmp_path / "env" / "best.env").exists()


def test_bad_path_is_one_line(tmp_path: Path) -> None:
    run = _run_export(str(tmp_path / "nowhere"))
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1 and "session folder" in run.stderr
    (tmp_path / "empty").mkdir()
    run = _run_export(str(tmp_path / "empty"))
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
