"""The shared tuner contract, checked for EVERY tuner config in conf/tuner/ (synthetic system).

Each tuner is built the way a session builds it: the app's config is composed with
``tuner=<name> system=synthetic10`` and ``instantiate(cfg.tuner)(space=, seed=, budget=)``. Sizes
that make a full session long (initial samples, rounds, candidates) are shrunk so a short budget
runs every phase of every tuner. Sessions run through :func:`harness.api.run_objects` (the one
session loop, in memory). Expert tuners are skipped on systems without rules, Optuna ones
when Optuna (or, for the GP sampler, PyTorch) is missing.
"""

from __future__ import annotations

import importlib.util
import tempfile
from collections.abc import Callable

import pytest
from hydra.utils import instantiate
from omegaconf import DictConfig, open_dict

from harness import api
from harness.errors import KnobError
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.options import SessionResult
from harness.session.trial import run_test
from harness.space import Config, Knob, Space
from harness.system import System
from harness.tuner import Tuner, tuner_name_of
from systems.synthetic import SyntheticFamily, SyntheticSystem, SyntheticWorkload, family_space
from tests.conftest import CONF

TUNERS = sorted(p.stem for p in (CONF / "tuner").glob("*.yaml"))
BUDGET = 14
#: Shrunk sizes, applied where a tuner has the parameter, so BUDGET covers every phase.
SMALL = {
    "n_initial": 5,
    "n_startup_trials": 5,
    "m": 5,
    "batch": 3,
    "n_candidates": 300,
    "n_random": 500,
    "n_smart": 2,
    "n_samples": 6,
    "n_search": 300,
}
OBJECTIVE = Objective("throughput", "max")


def _skip_reason(name: str) -> str | None:
    if name.startswith("optuna") and importlib.util.find_spec("optuna") is None:
        return "optuna is not installed (pip install .[peers])"
    if name == "optuna_gp" and importlib.util.find_spec("torch") is None:
        return "Optuna's GPSampler needs torch"
    if name == "smac" and importlib.util.find_spec("smac") is None:
        return "smac is not installed"
    return None


#: Tuners whose sessions take seconds per step (GP fits, SMAC's forest): their cases are slow.
SLOW = {"gpbo", "optuna_gp", "smac"}


@pytest.fixture(
    params=[pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in TUNERS]
)
def make_tuner(
    request: pytest.FixtureRequest, compose_cfg: Callable[..., DictConfig]
) -> Callable[..., Tuner]:
    name = request.param
    if reason := _skip_reason(name):
        pytest.skip(reason)
    cfg = compose_cfg(f"tuner={name}", "system=synthetic10")
    with open_dict(cfg.tuner):
        for key, value in SMALL.items():
            if key in cfg.tuner:
                cfg.tuner[key] = value

    def _make(space: Space, seed: int = 0, budget: int = BUDGET) -> Tuner:
        from harness.errors import ConfigError

        try:
            return instantiate(cfg.tuner)(space=space, seed=seed, budget=budget)  # type: ignore[no-any-return]
        except ConfigError as exc:
            if "no expert rules" in str(exc):
                pytest.skip(str(exc))
            raise

    return _make


def _run(
    tuner: Tuner | Callable[..., Tuner],
    budget: int,
    system: System | None = None,
    fixed: Config | None = None,
) -> SessionResult:
    """A whole in-memory session of ``tuner`` on ``system`` (synthetic10). Crashes in a row do
    not stop it (the tuner must cope with them, not the session's crash policy)."""
    with tempfile.TemporaryDirectory() as results_dir:
        return api.run_objects(
            tuner,
            system or SyntheticSystem("10"),
            SyntheticWorkload(),
            budget=budget,
            results_dir=results_dir,
            objective=OBJECTIVE,
            max_consecutive_crashes=budget + 1,
            fixed=fixed,
        )


def _session(tuner: Tuner, budget: int) -> list[Observation]:
    result = _run(tuner, budget)
    assert result.status == "FINISHED", result.message
    return result.observations


def _space() -> Space:
    return SyntheticSystem("10").space


@pytest.mark.parametrize("name", TUNERS)
def test_every_tuner_config_is_known_by_its_own_name(
    name: str, compose_cfg: Callable[..., DictConfig]
) -> None:
    """Its sessions' tag and default id. gbrt and rfr, gpbo and gpbo_paper, the two expert
    styles share a class each, and once shared one name in MLflow and the figures."""
    assert tuner_name_of(instantiate(compose_cfg(f"tuner={name}").tuner)) == name


def test_a_built_tuner_has_its_configs_name(
    make_tuner: Callable[..., Tuner], request: pytest.FixtureRequest
) -> None:
    assert make_tuner(_space()).name == request.node.callspec.params["make_tuner"]


def test_trial_zero_is_the_default(make_tuner: Callable[..., Tuner]) -> None:
    space = _space()
    tuner = make_tuner(space)
    first = tuner.ask(1)
    assert first == [space.default()]


