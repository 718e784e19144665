"""Objectives beyond one metric: utilities, weighted sums, ratios and constraints.

The ``objective`` config group::

    objective:
      metric: null          # plain: one workload metric (default: the workload's first)
      direction: null       # max|min (default: the metric's natural one; "max" for a utility)
      utility: null         # an expression over metric names, e.g. "0.7*tps - 3*latency_p99_ms"
      weights: {}           # weighted-sum shorthand: {tps: 1.0, latency_p99_ms: -10}
      per: null             # ratio: divide the objective by a constant or metric, e.g. cores
      name: null            # display name (default: the metric, "utility", or "<x>_per_<per>")
      constraints: []       # conditions that must hold, e.g. ["latency_p99_ms <= 50"]
      constraint_mode: infeasible   # infeasible | penalty
      penalty: 0.0          # penalty mode: score - penalty * total violation

:func:`build_objective` checks all of it before any test runs (expressions are parsed by the
safe evaluator in :mod:`harness.objectives.expression`; unknown metric names are refused there).
With no utility, weights, ratio or constraint it returns the plain
:class:`harness.objectives.objective.Objective`; otherwise a :class:`UtilityObjective`, which is an
``Objective`` (same ``metric``, ``direction``, ``unit``, ``value``, ``score``, ``improvement``,
``better``) whose value is the utility.

Semantics:

* **value** is the utility computed from the test's metrics (raw, never penalised); **score**
  is the value made larger-is-better (negated for ``direction: min``), as for every objective.
* **constraints**, ``infeasible`` mode: a test whose metrics violate any constraint gets status
  INFEASIBLE and no score, so the tuners' failure imputation makes it lose every comparison and
  it can never be the session's best. ``penalty`` mode: the test succeeds with
  ``score - penalty * total violation``, where a violated comparison misses by the distance
  between its two sides (in the metric's unit; ``and`` adds, ``or`` takes the smallest; see
  :meth:`harness.objectives.expression.Expression.violation`).
* **constants** (e.g. ``cores`` and ``ram_mib`` from :func:`machine_constants`) are named
  numbers usable in any expression: ``utility: "throughput / cores"`` or ``per: cores`` gives
  throughput per core.
* A metric that is missing or not finite, or a utility that cannot be computed (division by
  zero, ...), makes the test FAILED with the reason as message.

Workloads report all their metrics every time, so :func:`rescore` can re-score a stored session
under another objective without rerunning it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.errors import ConfigError, WorkloadError
from harness.hosts.machine import Machine
from harness.objectives.expression import EvaluationError, Expression, parse
from harness.objectives.objective import Assessment, Objective
from harness.records import Observation, Status
from harness.system import MetricSpec

__all__ = [
    "ConstraintMode",
    "InfeasibleError",
    "UtilityObjective",
    "build_objective",
    "describe",
    "machine_constants",
    "rescore",
]

log = logging.getLogger(__name__)

ConstraintMode = Literal["infeasible", "penalty"]
KEYS = (
    "metric",
    "direction",
    "utility",
    "weights",
    "per",
    "name",
    "constraints",
    "constraint_mode",
    "penalty",
)


class InfeasibleError(WorkloadError):
    """The metrics violate a constraint (``infeasible`` mode).

    A subclass of WorkloadError so that code that only knows plain objectives still treats the
    test as a failure (score None) rather than crashing.
    """


@dataclass(frozen=True)
class UtilityObjective(Objective):
    """An objective whose value is a utility expression, optionally under constraints.

    With ``utility=None`` the value is the plain metric ``metric`` (so the inherited
    :meth:`Objective.for_workload` still works).
    """

    utility: Expression | None = None
    constraints: tuple[Expression, ...] = ()
    constraint_mode: ConstraintMode = "infeasible"
    penalty: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.constraint_mode not in ("infeasible", "penalty"):
            raise ConfigError(
                "objective.constraint_mode must be 'infeasible' or 'penalty', "
                f"got {self.constraint_mode!r}"
            )
        if not (math.isfinite(self.penalty) and self.penalty >= 0):
            raise ConfigError(f"objective.penalty must be a number >= 0, got {self.penalty!r}")
        if self.constraint_mode == "penalty" and self.constraints and self.penalty == 0:
            raise ConfigError(
                "objective.constraint_mode=penalty needs objective.penalty > 0 "
                "(with 0 the constraints would be ignored)"
            )

    @property
    def reported_metrics(self) -> tuple[str, ...]:
        """Metric names the objective reads: the utility's, then the constraints' (for reports)."""
        names: list[str] = sorted(self.utility.names) if self.utility else [self.metric]
        for constraint in self.constraints:
            names += [n for n in sorted(constraint.names) if n not in names]
        return tuple(names)

    def value(self, metrics: Mapping[str, float]) -> float:
        """The utility (raw, not penalised); raises WorkloadError if it cannot be computed."""
        if self.utility is None:
            return super().value(metrics)
        try:
            return float(self.utility.evaluate(metrics))
        except EvaluationError as exc:
            raise WorkloadError(f"objective {self.metric!r} = {self.utility}: {exc}") from None

    def violations(self, metrics: Mapping[str, float]) -> list[tuple[str, float]]:
        """The constraints that do not hold, each with how far it misses."""
        found = []
        for constraint in self.constraints:
            try:
                if not constraint.evaluate(metrics):
                    found.append((constraint.text, constraint.violation(metrics)))
            except EvaluationError as exc:
                raise WorkloadError(f"constraint {constraint}: {exc}") from None
        return found

    def score(self, metrics: Mapping[str, float]) -> float:
        """Larger is better; raises InfeasibleError on a violation in ``infeasible`` mode."""
        return self._judge(metrics)[0]

    def assess(self, metrics: Mapping[str, float]) -> Assessment:
        """Score, status (SUCCEEDED, INFEASIBLE or FAILED) and a message for one test."""
        try:
            score, message = self._judge(metrics)
        except InfeasibleError as exc:
            return Assessment(None, Status.INFEASIBLE.value, str(exc))
        except WorkloadError as exc:
            return Assessment(None, Status.FAILED.value, str(exc))
        return Assessment(score, Status.SUCCEEDED.value, message)

    def improvement(self, value: float, default: float) -> float:
        """Relative improvement over the default, also right for a negative default utility."""
        if default == 0:
            return math.nan
        delta = value - default if self.direction == "max" else default - value
        return delta / abs(default)

    def params(self) -> dict[str, str]:
        """The objective's settings as flat strings (for MLflow params and summaries)."""
        return {
            "objective": self.metric,
            "objective.direction": self.direction,
            "objective.utility": str(self.utility or self.metric),
            "objective.constraints": "; ".join(c.text for c in self.constraints),
            "objective.constraint_mode": self.constraint_mode if self.constraints else "",
            "objective.penalty": f"{self.penalty:g}" if self.constraints else "",
        }

    def _judge(self, metrics: Mapping[str, float]) -> tuple[float, str]:
        value = self.value(metrics)
        score = value if self.direction == "max" else -value
        missed = self.violations(metrics)
        if not missed:
            return score, ""
        what = "; ".join(f"{text} (misses by {amount:.4g})" for text, amount in missed)
        if self.constraint_mode == "infeasible":
            raise InfeasibleError(f"violates {what}")
        cost = self.penalty * sum(amount for _, amount in missed)
        return score - cost, f"penalised {cost:.4g} for {what}"


