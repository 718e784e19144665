"""Pairwise labels with a margin for noise: near-ties teach the comparator nothing but noise.

With measurement noise of a few percent, two settings whose measured scores differ by less
than that are a coin toss; labelling the pair anyway trains the comparator on noise. With a
relative ``margin`` > 0, :func:`margin_pairs` skips every ordered pair with
``|s_a - s_b| <= margin * max(|s_a|, |s_b|)`` (scores are larger-is-better; a minimised metric
is negated, so its magnitude is the metric's). ``margin = 0`` is the usual ``ties="skip"``.
``Comparator.fit(..., margin=m)`` trains on those pairs.
"""

from __future__ import annotations

import numpy as np

from classytune.induction import induce, ordered_pairs

__all__ = ["margin_pairs"]


def margin_pairs(
    points: np.ndarray,
    scores: np.ndarray,
    margin: float,
    method: str = "zorder",
    bits: int = 26,
) -> tuple[np.ndarray, np.ndarray]:
    """Induced rows and labels (1 iff ``score[a] > score[b]``) of the ordered pairs whose
    scores differ by more than ``margin`` relative to the larger magnitude (equal scores are
    always skipped)."""
    points = np.asarray(points, dtype=float)
    scores = np.asarray(scores, dtype=float)
    ia, ib = ordered_pairs(len(points))
    gap = np.abs(scores[ia] - scores[ib])
    keep = (gap > 0) & (gap > margin * np.maximum(np.abs(scores[ia]), np.abs(scores[ib])))
    ia, ib = ia[keep], ib[keep]
    rows = induce(points[ia], points[ib], method, bits)
    return rows, (scores[ia] > scores[ib]).astype(np.int64)
