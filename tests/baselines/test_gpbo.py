"""GP-BO: knob types map to bayes_opt parameters and back; snapped points are registered."""

from __future__ import annotations

import pytest

from baselines.gpbo import GPBOTuner
from harness.records import Observation, Status
from harness.space import Config, Space
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


def _session(space: Space) -> list[Config]:
    """The configurations a small continuous GP-BO session asks for, noise-free scores."""
    system = SyntheticSystem("10")
    tuner = GPBOTuner(space, seed=3, budget=14, n_initial=4, typed=False, n_random=300, n_smart=2)
    asked: list[Config] = []
    while len(asked) < 14:
        batch = tuner.ask(1)
        scores = [system.noise_free_metrics(c)["throughput"] for c in batch]
        start = len(asked)
        tuner.tell(
            [
                Observation(start + i, c, Status.SUCCEEDED, s)
                for i, (c, s) in enumerate(zip(batch, scores, strict=True))
            ]
        )
        asked += batch
    return asked


def test_the_unwrapped_kernel_asks_for_exactly_the_same_configurations(monkeypatch) -> None:
    """The shortcut of a continuous-only GP (no bayes_opt transform wrapper) changes nothing."""
    from baselines import gpbo

    space = SyntheticSystem("10").space
    unwrapped: list[object] = []
    real = gpbo.unwrap_identity_kernel

    def counted(optimizer: object) -> None:
        unwrapped.append(optimizer)
        real(optimizer)

    monkeypatch.setattr(gpbo, "unwrap_identity_kernel", counted)
    fast = _session(space)
    assert len(unwrapped) == 14 - 1 - 4  # every GP step after the default and the 4 LHS tests
    assert type(unwrapped[0]._gp.kernel).__name__ == "Matern"  # type: ignore[attr-defined]
    monkeypatch.setattr(gpbo, "unwrap_identity_kernel", lambda optimizer: None)
    assert _session(space) == fast  # bayes_opt's wrapped kernel: the same GP steps
