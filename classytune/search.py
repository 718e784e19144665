"""Search with an imprecise classifier (the paper's Algorithm 1, lines 2-11).

Given a fitted comparator, the evaluated points and their scores:

1. pivot = the best measured point;
2. a large LHS set S is compared against the pivot; the settings predicted to win are the
   *winners* (a list, so a few wrong predictions cannot derail the search);
3. k is chosen by the elbow criterion over KMeans inertia (:func:`elbow_k`), and the winners
   are clustered into k clusters whose centres locate the promising subspaces;
4. each centre's subspace is bounded, per dimension, by the nearest evaluated values below and
   above it (:func:`subspace_bounds`);
5. the caller spends its tests as LHS samples inside the subspaces, split by :func:`allocate`.

No winners: the pivot itself becomes the only centre, so the tests go to the subspace around
the best measured setting (a local refinement rather than a random restart: the classifier just
said nothing looks better than the pivot).

The pure functions (:func:`elbow_k`, :func:`subspace_bounds`, :func:`allocate`) carry the
decisions and are tested with hand-computed cases.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from classytune.classifiers import predict_better, win_score
from classytune.induction import induce_against
from harness.sampling import latin_hypercube

__all__ = [
    "SearchResult",
    "allocate",
    "cluster_winners",
    "elbow_k",
    "find_subspaces",
    "subspace_bounds",
]


def elbow_k(inertias: Sequence[float]) -> int:
    """The elbow of a KMeans inertia curve for k = 1..K (``inertias[k-1]``).

    Both axes are normalised to [0, 1] (k to ``(k-1)/(K-1)``, inertia to the share of the total
    drop ``(I_1 - I_k) / (I_1 - I_K)``); the elbow is the k farthest above the straight line from
    the first to the last point (the "knee" of the normalised curve). With fewer than three
    values, no drop, or no k above the line (a straight or convex curve has no elbow), k = 1.
    Ties go to the smaller k.
    """
    values = np.asarray(inertias, dtype=float)
    if values.size < 3:
        return 1
    drop = values[0] - values[-1]
    if not drop > 0:
        return 1
    gain = (values[0] - values) / drop
    line = np.arange(values.size) / (values.size - 1)
    above = gain - line
    best = int(np.argmax(above))
    return best + 1 if above[best] > 1e-12 else 1


def subspace_bounds(
    centre: np.ndarray,
    evaluated: np.ndarray,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Box around ``centre``: per dimension, the nearest evaluated value strictly below and
    strictly above the centre's value. A side with no evaluated value keeps the outer bound
    (``low``/``high``, default 0 and 1)."""
    centre = np.asarray(centre, dtype=float)
    evaluated = np.asarray(evaluated, dtype=float).reshape(-1, centre.size)
    lo = np.zeros(centre.size) if low is None else np.array(low, dtype=float)
    hi = np.ones(centre.size) if high is None else np.array(high, dtype=float)
    below = np.where(evaluated < centre, evaluated, -np.inf).max(axis=0, initial=-np.inf)
    above = np.where(evaluated > centre, evaluated, np.inf).min(axis=0, initial=np.inf)
    new_lo = np.where(np.isfinite(below), np.maximum(below, lo), lo)
    new_hi = np.where(np.isfinite(above), np.minimum(above, hi), hi)
    return new_lo, new_hi


