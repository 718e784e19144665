"""Screening rungs (session.fidelity): new proposals run at a fraction of a full test, the best
of a rung are promoted, only full tests can be the answer, and resume replays the promotions.
A fake workload on the synthetic system records the window it was asked to run."""

from __future__ import annotations

from pathlib import Path

import pytest

from baselines.sampling import RandomTuner
from harness.errors import ConfigError
from harness.intervals import IntervalRecorder
from harness.objectives.objective import Objective
from harness.records import Observation, Status, config_key
from harness.session.options import SessionOptions
from harness.session.screening import Rungs, fidelity_of
from harness.session.session import Session
from harness.store.samples import SampleStore
from harness.system import MetricSpec, System, Workload
from harness.tracking.mlflow_tracker import NullTracker
from systems.synthetic import SyntheticSystem


class WindowedWorkload(Workload):
    """The synthetic throughput, over a measured window it records."""

    name = "windowed"
    metrics = (MetricSpec("throughput", "max", "op/s"),)

    def __init__(self) -> None:
        self.duration_s = 10.0
        self.windows: list[float] = []
        self.intervals = IntervalRecorder("rate", target="throughput")

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        assert isinstance(system, SyntheticSystem)
        self.windows.append(self.duration_s)
        return system.measure()


def _session(folder: Path, budget: int = 20) -> tuple[Session, WindowedWorkload]:
    store = SampleStore(folder)
    if not store.exists:
        store.create({"session_id": "sc", "experiment": "x"})
    workload = WindowedWorkload()
    session = Session(
        session_id="sc",
        store=store,
        tuner_factory=RandomTuner,
        system=SyntheticSystem(),
        workload=workload,
        objective=Objective("throughput", "max"),
        tracker=NullTracker(),
        options=SessionOptions(
            budget=budget, seed=2, progress=False, fidelity=[0.2, 1.0], fidelity_promote=0.34
        ),
    )
    return session, workload


def test_proposals_are_screened_and_the_best_promoted_to_full_tests(tmp_path: Path) -> None:
    session, workload = _session(tmp_path / "s")
    result = session.run()
    observations = result.observations
    assert len(observations) == 20 and result.status == "FINISHED"
    assert fidelity_of(observations[0]) == 1.0  # the default: a full test
    assert sorted(set(workload.windows)) == [2.0, 10.0]
    screened = [o for o in observations if fidelity_of(o) == 0.2]
    full = [o for o in observations[1:] if fidelity_of(o) == 1.0]
    assert screened and full
    screened_keys = {config_key(o.config) for o in screened}
    for obs in full:  # every full test after the default was promoted from the rung below
        assert config_key(obs.config) in screened_keys
        first = min(o.trial for o in screened if config_key(o.config) == config_key(obs.config))
        assert first < obs.trial
    promoted = {config_key(o.config) for o in full}
    best_screened = max(screened, key=lambda o: o.score or 0.0)
    assert config_key(best_screened.config) in promoted
    assert result.best is not None and fidelity_of(result.best) == 1.0


def test_only_a_full_test_can_be_the_answer() -> None:
    from harness.records import answer_of, best_measured

    lucky = Observation(1, {"x": 1}, Status.SUCCEEDED, 500.0, extra={"fidelity": 0.2})
    full = Observation(2, {"x": 2}, Status.SUCCEEDED, 100.0)
    assert best_measured([lucky, full]) is full
    assert answer_of([lucky, full], answer_trial=1) is full


def test_a_resumed_session_promotes_the_same_tests(tmp_path: Path) -> None:
    session, _ = _session(tmp_path / "s")
    finished = 0

    def interrupt(obs: object, best: float | None) -> None:
        nonlocal finished
        finished += 1
        if finished == 9:
            raise KeyboardInterrupt

    assert session.run(on_progress=interrupt).status == "INTERRUPTED"
    resumed = _session(tmp_path / "s")[0].run()
    whole = _session(tmp_path / "whole")[0].run()
    assert [(fidelity_of(o), o.config) for o in resumed.observations] == [
        (fidelity_of(o), o.config) for o in whole.observations
    ]


def test_rungs_promote_the_top_share_once_each() -> None:
    rungs = Rungs([0.2, 1.0], promote=0.34)
    for trial, score in enumerate([10.0, 30.0, 20.0]):
        rungs.add(
            Observation(trial, {"x": trial}, Status.SUCCEEDED, score, extra={"fidelity": 0.2})
        )
    assert rungs.next_promotion() == ({"x": 1}, 1.0)  # the top third of three: one
    assert rungs.next_promotion() is None  # promoted once
    for trial in (3, 4, 5):
        rungs.add(Observation(trial, {"x": trial}, Status.FAILED, None, extra={"fidelity": 0.2}))
    assert rungs.next_promotion() == ({"x": 2}, 1.0)  # six results: the top two


@pytest.mark.parametrize("bad", [[0.5], [0.2, 0.8], [0.5, 0.2, 1.0], [0.0, 1.0]])
def test_bad_rungs_are_refused(bad: list[float]) -> None:
    with pytest.raises(ConfigError, match=r"session\.fidelity"):
        SessionOptions(fidelity=bad)


def test_a_screening_run_is_not_counted_as_a_measurement_of_the_answer() -> None:
    from harness.records import measurement_count

    screened = Observation(1, {"x": 1}, Status.SUCCEEDED, 50.0, extra={"fidelity": 0.2})
    full = Observation(2, {"x": 1}, Status.SUCCEEDED, 60.0)
    assert measurement_count([screened, full], {"x": 1}) == 1


def test_the_summary_and_the_session_metrics_count_screening_runs(tmp_path: Path) -> None:
    from harness.cli.report import summary
    from harness.session.end import session_metrics

    session, _ = _session(tmp_path / "s", budget=10)
    result = session.run()
    screened = sum(fidelity_of(o) < 1 for o in result.observations)
    assert screened and f"screening runs {screened})" in summary(result)
    assert session_metrics(result)["screening_tests"] == screened


def test_only_a_rate_client_with_a_measured_window_is_screened() -> None:
    from harness.session.screening import screening_gap
    from systems.mapreduce import MapReduceJob
    from systems.sqlite import SQLiteOLTP
    from systems.synthetic import SyntheticWorkload

    assert screening_gap(SQLiteOLTP()) is None
    assert screening_gap(WindowedWorkload()) is None
    job = MapReduceJob(job="join")  # a nominal duration_s: not a window to shorten
    assert "no measured window" in (screening_gap(job) or "")
    assert "no measured window" in (screening_gap(SyntheticWorkload()) or "")