@pytest.mark.parametrize("n", [1, 3, 7])
def test_ask_returns_at_most_n_valid_configs(make_tuner: Callable[..., Tuner], n: int) -> None:
    space = _space()
    tuner = make_tuner(space)
    system, workload = SyntheticSystem("10"), SyntheticWorkload()
    trial = 0
    for _ in range(3):  # several rounds, told in between, so later phases are asked too
        if tuner.remaining == 0:  # a tuner may stop at its budget (BestConfig does)
            break
        batch = tuner.ask(n)
        assert 1 <= len(batch) <= n
        for config in batch:
            assert space.validate(config) == config
        tuner.tell(
            [
                run_test(system, workload, OBJECTIVE, c, trial=trial + i)
                for i, c in enumerate(batch)
            ]
        )
        trial += len(batch)


def test_exact_budget_and_best_is_measured(make_tuner: Callable[..., Tuner]) -> None:
    tuner = make_tuner(_space())
    obs = _session(tuner, BUDGET)
    assert len(obs) == BUDGET and obs[0].is_default
    assert [o.trial for o in obs] == list(range(BUDGET))
    best = tuner.best()
    assert best is not None and best in obs and best.ok
    assert best.score == max(o.score for o in obs if o.ok)  # type: ignore[type-var]
    assert tuner.compute_seconds >= 0 and len(tuner.compute_log) >= 2
    params = tuner.params()
    assert params["seed"] == 0 and params["budget"] == BUDGET


def test_deterministic_under_seed(make_tuner: Callable[..., Tuner]) -> None:
    runs = [_session(make_tuner(_space(), seed=7), BUDGET) for _ in range(2)]
    assert [o.config for o in runs[0]] == [o.config for o in runs[1]]


@pytest.mark.parametrize("budget", [1, 2])
def test_tiny_budgets(make_tuner: Callable[..., Tuner], budget: int) -> None:
    tuner = make_tuner(_space(), budget=budget)
    obs = _session(tuner, budget)
    assert len(obs) == budget and obs[0].is_default
    assert tuner.best() is not None


@pytest.mark.parametrize("low", [8192, 10000])
def test_copes_with_crashes(make_tuner: Callable[..., Tuner], low: int) -> None:
    # The tuner's space narrows buffer_pool_mb into the synthetic crash region (> ~9.7 GiB):
    # from 8192 most tests crash; from 10000 every test does, the default included.
    space = _space().with_overrides({"buffer_pool_mb": {"min": low, "default": low}})
    tuner = make_tuner(space)
    result = _run(tuner, BUDGET)
    obs = result.observations
    if low == 10000:  # a crashed default stops the session: the tuner has nothing to rank
        assert result.status == "ABORTED" and "default configuration" in result.message
        assert len(obs) == 1 and obs[0].status is Status.CRASHED and tuner.best() is None
        return
    assert result.status == "FINISHED" and len(obs) == BUDGET
    crashed = [o for o in obs if not o.ok]
    # A fixed-setting tuner need not wander into the crash region; searching ones do.
    assert crashed or tuner.name.startswith("expert"), "the crash region was never hit"
    best = tuner.best()
    assert obs[0].ok and best is not None and best.ok


#: A byte-size knob as MySQL has it (innodb_online_alter_log_max_size reaches 2^64 - 1).
HUGE_INT = Knob("log_max_bytes", "int", default=2**27, low=0, high=2**64 - 1)


def _extreme_space(kind: str) -> Space:
    """Spaces at the edges of what :class:`~harness.space.Space` accepts."""
    if kind == "int_to_2^64":
        return Space((HUGE_INT, Knob("ratio", "float", default=0.5, low=0.0, high=1.0)))
    if kind == "two_values":  # the narrowest knob a space holds (one value is refused)
        return Space((Knob("flag_level", "int", default=0, low=0, high=1),))
    assert kind == "mixed_120"
    return Space((HUGE_INT, *family_space(119).knobs))


@pytest.mark.parametrize("kind", ["int_to_2^64", "two_values", "mixed_120"])
def test_any_space_the_space_accepts(make_tuner: Callable[..., Tuner], kind: str) -> None:
    """A whole session on an extreme space (the family's response, hidden failures off):
    every asked setting is valid, the budget is spent, the best is a measured success."""
    space = _extreme_space(kind)
    tuner = make_tuner(space)
    result = _run(tuner, BUDGET, SyntheticFamily(space=space, instance=3, fail_share=0.0))
    assert result.status == "FINISHED", result.message
    obs = result.observations
    assert len(obs) == BUDGET and obs[0].is_default
    assert all(space.validate(o.config) == o.config for o in obs)
    best = tuner.best()
    assert best is not None and best.ok


def test_a_knob_with_one_value_is_pinned_not_tuned(make_tuner: Callable[..., Tuner]) -> None:
    """A space refuses a one-value knob (min must be below max); the way to hold a knob at one
    value is to pin it (``system.fixed``), and every tuner then tunes the others."""
    with pytest.raises(KnobError, match="below max"):
        Knob("constant", "int", default=3, low=3, high=3)
    system = SyntheticFamily(dim=12, instance=1, fail_share=0.0)
    pinned = system.space.knobs[1]
    value = pinned.decode(0.9)
    result = _run(make_tuner, BUDGET, system, fixed={pinned.name: value})  # type: ignore[arg-type]
    assert result.status == "FINISHED", result.message
    assert len(result.observations) == BUDGET
    assert {o.config[pinned.name] for o in result.observations} == {value}
    assert result.best is not None and result.best.ok
