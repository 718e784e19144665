"""A failure model for the ranked mode: P(the test fails) from the measured points.

Failed, crashed, timed-out and infeasible tests already lose every comparison (they are
imputed below the worst success, :meth:`harness.tuner.Tuner.scores`), but the comparator
learns "worse", not "crashes": a candidate next to a crash can still rank high when it beats
the elites in the other knobs. The failure model states the risk on its own, and the ranked
search weights each candidate's win probability by ``1 - P(fail)``.

* ``knn``: the share of failed tests among the ``k`` nearest measured points (Euclidean in
  [0, 1]^d); simple and hand-checkable, but blurred in high dimension when the crash depends
  on one knob.
* ``forest``: a small random forest on (point → failed), which finds axis-aligned crash
  regions such as "buffer pool above 93 % of its range" from a few failures.

Both give 0 everywhere until a failure has been measured, so they cost nothing before.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FAILURE_MODELS", "failure_probability", "forest_failure", "knn_failure"]

FAILURE_MODELS = ("off", "knn", "forest")


def knn_failure(
    candidates: np.ndarray, points: np.ndarray, failed: np.ndarray, k: int
) -> np.ndarray:
    """Share of failed points among each candidate's ``k`` nearest measured points."""
    candidates = np.atleast_2d(np.asarray(candidates, dtype=float))
    failed = np.asarray(failed, dtype=bool)
    k = max(1, min(int(k), len(failed)))
    if not len(failed) or not failed.any():
        return np.zeros(len(candidates))
    # Squared distances by expansion: an (N, n) matrix, cheap for 10^4 x 10^2.
    pts = np.asarray(points, dtype=float)
    d2 = (
        np.sum(candidates**2, axis=1)[:, None]
        - 2.0 * candidates @ pts.T
        + np.sum(pts**2, axis=1)[None, :]
    )
    nearest = np.argpartition(d2, k - 1, axis=1)[:, :k]
    return failed[nearest].mean(axis=1)


def forest_failure(
    candidates: np.ndarray, points: np.ndarray, failed: np.ndarray, seed: int
) -> np.ndarray:
    """P(failed) of each candidate from a 50-tree random forest on the measured points."""
    from sklearn.ensemble import RandomForestClassifier

    failed = np.asarray(failed, dtype=bool)
    candidates = np.atleast_2d(np.asarray(candidates, dtype=float))
    if failed.all():
        return np.ones(len(candidates))
    if not failed.any():
        return np.zeros(len(candidates))
    forest = RandomForestClassifier(n_estimators=50, n_jobs=1, random_state=seed)
    forest.fit(np.asarray(points, dtype=float), failed.astype(int))
    classes = list(forest.classes_)
    return np.asarray(forest.predict_proba(candidates))[:, classes.index(1)]


def failure_probability(
    method: str,
    candidates: np.ndarray,
    points: np.ndarray,
    failed: np.ndarray,
    rng: np.random.Generator,
    k: int = 5,
) -> np.ndarray:
    """P(failed) per candidate by ``method`` (``off``: zeros). Draws from ``rng`` only when
    the forest is trained, so a session without failures keeps its random sequence."""
    if method not in FAILURE_MODELS:
        raise ValueError(f"failure_model must be one of {FAILURE_MODELS}, got {method!r}")
    failed = np.asarray(failed, dtype=bool)
    if method == "off" or not failed.any():
        return np.zeros(len(np.atleast_2d(candidates)))
    if method == "knn":
        return knn_failure(candidates, points, failed, k)
    return forest_failure(candidates, points, failed, int(rng.integers(2**31 - 1)))
