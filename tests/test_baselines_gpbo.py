"""GP-BO: knob types map to bayes_opt parameters and back; snapped points are registered."""

from __future__ import annotations

import pytest

from baselines.gpbo import GPBOTuner
from systems.synthetic import SyntheticSystem


def test_config_round_trips_through_bayes_opt_parameters() -> None:
    space = SyntheticSystem("10").space
    for typed in (True, False):
        tuner = GPBOTuner(space, seed=0, budget=20, typed=typed)
        for config in [space.default(), *space.decode_many(tuner.lhs(20))]:
            back = tuner._to_config(tuner._to_params(config))
            for name, value in config.items():  # floats pass through log/exp: approximately
                assert back[name] == (pytest.approx(value) if isinstance(value, float) else value)
    bounds = GPBOTuner(space, typed=True)._pbounds()
    assert bounds["x001"] == (1, 64, int)  # io_threads: linear int
    assert bounds["x000"] == (0.0, 1.0)  # buffer_pool_mb: log int on its encoded coordinate
    assert type(bounds["x003"]).__name__ == "CategoricalParameter"  # flush_policy


def test_initial_design_then_one_step_at_a_time() -> None:
    space = SyntheticSystem("10").space
    tuner = GPBOTuner(space, seed=0, budget=20, n_initial=4, n_random=200, n_smart=1)
    assert len(tuner.ask(10)) == 5  # default + the 4 LHS points
