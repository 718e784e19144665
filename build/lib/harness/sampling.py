"""Space-filling samplers on boxes inside [0, 1]^d (Latin hypercube, uniform random)."""

from __future__ import annotations

import numpy as np
from scipy.stats import qmc

__all__ = ["latin_hypercube", "uniform"]


def _box(dim: int, low: np.ndarray | None, high: np.ndarray | None) -> tuple[np.ndarray, ...]:
    lo = np.zeros(dim) if low is None else np.asarray(low, dtype=float)
    hi = np.ones(dim) if high is None else np.asarray(high, dtype=float)
    if lo.shape != (dim,) or hi.shape != (dim,) or np.any(hi < lo):
        raise ValueError(f"invalid box: low={lo}, high={hi} for dimension {dim}")
    return lo, hi


def latin_hypercube(
    n: int,
    dim: int,
    rng: np.random.Generator,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
) -> np.ndarray:
    """``n`` LHS points in the box: every dimension has exactly one point per 1/n stratum."""
    lo, hi = _box(dim, low, high)
    if n <= 0:
        return np.empty((0, dim))
    unit = qmc.LatinHypercube(d=dim, seed=rng).random(n)
    return lo + unit * (hi - lo)


def uniform(
    n: int,
    dim: int,
    rng: np.random.Generator,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
) -> np.ndarray:
    """``n`` independent uniform points in the box."""
    lo, hi = _box(dim, low, high)
    return lo + rng.random((max(n, 0), dim)) * (hi - lo)
