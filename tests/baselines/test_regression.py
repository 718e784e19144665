"""Regression-model tuners and the max relative error of Fig. 2."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from baselines.regression import (
    MODELS,
    RegressionTuner,
    holdout_max_relative_error,
    max_relative_error,
)
from harness import api
from systems.synthetic import SyntheticSystem, SyntheticWorkload
from systems.synthetic.function import response


def test_max_relative_error_hand_computed() -> None:
    assert max_relative_error(np.array([10.0, -4.0, 2.0]), np.array([12.0, -5.0, 2.0])) == 0.25
    assert max_relative_error(np.array([1.0]), np.array([3.0])) == 2.0  # "up to 2x"
    with pytest.raises(ValueError, match="true value is 0"):
        max_relative_error(np.array([0.0]), np.array([1.0]))
    with pytest.raises(ValueError):
        max_relative_error(np.array([1.0, 2.0]), np.array([1.0]))


@pytest.mark.parametrize("model", MODELS)
def test_holdout_error_is_finite_and_falls_with_more_samples(model: str) -> None:
    rng = np.random.default_rng(0)
    x_test = rng.random((200, 10))
    y_test = response(x_test) * 10_000
    errors = []
    for n in (10, 400):
        x = rng.random((n, 10))
        errors.append(holdout_max_relative_error(model, x, response(x) * 10_000, x_test, y_test))
    assert all(np.isfinite(errors)) and errors[1] < errors[0] * 1.05


def test_rounds_pick_unmeasured_predicted_best(tmp_path: Path) -> None:
    system = SyntheticSystem("10")
    tuner = RegressionTuner(
        system.space, seed=1, budget=30, model="rfr", n_initial=10, batch=4, n_candidates=500
    )
    result = api.run_objects(tuner, system, SyntheticWorkload(), budget=30, results_dir=tmp_path)
    assert result.status == "FINISHED" and len(result.observations) == 30
    sizes = [r.n for r in tuner.compute_log if r.phase == "ask"]
    assert sizes == [11, 4, 4, 4, 4, 3]
    configs = [tuple(sorted(o.config.items())) for o in tuner.history]
    assert len(set(configs)) == len(configs)  # never measures a setting twice
    assert tuner.fit_count == 5
