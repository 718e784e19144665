"""Tomcat adapter logic without a server: rendering, wrk parsing, failure detection, experts."""

from __future__ import annotations

import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.errors import KnobError, WorkloadError
from harness.hosts.machine import Machine
from harness.space import load_catalogue
from systems.tomcat import expert, render
from systems.tomcat.system import TomcatSystem, http_url, start_failure
from systems.tomcat.workload import parse_wrk


def complete(config: dict) -> dict:
    """The config completed with the whole catalogue's defaults."""
    return render.full_catalogue().complete(config)


DATA = Path(__file__).resolve().parents[2] / "data"


def connector(xml: str) -> dict[str, str]:
    return dict(ET.fromstring(xml).find("Service/Connector").attrib)  # type: ignore[union-attr]


def test_catalogue_sets_have_10_and_30_knobs() -> None:
    assert load_catalogue(render.CATALOGUE, "10").dim == 10
    assert load_catalogue(render.CATALOGUE, "30").dim == 30


def test_default_server_xml_is_valid_and_carries_each_knob_once() -> None:
    values = complete({})
    xml = render.render_server_xml(values, 18080)
    attrs = connector(xml)  # ElementTree rejects duplicate attributes, so this also checks that
    assert attrs["port"] == "18080" and attrs["address"] == "127.0.0.1"
    assert attrs["protocol"] == "org.apache.coyote.http11.Http11NioProtocol"
    assert attrs["maxThreads"] == "200" and attrs["compression"] == "off"
    assert "socket.rxBufSize" not in attrs  # "os": left to the kernel
    assert xml.count("AccessLogValve") == 1
    assert "${" not in xml


def test_every_config_of_a_sample_renders_to_valid_xml() -> None:
    space = render.full_catalogue()
    for point in load_catalogue(render.CATALOGUE).decode_many(
        __import__("numpy").random.default_rng(0).random((20, space.dim))
    ):
        values = complete(point)
        attrs = connector(render.render_server_xml(values, 8080))
        assert attrs["maxThreads"] == str(values["maxThreads"])
        assert attrs["protocol"].endswith(("NioProtocol", "Nio2Protocol"))
        ET.fromstring(render.render_context_xml(values))


def test_connector_listens_on_the_sut_address() -> None:
    attrs = connector(render.render_server_xml(complete({}), 8080, "10.0.0.7"))
    assert attrs["address"] == "10.0.0.7" and attrs["port"] == "8080"
    assert http_url("10.0.0.7", 8080) == "http://10.0.0.7:8080"
    assert http_url("::1", 80) == "http://[::1]:80"


def test_tuned_values_reach_the_files() -> None:
    values = complete(
        {
            "protocol": "nio2",
            "socket.rxBufSize": "32k",
            "accessLog": False,
            "maxKeepAliveRequests": 1,
            "cacheMaxSize": 4096,
        }
    )
    xml = render.render_server_xml(values, 8080)
    attrs = connector(xml)
    assert attrs["protocol"].endswith("Http11Nio2Protocol")
    assert attrs["socket.rxBufSize"] == "32768" and attrs["maxKeepAliveRequests"] == "1"
    assert "AccessLogValve" not in xml
    assert 'cacheMaxSize="4096"' in render.render_context_xml(values)


def test_java_opts_follow_the_jvm_knobs() -> None:
    opts = render.java_opts(
        complete(
            {
                "jvm.heap_mb": 256,
                "jvm.gc": "Serial",
                "jvm.heap_prealloc": True,
                "jvm.tiered_compilation": False,
            }
        )
    )
    assert {"-Xmx256m", "-Xms256m", "-XX:+UseSerialGC", "-XX:-TieredCompilation"} <= set(opts)
    assert not any(o.startswith("-XX:ParallelGCThreads") for o in opts)
    default = render.java_opts(complete({}))
    assert "-XX:+UseG1GC" in default and not any(o.startswith("-Xms") for o in default)


def test_out_of_range_value_is_refused() -> None:
    with pytest.raises(KnobError, match="maxThreads"):
        complete({"maxThreads": 0})


def test_parse_wrk_on_captured_output() -> None:
    metrics = parse_wrk((DATA / "tomcat_wrk_output.txt").read_text())
    assert metrics["requests_per_s"] == pytest.approx(2975 / 2.010537)
    assert metrics["latency_avg_ms"] == pytest.approx(36.7643)
    assert metrics["latency_p99_ms"] == pytest.approx(242.526)
    assert metrics["errors"] == 0


def test_parse_wrk_counts_only_good_responses_and_fails_without_any() -> None:
    line = (
        "HARNESS_RESULT requests=100 duration_us=1000000 bytes=10 lat_mean_us=1 lat_p50_us=1 "
        "lat_p99_us=2 lat_max_us=3 err_connect=1 err_read=0 err_write=0 err_status=40 "
        "err_timeout=2"
    )
    metrics = parse_wrk(line)
    assert metrics["requests_per_s"] == pytest.approx(60.0) and metrics["errors"] == 43
    with pytest.raises(WorkloadError, match="no successful request"):
        parse_wrk(line.replace("err_status=40", "err_status=100"))
    with pytest.raises(WorkloadError, match="HARNESS_RESULT"):
        parse_wrk("unable to connect to 127.0.0.1:1 Connection refused")


def test_start_failure_markers() -> None:
    assert (
        start_failure(
            "Unrecognized VM option 'X'\nError: Could not create the Java Virtual Machine."
        )
        == "Unrecognized VM option 'X'"
    )
    assert start_failure("INFO Server startup in [838] milliseconds") is None


@pytest.mark.parametrize("knob_set", ["10", "30"])
def test_expert_settings_are_valid_partial_configs(knob_set: str) -> None:
    space = load_catalogue(render.CATALOGUE, knob_set)
    small = Machine(ram_bytes=2 * 2**30, cores=2)
    for settings in (expert.manual(space, small), expert.script(space, small)):
        assert settings and set(settings) <= set(space.names)
        space.validate(settings, partial=True)
    assert expert.script(space, small)["maxThreads"] == 8


def _sleeper(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", *args])


def test_stop_kills_only_a_jvm_of_its_own_base(tmp_path: Path) -> None:
    """A stale pid file (resume, reboot) must not make stop() signal someone else's process;
    a process started with our ``-Dcatalina.base`` is stopped. Real processes, no Tomcat."""
    system = TomcatSystem(stop_timeout_s=5)
    system.base = tmp_path / "base"
    system.base.mkdir()
    stranger = _sleeper("-Dcatalina.base=/somebody/else")
    ours = _sleeper(f"-Dcatalina.base={system.base}")
    try:
        time.sleep(0.3)  # let both exec so that ps shows their arguments
        system.pid_file.write_text(f"{stranger.pid}\n")
        system.stop()
        assert stranger.poll() is None, "stop() signalled a process of another base"
        assert not system.pid_file.exists()
        system.pid_file.write_text(f"{ours.pid}\n")
        system.stop()
        assert ours.wait(timeout=10) != 0
    finally:
        for process in (stranger, ours):
            process.kill()
            process.wait()
