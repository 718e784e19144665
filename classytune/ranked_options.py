"""The ranked mode's option groups: one frozen dataclass per concern, checked when built.

``ClassyTuneRanked`` takes its search options as nested groups (``tuner.local.*``,
``tuner.trust_region.*``, ``tuner.ensemble.*``, ``tuner.failure_model.*``,
``tuner.remeasure.*``) rather than ~40 flat keyword arguments, so its signature reads as the
method does: candidates around the best settings (:class:`LocalMoves`) whose reach adapts
(:class:`TrustRegion`), ranked by one comparator or an ensemble (:class:`Ensemble`), weighted by
the risk of failing (:class:`FailureModel`), with noisy winners measured again
(:class:`Remeasure`). Each group accepts a mapping (a Hydra node), an instance or ``None``
(its defaults); an unknown key or a value out of range is a :class:`~harness.errors.ConfigError`
naming the group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, TypeVar

from classytune.ensemble import ACQUISITIONS
from classytune.failure import FAILURE_MODELS
from classytune.ranked import CATEGORICAL_MOVES
from harness.errors import ConfigError

__all__ = [
    "Ensemble",
    "FailureModel",
    "LocalMoves",
    "Remeasure",
    "TrustRegion",
    "flat_params",
    "option_group",
]

Group = TypeVar("Group")


def _need(ok: bool, group: str, what: str) -> None:
    if not ok:
        raise ConfigError(f"tuner.{group}: {what}")


@dataclass(frozen=True)
class LocalMoves:
    """Perturbations of the ``n_elite`` best measured settings: ``factor`` × |S| candidates,
    each moving ``dims`` knobs on average (``all``: every knob) by a Gaussian step of width
    ``scale`` in [0, 1] units; a moved bool or string enum (``categorical``: ``nominal``;
    ``all`` enums too; ``off`` none) takes another value uniformly instead, since enums have
    no order."""

    factor: float = 0.5
    n_elite: int = 5
    scale: float = 0.2
    dims: float | str = 20.0
    categorical: str = "nominal"

    def __post_init__(self) -> None:
        _need(self.factor >= 0 and self.n_elite >= 1, "local", "factor >= 0, n_elite >= 1")
        _need(self.scale > 0, "local", f"scale must be > 0, got {self.scale}")
        _need(
            self.dims == "all" or (not isinstance(self.dims, str) and float(self.dims) > 0),
            "local",
            f"dims must be a number > 0 or 'all', got {self.dims!r}",
        )
        _need(
            self.categorical in CATEGORICAL_MOVES,
            "local",
            f"categorical must be one of {CATEGORICAL_MOVES}, got {self.categorical!r}",
        )

    def moved_knobs(self, dim: int) -> float:
        """Knobs moved per perturbation, on average, in a ``dim``-knob space."""
        return float(dim) if self.dims == "all" else min(float(self.dims), float(dim))


@dataclass(frozen=True)
class TrustRegion:
    """An adaptive step (TuRBO-like): × ``grow`` after a round that improved the best,
    × ``shrink`` otherwise, within [``min``, ``max``]; with ``restart``, a step that would
    shrink below ``min`` starts over at the initial width (the region collapsed)."""

    enabled: bool = True
    grow: float = 1.5
    shrink: float = 0.6
    min: float = 0.05
    max: float = 0.5
    restart: bool = True

    def __post_init__(self) -> None:
        _need(
            0 < self.min <= self.max and self.grow >= 1 and 0 < self.shrink <= 1,
            "trust_region",
            "need 0 < min <= max, grow >= 1 and 0 < shrink <= 1",
        )


@dataclass(frozen=True)
class Ensemble:
    """``members`` extra comparators on bootstrap resamples of the samples (0: the single
    comparator), each on at most ``pairs`` pairs with ``estimators`` trees (0: the
    comparator's); ``full_model`` False: they replace the comparator. ``acquisition``:
    ``mean``, ``ucb`` (mean + ``kappa`` × std) or ``thompson`` (a member per batch slot)."""

    members: int = 0
    pairs: int | None = 1000
    estimators: int = 50
    full_model: bool = True
    acquisition: str = "mean"
    kappa: float = 1.0

    def __post_init__(self) -> None:
        _need(self.members >= 0, "ensemble", f"members must be >= 0, got {self.members}")
        _need(
            self.acquisition in ACQUISITIONS,
            "ensemble",
            f"acquisition must be one of {ACQUISITIONS}, got {self.acquisition!r}",
        )


@dataclass(frozen=True)
class FailureModel:
    """P(fail) of a candidate from the measured failures (``off``, ``knn`` over ``k``
    neighbours, ``forest``); the acquisition is multiplied by 1 - P(fail)."""

    method: str = "off"
    k: int = 5

    def __post_init__(self) -> None:
        _need(
            self.method in FAILURE_MODELS,
            "failure_model",
            f"method must be one of {FAILURE_MODELS}, got {self.method!r}",
        )
        _need(self.k >= 1, "failure_model", f"k must be >= 1, got {self.k}")


@dataclass(frozen=True)
class Remeasure:
    """Noise: ``challenger``: before a new best measured once can stand as the answer, it is
    measured again (at most ``challenger_max`` times a session; stops on a system found
    deterministic within ``tolerance``); ``tests``: tests kept at the end of the budget to
    measure the ``top`` best settings again."""

    challenger: bool = False
    challenger_max: int = 10
    tests: int = 0
    top: int = 3
    tolerance: float = 1e-3

    def __post_init__(self) -> None:
        _need(
            self.tests >= 0 and self.top >= 1 and self.challenger_max >= 0,
            "remeasure",
            "tests >= 0, top >= 1 and challenger_max >= 0",
        )


def option_group(cls: type[Group], value: Any, name: str) -> Group:
    """``value`` (a mapping, an instance of ``cls`` or ``None``) as a ``cls``; an unknown key
    is a ConfigError naming the group's keys."""
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"tuner.{name} is a group of options, got {value!r}")
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(map(str, value)) - known)
    if unknown:
        raise ConfigError(
            f"tuner.{name}: unknown option(s) {', '.join(unknown)}; "
            f"it has {', '.join(sorted(known))}"
        )
    return cls(**{str(k): v for k, v in value.items()})


def flat_params(name: str, group: Any) -> dict[str, object]:
    """A group's options as ``{"<name>.<key>": value}`` for the tuner's ``params()``."""
    return {f"{name}.{key}": value for key, value in asdict(group).items()}
