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

Options, each off by default here: an ensemble of comparators ranked by Thompson
sampling or an optimistic bound (:mod:`classytune.ensemble`), categorical local moves
(:func:`category_levels`: a moved bool or enum takes another value uniformly), a failure
weight ``1 - P(fail)`` (:mod:`classytune.failure`) and a minimum distance between one round's
tests (:func:`greedy_pick`). The adaptive width of the perturbations lives in the tuner
(:mod:`classytune.trust`).

The pure functions carry the decisions and are tested directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from classytune.classifiers import win_score
from classytune.ensemble import acquisition_orders
from classytune.induction import induce_against, zorder_against
from harness.sampling import latin_hypercube
from harness.space import Space

__all__ = [
    "CATEGORICAL_MOVES",
    "category_levels",
    "greedy_pick",
    "local_candidates",
    "rank_candidates",
    "ranked_batch",
    "select_new",
    "snap_points",
]

CATEGORICAL_MOVES = ("off", "nominal", "all")


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


def category_levels(space: Space, mode: str = "nominal") -> np.ndarray:
    """Per knob, the number of values a local move chooses among uniformly (0: a Gaussian
    step instead). ``off``: none; ``nominal``: bools and enums with a non-numeric value
    (numeric enums, e.g. recorded levels 1, 2, 4, 8, are ordered: neighbours are similar);
    ``all``: every bool and enum."""
    if mode not in CATEGORICAL_MOVES:
        raise ValueError(f"categorical_moves must be one of {CATEGORICAL_MOVES}, got {mode!r}")
    levels = np.zeros(space.dim, dtype=int)
    for j, knob in enumerate(space.knobs):
        if mode == "off":
            continue
        if knob.type == "bool":
            levels[j] = 2
        elif knob.type == "enum" and (
            mode == "all" or any(isinstance(v, str) for v in knob.values)
        ):
            levels[j] = len(knob.values)
    return levels


def local_candidates(
    elites: np.ndarray,
    n: int,
    scale: float,
    n_dims: float,
    rng: np.random.Generator,
    levels: np.ndarray | None = None,
) -> np.ndarray:
    """``n`` perturbations of the ``elites`` (rows in [0, 1]^d, cycled best first): each knob
    moves with probability ``min(1, n_dims / d)`` (at least one knob always moves) by a
    Gaussian step of standard deviation ``scale``, clipped to [0, 1]. A moved knob with
    ``levels[j] >= 2`` values (see :func:`category_levels`) instead takes a uniformly chosen
    *other* value, at its cell's centre: a Gaussian step would flip a bool only when it is
    larger than 0.25 and move an enum only to its neighbours, as if enums were ordered."""
    elites = np.atleast_2d(np.asarray(elites, dtype=float))
    d = elites.shape[1]
    if n <= 0 or not len(elites):
        return np.empty((0, d))
    base = elites[np.arange(n) % len(elites)]
    moved = rng.random((n, d)) < min(1.0, n_dims / d)
    moved[np.arange(n), rng.integers(d, size=n)] = True
    steps = rng.normal(0.0, scale, (n, d))
    out = np.clip(np.where(moved, base + steps, base), 0.0, 1.0)
    if levels is not None and np.any(np.asarray(levels) >= 2):
        count = np.asarray(levels)
        cat = count >= 2
        k = count[cat].astype(float)
        cell = np.minimum(np.floor(base[:, cat] * k), k - 1)
        # shift by 1 .. k-1 cells (mod k): every other value equally likely, never the same
        shift = 1 + np.floor(rng.random((n, int(cat.sum()))) * (k - 1))
        other = (np.mod(cell + shift, k) + 0.5) / k
        out[:, cat] = np.where(moved[:, cat], other, base[:, cat])
    return out


def rank_candidates(
    model: Any,
    candidates: np.ndarray,
    opponents: np.ndarray,
    induction: str = "zorder",
    bits: int = 26,
) -> np.ndarray:
    """Mean predicted win probability of each candidate against each opponent."""
    total = np.zeros(len(candidates))
    opponents = np.atleast_2d(opponents)
    if induction == "zorder":  # the candidates' codes are spread once for all opponents
        rows: Iterable[np.ndarray] = zorder_against(candidates, opponents, bits)
    else:
        rows = (induce_against(candidates, o, induction, bits) for o in opponents)
    for induced in rows:
        total += win_score(model, induced)
    return total / max(len(opponents), 1)


