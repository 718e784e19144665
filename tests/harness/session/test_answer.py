"""The session's answer (:attr:`harness.session.options.SessionResult.answer`): a tuner that
answers with another setting than its best measured test (``Tuner.answer``, e.g. Algorithm 1's
output) is reported, exported, confirmed and benchmarked on that answer, with the best
measured test beside it; a tuner that does not is reported exactly as before."""

from __future__ import annotations

from pathlib import Path

from baselines.sampling import LHSTuner
from harness.builder.export import best_observation
from harness.cli.report import summary
from harness.objectives.objective import Objective
from harness.records import Observation, Status, answer_of, best_measured
from harness.session.confirm import CONFIRM_KEY
from harness.session.end import session_metrics
from harness.session.options import SessionOptions
from harness.session.session import Session
from harness.store.samples import SampleStore
from harness.tracking import keys
from harness.tracking.tracker import NullTracker
from systems.synthetic import SyntheticSystem, SyntheticWorkload


class AnswersTheSecondBest(LHSTuner):
    """LHS whose own answer is its second-best successful test (a rule of its own)."""

    def answer(self) -> Observation | None:
        ranked = sorted((o for o in self.history if o.ok), key=lambda o: -(o.score or 0))
        return ranked[1] if len(ranked) > 1 else self.best()


def _session(tmp_path: Path, tuner: type[LHSTuner], confirm: int = 0) -> Session:
    store = SampleStore(tmp_path / "s")
    store.create({"session_id": "s", "experiment": "x"})
    return Session(
        session_id="s",
        store=store,
        tuner_factory=tuner,
        system=SyntheticSystem("10"),
        workload=SyntheticWorkload(),
        objective=Objective("throughput", "max"),
        tracker=NullTracker(),
        options=SessionOptions(budget=10, progress=False, confirm=confirm),
    )


def _obs(trial: int, score: float | None) -> Observation:
    ok = score is not None
    return Observation(
        trial=trial,
        config={"x": trial},
        status=Status.SUCCEEDED if ok else Status.FAILED,
        score=score,
        metrics={"throughput": score} if ok and score is not None else {},
    )


def test_the_answer_is_the_named_successful_test_else_the_best_measured() -> None:
    tests = [_obs(0, 1.0), _obs(1, 3.0), _obs(2, None), _obs(3, 2.0)]
    assert answer_of(tests, None) is best_measured(tests) is tests[1]
    assert answer_of(tests, 3) is tests[3]
    assert answer_of(tests, 2) is tests[1]  # a failed test is no answer: the best instead
    assert answer_of(tests, 99) is tests[1]


def test_a_tuner_with_its_own_answer_is_reported_exported_and_confirmed_on_it(
    tmp_path: Path,
) -> None:
    result = _session(tmp_path, AnswersTheSecondBest, confirm=1).run()
    best, answer = result.best, result.answer
    assert best is not None and answer is not None and best.trial != answer.trial
    assert result.answer_trial == answer.trial and (answer.score or 0) < (best.score or 0)
    text = summary(result)
    assert f"answer:    {answer.metrics['throughput']:,.4g}" in text.replace(" throughput", "")
    assert "the best measured test:" in text and f"trial {best.trial})" in text
    metrics = session_metrics(result)
    assert metrics[keys.METRIC_BEST] == answer.metrics["throughput"]
    # The confirmation runs re-measure the answer, not the best measured test.
    again = [r for r in result.references if r.extra.get(CONFIRM_KEY) == "best"]
    assert again and all(r.config == answer.config for r in again)
    # session.json names the answer, and the export writes its configuration.
    store = SampleStore(tmp_path / "s")
    assert store.read_meta()["answer_trial"] == answer.trial
    exported = best_observation(tmp_path / "s", store.load(), answer.trial)
    assert exported is not None and exported.config == answer.config


def test_a_tuner_without_its_own_answer_reports_the_best_measured(tmp_path: Path) -> None:
    result = _session(tmp_path, LHSTuner).run()
    assert result.answer_trial is None and result.answer is result.best
    assert "  best:      " in summary(result) and "the best measured test" not in summary(result)
    assert SampleStore(tmp_path / "s").read_meta()["answer_trial"] is None
