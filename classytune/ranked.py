"""Ranked resampling: the comparator picks the next tests itself (this project's best mode).

The paper's Algorithm 1 (:mod:`classytune.search`) uses the comparator only to say
"wins / loses against the pivot" and then samples blindly (LHS) inside boxes around KMeans
centres of the winners. With 50-100 samples the comparator is imprecise, so few of those blind
samples beat the pivot. Ranked resampling keeps the comparator and the induced pairs, but spends
each round's tests on the candidates the comparator ranks highest:

1. candidates = an LHS set over the whole space (``n_global``) plus perturbations of the best
   measured settings (``n_local``: a few knobs of an elite setting moved by a Gaussian step of
   width ``scale``, the rest kept, so good values found so far are reused);
2. each candidate's score = its mean predicted win probability against the ``opponents`` best
   measured settings (a Borda-like count, steadier than one comparison with the pivot alone);
3. the ``m`` best-scored candidates (``global_share`` of them from the LHS set alone, so the
   search keeps exploring) that are not yet measured (after snapping to the knobs'
   types) and not duplicates of each other are the round's tests.

The pure functions carry the decisions and are tested directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from classytune.classifiers import win_score
from classytune.induction import induce_against
from harness.sampling import latin_hypercube
from harness.space import Space

__all__ = ["local_candidates", "rank_candidates", "ranked_batch", "select_new", "snap_points"]


def snap_points(space: Space, points: np.ndarray) -> np.ndarray:
    """Vectorised :meth:`harness.space.Space.snap` (decode, then encode): int, enum and bool
    coordinates move to their cell's code, floats stay (up to rounding). ``Space.snap`` works
    one value at a time in Python, seconds for the ~10^4 candidates of a round at d = 30."""
    u = np.clip(np.atleast_2d(np.asarray(points, dtype=float)), 0.0, 1.0)
    out = u.copy()
    for j, knob in enumerate(space.knobs):
        col = u[:, j]
        if knob.type == "bool":
            out[:, j] = np.where(col >= 0.5, 0.75, 0.25)
        elif knob.type == "enum":
            n = len(knob.values)
            out[:, j] = (np.minimum(np.floor(col * n), n - 1) + 0.5) / n
        elif knob.type == "int" and not knob.log:
            low, high = float(knob.low), float(knob.high)  # type: ignore[arg-type]
            value = np.minimum(low + np.floor(col * (high - low + 1)), high)
            out[:, j] = (value - low + 0.5) / (high - low + 1)
        elif knob.type == "int":  # log-scaled int: round in the value domain
            low, high = float(knob.low), float(knob.high)  # type: ignore[arg-type]
            lo, hi = np.log(low), np.log(high)
            value = np.clip(np.round(np.exp(lo + col * (hi - lo))), low, high)
            out[:, j] = (np.log(value) - lo) / (hi - lo)
    return out


def local_candidates(
    elites: np.ndarray, n: int, scale: float, n_dims: float, rng: np.random.Generator
) -> np.ndarray:
    """``n`` perturbations of the ``elites`` (rows in [0, 1]^d, cycled best first): each knob
    moves with probability ``min(1, n_dims / d)`` (at least one knob always moves) by a
    Gaussian step of standard deviation ``scale``, clipped to [0, 1]."""
    elites = np.atleast_2d(np.asarray(elites, dtype=float))
    d = elites.shape[1]
    if n <= 0 or not len(elites):
        return np.empty((0, d))
    base = elites[np.arange(n) % len(elites)]
    moved = rng.random((n, d)) < min(1.0, n_dims / d)
    moved[np.arange(n), rng.integers(d, size=n)] = True
    steps = rng.normal(0.0, scale, (n, d))
    return np.clip(np.where(moved, base + steps, base), 0.0, 1.0)


def rank_candidates(
    model: Any,
    candidates: np.ndarray,
    opponents: np.ndarray,
    induction: str = "zorder",
    bits: int = 26,
) -> np.ndarray:
    """Mean predicted win probability of each candidate against each opponent."""
    total = np.zeros(len(candidates))
    for opponent in np.atleast_2d(opponents):
        total += win_score(model, induce_against(candidates, opponent, induction, bits))
    return total / max(len(np.atleast_2d(opponents)), 1)


def select_new(
    candidates: np.ndarray, scores: np.ndarray, m: int, snapped: np.ndarray, measured: np.ndarray
) -> np.ndarray:
    """Indices of the ``m`` best-scored candidates whose snapped setting (``snapped[i]``) is
    neither measured nor taken already; ties keep the candidates' order."""
    if m <= 0:
        return np.zeros(0, dtype=int)
    seen = {tuple(p) for p in np.round(np.atleast_2d(measured), 12)}
    chosen: list[int] = []
    for i in np.argsort(-np.asarray(scores), kind="stable"):
        key = tuple(np.round(snapped[i], 12))
        if key in seen:
            continue
        seen.add(key)
        chosen.append(int(i))
        if len(chosen) == m:
            break
    return np.array(chosen, dtype=int)


def ranked_batch(
    model: Any,
    points: np.ndarray,
    scores: np.ndarray,
    m: int,
    space: Space,
    rng: np.random.Generator,
    n_global: int,
    n_local: int,
    n_elite: int,
    opponents: int,
    scale: float,
    n_dims: float,
    induction: str = "zorder",
    bits: int = 26,
    global_share: float = 0.0,
) -> tuple[np.ndarray, dict[str, Any]]:
    """One round's ``m`` tests (rows in [0, 1]^d) and a log entry; candidates are snapped to the
    knobs' types (:func:`snap_points`). ``global_share`` of the tests (rounded up) are the best
    of the global candidates alone, so exploration goes on when perturbations of the elites
    outrank everything else."""
    order = np.argsort(-scores, kind="stable")
    d = points.shape[1]
    candidates = np.vstack(
        [
            latin_hypercube(n_global, d, rng),
            local_candidates(points[order[:n_elite]], n_local, scale, n_dims, rng),
        ]
    )
    candidates = snap_points(space, candidates)
    ranks = rank_candidates(model, candidates, points[order[:opponents]], induction, bits)
    measured = snap_points(space, points)
    n_explore = min(m, int(np.ceil(global_share * m))) if n_local else 0
    explore = select_new(
        candidates[:n_global], ranks[:n_global], n_explore, candidates[:n_global], measured
    )
    rest = select_new(
        candidates, ranks, m - len(explore), candidates, np.vstack([measured, candidates[explore]])
    )
    chosen = np.concatenate([explore, rest]).astype(int)
    batch = candidates[chosen]
    if len(batch) < m:  # everything was measured already (tiny spaces): fill by LHS
        batch = np.vstack([batch, latin_hypercube(m - len(batch), d, rng)])
    local = int(np.sum(chosen >= n_global))
    return batch, {
        "n_candidates": len(candidates),
        "n_local_chosen": local,
        "top_score": float(ranks[chosen[0]]) if len(chosen) else 0.0,
    }