def greedy_pick(
    orders: Sequence[np.ndarray],
    slots: Sequence[int],
    snapped: np.ndarray,
    measured: np.ndarray,
    min_distance: float = 0.0,
    batch: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of one candidate per slot: slot ``t`` takes the first candidate of
    ``orders[slots[t]]`` whose snapped setting is neither measured nor taken already and lies
    at least ``min_distance`` (root-mean-square distance per knob, in [0, 1] units) from the
    settings taken in this batch (and from ``batch``, tests already chosen). A slot whose
    order runs out stays empty."""
    seen = {tuple(p) for p in np.round(np.atleast_2d(measured), 12)}
    taken = [np.asarray(p, dtype=float) for p in np.atleast_2d(batch)] if batch is not None else []
    taken = [p for p in taken if p.size]
    chosen: list[int] = []
    cursor = [0] * len(orders)
    for member in slots:
        order = orders[member]
        while cursor[member] < len(order):
            i = int(order[cursor[member]])
            cursor[member] += 1
            key = tuple(np.round(snapped[i], 12))
            if key in seen:
                continue
            if min_distance > 0 and taken:
                rms = np.sqrt(np.mean((np.asarray(taken) - snapped[i]) ** 2, axis=1))
                if rms.min() < min_distance:
                    continue
            seen.add(key)
            chosen.append(i)
            taken.append(snapped[i])
            break
    return np.array(chosen, dtype=int)


def select_new(
    candidates: np.ndarray, scores: np.ndarray, m: int, snapped: np.ndarray, measured: np.ndarray
) -> np.ndarray:
    """Indices of the ``m`` best-scored candidates whose snapped setting (``snapped[i]``) is
    neither measured nor taken already; ties keep the candidates' order."""
    if m <= 0:
        return np.zeros(0, dtype=int)
    return greedy_pick(
        [np.argsort(-np.asarray(scores), kind="stable")], [0] * m, snapped, measured
    )


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
    *,
    acquisition: str = "mean",
    kappa: float = 1.0,
    levels: np.ndarray | None = None,
    fail_prob: Callable[[np.ndarray], np.ndarray] | None = None,
    min_distance: float = 0.0,
) -> tuple[np.ndarray, dict[str, Any]]:
    """One round's ``m`` tests (rows in [0, 1]^d) and a log entry; candidates are snapped to the
    knobs' types (:func:`snap_points`). ``global_share`` of the tests (rounded up) are the best
    of the global candidates alone, so exploration goes on when perturbations of the elites
    outrank everything else.

    ``model`` is one comparator or a list (an ensemble, :mod:`classytune.ensemble`, ranked by
    ``acquisition`` with ``kappa``); ``levels`` makes local moves categorical
    (:func:`local_candidates`); ``fail_prob(candidates)`` (:mod:`classytune.failure`) weights
    every win probability by ``1 - P(fail)``; ``min_distance`` spreads the batch
    (:func:`greedy_pick`). The defaults reproduce the single-comparator ranking."""
    models = list(model) if isinstance(model, list | tuple) else [model]
    order = np.argsort(-scores, kind="stable")
    d = points.shape[1]
    candidates = np.vstack(
        [
            latin_hypercube(n_global, d, rng),
            local_candidates(points[order[:n_elite]], n_local, scale, n_dims, rng, levels),
        ]
    )
    candidates = snap_points(space, candidates)
    opp = points[order[:opponents]]
    member_scores = np.vstack(
        [rank_candidates(mm, candidates, opp, induction, bits) for mm in models]
    )
    p_fail = fail_prob(candidates) if fail_prob is not None else np.zeros(len(candidates))
    member_scores = member_scores * (1.0 - p_fail)[None, :]
    orders, slots = acquisition_orders(member_scores, m, acquisition, rng, kappa)
    measured = snap_points(space, points)
    n_explore = min(m, int(np.ceil(global_share * m))) if n_local else 0
    explore = greedy_pick(
        [o[o < n_global] for o in orders], slots[:n_explore], candidates, measured, min_distance
    )
    rest = greedy_pick(
        orders,
        slots[len(explore) :],
        candidates,
        np.vstack([measured, candidates[explore]]),
        min_distance,
        candidates[explore],
    )
    chosen = np.concatenate([explore, rest]).astype(int)
    batch = candidates[chosen]
    if len(batch) < m:  # everything was measured already (tiny spaces): fill by LHS
        batch = np.vstack([batch, latin_hypercube(m - len(batch), d, rng)])
    local = int(np.sum(chosen >= n_global))
    mean_scores = member_scores.mean(axis=0)
    return batch, {
        "n_candidates": len(candidates),
        "n_local_chosen": local,
        "top_score": float(mean_scores[chosen[0]]) if len(chosen) else 0.0,
        "n_members": len(models),
        "p_fail_max": float(p_fail.max()) if len(p_fail) else 0.0,
        "p_fail_chosen": float(p_fail[chosen].mean()) if len(chosen) else 0.0,
    }
