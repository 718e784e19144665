"""The objective: which metric a session optimises and in which direction.

Normalising direction here, once, lets every tuner maximise a ``score``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from harness.errors import ConfigError, WorkloadError
from harness.system import MetricSpec

__all__ = ["Assessment", "Objective"]


@dataclass(frozen=True)
class Objective:
    """Metric name and direction; turns workload metrics into a larger-is-better score."""

    metric: str
    direction: Literal["max", "min"]
    unit: str = ""

    def __post_init__(self) -> None:
        if self.direction not in ("max", "min"):
            raise ConfigError(
                f"objective direction must be 'max' or 'min', got {self.direction!r}"
            )

    @classmethod
    def for_workload(
        cls,
        metrics: tuple[MetricSpec, ...],
        metric: str | None = None,
        direction: str | None = None,
    ) -> Objective:
        """The workload's metric ``metric`` (default: its first) with its natural direction."""
        if not metrics:
            raise ConfigError("the workload declares no metrics")
        by_name = {m.name: m for m in metrics}
        name = metric or metrics[0].name
        if name not in by_name:
            raise ConfigError(
                f"unknown objective metric {name!r}; the workload reports: {', '.join(by_name)}"
            )
        spec = by_name[name]
        return cls(name, direction or spec.direction, spec.unit)  # type: ignore[arg-type]

    def value(self, metrics: Mapping[str, float]) -> float:
        """The raw objective value; raises WorkloadError if missing or not finite."""
        if self.metric not in metrics:
            raise WorkloadError(f"workload reported no {self.metric!r} (got {sorted(metrics)})")
        value = float(metrics[self.metric])
        if not math.isfinite(value):
            raise WorkloadError(f"workload reported a non-finite {self.metric!r}: {value}")
        return value

    def score(self, metrics: Mapping[str, float]) -> float:
        """Larger is better."""
        value = self.value(metrics)
        return value if self.direction == "max" else -value

    def improvement(self, value: float, default: float) -> float:
        """Relative improvement over the default: +0.5 = 50% better (more, or less time)."""
        if default == 0:
            return math.nan
        # Divide by |default| so the sign stays right for utilities that can be negative.
        if self.direction == "max":
            return (value - default) / abs(default)
        return (default - value) / abs(default)

    def assess(self, metrics: Mapping[str, float]) -> Assessment:
        """Score ``metrics``; a missing/non-finite metric makes the test FAILED.

        Subclasses (e.g. :class:`harness.objectives.utility.UtilityObjective`) add INFEASIBLE
        outcomes.
        """
        try:
            return Assessment(self.score(metrics), "SUCCEEDED")
        except WorkloadError as exc:
            return Assessment(None, "FAILED", str(exc))

    def better(self, a: float, b: float) -> bool:
        return a > b if self.direction == "max" else a < b


@dataclass(frozen=True)
class Assessment:
    """What an objective makes of one test's metrics."""

    score: float | None
    status: str  # a harness.records.Status value
    message: str = ""