def machine_constants(machine: Machine) -> dict[str, float]:
    """Named constants from the machine under tune: ``cores``, ``ram_mib``, ``ram_gib``."""
    return {
        "cores": float(machine.cores),
        "ram_mib": float(machine.ram_mib),
        "ram_gib": machine.ram_bytes / 2**30,
    }


def build_objective(
    cfg: Mapping[str, Any] | None,
    metrics: tuple[MetricSpec, ...],
    constants: Mapping[str, float] | None = None,
) -> Objective:
    """The objective described by ``cfg`` (the ``objective`` config), checked up front.

    Returns a plain :class:`Objective` when ``cfg`` asks for one metric only, else a
    :class:`UtilityObjective`. Raises ConfigError (one line, naming the key and the problem).
    """
    cfg = dict(cfg or {})
    _check_keys(cfg, metrics)
    by_name = {m.name: m for m in metrics}
    consts = _check_constants(constants or {}, by_name)
    metric, direction = cfg.get("metric"), cfg.get("direction")
    utility, weights, per = cfg.get("utility"), dict(cfg.get("weights") or {}), cfg.get("per")
    constraints = _as_list(cfg.get("constraints"))
    if not (utility or weights or per is not None or constraints):
        if cfg.get("name"):
            raise ConfigError("objective.name labels a utility; a plain metric keeps its name")
        return Objective.for_workload(metrics, metric, direction)
    text, name, unit = _utility_text(cfg, metrics, by_name)
    bare = by_name.get(text)
    if bare is not None and not weights:  # one metric, perhaps under constraints or a ratio
        name, unit = bare.name, bare.unit
    if per is not None:
        text, name, unit = _per(
            text, name, unit, str(per).strip(), bare is not None, by_name, consts
        )
    where = "objective.weights" if weights else "objective.utility" if utility else "objective"
    expression = parse(text, by_name, consts, kind="num", what=where)
    if not expression.names:
        raise ConfigError(f"{where} {text!r} reads no workload metric, so every test would tie")
    mode = cfg.get("constraint_mode") or "infeasible"
    return UtilityObjective(
        metric=str(cfg.get("name") or name),
        direction=direction or (bare.direction if bare is not None else "max"),
        unit=unit,
        utility=expression,
        constraints=_checked_constraints(constraints, by_name, consts),
        constraint_mode=mode,  # type: ignore[arg-type]  # UtilityObjective checks it
        penalty=_penalty(cfg, mode),
    )


