"""Knob influence that can be trusted: covered probes, calibrated win probabilities, bands.

The question a user asks of a finished session is "from the best setting, does raising (or
lowering) knob K help?". The classifier can only answer where its training pairs say
something, and its raw probabilities are not probabilities. So:

1. **Covered probes only.** Knob K is moved (every other knob kept at the best setting) only to
   values K actually took in measured tests: above and below the best value, at most
   ``probes`` of them per direction (quantiles of the measured values). A direction nobody
   measured has no answer (``-``), instead of an extrapolation.
2. **An ensemble for uncertainty.** ``members`` comparators are trained on bootstrap resamples
   of the measured samples (same induction and classifier as the session); each gives the mean
   win probability of a direction's probes against the best setting. The band is the 10th-90th
   percentile over members.
3. **Calibration.** Win probabilities are mapped through an isotonic fit of predicted
   probability against the real outcome of held-out pairs (k-fold over samples: a held-out
   sample against every training sample). The same held-out pairs give the comparator's
   accuracy, reported beside the trivial accuracy of always answering the majority label.
4. **A verdict only when the band says so.** ``raise`` (``lower``) when that direction's whole
   band is above one half; both directions above one half cannot both be believed of a best
   setting, so that is ``unsure``, as is any band that straddles one half; ``keep`` when every
   band with an answer lies below one half.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from classytune.classifiers import win_score
from classytune.comparator import Comparator
from classytune.induction import induce, induce_against
from harness.space import Space

__all__ = ["Calibration", "Direction", "KnobInfluence", "calibrate", "covered_probes", "influence"]


@dataclass(frozen=True)
class Direction:
    """Calibrated chance that moving one knob one way beats the best setting."""

    probability: float  # ensemble mean over the probes
    low: float  # 10th percentile over ensemble members
    high: float  # 90th percentile
    probes: int


@dataclass(frozen=True)
class KnobInfluence:
    """Predicted effect of moving one knob away from the best measured setting."""

    knob: str
    best_value: object
    up: Direction | None  # None: no measured value above the best one
    down: Direction | None
    importance: float | None

    @property
    def verdict(self) -> str:
        known = {k: d for k, d in (("raise", self.up), ("lower", self.down)) if d is not None}
        if not known:
            return "no data"
        above = [k for k, d in known.items() if d.low > 0.5]
        if len(above) == 1:
            return above[0]
        if above or any(d.high >= 0.5 for d in known.values()):
            return "unsure"
        return "keep"


@dataclass(frozen=True)
class Calibration:
    """Isotonic map of predicted win probability to observed win rate, from held-out pairs."""

    predicted: np.ndarray  # sorted knots
    observed: np.ndarray
    accuracy: float  # held-out pair accuracy of the raw comparator
    trivial: float  # accuracy of always answering the majority label
    pairs: int

    def __call__(self, p: np.ndarray) -> np.ndarray:
        if not len(self.predicted):
            return np.asarray(p, dtype=float)
        return np.interp(p, self.predicted, self.observed)


def covered_probes(points: np.ndarray, best: np.ndarray, i: int, probes: int) -> dict[str, Any]:
    """Values of coordinate ``i`` (encoded units) that measured tests took above and below
    ``best[i]``: ``{"up": array, "down": array}``, at most ``probes`` each (quantiles)."""
    values = np.unique(np.round(points[:, i], 12))
    out: dict[str, Any] = {}
    for name, side in (
        ("up", values[values > best[i] + 1e-12]),
        ("down", values[values < best[i] - 1e-12]),
    ):
        if len(side) > probes:
            side = np.quantile(side, (np.arange(probes) + 0.5) / probes)
        out[name] = side
    return out


def _fit(
    comparator: Comparator, points: np.ndarray, scores: np.ndarray, rng: np.random.Generator
) -> Any:
    model, _ = comparator.fit(points, scores, rng)
    return model


def calibrate(
    comparator: Comparator,
    points: np.ndarray,
    scores: np.ndarray,
    rng: np.random.Generator,
    folds: int = 4,
) -> Calibration:
    """Held-out pairs (k-fold over samples): raw win probability vs outcome, isotonic map."""
    from sklearn.isotonic import IsotonicRegression

    n = len(points)
    order = rng.permutation(n)
    predicted: list[np.ndarray] = []
    outcome: list[np.ndarray] = []
    for fold in range(min(folds, n)):
        test = order[fold::folds]
        train = np.setdiff1d(order, test)
        model = _fit(comparator, points[train], scores[train], rng) if len(train) > 1 else None
        if model is None:
            continue
        for j in test:
            others = train[scores[train] != scores[j]]  # ties have no true label
            if not len(others):
                continue
            mine = np.repeat(points[j][None, :], len(others), axis=0)
            rows = induce(mine, points[others], comparator.induction, comparator.bits)
            predicted.append(win_score(model, rows))
            outcome.append((scores[j] > scores[others]).astype(float))
    if not predicted:
        return Calibration(np.empty(0), np.empty(0), float("nan"), float("nan"), 0)
    p, y = np.concatenate(predicted), np.concatenate(outcome)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, y)
    knots = np.unique(p)
    return Calibration(
        knots,
        iso.predict(knots),
        float(np.mean((p > 0.5) == (y > 0.5))),
        float(max(y.mean(), 1.0 - y.mean())),
        len(y),
    )


def influence(
    space: Space,
    comparator: Comparator,
    points: np.ndarray,
    scores: np.ndarray,
    configs: list[dict[str, Any]],
    importances: np.ndarray | None = None,
    probes: int = 8,
    members: int = 8,
    seed: int = 0,
) -> tuple[list[KnobInfluence], Calibration]:
    """Per knob, the calibrated chance that raising / lowering it from the best setting wins."""
    rng = np.random.default_rng(seed)
    calibration = calibrate(comparator, points, scores, rng)
    models = []
    for _ in range(members):
        pick = rng.integers(len(points), size=len(points))
        model = _fit(comparator, points[pick], scores[pick], rng)
        if model is not None:
            models.append(model)
    best_index = int(np.argmax(scores))
    best = points[best_index]
    result = []
    for i, knob in enumerate(space.knobs):
        directions: dict[str, Direction | None] = {}
        for name, values in covered_probes(points, best, i, probes).items():
            if not len(values) or not models:
                directions[name] = None
                continue
            variants = np.repeat(best[None, :], len(values), axis=0)
            variants[:, i] = values
            rows = induce_against(variants, best, comparator.induction, comparator.bits)
            per_member = np.array([calibration(win_score(m, rows)).mean() for m in models])
            directions[name] = Direction(
                float(per_member.mean()),
                float(np.quantile(per_member, 0.1)),
                float(np.quantile(per_member, 0.9)),
                len(values),
            )
        result.append(
            KnobInfluence(
                knob.name,
                configs[best_index][knob.name],
                directions["up"],
                directions["down"],
                None if importances is None else float(importances[i]),
            )
        )
    return result, calibration
