"""Utility objectives: config checks, constraint modes, rescoring, an end-to-end session."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import harness.session.trial
from baselines.sampling import LHSTuner
from harness import api
from harness.errors import ConfigError
from harness.hosts.machine import Machine
from harness.objectives.objective import Objective
from harness.objectives.utility import (
    UtilityObjective,
    build_objective,
    describe,
    machine_constants,
    rescore,
)
from harness.records import Observation, Status
from harness.system import MetricSpec
from systems.synthetic import SyntheticSystem, SyntheticWorkload

METRICS = (
    MetricSpec("tps", "max", "tx/s"),
    MetricSpec("latency_p99_ms", "min", "ms"),
    MetricSpec("errors", "min"),
)
RUN = {"tps": 4000.0, "latency_p99_ms": 15.5, "errors": 0.0}


def build(**cfg: object) -> Objective:
    return build_objective(cfg, METRICS, {"cores": 4.0})


# -- building ------------------------------------------------------------------------------


def test_plain_config_gives_the_plain_objective() -> None:
    objective = build()
    assert type(objective) is Objective
    assert (objective.metric, objective.direction, objective.unit) == ("tps", "max", "tx/s")
    latency = build(metric="latency_p99_ms")
    assert (latency.metric, latency.direction) == ("latency_p99_ms", "min")
    assert build(metric="tps", direction="min").direction == "min"
    assert build_objective(None, METRICS, {}).metric == "tps"


def test_utility_expression() -> None:
    objective = build(utility="0.7*tps - 3*latency_p99_ms")
    assert isinstance(objective, UtilityObjective)
    assert (objective.metric, objective.direction, objective.unit) == ("utility", "max", "")
    assert objective.value(RUN) == pytest.approx(0.7 * 4000 - 3 * 15.5)
    assert build(utility="2 * latency_p99_ms", direction="min").score(RUN) == -31.0
    named = build(utility="tps - errors", name="goodput")
    assert named.metric == "goodput"


def test_a_bare_metric_utility_keeps_its_direction_and_unit() -> None:
    objective = build(utility="latency_p99_ms")
    assert (objective.metric, objective.direction, objective.unit) == (
        "latency_p99_ms",
        "min",
        "ms",
    )


def test_weighted_sum_shorthand() -> None:
    objective = build(weights={"tps": 1.0, "latency_p99_ms": -10})
    assert isinstance(objective, UtilityObjective)
    assert str(objective.utility) == "tps - 10*latency_p99_ms"
    assert objective.direction == "max"
    assert objective.value(RUN) == pytest.approx(4000 - 155)
    negative_first = build(weights={"latency_p99_ms": -2.5, "tps": 0.001, "errors": 0})
    assert isinstance(negative_first, UtilityObjective)
    assert str(negative_first.utility) == "-2.5*latency_p99_ms + 0.001*tps"


def test_ratio_per_constant() -> None:
    objective = build(per="cores")
    assert isinstance(objective, UtilityObjective)
    assert (objective.metric, objective.unit, objective.direction) == (
        "tps_per_cores",
        "tx/s/cores",
        "max",
    )
    assert objective.value(RUN) == 1000.0
    assert build(utility="tps / cores").value(RUN) == 1000.0
    combined = build(utility="tps - errors", per="cores * 2")
    assert isinstance(combined, UtilityObjective)
    assert str(combined.utility) == "(tps - errors) / (cores * 2)"
    assert combined.value(RUN) == 500.0


def test_machine_constants() -> None:
    constants = machine_constants(Machine(ram_bytes=8 * 2**30, cores=2))
    assert constants == {"cores": 2.0, "ram_mib": 8192.0, "ram_gib": 8.0}
    detected = machine_constants(Machine.detect())
    assert detected["cores"] >= 1 and detected["ram_mib"] > 0
    objective = build_objective({"per": "cores"}, METRICS, detected)
    assert objective.value(RUN) == pytest.approx(4000 / detected["cores"])


@pytest.mark.parametrize(
    ("cfg", "fragment"),
    [
        ({"utility": "tps - latency"}, "unknown name 'latency' (did you mean 'latency_p99_ms'?)"),
        ({"constraints": ["p99 <= 50"]}, "objective.constraints[0] 'p99 <= 50' at column 1"),
        (
            {"constraints": ["latency_p99_ms <= 5", "tps"]},
            "objective.constraints[1] 'tps': must be a condition",
        ),
        ({"constraints": ["cores <= 5"]}, "reads no workload metric"),
        ({"utility": "3 * cores"}, "reads no workload metric"),
        ({"utility": "tps < 3"}, "must be a number"),
        ({"utility": "().__class__"}, "attribute access is not allowed"),
        ({"utility": "10**10**10 * tps"}, "exponent 1e+10 is too large"),
        ({"weights": {"tps": 1, "p99": -1}}, "objective.weights: unknown metric 'p99'"),
        ({"weights": {"tps": "a lot"}}, "objective.weights.tps must be a number"),
        ({"weights": {"tps": 0}}, "every metric weight 0"),
        (
            {"weights": {"tps": 1}, "utility": "tps"},
            "either objective.utility or objective.weights",
        ),
        ({"metric": "tps", "utility": "tps / 2"}, "leave it null"),
        ({"metric": "p99"}, "unknown objective metric 'p99'"),
        ({"per": "sockets"}, "objective.per 'sockets' at column 1: unknown name"),
        ({"direction": "up"}, "must be max or min"),
        ({"contraints": ["tps > 1"]}, "unknown objective key(s) contraints"),
        ({"constraints": ["tps > 1"], "constraint_mode": "soft"}, "'infeasible' or 'penalty'"),
        (
            {"constraints": ["tps > 1"], "constraint_mode": "penalty"},
            "needs objective.penalty > 0",
        ),
        ({"constraints": ["tps > 1"], "constraint_mode": "penalty", "penalty": -1}, ">= 0"),
        ({"constraints": ["tps > 1"], "penalty": "high"}, "objective.penalty must be a number"),
        ({"constraints": {"a": "tps > 1"}}, "must be a list of conditions"),
        ({"name": "x"}, "objective.name labels a utility"),
    ],
)
def test_bad_config_is_refused_before_any_test(cfg: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_objective(cfg, METRICS, {"cores": 4.0})
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_constants_are_refused() -> None:
    with pytest.raises(ConfigError, match="name of a workload metric"):
        build_objective({"per": "tps"}, METRICS, {"tps": 1.0})
    with pytest.raises(ConfigError, match="not finite"):
        build_objective({"per": "cores"}, METRICS, {"cores": math.nan})
    with pytest.raises(ConfigError, match="not an identifier"):
        build_objective({"per": "cores"}, METRICS, {"two words": 1.0})


# -- assessing -----------------------------------------------------------------------------


def test_infeasible_mode() -> None:
    objective = build(constraints=["latency_p99_ms <= 12"])
    assert (objective.metric, objective.unit) == ("tps", "tx/s")
    verdict = objective.assess(RUN)
    assert verdict.score is None and verdict.status == "INFEASIBLE"
    assert verdict.message == "violates latency_p99_ms <= 12 (misses by 3.5)"
    fine = objective.assess({**RUN, "latency_p99_ms": 11.0})
    assert (fine.score, fine.status, fine.message) == (4000.0, "SUCCEEDED", "")
    # The raw value stays readable for reports even when the test is infeasible.
    assert objective.value(RUN) == 4000.0


def test_a_test_under_a_violated_constraint_is_infeasible_with_no_score() -> None:
    # what harness.session.trial.run_test records: the objective's own verdict
    from harness.objectives.objective import Objective

    class Fixed(SyntheticWorkload):
        def run(self, system: object, timeout_s: float | None) -> dict[str, float]:
            return dict(RUN)

    objective = build(constraints=["latency_p99_ms <= 12"])
    assert isinstance(objective, Objective)
    system = SyntheticSystem("10")
    system.setup(Path("."), Fixed())
    obs = harness.session.trial.run_test(system, Fixed(), objective, system.space.default(), 0)
    assert obs.status is Status.INFEASIBLE and obs.score is None
    assert "violates latency_p99_ms <= 12" in obs.message


def test_penalty_mode() -> None:
    objective = build(
        constraints=["latency_p99_ms <= 12", "errors == 0"], constraint_mode="penalty", penalty=100
    )
    verdict = objective.assess({**RUN, "errors": 2.0})
    assert verdict.status == "SUCCEEDED"
    assert verdict.score == pytest.approx(4000 - 100 * (3.5 + 2.0))
    assert "penalised 550" in verdict.message and "errors == 0 (misses by 2)" in verdict.message
    assert objective.assess({**RUN, "latency_p99_ms": 10.0}).score == 4000.0
    # Minimised utility: the penalty still lowers the (larger-is-better) score.
    latency = build(
        metric="latency_p99_ms",
        constraints=["tps >= 5000"],
        constraint_mode="penalty",
        penalty=0.01,
    )
    assert latency.assess(RUN).score == pytest.approx(-15.5 - 10.0)


def test_missing_metrics_and_bad_arithmetic_are_failures() -> None:
    objective = build(utility="tps / errors")
    verdict = objective.assess(RUN)
    assert verdict.status == "FAILED" and "division by zero" in verdict.message
    constrained = build(constraints=["errors <= 1"])
    missing = constrained.assess({"tps": 1.0, "latency_p99_ms": 1.0})
    assert missing.status == "FAILED" and "metric 'errors' is missing" in missing.message
    assert build().assess({"tps": math.nan}).status == "FAILED"


def test_infeasible_tests_lose_every_comparison_in_the_tuner() -> None:
    system = SyntheticSystem("10")
    objective = build_objective(
        {"constraints": ["latency_p99_ms <= 12"]}, SyntheticWorkload.metrics, {}
    )
    tuner = LHSTuner(system.space, seed=0, budget=4)
    runs = [
        {"throughput": 9000.0, "latency_p99_ms": 30.0},  # best throughput, infeasible
        {"throughput": 3000.0, "latency_p99_ms": 10.0},
        {"throughput": 5000.0, "latency_p99_ms": 11.0},
    ]
    observations = []
    for trial, (config, metrics) in enumerate(zip(tuner.ask(3), runs, strict=True)):
        verdict = objective.assess(metrics)
        observations.append(
            Observation(trial, config, Status(verdict.status), verdict.score, metrics)
        )
    tuner.tell(observations)
    scores = tuner.scores()
    assert scores[0] < scores[1] < scores[2]
    best = tuner.best()
    assert best is not None and best.trial == 2


def test_improvement_and_better() -> None:
    utility = build(utility="tps - 500*latency_p99_ms")  # negative for slow tests
    assert utility.improvement(-2000.0, -4000.0) == pytest.approx(0.5)
    assert utility.improvement(-6000.0, -4000.0) == pytest.approx(-0.5)
    assert utility.improvement(6000.0, 4000.0) == pytest.approx(0.5)
    assert math.isnan(utility.improvement(1.0, 0.0))
    minimised = build(utility="latency_p99_ms * 2")
    assert minimised.direction == "max"  # a utility is maximised unless told otherwise
    lat = build(utility="latency_p99_ms * 2", direction="min")
    assert lat.improvement(5.0, 10.0) == pytest.approx(0.5) and lat.better(5.0, 10.0)


def test_describe_and_reported_metrics() -> None:
    objective = build(
        utility="tps - errors",
        constraints=["latency_p99_ms <= 12"],
        constraint_mode="penalty",
        penalty=2,
    )
    assert isinstance(objective, UtilityObjective)
    assert objective.reported_metrics == ("errors", "tps", "latency_p99_ms")
    assert describe(objective) == {
        "objective": "utility",
        "objective.direction": "max",
        "objective.utility": "tps - errors",
        "objective.constraints": "latency_p99_ms <= 12",
        "objective.constraint_mode": "penalty",
        "objective.penalty": "2",
    }
    assert describe(build()) == {"objective": "tps", "objective.direction": "max"}


def test_inherited_for_workload_gives_a_plain_metric() -> None:
    objective = UtilityObjective.for_workload(METRICS, "latency_p99_ms")
    assert isinstance(objective, UtilityObjective) and objective.utility is None
    assert objective.assess(RUN).score == -15.5
    assert objective.reported_metrics == ("latency_p99_ms",)


# -- rescoring -----------------------------------------------------------------------------


def _obs(
    trial: int, status: Status, metrics: dict[str, float], score: float | None = None
) -> Observation:
    return Observation(
        trial,
        {"k": trial},
        status,
        score,
        metrics,
        duration_s=1.5,
        message="old",
        extra={"log_tail": "x"},
    )


def test_rescore_keeps_raw_metrics_and_untouchable_tests() -> None:
    stored = [
        _obs(0, Status.SUCCEEDED, RUN, 4000.0),
        _obs(1, Status.SUCCEEDED, {**RUN, "tps": 5000.0, "latency_p99_ms": 9.0}, 5000.0),
        _obs(2, Status.CRASHED, {}),
        _obs(3, Status.FAILED, {}),  # the workload itself failed: nothing to rescore
        _obs(4, Status.FAILED, {"latency_p99_ms": 3.0, "errors": 0.0}),  # old metric missing
        _obs(5, Status.TIMED_OUT, {}),
    ]
    new = rescore(stored, build(metric="latency_p99_ms", constraints=["tps >= 4500"]))
    assert [o.status for o in new] == [
        Status.INFEASIBLE,
        Status.SUCCEEDED,
        Status.CRASHED,
        Status.FAILED,
        Status.FAILED,
        Status.TIMED_OUT,
    ]
    assert new[1].score == -9.0 and new[1].message == ""
    assert "metric 'tps' is missing" in new[4].message
    assert new[2] is stored[2] and new[3] is stored[3]
    for before, after in zip(stored, new, strict=True):
        assert (after.metrics, after.config, after.duration_s, after.extra) == (
            before.metrics,
            before.config,
            before.duration_s,
            before.extra,
        )
    # And back: a plain objective revives the infeasible test.
    back = rescore(new, build())
    assert back[0].status is Status.SUCCEEDED and back[0].score == 4000.0


# -- end to end ----------------------------------------------------------------------------

BOUND = 12.0


def _session(tmp_path: Path, objective: Objective, seed: int = 1) -> list[Observation]:
    """A 30-test LHS session on synthetic10 through the API (in memory)."""
    system, workload = SyntheticSystem("10"), SyntheticWorkload()
    result = api.run_objects(
        LHSTuner(system.space, seed=seed, budget=30),
        system,
        workload,
        budget=30,
        results_dir=tmp_path,
        objective=objective,
    )
    assert result.status == "FINISHED", result.message  # an infeasible default does not abort
    return result.observations


def _best(observations: list[Observation]) -> Observation:
    return max((o for o in observations if o.ok), key=lambda o: (o.score, -o.trial))


def test_session_with_a_latency_constraint_ends_feasible(tmp_path: Path) -> None:
    metrics = SyntheticWorkload.metrics
    objective = build_objective({"constraints": [f"latency_p99_ms <= {BOUND:g}"]}, metrics, {})
    observations = _session(tmp_path, objective)

    default = observations[0]
    assert default.is_default and default.metrics["latency_p99_ms"] > BOUND, (
        "the bound must bind: the synthetic default should violate it"
    )
    assert default.status is Status.INFEASIBLE and default.score is None
    infeasible = [o for o in observations if o.status is Status.INFEASIBLE]
    feasible = [o for o in observations if o.ok]
    assert infeasible and feasible
    assert all(o.metrics["latency_p99_ms"] > BOUND for o in infeasible)

    best = _best(observations)
    assert best.metrics["latency_p99_ms"] <= BOUND
    assert best.score == max(o.metrics["throughput"] for o in feasible)

    # Same tests, no constraint (rescored, not rerun): the winner changes and violates the bound.
    unconstrained = _best(rescore(observations, Objective.for_workload(metrics)))
    assert unconstrained.trial != best.trial
    assert unconstrained.metrics["latency_p99_ms"] > BOUND
    assert unconstrained.metrics["throughput"] > best.metrics["throughput"]


def test_a_violating_test_never_gets_a_score(tmp_path: Path) -> None:
    # Another seed: every test that ran and broke the bound is INFEASIBLE, without a score.
    metrics = SyntheticWorkload.metrics
    objective = build_objective({"constraints": [f"latency_p99_ms <= {BOUND:g}"]}, metrics, {})
    observations = _session(tmp_path, objective, seed=2)
    violating = [o for o in observations if o.metrics and o.metrics["latency_p99_ms"] > BOUND]
    assert violating and all(o.score is None for o in violating)
    assert all(o.status is Status.INFEASIBLE for o in violating)
    assert _best(observations).metrics["latency_p99_ms"] <= BOUND


def test_penalty_mode_session_trades_throughput_for_latency(tmp_path: Path) -> None:
    metrics = SyntheticWorkload.metrics
    objective = build_objective(
        {
            "constraints": [f"latency_p99_ms <= {BOUND:g}"],
            "constraint_mode": "penalty",
            "penalty": 1000.0,
        },
        metrics,
        {},
    )
    observations = _session(tmp_path, objective)
    ran = [o for o in observations if o.metrics]
    assert all(o.status is Status.SUCCEEDED for o in ran)
    expected = [
        o.metrics["throughput"] - 1000.0 * max(o.metrics["latency_p99_ms"] - BOUND, 0.0)
        for o in ran
    ]
    assert np.allclose([o.score if o.score is not None else np.nan for o in ran], expected)
    assert _best(observations).metrics["latency_p99_ms"] <= BOUND