def _check_keys(cfg: dict[str, Any], metrics: tuple[MetricSpec, ...]) -> None:
    """Known keys, a workload with metrics, a direction, and no two ways to say one thing."""
    unknown = sorted(set(cfg) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"unknown objective key(s) {', '.join(unknown)}; known: {', '.join(KEYS)}"
        )
    if not metrics:
        raise ConfigError("the workload declares no metrics")
    if cfg.get("direction") not in (None, "max", "min"):
        raise ConfigError(f"objective.direction must be max or min, got {cfg['direction']!r}")
    utility, weights = cfg.get("utility"), cfg.get("weights")
    if utility and weights:
        raise ConfigError("give either objective.utility or objective.weights, not both")
    if cfg.get("metric") and (utility or weights):
        raise ConfigError(
            "objective.metric picks one metric; with objective.utility or "
            "objective.weights leave it null (objective.name labels the utility)"
        )


def _utility_text(
    cfg: dict[str, Any], metrics: tuple[MetricSpec, ...], by_name: dict[str, MetricSpec]
) -> tuple[str, str, str]:
    """The utility's expression, its name and its unit, before any ``per``."""
    if cfg.get("utility"):
        return str(cfg["utility"]).strip(), "utility", ""
    if cfg.get("weights"):
        return _weighted_sum(dict(cfg["weights"]), by_name), "utility", ""
    return Objective.for_workload(metrics, cfg.get("metric")).metric, "", ""


def _per(
    text: str,
    name: str,
    unit: str,
    label: str,
    bare: bool,
    by_name: dict[str, MetricSpec],
    consts: dict[str, float],
) -> tuple[str, str, str]:
    """``objective.per``: the utility divided by ``label``, with a name and unit that say so."""
    parse(label, by_name, consts, kind="num", what="objective.per")
    simple = label.isidentifier()
    text = (text if bare else f"({text})") + (f" / {label}" if simple else f" / ({label})")
    name = f"{name}_per_{label}" if simple else f"{name}_ratio"
    unit = f"{unit}/{label}" if unit and simple else ""
    return text, name, unit


