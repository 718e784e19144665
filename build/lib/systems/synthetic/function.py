"""The synthetic response surface: cheap, deterministic, shaped like real configuration surfaces.

It works on the encoded coordinates ``u`` in [0, 1]^d (so log-scaled knobs are log-shaped), and
is a weighted sum of terms, each with a known maximum of 1 at a known place:

* a non-smooth peak with plateaus (``buffer_pool_mb``; the response is quantised to steps),
* a rotated, narrow two-knob interaction (``io_threads`` × ``flush_interval_ms``),
* an enum with one clearly best value (``flush_policy``) and a bool that only pays off together
  with a good ``read_ahead_kb`` (another interaction),
* a multi-modal knob (``read_ahead_kb``), a window of small thread counts (``worker_threads``),
  a saturating knob and weak ones;
* with 30 knobs, four moderate ``aux`` knobs (one pair interacting) and sixteen nearly inert ones,
  as in real systems where a few knobs matter.

A region crashes the system (``buffer_pool_mb`` in the top 7% of its log range, like a cache
larger than memory). The known optimum is the analytic argmax (:func:`optimum_point`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["WEIGHTS_10", "WEIGHTS_30", "crashes", "optimum_point", "response"]

WEIGHTS_10 = np.array([3.0, 3.0, 2.0, 1.0, 1.5, 2.0, 1.0, 0.3, 0.3])
WEIGHTS_30 = np.concatenate([WEIGHTS_10, [0.8, 0.8, 0.8, 0.1]])
_ENUM_LEVELS = np.array([0.35, 0.6, 1.0, 0.0])  # fsync, o_direct, async, littlesync
_CRASH_ABOVE = 0.93


def _bump(x: np.ndarray, centre: float, width: float) -> np.ndarray:
    return np.exp(-(((x - centre) / width) ** 2))


def _terms(u: np.ndarray) -> np.ndarray:
    """Term values (each in [0, 1]) for points ``u`` of shape (n, d), d in {10, 30}."""
    peak = np.clip(1.0 - np.abs(u[:, 0] - 0.7) / 0.7, 0.0, 1.0)
    plateau = np.floor(peak * 10.0 + 1e-9) / 10.0
    a, b = u[:, 1] - 0.25, u[:, 2] - 0.6
    interaction = np.exp(-((a / 0.25) ** 2 + ((b + 0.8 * a) / 0.15) ** 2))
    enum_index = np.minimum((u[:, 3] * 4).astype(int), 3)
    enum = _ENUM_LEVELS[enum_index]
    multimodal = (0.5 + 0.5 * np.cos(6 * np.pi * (u[:, 5] - 0.8))) * _bump(u[:, 5], 0.8, 0.5)
    compression_pays = (u[:, 4] >= 0.5) * _bump(u[:, 5], 0.8, 0.15)
    window = np.where((u[:, 6] >= 0.02) & (u[:, 6] <= 0.12), 1.0, 0.25 + 0.3 * u[:, 6])
    saturating = (1.0 - np.exp(-5.0 * u[:, 7])) / (1.0 - np.exp(-5.0))
    weak = 1.0 - (u[:, 8] - 0.5) ** 2 * 4.0
    terms = [
        plateau,
        interaction,
        enum,
        compression_pays,
        multimodal,
        window,
        saturating,
        weak,
        np.clip(1.0 - np.abs(u[:, 9] - 0.3), 0.0, 1.0),
    ]
    if u.shape[1] >= 30:
        pair = np.exp(
            -(
                ((u[:, 10] - 0.8) / 0.3) ** 2
                + ((u[:, 11] - 0.2 - 0.5 * (u[:, 10] - 0.8)) / 0.2) ** 2
            )
        )
        step = np.where(u[:, 12] > 0.6, 1.0, 0.3)
        valley = 1.0 - np.abs(u[:, 13] - 0.4)
        inert = 1.0 - np.mean((u[:, 14:30] - 0.5) ** 2, axis=1) * 4.0
        terms += [pair, step, valley, inert]
    return np.stack(terms, axis=1)


def response(u: np.ndarray) -> np.ndarray:
    """Relative performance in (0, 1]: 1 at the optimum. ``u`` has shape (n, 10) or (n, 30)."""
    u = np.atleast_2d(np.asarray(u, dtype=float))
    weights = WEIGHTS_30 if u.shape[1] >= 30 else WEIGHTS_10
    return 0.05 + 0.95 * (_terms(u) @ weights) / weights.sum()


def crashes(u: np.ndarray) -> np.ndarray:
    """Which points lie in the crash region (the system would not start)."""
    return np.atleast_2d(u)[:, 0] > _CRASH_ABOVE


def optimum_point(dim: int) -> np.ndarray:
    """The analytic argmax in encoded coordinates (before snapping to representable values)."""
    point = np.full(dim, 0.5)
    point[:10] = [0.7, 0.25, 0.6, 0.625, 0.75, 0.8, 0.07, 1.0, 0.5, 0.3]
    if dim >= 30:
        point[10:14] = [0.8, 0.2, 0.8, 0.4]
    return point
