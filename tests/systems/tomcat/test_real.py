"""Tomcat against the real thing: a short test, a crash, and a budget-3 LHS session."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from harness.api import run_objects
from harness.errors import SystemStartError
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from systems.tomcat import TomcatSystem, WebExploration
from tests.helpers.requirements import NEEDS_TOMCAT

pytestmark = [
    pytest.mark.integration,
    *NEEDS_TOMCAT,
]

OBJECTIVE = Objective("requests_per_s", "max")


@pytest.fixture
def tomcat(tmp_path: Path):  # type: ignore[no-untyped-def]
    system = TomcatSystem(knob_set="10")
    workload = WebExploration(duration_s=2, warmup_s=1)
    system.setup(tmp_path, workload)
    yield system, workload
    system.teardown()


@pytest.mark.slow
def test_default_and_tuned_configs_serve_the_site(tomcat) -> None:  # type: ignore[no-untyped-def]
    system, workload = tomcat
    default = run_test(system, workload, OBJECTIVE, system.space.default(), 0, is_default=True)
    assert default.status is Status.SUCCEEDED, default.message
    assert default.metrics["requests_per_s"] > 100
    assert set(default.metrics) == {m.name for m in workload.metrics}
    tuned = dict(system.space.default(), maxThreads=4, protocol="nio2", compression="on")
    obs = run_test(system, workload, OBJECTIVE, tuned, 1)
    assert obs.status is Status.SUCCEEDED, obs.message
    assert "Http11Nio2Protocol" in (system.base / "conf" / "server.xml").read_text()
    assert system._pid() is None  # stopped after the test


@pytest.mark.slow
def test_jvm_that_cannot_start_is_a_crash_with_log_tail(tmp_path: Path) -> None:
    system = TomcatSystem(extra_java_opts="-XX:+NoSuchOption")
    system.setup(tmp_path, WebExploration())
    try:
        obs = run_test(
            system, WebExploration(duration_s=1, warmup_s=0), OBJECTIVE, system.space.default(), 0
        )
        assert obs.status is Status.CRASHED
        assert "NoSuchOption" in obs.extra["log_tail"]
    finally:
        system.teardown()


@pytest.mark.slow
def test_port_in_use_raises_system_start_error(tomcat) -> None:  # type: ignore[no-untyped-def]
    system, _ = tomcat
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", system.port))
        blocker.listen()
        system.apply(system.space.default())
        with pytest.raises(SystemStartError) as info:
            system.start(30)
    assert "Address already in use" in info.value.log_tail


@pytest.mark.slow
def test_budget_3_lhs_session(tmp_path: Path) -> None:
    from baselines.sampling import LHSTuner

    system = TomcatSystem(knob_set="10")  # run_objects sets it up and tears it down
    workload = WebExploration(duration_s=2, warmup_s=1)
    result = run_objects(
        LHSTuner,
        system,
        workload,
        budget=3,
        seed=1,
        results_dir=tmp_path,
        objective=OBJECTIVE,
        keep_workdir=True,
    )
    observations = result.observations
    assert result.status == "FINISHED", result.message
    assert len(observations) == 3 and observations[0].is_default
    assert all(o.status in (Status.SUCCEEDED, Status.CRASHED) for o in observations)
    assert observations[0].status is Status.SUCCEEDED
    assert system.base == tmp_path / "work" / result.session_id / "tomcat" / "base"
    assert system._pid() is None  # torn down