def _checked_constraints(
    constraints: list[Any], by_name: dict[str, MetricSpec], consts: dict[str, float]
) -> tuple[Expression, ...]:
    checked = []
    for i, text_i in enumerate(constraints):
        what = f"objective.constraints[{i}]"
        condition = parse(str(text_i), by_name, consts, kind="bool", what=what)
        if not condition.names:
            raise ConfigError(f"{what} {text_i!r} reads no workload metric")
        checked.append(condition)
    return tuple(checked)


def _penalty(cfg: dict[str, Any], mode: str) -> float:
    try:
        penalty = float(cfg.get("penalty") or 0.0)
    except (TypeError, ValueError):
        raise ConfigError(f"objective.penalty must be a number, got {cfg['penalty']!r}") from None
    if mode == "infeasible" and penalty:
        log.warning("objective.penalty=%g is ignored in constraint_mode=infeasible", penalty)
    return penalty


def rescore(observations: Iterable[Observation], objective: Objective) -> list[Observation]:
    """Re-assess stored observations under ``objective`` without rerunning them.

    Every test that produced metrics (SUCCEEDED, INFEASIBLE, or FAILED only because the old
    objective could not read them) gets a new score, status and message; raw metrics and
    everything else are kept. Tests that crashed, timed out or produced no metrics are unchanged.
    """
    out = []
    for obs in observations:
        if obs.status in (Status.CRASHED, Status.TIMED_OUT) or not obs.metrics:
            out.append(obs)
            continue
        verdict = objective.assess(obs.metrics)
        out.append(
            dataclasses.replace(
                obs, score=verdict.score, status=Status(verdict.status), message=verdict.message
            )
        )
    return out


def describe(objective: Objective) -> dict[str, str]:
    """Flat string settings of a plain or utility objective (for MLflow params, summaries)."""
    if isinstance(objective, UtilityObjective):
        return objective.params()
    return {"objective": objective.metric, "objective.direction": objective.direction}


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if not isinstance(value, Mapping) and (
        isinstance(value, Sequence) or hasattr(value, "__iter__")
    ):
        return [str(v) for v in value]
    raise ConfigError(f"objective.constraints must be a list of conditions, got {value!r}")


def _check_constants(
    constants: Mapping[str, float], by_name: Mapping[str, MetricSpec]
) -> dict[str, float]:
    checked = {}
    for key, value in constants.items():
        if not str(key).isidentifier():
            raise ConfigError(f"constant name {key!r} is not an identifier")
        if key in by_name:
            raise ConfigError(f"constant {key!r} has the name of a workload metric; rename it")
        number = float(value)
        if not math.isfinite(number):
            raise ConfigError(f"constant {key!r} is not finite ({value!r})")
        checked[str(key)] = number
    return checked


def _weighted_sum(weights: Mapping[str, Any], by_name: Mapping[str, MetricSpec]) -> str:
    """``{tps: 1, lat: -10}`` -> ``"tps - 10*lat"`` (parsed like any utility afterwards)."""
    terms = []
    for key, raw in weights.items():
        if key not in by_name:
            raise ConfigError(
                f"objective.weights: unknown metric {key!r}; the workload "
                f"reports: {', '.join(by_name)}"
            )
        try:
            weight = float(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"objective.weights.{key} must be a number, got {raw!r}") from None
        if not math.isfinite(weight):
            raise ConfigError(f"objective.weights.{key} is not finite ({raw!r})")
        if weight == 0:
            continue
        sign = "-" if weight < 0 else "+"
        size = abs(weight)
        term = key if size == 1 else f"{size:.12g}*{key}"
        terms.append(f"{sign} {term}")
    if not terms:
        raise ConfigError("objective.weights gives every metric weight 0")
    text = " ".join(terms)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]
