"""The SMAC3 peer on the spaces and score scales of the benchmark's systems.

Regression tests for two crashes: int knobs whose range passes int64 (ConfigSpace's Integer
overflows), and log-EI fed raw costs (SMAC's "Expected Improvement is smaller than 0", or NaN
and infinite model values, depending on the costs' sign and magnitude). Numpy's
RuntimeWarnings are errors here: an overflow or NaN in SMAC's model or acquisition is the
silent form of the second crash. Budgets are small (SMAC's forest takes a fraction of a second
per step).
"""

from __future__ import annotations

import importlib.util
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from harness import api
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.space import Config, Knob, Space
from systems.synthetic import SyntheticSystem, SyntheticWorkload

if TYPE_CHECKING:
    from baselines.smac_peer import SMACTuner

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("smac") is None, reason="smac is not installed"),
    pytest.mark.filterwarnings("error::RuntimeWarning"),
]


def _tuner(space: Space, budget: int, seed: int = 0) -> SMACTuner:
    from baselines.smac_peer import SMACTuner

    return SMACTuner(space, seed=seed, budget=budget)


def _loop(space: Space, budget: int, score: Callable[[Config], float | None]) -> SMACTuner:
    """Ask/tell one configuration at a time, the whole budget; ``score`` None: a crashed test."""
    tuner = _tuner(space, budget)
    for trial in range(budget):
        (config,) = tuner.ask(1)
        value = score(config)
        status = Status.CRASHED if value is None else Status.SUCCEEDED
        tuner.tell([Observation(trial, config, status, value, is_default=trial == 0)])
    return tuner


@pytest.mark.parametrize(
    ("low", "high", "log"),
    [(0, 2**70, False), (1, 2**70, True)],
    ids=["linear", "log"],
)
def test_int_knob_beyond_int64(low: int, high: int, log: bool) -> None:
    knob = Knob("buffer_bytes", "int", default=2**20, low=low, high=high, log=log)
    space = Space((knob, Knob("ratio", "float", default=0.5, low=0.0, high=1.0)))

    def score(config: Config) -> float:
        size = int(config["buffer_bytes"]).bit_length()
        return -float((size - 40) ** 2) - 10 * (float(config["ratio"]) - 0.3) ** 2

    values = [o.config["buffer_bytes"] for o in _loop(space, 8, score).history]
    sizes = [v for v in values if type(v) is int]
    assert len(sizes) == len(values) == 8  # whole numbers, as Knob.check returns them
    assert all(low <= v <= high and knob.check(v) == v for v in sizes)
    # The range past Integer's reach is searched (a log knob less far up: on a log scale,
    # small sizes come up as often as large ones).
    assert max(sizes) > (2**53 if log else 2**63)
    if log:
        assert min(sizes) < 2**40


def test_int_bounds_float64_cannot_hold() -> None:
    # 2**64 - 1 (an unsigned 64-bit maximum, common in catalogues) is not a float64: rounding
    # the Float hyper-parameter's value must stay inside it and pass Knob.check.
    low, high = -(2**63) + 1, 2**64 - 1
    knob = Knob("max_bytes", "int", default=1024, low=low, high=high)
    tuner = _tuner(Space((knob,)), budget=5)
    assert type(tuner.config_space["max_bytes"]).__name__ == "UniformFloatHyperparameter"
    for value in (float(2**64), float(-(2**63)), 1.0e19, 2.5, -2.5):
        (got,) = tuner._to_config({"max_bytes": value}).values()
        assert type(got) is int and low <= got <= high and knob.check(got) == got
    assert tuner._to_config({"max_bytes": 2.5}) == {"max_bytes": 2}  # round half to even
    small = Knob("threads", "int", default=4, low=1, high=64)
    assert type(_tuner(Space((small,)), 5).config_space["threads"]).__name__ == (
        "UniformIntegerHyperparameter"
    )


def _synthetic_session(direction: str, budget: int = 8) -> list[Observation]:
    """A whole session on synthetic10 (throughput 1e3-1e4 ops/s), in memory."""
    with tempfile.TemporaryDirectory() as results_dir:
        result = api.run_objects(
            lambda **kw: _tuner(kw["space"], kw["budget"], kw["seed"]),
            SyntheticSystem("10"),
            SyntheticWorkload(),
            budget=budget,
            results_dir=results_dir,
            objective=Objective("throughput", direction),  # type: ignore[arg-type]
            max_consecutive_crashes=budget + 1,
        )
    assert result.status == "FINISHED", result.message
    assert len(result.observations) == budget
    return result.observations


def test_session_with_negative_scores() -> None:
    # Minimised, the throughput scores -1e3..-1e4: costs of +1e3.. overflowed log-EI's exp.
    observations = _synthetic_session("min")
    assert all(o.score < 0 for o in observations if o.ok)  # type: ignore[operator]


def test_session_with_large_positive_scores() -> None:
    # Maximised, costs are -1e3..-1e4: exp gave 0, the forest's log of it -inf.
    observations = _synthetic_session("max")
    assert all(o.score > 1000 for o in observations if o.ok)  # type: ignore[operator]


def test_tied_best_scores_of_large_magnitude() -> None:
    # A plateau at 1e9 (ties at the best cost, as recorded-data systems have): SMAC's own
    # log-scaling encoder takes log(0) there once |cost| > ~1e6 (its 1e-10 gap rounds away).
    space = Space(tuple(Knob(f"x{i}", "float", default=0.9, low=0.0, high=1.0) for i in (0, 1)))

    def score(config: Config) -> float:
        return 1e9 if float(config["x0"]) > 0.5 else 1e9 - 1e3

    history = _loop(space, 10, score).history
    assert len(history) == 10 and all(o.ok for o in history)


def test_failed_test_told_mid_session() -> None:
    from smac.runhistory.enumerations import StatusType

    knob = Knob("x", "float", default=0.5, low=0.0, high=1.0)
    space = Space((knob, Knob("mode", "enum", default="a", values=("a", "b", "c"))))
    crashed: list[Config] = []

    def score(config: Config) -> float | None:
        # Trial 1 fails when only the default (the best configuration) has been measured, so
        # its imputed score starts just below the default's and later, worse successes pass it.
        if config != space.default() and not crashed:
            crashed.append(config)
            return None
        return -100.0 * abs(float(config["x"]) - 0.5) - (config["mode"] != "a")

    tuner = _loop(space, 10, score)
    failed = [o for o in tuner.history if not o.ok]
    assert [o.trial for o in failed] == [1] and len(tuner.history) == 10
    assert tuner.best() is not None and tuner.best().ok  # type: ignore[union-attr]
    tuner.ask(1)  # SMAC's costs are brought up to date when it is asked (budget or not)
    # SMAC holds the failure as CRASHED with a cost above every success's, as the harness's
    # imputation (Tuner.scores) puts it below the worst success.
    runhistory = tuner.smac.runhistory
    crashed_costs = [v.cost for v in runhistory.values() if v.status == StatusType.CRASHED]
    success_costs = [v.cost for v in runhistory.values() if v.status == StatusType.SUCCESS]
    assert len(crashed_costs) == 1 and len(success_costs) == 9
    assert crashed_costs[0] > max(success_costs)  # type: ignore[operator]
    assert crashed_costs[0] == -float(tuner.scores()[1])
