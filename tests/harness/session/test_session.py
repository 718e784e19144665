"""The session loop: statuses, timeouts, crash abort, resume, pins, default re-measurement."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict, Unpack

import pytest
from omegaconf import DictConfig

from harness.builder.session import build_session
from harness.errors import ConfigError, HarnessError, WorkloadError
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.session import Session, SessionOptions
from harness.space import Config
from harness.store.samples import SampleStore
from harness.system import MetricSpec, System, Workload
from harness.tracking.mlflow_tracker import MlflowTracker, NullTracker, keys
from harness.tracking.tracker import Tracker
from systems.synthetic import SyntheticSystem

Compose = Callable[..., DictConfig]


def test_a_synthetic_session_spends_exactly_its_budget(compose_cfg: Compose) -> None:
    session = build_session(compose_cfg("system=synthetic10", "tuner=random", "budget=25"))
    result = session.run()
    assert result.status == "FINISHED"
    assert [o.trial for o in result.observations] == list(range(25))
    assert result.observations[0].is_default
    assert result.observations[0].config == session.system.space.default()
    assert len(SampleStore(result.directory).load()) == 25
    improvement = result.improvement()
    assert improvement is not None and improvement > 0
    assert result.csv_path is not None and result.csv_path.exists()


class HangingWorkload(Workload):
    """Sleeps far longer than its timeout on configurations with compression on."""

    name = "hang"
    metrics = (MetricSpec("throughput", "max"),)

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        assert isinstance(system, SyntheticSystem) and system._point is not None
        if system._point[4] >= 0.5 and timeout_s is not None:
            time.sleep(timeout_s + 0.05)
            raise_timeout(timeout_s)
        if system._point[3] >= 0.75:  # the 'littlesync' policy: the client errors out
            raise WorkloadError("client lost its connection")
        return system.measure()


def raise_timeout(timeout_s: float) -> None:
    from harness.errors import WorkloadTimeout

    raise WorkloadTimeout(f"workload exceeded {timeout_s:.2f}s and was killed")


class _Options(TypedDict, total=False):
    """The :class:`SessionOptions` the tests below vary."""

    timeout_factor: float
    max_consecutive_crashes: int
    default_every: int


def _session(
    tmp_path: Path,
    tuner: str = "random",
    budget: int = 20,
    tracker: Tracker | None = None,
    **options: Unpack[_Options],
) -> Session:
    from baselines.sampling import LHSTuner, RandomTuner

    factory = {"random": RandomTuner, "lhs": LHSTuner}[tuner]
    store = SampleStore(tmp_path / "s")
    if not store.exists:
        store.create({"session_id": "s", "experiment": "x"})
    system = SyntheticSystem("10")
    workload = HangingWorkload()
    return Session(
        session_id="s",
        store=store,
        tuner_factory=factory,
        system=system,
        workload=workload,
        objective=Objective("throughput", "max"),
        tracker=tracker or NullTracker(),
        options=SessionOptions(budget=budget, progress=False, min_timeout_s=0.01, **options),
    )


def test_statuses_and_bestconfig_style_timeouts(tmp_path: Path) -> None:
    result = _session(tmp_path, budget=30, timeout_factor=2.0).run()
    statuses = {o.status for o in result.observations}
    assert {Status.SUCCEEDED, Status.TIMED_OUT, Status.FAILED} <= statuses
    assert all(o.score is None for o in result.observations if not o.ok)
    assert result.best is not None and result.best.ok


def test_consecutive_crashes_abort_with_a_clear_message(tmp_path: Path) -> None:
    result = _session(tmp_path, budget=100, max_consecutive_crashes=1).run()
    assert result.status == "ABORTED"
    assert "consecutive tests crashed" in result.message
    assert result.observations[-1].status is Status.CRASHED


def test_a_resume_does_not_count_the_crashes_it_replays(tmp_path: Path) -> None:
    first = _session(tmp_path, budget=100, max_consecutive_crashes=1).run()
    assert first.status == "ABORTED" and first.observations[-1].status is Status.CRASHED
    done = len(first.observations)
    # Resumed as it was: it runs a new test instead of aborting on the crash it replays.
    second = _session(tmp_path, budget=done + 1, max_consecutive_crashes=1).run()
    assert len(second.observations) == done + 1
    assert second.observations[done - 1].status is Status.CRASHED


def test_interrupt_keeps_finished_tests_and_resume_completes(tmp_path: Path) -> None:
    session = _session(tmp_path, tuner="lhs", budget=20)
    calls = 0

    def interrupt(obs: object, best: float | None) -> None:
        nonlocal calls
        calls += 1
        if calls == 7:
            raise KeyboardInterrupt

    first = session.run(on_progress=interrupt)
    assert first.status == "INTERRUPTED" and "resume with" in first.message
    assert len(SampleStore(tmp_path / "s").load()) == 7
    second = _session(tmp_path, tuner="lhs", budget=20).run()
    assert second.status == "FINISHED"
    assert [o.trial for o in second.observations] == list(range(20))
    # an uninterrupted run with the same seed proposes the same configurations
    fresh = _session(tmp_path / "fresh", tuner="lhs", budget=20).run()
    assert [o.config for o in fresh.observations] == [o.config for o in second.observations]


def test_resume_without_its_mlflow_run_logs_the_session_as_a_new_run(tmp_path: Path) -> None:
    """A session folder resumed on another machine (a fresh clone: its MLflow store is not in
    git) finds no run of its own there; every stored test is logged to a new run instead."""

    def stop_at_3(obs: object, best: float | None) -> None:
        if len(SampleStore(tmp_path / "s").load()) == 3:
            raise KeyboardInterrupt

    first_uri = f"sqlite:///{tmp_path}/first.db"
    first = _session(tmp_path, budget=6, tracker=MlflowTracker(first_uri, results_dir=tmp_path))
    assert first.run(on_progress=stop_at_3).status == "INTERRUPTED"
    old_run = SampleStore(tmp_path / "s").read_meta()["mlflow_run_id"]
    fresh = MlflowTracker(f"sqlite:///{tmp_path}/fresh.db", results_dir=tmp_path)
    second = _session(tmp_path, budget=6, tracker=fresh).run()
    assert second.status == "FINISHED", second.message
    new_run = SampleStore(tmp_path / "s").read_meta()["mlflow_run_id"]
    assert new_run != old_run
    children = fresh.client.search_runs(
        [fresh.client.get_run(new_run).info.experiment_id],
        f"tags.`{keys.TAG_PARENT}` = '{new_run}'",
    )
    assert sorted(int(c.data.tags[keys.TAG_TRIAL]) for c in children) == list(range(6))


def test_an_adapter_bug_aborts_cleanly_and_keeps_finished_tests(tmp_path: Path) -> None:
    session = _session(tmp_path, budget=20)
    original = session.system.apply
    calls = 0

    def buggy_apply(config: Config) -> None:
        nonlocal calls
        calls += 1
        if calls == 6:
            raise KeyError("address")  # e.g. a template key the renderer does not provide
        original(config)

    session.system.apply = buggy_apply  # type: ignore[method-assign]
    result = session.run()
    assert result.status == "ABORTED"
    assert "internal error KeyError" in result.message and "resume with" in result.message
    assert len(SampleStore(tmp_path / "s").load()) == 5
    assert "buggy_apply" in (tmp_path / "s" / "error.log").read_text()


def test_default_is_remeasured_and_nearest_default_is_reported(tmp_path: Path) -> None:
    result = _session(tmp_path, budget=12, default_every=5).run()
    assert [r.extra["after_trial"] for r in result.references] == [5, 10]
    assert result.improvement_vs_nearest() is not None


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("budget=0", "budget must be at least 1"),
        ("repeats=0", "repeats must be at least 1"),
        ("+system.fixed.flush_policy=sometimes", "knob 'flush_policy'"),
        ("+system.fixed.colour=red", "unknown knob 'colour'"),
        ("+system.ranges.io_threads.max=0", "min 1 must be below max 0"),
        ("workload=tpcc", "has no workload 'tpcc'; it offers: synthetic"),
        ("objective.metric=latency", "unknown objective metric 'latency'"),
    ],
)
def test_bad_input_fails_before_any_test(
    compose_cfg: Compose, override: str, message: str
) -> None:
    with pytest.raises(HarnessError, match=message):
        build_session(compose_cfg("system=synthetic10", override))


def test_pinned_knobs_are_not_tuned_but_applied(compose_cfg: Compose) -> None:
    session = build_session(
        compose_cfg("system=synthetic10", "budget=6", "+system.fixed.flush_policy=async")
    )
    result = session.run()
    assert all(o.config["flush_policy"] == "async" for o in result.observations)
    assert session.tuner is not None and "flush_policy" not in session.tuner.space


def test_unwritable_results_folder_is_a_config_error(compose_cfg: Compose, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match="not writable"):
        build_session(compose_cfg("system=synthetic10", f"results_dir={blocker}/x"))


def test_minimised_objective_is_normalised(compose_cfg: Compose) -> None:
    session = build_session(
        compose_cfg("system=synthetic10", "budget=10", "objective.metric=latency_p99_ms")
    )
    result = session.run()
    best = result.best
    assert best is not None
    values = [o.metrics["latency_p99_ms"] for o in result.observations if o.ok]
    assert best.metrics["latency_p99_ms"] == min(values)


def test_a_latency_constraint_is_honoured_by_the_best_setting(compose_cfg: Compose) -> None:
    from harness.cli.report import summary

    cfg = compose_cfg(
        "system=synthetic10",
        "budget=30",
        "seed=1",
        "objective.constraints=['latency_p99_ms <= 12']",
    )
    result = build_session(cfg).run()
    assert Status.INFEASIBLE in {o.status for o in result.observations}
    best = result.best
    assert best is not None and best.metrics["latency_p99_ms"] <= 12
    text = summary(result)
    assert "constraints: latency_p99_ms <= 12" in text and "latency_p99_ms:" in text
