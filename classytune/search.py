"""Search with an imprecise classifier (the paper's Algorithm 1, lines 2-11).

Given a fitted comparator, the evaluated points and their scores:

1. pivot = the best measured point;
2. a large LHS set S, snapped to the knobs' int/enum/bool cells (a measured setting always sits
   at a cell centre, so the comparator is asked about settings that can be measured; duplicates
   and already measured settings are dropped: :func:`distinct_new`), is compared against the
   pivot; the settings predicted to win are the *winners* (a list, so a few wrong predictions
   cannot derail the search);
3. k is chosen by the elbow criterion over KMeans inertia (:func:`elbow_k`), optionally checked
   against uniform reference draws (:func:`beats_uniform`: no cluster structure → k = 1), and
   the winners are clustered into k clusters whose centres locate the promising subspaces;
4. each centre's subspace is bounded (``bounds``): ``per_dimension``, by the nearest evaluated
   values below and above it in each dimension (:func:`subspace_bounds`), or
   ``nearest_setting``, by the evaluated setting nearest to it (:func:`nearest_setting_bounds`);
5. the caller spends its tests as LHS samples inside the subspaces, split by :func:`allocate`.

No winners: the pivot itself becomes the only centre, so the tests go to the subspace around
the best measured setting (a local refinement rather than a random restart: the classifier just
said nothing looks better than the pivot).

The pure functions (:func:`elbow_k`, :func:`beats_uniform`, :func:`subspace_bounds`,
:func:`nearest_setting_bounds`, :func:`allocate`) carry the decisions and are tested with
hand-computed cases. Cells: ``cells[i]`` is the number of equal-width cells of dimension i
(:func:`cell_counts`: bool 2, enum its values, linear int its integers; 0 = continuous, which
includes log-scaled ints, whose cells are unequal and narrow).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from classytune.classifiers import predict_better, win_score
from classytune.induction import induce_against
from harness.sampling import latin_hypercube
from harness.space import Space

__all__ = [
    "BOUNDS",
    "ELBOWS",
    "MAX_CELLS",
    "SearchResult",
    "allocate",
    "beats_uniform",
    "cell_counts",
    "cluster_winners",
    "distinct_new",
    "elbow_k",
    "find_subspaces",
    "nearest_setting_bounds",
    "subspace_bounds",
]

#: The two readings of the paper's bounding step (classytune/README.md).
BOUNDS = ("per_dimension", "nearest_setting")
#: ``knee``: the chord knee alone; ``gap``: the knee, kept only if :func:`beats_uniform`.
ELBOWS = ("knee", "gap")
_KEY_DECIMALS = 12  # settings compare equal after rounding (encode/decode is not bit-exact)

Snap = Callable[[np.ndarray], np.ndarray]


#: More integers than an int64 counts (a byte size up to 2^64 - 1): such a knob's cells are far
#: narrower than float64 resolves in [0, 1], so it is continuous for the search.
MAX_CELLS = int(np.iinfo(np.int64).max)


def cell_counts(space: Space) -> np.ndarray:
    """Equal-width cells per dimension of ``space``'s encoding (0: continuous, which includes
    an int knob of more than :data:`MAX_CELLS` values)."""
    counts = []
    for knob in space.knobs:
        if knob.type == "bool":
            counts.append(2)
        elif knob.type == "enum":
            counts.append(len(knob.values))
        elif knob.type == "int" and not knob.log:
            cells = int(knob.high) - int(knob.low) + 1  # type: ignore[arg-type]
            counts.append(cells if cells <= MAX_CELLS else 0)
        else:
            counts.append(0)
    return np.array(counts, dtype=np.int64)


def distinct_new(candidates: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """``candidates`` without repeats and without the ``measured`` settings, in their order
    (a measured setting is known not to beat the pivot; a repeat would weigh twice in KMeans)."""
    keys = np.round(np.atleast_2d(candidates), _KEY_DECIMALS)
    if not len(keys):
        return keys
    first = np.sort(np.unique(keys, axis=0, return_index=True)[1])
    seen = {tuple(row) for row in np.round(np.atleast_2d(measured), _KEY_DECIMALS)}
    keep = [i for i in first if tuple(keys[i]) not in seen]
    return np.asarray(candidates, dtype=float)[keep]


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


def _inertia(points: np.ndarray, k: int, seed: int, n_init: int) -> float:
    if k == 1:  # KMeans with one cluster: the centre is the mean
        return float(((points - points.mean(axis=0)) ** 2).sum())
    from sklearn.cluster import KMeans

    return float(KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(points).inertia_)


def beats_uniform(
    winners: np.ndarray,
    k: int,
    inertia_k: float,
    seed: int,
    cells: np.ndarray | None = None,
    draws: int = 5,
    z: float = 2.0,
    n_init: int = 3,
) -> bool:
    """Do the winners have k clusters, or would as many uniform points drop as much?

    A check in the spirit of the gap statistic (Tibshirani, Walther & Hastie, 2001): the
    winners' log inertia drop ``D = log(W_1 / W_k)`` (``inertia_k`` = their ``W_k``) must exceed
    the same drop of ``draws`` reference sets, each as many points drawn uniformly over the
    settings in the winners' bounding box (a dimension with ``cells[i] > 0`` draws its cells
    from the lowest to the highest winner's cell with equal chance, so a bool's two values are
    not taken for two clusters), by ``z`` standard errors: ``D > mean(D*) + z * sd(D*) *
    sqrt(1 + 1/draws)``. Gap(k) - Gap(1) = D - mean(D*) with paired references; ``z = 1`` would
    be the gap statistic's one-standard-error rule, 2 makes uniform winners pass rarely.
    """
    points = np.atleast_2d(np.asarray(winners, dtype=float))
    n, d = points.shape
    if k <= 1 or n <= k:
        return False
    w1 = _inertia(points, 1, seed, n_init)
    if not w1 > 0:
        return False
    floor = 1e-12 * w1  # k >= the distinct points: inertia 0, an infinite drop
    drop = np.log(w1 / max(inertia_k, floor))
    rng = np.random.default_rng(seed)
    lo, hi = points.min(axis=0), points.max(axis=0)
    counts = np.zeros(d, dtype=int) if cells is None else np.asarray(cells, dtype=int)
    discrete = np.flatnonzero(counts > 0)
    refs = []
    for _ in range(max(int(draws), 2)):
        ref = lo + rng.random((n, d)) * (hi - lo)
        for j in discrete:
            c = counts[j]
            first, last = (np.minimum(np.floor(np.array([lo[j], hi[j]]) * c), c - 1)).astype(int)
            ref[:, j] = (rng.integers(first, last + 1, size=n) + 0.5) / c
        r1 = _inertia(ref, 1, seed, n_init)
        rk = _inertia(ref, k, seed, n_init)
        refs.append(np.log(max(r1, floor) / max(rk, floor)))
    ref_drops = np.array(refs)
    margin = z * ref_drops.std(ddof=1) * np.sqrt(1.0 + 1.0 / len(ref_drops))
    return bool(drop > ref_drops.mean() + margin)


def subspace_bounds(
    centre: np.ndarray,
    evaluated: np.ndarray,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``bounds: per_dimension``: the box around ``centre`` whose sides are, per dimension, the
    nearest evaluated value strictly below and strictly above the centre's value. A side with
    no evaluated value keeps the outer bound (``low``/``high``, default 0 and 1)."""
    centre = np.asarray(centre, dtype=float)
    evaluated = np.asarray(evaluated, dtype=float).reshape(-1, centre.size)
    lo = np.zeros(centre.size) if low is None else np.array(low, dtype=float)
    hi = np.ones(centre.size) if high is None else np.array(high, dtype=float)
    below = np.where(evaluated < centre, evaluated, -np.inf).max(axis=0, initial=-np.inf)
    above = np.where(evaluated > centre, evaluated, np.inf).min(axis=0, initial=np.inf)
    new_lo = np.where(np.isfinite(below), np.maximum(below, lo), lo)
    new_hi = np.where(np.isfinite(above), np.minimum(above, hi), hi)
    return new_lo, new_hi


