"""Early stop, the logic alone: a fake workload on the synthetic system prints interval lines
(its configuration's throughput, with a little deterministic ripple), so the judge, the stop,
the stored status, the censored value, the tuners' scores and resume are checked in
milliseconds. The real stop of a real client is tests/harness/session/test_early_stop_real.py."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from baselines.sampling import RandomTuner
from harness import api
from harness.errors import ConfigError
from harness.intervals import ELAPSED, IntervalRecorder, IntervalSample
from harness.objectives.objective import Objective
from harness.records import Observation, Status, answer_of, best_measured
from harness.session.early_stop import EarlyStopRule, Judge, judge_for, rate_interval
from harness.session.options import SessionOptions
from harness.session.session import Session
from harness.store.samples import SampleStore
from harness.system import MetricSpec, System, Workload
from harness.tracking.mlflow_tracker import NullTracker
from harness.tuner import imputed_scores
from systems.synthetic import SyntheticSystem

SECONDS = 10


def parse_line(line: str) -> list[IntervalSample]:
    """``t=<offset> throughput=<value>`` → one sample."""
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    if set(fields) != {"t", "throughput"}:
        return []
    return [IntervalSample(float(fields["t"]), "throughput", float(fields["throughput"]), "op/s")]


class IntervalWorkload(Workload):
    """Prints one interval line per 'second' (0 while 'connecting' for the first two), then
    reports the mean; counts the lines it got to print (a stop ends the run early)."""

    name = "intervals"
    metrics = (MetricSpec("throughput", "max", "op/s"),)

    def __init__(self) -> None:
        self.intervals = IntervalRecorder("rate", target="throughput")
        self.lines_printed: list[int] = []

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        assert isinstance(system, SyntheticSystem)
        value = system.measure()["throughput"]
        self.intervals.begin()
        printed = 0
        try:
            for second in range(1, SECONDS + 1):
                ripple = 0.02 * value * math.sin(second)
                rate = 0.0 if second <= 2 else value + ripple
                printed += 1
                self.intervals.feed(f"t={second} throughput={rate:.3f}", parse_line)
        finally:
            self.lines_printed.append(printed)
        return {"throughput": value}


def _run(tmp_path: Path, budget: int = 24, **options: Any) -> tuple[Any, IntervalWorkload]:
    workload = IntervalWorkload()
    result = api.run_objects(
        RandomTuner,
        SyntheticSystem(),
        workload,
        budget=budget,
        results_dir=tmp_path,
        seed=4,
        progress=False,
        **options,
    )
    return result, workload


def test_rate_interval_is_mean_plus_minus_t_s_over_root_n() -> None:
    assert rate_interval([1.0, 2.0], 0.95) is None  # too few to judge
    low, high = rate_interval([10.0, 12.0, 14.0], 0.95) or (0, 0)
    half = 4.302652729911275 * 2.0 / math.sqrt(3)  # t(0.975, 2) · s / √n
    assert low == pytest.approx(12.0 - half) and high == pytest.approx(12.0 + half)


def _judge(threshold: float, kind: str = "rate", direction: str = "max") -> Judge:
    metric = "throughput" if kind == "rate" else "job_s"
    recorder = IntervalRecorder(kind, target=metric)  # type: ignore[arg-type]
    objective = Objective(metric, direction)  # type: ignore[arg-type]
    judge = Judge(recorder, objective, EarlyStopRule(window_s=2.0, rank=3, margin=0.25), threshold)
    recorder.subscribe(judge)
    return judge


def _stop_of(judge: Judge) -> dict[str, object] | None:
    try:
        judge.recorder.checkpoint()
    except Exception as exc:
        return dict(exc.censored)  # type: ignore[attr-defined]
    return None


def test_a_hopeless_rate_is_stopped_after_the_window_with_its_upper_bound() -> None:
    judge = _judge(threshold=1000.0)
    for second, value in enumerate([0, 0, 500, 510, 490], start=1):
        judge.recorder.emit(IntervalSample(second, "throughput", value, "op/s"))
    censored = _stop_of(judge)
    assert censored is not None
    assert censored["side"] == "upper" and 500 < float(censored["bound"]) < 1000  # type: ignore[arg-type]
    assert censored["score_bound"] == censored["bound"] and censored["samples"] == 3


def test_the_warm_up_and_a_contender_are_never_stopped() -> None:
    judge = _judge(threshold=1000.0)
    for second in (1, 2):  # zeros while connecting: inside the window, not judged
        judge.recorder.emit(IntervalSample(second, "throughput", 0.0, "op/s"))
    for second, value in enumerate([990, 1400, 900, 1300], start=3):  # could still reach it
        judge.recorder.emit(IntervalSample(second, "throughput", value, "op/s"))
    assert _stop_of(judge) is None


def test_a_minimised_rate_is_stopped_on_its_lower_bound() -> None:
    judge = _judge(threshold=5.0, direction="min")
    for second, value in enumerate([0, 0, 20, 21, 19, 20], start=1):
        judge.recorder.emit(IntervalSample(second, "throughput", value, "ms"))
    censored = _stop_of(judge)
    assert censored is not None and censored["side"] == "lower"
    assert float(censored["score_bound"]) == -float(censored["bound"])  # type: ignore[arg-type]


def test_a_job_is_stopped_once_slower_than_the_best_by_the_margin() -> None:
    judge = _judge(threshold=10.0, kind="elapsed", direction="min")
    judge.recorder.emit(IntervalSample(12.4, ELAPSED, 12.4, "s"))
    assert _stop_of(judge) is None  # 24 % slower: still within the margin
    judge.recorder.emit(IntervalSample(12.6, ELAPSED, 12.6, "s"))
    censored = _stop_of(judge)
    assert censored == {
        "metric": "job_s",
        "bound": 12.6,
        "side": "lower",
        "score_bound": -12.6,
        "threshold": 10.0,
        "samples": 1,
    }


def _obs(trial: int, value: float | None, status: Status = Status.SUCCEEDED) -> Observation:
    return Observation(trial, {"x": trial}, status, value, {"throughput": value} if value else {})


def test_nothing_is_judged_before_k_tests_succeeded() -> None:
    objective, rule = Objective("throughput", "max"), EarlyStopRule(rank=3)
    two = [_obs(0, 100.0), _obs(1, 300.0), _obs(2, None, Status.FAILED)]
    assert judge_for(IntervalWorkload(), objective, rule, two) is None
    judge = judge_for(IntervalWorkload(), objective, rule, [*two, _obs(3, 200.0)])
    assert judge is not None and judge.threshold == 100.0  # the 3rd best of 300, 200, 100


def test_a_session_stops_hopeless_tests_stores_them_and_never_answers_with_one(
    tmp_path: Path,
) -> None:
    result, workload = _run(tmp_path, early_stop=True, early_stop_window_s=2.0, early_stop_rank=3)
    observations = result.observations  # type: ignore[attr-defined]
    stopped = [o for o in observations if o.status is Status.STOPPED_EARLY]
    assert len(observations) == 24  # stopped tests count toward the budget
    assert stopped, [o.status for o in observations]
    assert sum(printed < SECONDS for printed in workload.lines_printed) == len(stopped)
    for obs in stopped:
        assert obs.score is None and obs.metrics == {}
        assert obs.extra["censored"]["side"] == "upper"
        assert obs.extra["censored"]["bound"] < obs.extra["censored"]["threshold"]
    best = result.best  # type: ignore[attr-defined]
    assert best is not None and best.status is Status.SUCCEEDED
    answer = answer_of(observations, stopped[0].trial)  # a tuner naming a stopped test
    assert answer is not None and answer.status is Status.SUCCEEDED
    # The true value of each stopped test was below its threshold (the stop was right).
    system = SyntheticSystem()
    for obs in stopped:
        truth = system.noise_free_metrics(obs.config)["throughput"]
        assert truth < obs.extra["censored"]["threshold"]


def _durable(folder: Path, budget: int) -> Session:
    store = SampleStore(folder)
    if not store.exists:
        store.create({"session_id": "es", "experiment": "x"})
    return Session(
        session_id="es",
        store=store,
        tuner_factory=RandomTuner,
        system=SyntheticSystem(),
        workload=IntervalWorkload(),
        objective=Objective("throughput", "max"),
        tracker=NullTracker(),
        options=SessionOptions(
            budget=budget, seed=4, progress=False, early_stop=True, early_stop_window_s=2.0
        ),
    )


def test_resume_replays_stopped_tests_and_tells_the_tuner_as_before(tmp_path: Path) -> None:
    finished = 0

    def interrupt(obs: object, best: float | None) -> None:
        nonlocal finished
        finished += 1
        if finished == 14:
            raise KeyboardInterrupt

    first = _durable(tmp_path / "s", 24).run(on_progress=interrupt)
    assert first.status == "INTERRUPTED"
    stored = SampleStore(tmp_path / "s").load()
    assert Status.STOPPED_EARLY in {o.status for o in stored}
    resumed = _durable(tmp_path / "s", 24).run()
    whole = _durable(tmp_path / "whole", 24).run()
    assert resumed.status == "FINISHED"
    assert [(o.status, o.config) for o in resumed.observations[:14]] == [
        (o.status, o.config) for o in stored
    ]
    assert [o.extra.get("censored") for o in resumed.observations[:14]] == [
        o.extra.get("censored") for o in stored
    ]
    # told the same (stopped tests at their bounds), the tuner proposes the same afterwards
    assert [o.config for o in resumed.observations] == [o.config for o in whole.observations]


def test_early_stop_off_runs_every_test_whole(tmp_path: Path) -> None:
    result, workload = _run(tmp_path, budget=12)
    assert all(printed == SECONDS for printed in workload.lines_printed)
    assert Status.STOPPED_EARLY not in {o.status for o in result.observations}  # type: ignore[attr-defined]


def test_a_workload_without_intervals_gets_one_line_before_the_first_test(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from systems.synthetic import SyntheticWorkload

    with caplog.at_level(logging.WARNING):
        api.run_objects(
            RandomTuner,
            SyntheticSystem(),
            SyntheticWorkload(),
            budget=3,
            results_dir=tmp_path,
            early_stop=True,
            progress=False,
        )
    lines = [r.getMessage() for r in caplog.records if "early_stop" in r.getMessage()]
    assert len(lines) == 1 and "reports no intervals" in lines[0]


def test_tuners_score_a_stopped_test_at_its_bound() -> None:
    stopped = Observation(
        3, {}, Status.STOPPED_EARLY, None, extra={"censored": {"score_bound": 150.0}}
    )
    unbounded = Observation(4, {}, Status.STOPPED_EARLY, None)
    told = [_obs(0, 100.0), _obs(1, 300.0), _obs(2, None, Status.FAILED), stopped, unbounded]
    scores = imputed_scores(told)
    assert np.allclose(scores, [100.0, 300.0, 80.0, 150.0, 80.0])
    assert best_measured(told) is not None and best_measured(told).trial == 1  # type: ignore[union-attr]
    assert best_measured([_obs(0, 100.0), stopped]).trial == 0  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "bad",
    [{"early_stop_rank": 0}, {"early_stop_window_s": -1.0}, {"early_stop_margin": float("inf")}],
)
def test_bad_early_stop_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match="early_stop"):
        SessionOptions(early_stop=True, **bad)  # type: ignore[arg-type]


def test_the_paper_recipes_run_plain_tests() -> None:
    """The paper's method is judged as the paper ran it: no recipe stops or screens tests
    (a guard for the day the defaults change: pin the recipes then)."""
    folder = Path(__file__).resolve().parents[3] / "paper/conf/experiment"
    recipes = sorted(folder.glob("fig*.yaml"))
    assert recipes
    for recipe in recipes:
        cfg = api.compose([f"+experiment={recipe.stem}"])
        assert cfg.session.early_stop is False and cfg.session.fidelity is None, recipe.stem