def allocate(m: int, sizes: Sequence[int]) -> list[int]:
    """Split ``m`` tests over ``k = len(sizes)`` subspaces: ``m // k`` each, the remainder one
    by one to the subspaces with the most winners (ties: lower index first)."""
    k = len(sizes)
    if k == 0:
        return []
    shares = [m // k] * k
    for i in sorted(range(k), key=lambda j: (-sizes[j], j))[: m % k]:
        shares[i] += 1
    return shares


def cluster_winners(
    winners: np.ndarray, k_max: int, seed: int, n_init: int = 3
) -> tuple[np.ndarray, np.ndarray, list[float], np.ndarray]:
    """KMeans of the winners with k from :func:`elbow_k`: (centres, sizes, inertias by k,
    cluster label of each winner)."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    distinct = len(np.unique(winners, axis=0))
    k_top = max(1, min(int(k_max), distinct))
    fits: list[Any] = []
    # One OpenMP thread: on a loaded 2-core machine KMeans' threads made a 0.06 s job take
    # seconds; the data (<= |S| winners) is far too small to gain from threads anyway.
    with threadpool_limits(limits=1):
        for k in range(1, k_top + 1):
            fits.append(KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(winners))
    inertias = [float(f.inertia_) for f in fits]
    chosen = fits[elbow_k(inertias) - 1]
    sizes = np.bincount(chosen.labels_, minlength=chosen.n_clusters)
    return np.asarray(chosen.cluster_centers_), sizes, inertias, np.asarray(chosen.labels_)


@dataclass
class SearchResult:
    """Everything one search round decided (for proposals, logs and tests)."""

    pivot: np.ndarray
    n_candidates: int
    n_winners: int
    centres: np.ndarray
    sizes: np.ndarray
    lows: np.ndarray
    highs: np.ndarray
    inertias: list[float] = field(default_factory=list)
    fallback: bool = False
    seconds: float = 0.0

    @property
    def k(self) -> int:
        return len(self.centres)

    def sample(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``m`` LHS points spread over the subspaces by :func:`allocate`, and the index of
        each point's subspace."""
        shares = allocate(m, list(self.sizes))
        parts = [
            latin_hypercube(share, self.pivot.size, rng, lo, hi)
            for share, lo, hi in zip(shares, self.lows, self.highs, strict=True)
        ]
        boxes = np.repeat(np.arange(len(shares)), shares)
        if not parts:
            return np.empty((0, self.pivot.size)), boxes
        return np.vstack(parts), boxes


def find_subspaces(
    model: Any,
    points: np.ndarray,
    scores: np.ndarray,
    n_candidates: int,
    k_max: int,
    rng: np.random.Generator,
    seed: int,
    induction: str = "zorder",
    bits: int = 26,
    max_winners: int | None = None,
    centre: str = "mean",
    include_pivot: bool = False,
) -> SearchResult:
    """Algorithm 1 lines 2-9 plus the bounding: pivot, winners, centres, boxes.

    The paper's search is ``max_winners=None, centre="mean"``. Extensions: ``max_winners`` keeps
    only the winners the model is most confident about; ``centre="best"`` replaces each KMeans
    centre by its cluster's most confident winner (a real candidate, not an average that may
    fall between narrow good regions); ``include_pivot`` adds the pivot's own subspace to the
    clusters' (exploitation of the best measured setting).
    """
    if centre not in ("mean", "best"):
        raise ValueError(f"centre must be 'mean' or 'best', got {centre!r}")
    started = time.perf_counter()
    points = np.asarray(points, dtype=float)
    pivot = points[int(np.argmax(scores))]  # argmax: ties go to the earliest, like Tuner.best
    candidates = latin_hypercube(n_candidates, points.shape[1], rng)
    rows = induce_against(candidates, pivot, induction, bits)
    wins = predict_better(model, rows)
    winners = candidates[wins]
    if max_winners is not None or centre == "best":
        confidence = win_score(model, rows[wins])
        order = np.argsort(-confidence, kind="stable")[:max_winners]
        winners, confidence = winners[order], confidence[order]
    inertias: list[float] = []
    if len(winners):
        centres, sizes, inertias, labels = cluster_winners(winners, k_max, seed)
        fallback = False
        if centre == "best":  # winners are sorted by confidence: first member = most confident
            centres = np.array(
                [winners[np.flatnonzero(labels == c)[0]] for c in range(len(centres))]
            )
        if include_pivot:  # also refine around the best measured setting (BestConfig-like)
            centres = np.vstack([centres, pivot])
            sizes = np.append(sizes, sizes.max())
    else:
        centres, sizes, fallback = pivot[None, :].copy(), np.array([1]), True
    boxes = [subspace_bounds(c, points) for c in centres]
    return SearchResult(
        pivot=pivot,
        n_candidates=n_candidates,
        n_winners=len(winners),
        centres=centres,
        sizes=sizes,
        lows=np.array([b[0] for b in boxes]),
        highs=np.array([b[1] for b in boxes]),
        inertias=inertias,
        fallback=fallback,
        seconds=time.perf_counter() - started,
    )
