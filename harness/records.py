"""Records that flow through a session: test statuses and observations."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.space import Config

__all__ = [
    "Observation",
    "Status",
    "answer_of",
    "best_measured",
    "config_key",
    "is_full",
    "measurement_count",
]


class Status(enum.StrEnum):
    """Outcome of one tuning test."""

    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"  # the workload errored or produced no metric
    CRASHED = "CRASHED"  # the system would not start or never became ready
    TIMED_OUT = "TIMED_OUT"  # the workload exceeded its limit and was killed
    INFEASIBLE = (
        "INFEASIBLE"  # ran, but violated a user constraint (see harness.objectives.objective)
    )
    #: stopped while running because it could not compete; ``extra["censored"]`` holds a
    #: bound, not a measurement (harness.session.early_stop)
    STOPPED_EARLY = "STOPPED_EARLY"


@dataclass(frozen=True)
class Observation:
    """One finished tuning test, as stored, logged and told to the tuner.

    ``score`` is the objective normalised so that larger is always better (a minimised metric
    is negated); it is ``None`` for a test that did not succeed. Tuners that need a number for
    failures use :meth:`harness.tuner.Tuner.scores`, which documents the imputation.
    """

    trial: int
    config: Config
    status: Status
    score: float | None
    metrics: dict[str, float] = field(default_factory=dict)
    duration_s: float = 0.0
    is_default: bool = False
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.SUCCEEDED and self.score is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "trial": self.trial,
            "config": self.config,
            "status": self.status.value,
            "score": self.score,
            "metrics": self.metrics,
            "duration_s": self.duration_s,
            "is_default": self.is_default,
            "message": self.message,
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Observation:
        """The observation a stored record holds (ValueError, KeyError or TypeError for a
        record that is not one: a store is data, so every field is checked for its type)."""
        config = data["config"]
        if not isinstance(config, dict) or not all(map(_is_value, config.values())):
            raise ValueError("config must map knob names to numbers, booleans or text")
        score = data["score"]
        return cls(
            trial=int(data["trial"]),
            config=dict(config),
            status=Status(data["status"]),
            score=None if score is None else _float(score),
            metrics={str(k): _float(v) for k, v in dict(data.get("metrics", {})).items()},
            duration_s=_float(data.get("duration_s", 0.0)),
            is_default=bool(data.get("is_default", False)),
            message=str(data.get("message", "")),
            extra=dict(data.get("extra", {})),
        )


def _float(value: Any) -> float:
    """A stored number as a float (ValueError for text or an integer beyond a float's range,
    such as 10**400, instead of an OverflowError deep in a later sum)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{str(value)[:40]!r} is not a number")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{str(value)[:20]}... is too large for a number") from None


def _is_value(value: Any) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            float(value)  # every encoding of a knob value goes through a float
        except OverflowError:
            return False
    return isinstance(value, bool | int | float | str)


def config_key(config: Config) -> str:
    """A configuration as a hashable key (values of every type compared as written)."""
    return json.dumps(config, sort_keys=True, default=str)


def measurement_count(observations: Iterable[Observation], config: Config) -> int:
    """How many full tests measured ``config`` among ``observations`` (failures included;
    screening runs are not measurements of it, :func:`is_full`)."""
    key = config_key(config)
    return sum(config_key(o.config) == key and is_full(o) for o in observations)


def best_measured(observations: Iterable[Observation]) -> Observation | None:
    """The best measured setting, judged on every measurement of it.

    A configuration measured more than once (a tuner re-measured its best candidates, e.g.
    ``classytune``'s ``remeasure``) is judged by the mean score of its successful
    measurements, so one lucky draw under noise does not win; a configuration that also failed
    in one of its measurements ranks after every one that never failed. Ties go to the
    configuration measured first. The observation returned is the configuration's successful
    measurement closest to that mean (the earliest on a tie), so the value reported with it is
    representative rather than its luckiest. With every configuration measured once this is
    simply the best successful observation, ties going to the earliest. Screening tests (a
    fraction of a full test, :func:`is_full`) are not measurements of the answer: left out.
    """
    groups: dict[str, list[Observation]] = {}
    for obs in observations:
        if is_full(obs):
            groups.setdefault(config_key(obs.config), []).append(obs)
    best: tuple[tuple[bool, float, int], Observation] | None = None
    for measured in groups.values():
        ok = [(o, o.score) for o in measured if o.ok and o.score is not None]
        if not ok:
            continue
        mean = sum(score for _, score in ok) / len(ok)
        rank = (len(ok) == len(measured), mean, -min(o.trial for o in measured))
        if best is None or rank > best[0]:
            closest = min(ok, key=lambda pair: (abs(pair[1] - mean), pair[0].trial))[0]
            best = (rank, closest)
    return best[1] if best else None


def is_full(obs: Observation) -> bool:
    """Whether ``obs`` ran a full test, not a screening run at a fraction of one
    (``extra["fidelity"]`` < 1: harness.session.screening)."""
    fidelity = obs.extra.get("fidelity", 1.0)
    return not isinstance(fidelity, int | float) or fidelity >= 1.0


def answer_of(observations: Sequence[Observation], answer_trial: int | None) -> Observation | None:
    """The session's answer: the successful test ``answer_trial`` when the tuner named one
    (:meth:`harness.tuner.Tuner.answer`, e.g. Algorithm 1's output), else the best measured
    setting (:func:`best_measured`)."""
    if answer_trial is not None:
        for obs in observations:
            if obs.trial == answer_trial and obs.ok and is_full(obs):
                return obs
    return best_measured(observations)
