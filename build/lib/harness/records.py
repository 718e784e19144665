"""Records that flow through a session: test statuses and observations."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from harness.space import Config

__all__ = ["Observation", "Status"]


class Status(enum.StrEnum):
    """Outcome of one tuning test."""

    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"  # the workload errored or produced no metric
    CRASHED = "CRASHED"  # the system would not start or never became ready
    TIMED_OUT = "TIMED_OUT"  # the workload exceeded its limit and was killed
    INFEASIBLE = "INFEASIBLE"  # ran, but violated a user constraint (see harness.objective)


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
        return cls(
            trial=int(data["trial"]),
            config=dict(data["config"]),
            status=Status(data["status"]),
            score=data["score"],
            metrics={k: float(v) for k, v in data.get("metrics", {}).items()},
            duration_s=float(data.get("duration_s", 0.0)),
            is_default=bool(data.get("is_default", False)),
            message=str(data.get("message", "")),
            extra=dict(data.get("extra", {})),
        )
