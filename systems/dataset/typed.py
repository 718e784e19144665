"""The typed form of a recorded table (:class:`Dataset`) and the objective-marker rule."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harness.space import Config, Space
from systems.dataset.structure import Constraint

__all__ = ["Dataset", "marker_direction"]


def marker_direction(column: str) -> str | None:
    """``min`` for a ``name-`` objective column, ``max`` for ``name+``, else None."""
    if len(column) > 1 and column[-1] in "-+" and column[-2] not in "-+":
        return "min" if column[-1] == "-" else "max"
    return None


@dataclass(frozen=True)
class Dataset:
    """A parsed, typed sample table ready for fitting."""

    space: Space
    configs: list[Config]
    points: np.ndarray  # (n, d) encoded configurations, all rows
    values: np.ndarray  # (n,) target values, NaN where the row failed
    failed: np.ndarray  # (n,) bool
    target: str
    default_source: str
    columns: dict[str, str]  # knob name -> source column(s)
    notes: list[str] = field(default_factory=list)
    #: Statuses of failed rows when the table has a ``status`` column (e.g. CRASHED: 3).
    failure_statuses: dict[str, int] = field(default_factory=dict)
    #: One line per knob: what it became and why (printed at session start, saved with it).
    inference: list[str] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    #: The data row the default is (None: a given configuration or the median/mode).
    default_index: int | None = None
    #: The target's direction from its ``-``/``+`` marker (None: unmarked).
    direction: str | None = None

    @property
    def n_ok(self) -> int:
        return int((~self.failed).sum())