def nearest_setting_bounds(
    centre: np.ndarray, evaluated: np.ndarray, cells: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``bounds: nearest_setting``: the box around ``centre`` reaching to its nearest evaluated
    setting (the paper: "we should not consider those settings lying farther from any center
    than an evaluated setting that is closer to the center than other evaluated settings").

    p = the evaluated setting nearest to ``centre`` (Euclidean in [0, 1]^d, at a positive
    distance, so a centre on a measured setting, the pivot's own subspace, reaches to that
    setting's nearest neighbour; ties: the first). Per dimension the box is
    ``centre[i] ± |p[i] - centre[i]|``, clipped to [0, 1]: p's value is one side, the other
    side is as far on the opposite side. A dimension with ``cells[i] > 0`` is widened to whole
    cells: the centre's own cell and every cell whose value (centre) lies within that reach, p's
    included, so LHS in the box draws each allowed value equally often. With no evaluated
    setting elsewhere, the whole space.
    """
    centre = np.asarray(centre, dtype=float)
    evaluated = np.asarray(evaluated, dtype=float).reshape(-1, centre.size)
    dist = np.linalg.norm(evaluated - centre, axis=1)
    elsewhere = np.flatnonzero(dist > 10.0**-_KEY_DECIMALS)
    if not elsewhere.size:
        return np.zeros(centre.size), np.ones(centre.size)
    nearest = evaluated[elsewhere[np.argmin(dist[elsewhere])]]
    reach = np.abs(nearest - centre)
    lo, hi = np.clip(centre - reach, 0.0, 1.0), np.clip(centre + reach, 0.0, 1.0)
    counts = np.zeros(centre.size) if cells is None else np.asarray(cells, dtype=float)
    for j in np.flatnonzero(counts > 0):
        c, eps = counts[j], 1e-9  # cell m's value is (m + 0.5) / c
        own = min(np.floor(centre[j] * c), c - 1)
        first = min(np.ceil((centre[j] - reach[j]) * c - 0.5 - eps), own)
        last = max(np.floor((centre[j] + reach[j]) * c - 0.5 + eps), own)
        lo[j], hi[j] = max(first, 0) / c, (min(last, c - 1) + 1) / c
    return lo, hi


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
    winners: np.ndarray,
    k_max: int,
    seed: int,
    n_init: int = 3,
    elbow: str = "knee",
    cells: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, list[float], np.ndarray]:
    """KMeans of the winners with k from :func:`elbow_k` (``elbow="gap"``: and
    :func:`beats_uniform`, else k = 1): (centres, sizes, inertias by k, cluster label of each
    winner)."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    if elbow not in ELBOWS:
        raise ValueError(f"elbow must be one of {', '.join(ELBOWS)}, got {elbow!r}")
    distinct = len(np.unique(winners, axis=0))
    k_top = max(1, min(int(k_max), distinct))
    fits: list[Any] = []
    # One OpenMP thread: on a loaded 2-core machine KMeans' threads made a 0.06 s job take
    # seconds; the data (<= |S| winners) is far too small to gain from threads anyway.
    with threadpool_limits(limits=1):
        for k in range(1, k_top + 1):
            fits.append(KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(winners))
        inertias = [float(f.inertia_) for f in fits]
        k = elbow_k(inertias)
        if elbow == "gap" and k > 1:
            k = k if beats_uniform(winners, k, inertias[k - 1], seed, cells) else 1
    chosen = fits[k - 1]
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

    @property
    def knee(self) -> int:
        """The chord knee of :attr:`inertias` (the k before any structure check)."""
        return elbow_k(self.inertias) if self.inertias else 0

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
    *,
    snap: Snap | None = None,
    cells: np.ndarray | None = None,
    bounds: str = "per_dimension",
    elbow: str = "knee",
) -> SearchResult:
    """Algorithm 1 lines 2-9 plus the bounding: pivot, winners, centres, boxes.

    The paper's search is ``max_winners=None, centre="mean", include_pivot=False`` with
    ``snap`` (the space's vectorised snap: S is compared as measurable settings, see
    :func:`distinct_new`); ``cells`` (:func:`cell_counts`) serves ``bounds="nearest_setting"``
    and ``elbow="gap"``. Extensions: ``max_winners`` keeps only the winners the model is most
    confident about; ``centre="best"`` replaces each KMeans centre by its cluster's most
    confident winner (a real candidate, not an average that may fall between narrow good
    regions); ``include_pivot`` adds the pivot's own subspace to the clusters' (exploitation of
    the best measured setting).
    """
    if centre not in ("mean", "best"):
        raise ValueError(f"centre must be 'mean' or 'best', got {centre!r}")
    if bounds not in BOUNDS:
        raise ValueError(f"bounds must be one of {', '.join(BOUNDS)}, got {bounds!r}")
    started = time.perf_counter()
    points = np.asarray(points, dtype=float)
    pivot = points[int(np.argmax(scores))]  # argmax: ties go to the earliest, like Tuner.best
    candidates = latin_hypercube(n_candidates, points.shape[1], rng)
    if snap is not None:
        candidates = distinct_new(snap(candidates), points)
    rows = induce_against(candidates, pivot, induction, bits)
    wins = predict_better(model, rows)
    winners = candidates[wins]
    if max_winners is not None or centre == "best":
        confidence = win_score(model, rows[wins])
        order = np.argsort(-confidence, kind="stable")[:max_winners]
        winners, confidence = winners[order], confidence[order]
    inertias: list[float] = []
    if len(winners):
        centres, sizes, inertias, labels = cluster_winners(
            winners, k_max, seed, elbow=elbow, cells=cells
        )
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
    if bounds == "nearest_setting":
        boxes = [nearest_setting_bounds(c, points, cells) for c in centres]
    else:
        boxes = [subspace_bounds(c, points) for c in centres]
    return SearchResult(
        pivot=pivot,
        n_candidates=len(candidates),
        n_winners=len(winners),
        centres=centres,
        sizes=sizes,
        lows=np.array([b[0] for b in boxes]),
        highs=np.array([b[1] for b in boxes]),
        inertias=inertias,
        fallback=fallback,
        seconds=time.perf_counter() - started,
    )
