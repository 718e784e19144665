"""Pairwise labels with a margin for noise: near-ties teach the comparator nothing but noise.

With measurement noise of a few percent, two settings whose measured scores differ by less
than that are a coin toss; labelling the pair anyway trains the comparator on noise. With a
relative ``margin`` > 0, :func:`margin_pairs` skips every ordered pair with
``|s_a - s_b| <= margin * max(|s_a|, |s_b|)`` (scores are larger-is-better; a minimised metric
is negated, so its magnitude is the metric's). ``margin = 0`` is the usual ``ties="skip"``.
:func:`fit_with_margin` is :meth:`classytune.comparator.Comparator.fit` with those pairs.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from classytune.comparator import Comparator
from classytune.induction import induce, ordered_pairs
from classytune.rules import rule_pairs

__all__ = ["fit_with_margin", "margin_pairs"]


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


def fit_with_margin(
    comparator: Comparator,
    points: np.ndarray,
    scores: np.ndarray,
    rng: np.random.Generator,
    margin: float,
) -> tuple[Any, dict[str, Any]]:
    """:meth:`Comparator.fit` on :func:`margin_pairs`: same pair cap, rules and random
    sequence (pair subset, rule settings, classifier seed), so ``margin = 0`` with
    ``ties="skip"`` fits the same model."""
    started = time.perf_counter()
    rows, labels = margin_pairs(points, scores, margin, comparator.induction, comparator.bits)
    if comparator.max_pairs is not None and len(labels) > comparator.max_pairs:
        keep = np.sort(rng.choice(len(labels), comparator.max_pairs, replace=False))
        rows, labels = rows[keep], labels[keep]
    n_rule_rows = 0
    if comparator.rules:
        xa, xb, rule_labels = rule_pairs(
            comparator.rules, comparator.space, comparator.rule_samples, rng
        )
        n_rule_rows = len(rule_labels)
        rows = np.vstack([rows, induce(xa, xb, comparator.induction, comparator.bits)])
        labels = np.concatenate([labels, rule_labels])
    info: dict[str, Any] = {
        "n_samples": len(points),
        "n_pairs": len(labels) - n_rule_rows,
        "n_rule_rows": n_rule_rows,
    }
    if len(np.unique(labels)) < 2:
        info["train_s"] = time.perf_counter() - started
        return None, info
    model = comparator.factory(seed=int(rng.integers(2**31 - 1)))
    model.fit(rows, labels)
    info["train_s"] = time.perf_counter() - started
    return model, info
