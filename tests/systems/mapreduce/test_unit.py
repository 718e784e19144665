"""MapReduce adapter logic without a JVM: -D options, JVM flags, output parsing, experts."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError, KnobError
from harness.hosts.machine import Machine
from harness.space import load_catalogue
from systems.mapreduce import MapReduceJob, expert, render
from systems.mapreduce.system import first_error, parse_mr


def complete(config: dict) -> dict:
    """The config completed with the whole catalogue's defaults."""
    return render.full_catalogue().complete(config)


def test_catalogue_sets() -> None:
    assert load_catalogue(render.CATALOGUE, "10").dim == 10
    assert load_catalogue(render.CATALOGUE, "30").dim == 30


def test_fixed_options_keep_the_local_runner_and_fast_polling(tmp_path: Path) -> None:
    options = render.hadoop_options(complete({}), tmp_path)
    assert options["mapreduce.framework.name"] == "local"
    assert options["fs.defaultFS"] == "file:///"
    assert int(options["mapreduce.client.completion.pollinterval"]) <= 100
    assert options["hadoop.tmp.dir"] == str(tmp_path / "tmp")
    assert not any(key.startswith("jvm.") for key in options)


def test_units_codecs_and_booleans(tmp_path: Path) -> None:
    options = render.hadoop_options(
        complete(
            {
                "mapreduce.input.fileinputformat.split.maxsize": 4,
                "io.file.buffer.size": 64,
                "mapreduce.map.output.compress": True,
                "mapreduce.map.output.compress.codec": "snappy",
                "harness.combiner": False,
            }
        ),
        tmp_path,
    )
    assert options["mapreduce.input.fileinputformat.split.maxsize"] == str(4 * 2**20)
    assert options["io.file.buffer.size"] == str(64 * 1024)
    assert options["mapreduce.map.output.compress"] == "true"
    assert options["mapreduce.map.output.compress.codec"].endswith("SnappyCodec")
    assert options["harness.combiner"] == "false"
    assert options["mapreduce.task.io.sort.mb"] == "100"


def test_java_opts() -> None:
    opts = render.java_opts(complete({"jvm.heap_mb": 256, "jvm.gc": "Serial"}))
    assert opts[:2] == ["-Xmx256m", "-XX:+UseSerialGC"]
    assert not any("ParallelGCThreads" in o for o in opts)


def test_refusals() -> None:
    with pytest.raises(KnobError):
        complete({"mapreduce.job.reduces": 0})
    with pytest.raises(ConfigError, match="unknown MapReduce job"):
        MapReduceJob(job="hive")


def test_parse_mr_and_first_error() -> None:
    out = parse_mr('log\nMR_STARTED\nMR_RESULT {"job_s": 8.7, "jobs": 1}\n')
    assert out.started and out.result == {"job_s": 8.7, "jobs": 1}
    assert not parse_mr("").started
    stderr = (
        "Unrecognized VM option 'NoSuchOption'\n"
        "Error: Could not create the Java Virtual Machine.\n"
    )
    assert first_error(stderr) == "Unrecognized VM option 'NoSuchOption'"
    assert (
        first_error("WARN x\njava.lang.OutOfMemoryError: Java heap space\n")
        == "java.lang.OutOfMemoryError: Java heap space"
    )


@pytest.mark.parametrize("knob_set", ["10", "30"])
def test_expert_settings_are_valid_partial_configs(knob_set: str) -> None:
    space = load_catalogue(render.CATALOGUE, knob_set)
    machine = Machine(ram_bytes=16 * 2**30, cores=2)
    for settings in (expert.manual(space, machine), expert.script(space, machine)):
        assert settings and set(settings) <= set(space.names)
        space.validate(settings, partial=True)
    assert expert.script(space, machine)["mapreduce.local.map.tasks.maximum"] == 2
