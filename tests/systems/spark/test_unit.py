"""Spark adapter logic without a JVM: properties, output parsing, error extraction, experts."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError, KnobError
from harness.hosts.machine import Machine
from harness.space import load_catalogue
from systems.spark import SparkJob, conf, expert
from systems.spark.system import java_error, parse_runner


def complete(config: dict) -> dict:
    """The config completed with the whole catalogue's defaults."""
    return conf.full_catalogue().complete(config)


DATA = Path(__file__).resolve().parents[2] / "data"


def test_catalogue_sets_and_inert_executor_memory() -> None:
    assert load_catalogue(conf.CATALOGUE, "10").dim == 10
    thirty = load_catalogue(conf.CATALOGUE, "30")
    assert thirty.dim == 30 and "spark.executor.memory" not in thirty
    assert "NO EFFECT in local mode" in conf.full_catalogue()["spark.executor.memory"].description


def test_default_properties_bind_to_loopback_without_ui(tmp_path: Path) -> None:
    master, props = conf.spark_properties(complete({}), tmp_path)
    assert master == "local[2]"
    assert props["spark.driver.host"] == props["spark.driver.bindAddress"] == "127.0.0.1"
    assert props["spark.ui.enabled"] == "false"
    assert props["spark.local.dir"] == str(tmp_path / "local")
    assert props["spark.driver.memory"] == "1024m"
    assert props["spark.sql.autoBroadcastJoinThreshold"] == str(10 * 2**20)
    assert props["spark.serializer"].endswith("JavaSerializer")
    assert "local_threads" not in props


def test_units_and_special_values(tmp_path: Path) -> None:
    master, props = conf.spark_properties(
        complete(
            {
                "local_threads": 1,
                "spark.sql.autoBroadcastJoinThreshold": 0,
                "spark.locality.wait": 0.5,
                "spark.shuffle.file.buffer": 64,
                "spark.serializer": "kryo",
                "spark.sql.adaptive.enabled": False,
            }
        ),
        tmp_path,
    )
    assert master == "local[1]"
    assert props["spark.sql.autoBroadcastJoinThreshold"] == "-1"
    assert props["spark.locality.wait"] == "500ms"
    assert props["spark.shuffle.file.buffer"] == "64k"
    assert props["spark.serializer"].endswith("KryoSerializer")
    assert props["spark.sql.adaptive.enabled"] == "false"


def test_invalid_value_and_unknown_job_are_refused() -> None:
    with pytest.raises(KnobError, match=r"spark\.memory\.fraction"):
        complete({"spark.memory.fraction": 1.5})
    with pytest.raises(ConfigError, match="unknown Spark job"):
        SparkJob(job="sort")


def test_parse_runner_lines() -> None:
    out = parse_runner(
        'noise\nSPARK_STARTED 7.25\nSPARK_RESULT {"job_s": 12.5, "summary": {"records": 3}}\n'
    )
    assert out.started_s == 7.25 and out.result == {"job_s": 12.5, "summary": {"records": 3}}
    assert parse_runner("Traceback ...").started_s is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("spark_stderr_driver_memory.txt", "Insufficient driver memory"),
        ("spark_stderr_task_cpus.txt", "has to be >= the number of cpus per task"),
    ],
)
def test_java_error_finds_the_cause_in_captured_stderr(name: str, expected: str) -> None:
    assert expected in (java_error((DATA / name).read_text()) or "")


@pytest.mark.parametrize("knob_set", ["10", "30"])
def test_expert_settings_are_valid_partial_configs(knob_set: str) -> None:
    space = load_catalogue(conf.CATALOGUE, knob_set)
    machine = Machine(ram_bytes=8 * 2**30, cores=2)
    for settings in (expert.manual(space, machine), expert.script(space, machine)):
        assert settings and set(settings) <= set(space.names)
        space.validate(settings, partial=True)
    assert expert.script(space, machine)["spark.sql.shuffle.partitions"] == 6
