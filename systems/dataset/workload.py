"""The workload of a recorded-data system: it reads the system's answer for the applied
configuration (a surrogate's prediction or a recorded measurement)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from harness.errors import ConfigError, WorkloadError
from harness.system import MetricSpec, System, Workload
from systems.dataset.typed import marker_direction

__all__ = ["SurrogateWorkload"]

log = logging.getLogger(__name__)


@runtime_checkable
class Answers(Protocol):
    """What the workload reads from a recorded-data system
    (:class:`~systems.dataset.system.DatasetSystem`)."""

    target: str
    direction: str
    dataset: Any

    def measure(self) -> dict[str, float]: ...


def _dataset_system(system: System) -> Answers:
    if not isinstance(system, Answers):
        raise ConfigError("the surrogate workload runs only on a dataset-backed system")
    return system


class SurrogateWorkload(Workload):
    """Reads a surrogate's predicted metric; ``metric``/``direction`` must match the system's
    target (checked in ``prepare``). A metric named with an objective marker (``name-``,
    ``name+``) takes its direction from the marker and its name without it."""

    name = "surrogate"

    def __init__(
        self,
        metric: str | None = "performance",
        direction: str = "max",
        unit: str = "",
        duration_s: float = 0.0,
    ) -> None:
        if direction not in ("max", "min"):
            raise ConfigError(
                f"surrogate workload direction must be max or min, got {direction!r}"
            )
        if metric is None or str(metric) in ("", "None", "null"):
            raise ConfigError(
                "the surrogate workload needs the target metric: run with "
                "dataset.target=COLUMN (the column of the data to optimise)"
            )
        self.metric = str(metric).removeprefix("result.")
        marked = marker_direction(self.metric)
        if marked:
            if marked != direction:
                log.info("metric %s is marked %s: direction %s", self.metric, marked, marked)
            self.metric, direction = self.metric[:-1], marked
        self.metrics = (MetricSpec(self.metric, direction, unit),)  # type: ignore[arg-type]
        self.duration_s = float(duration_s)

    def prepare(self, system: System, workdir: Path) -> None:
        dataset = _dataset_system(system)
        if dataset.target != self.metric:
            raise ConfigError(
                f"surrogate workload reports {self.metric!r} but the system "
                f"models {dataset.target!r}"
            )
        if dataset.direction != self.metrics[0].direction:
            raise ConfigError(
                f"the data marks {dataset.dataset.target!r} to {dataset.direction}imise, but "
                f"the session would {self.metrics[0].direction}imise it: run with "
                f"dataset.direction={dataset.direction} (or dataset.target="
                f"{dataset.dataset.target})"
            )

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        try:
            dataset = _dataset_system(system)
        except ConfigError as exc:
            raise WorkloadError(str(exc)) from None
        return dataset.measure()
