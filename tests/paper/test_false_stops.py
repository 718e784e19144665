"""paper.false_stops: which stopped tests are sampled, and how a rerun is judged and reported
(the reruns themselves are real tests: see results/early_stop/)."""

from __future__ import annotations

from pathlib import Path

from harness.objectives.objective import Objective
from harness.records import Observation, Status
from paper.false_stops import Rerun, report, sample_stopped


def _stopped(trial: int, threshold: float = 100.0) -> Observation:
    censored = {"bound": 80.0, "side": "upper", "threshold": threshold, "score_bound": 80.0}
    return Observation(
        trial, {"x": trial}, Status.STOPPED_EARLY, None, extra={"censored": censored}
    )


def _full(trial: int, value: float) -> Observation:
    return Observation(trial, {"x": trial}, Status.SUCCEEDED, value, {"tps": value})


def test_the_sample_takes_stopped_tests_with_a_censored_value_only() -> None:
    tests = [_full(0, 50.0), *(_stopped(t) for t in range(1, 9)), _stopped(9, 0)]
    tests.append(Observation(10, {}, Status.STOPPED_EARLY, None))  # stored without a bound
    assert [o.trial for o in sample_stopped(tests, 20, 0)] == list(range(1, 10))
    few = sample_stopped(tests, 3, seed=1)
    assert len(few) == 3 and few == sorted(few, key=lambda o: o.trial)
    assert few == sample_stopped(tests, 3, seed=1)  # the seed decides which


def test_false_stops_and_would_be_winners_are_counted_apart() -> None:
    objective = Objective("tps", "max")
    reruns = [
        Rerun(_stopped(1), _full(1, 60.0), 60.0, threshold=100.0, best=200.0),  # right call
        Rerun(_stopped(2), _full(2, 120.0), 120.0, threshold=100.0, best=200.0),  # false stop
        Rerun(_stopped(3), _full(3, 250.0), 250.0, threshold=100.0, best=200.0),  # would win
        Rerun(_stopped(4), Observation(4, {}, Status.FAILED, None), None, 100.0, 200.0),
    ]
    assert [r.false_stop(objective) for r in reruns] == [False, True, True, False]
    assert [r.would_have_won(objective) for r in reruns] == [False, False, True, False]
    text = report(Path("s"), objective, reruns, stopped_count=7, total=30)
    assert "**False stops: 2 of 4**" in text and "best: 1 of 4" in text
    assert "| 4 | 80 (upper) | 100 | FAILED | no | no |" in text


def test_a_minimised_time_is_judged_the_other_way() -> None:
    objective = Objective("job_s", "min")
    slower = Rerun(_stopped(1, 10.0), _full(1, 14.0), 14.0, threshold=10.0, best=9.0)
    faster = Rerun(_stopped(2, 10.0), _full(2, 8.0), 8.0, threshold=10.0, best=9.0)
    assert not slower.false_stop(objective) and faster.would_have_won(objective)


def test_rung_agreement_pairs_each_promoted_configuration_once() -> None:
    from paper.rung_agreement import paired_scores, rung_rows

    def at(trial: int, x: int, score: float, fidelity: float) -> Observation:
        extra = {"fidelity": fidelity} if fidelity < 1 else {}
        return Observation(trial, {"x": x}, Status.SUCCEEDED, score, {"tps": score}, extra=extra)

    tests = [at(0, 0, 5.0, 1.0), at(1, 1, 10.0, 0.2), at(2, 2, 30.0, 0.2), at(3, 3, 20.0, 0.2)]
    tests += [at(4, 2, 33.0, 1.0), at(5, 3, 21.0, 1.0), at(6, 1, 12.0, 1.0), at(7, 2, 99.0, 1.0)]
    assert paired_scores(tests) == {(0.2, 1.0): [(10.0, 12.0), (30.0, 33.0), (20.0, 21.0)]}
    assert rung_rows("s", tests) == ["| s | 0.2 → 1 | 3 | 1.00 |"]
