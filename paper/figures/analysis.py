"""Offline studies over LHS sample pools (Fig. 2, Fig. 5, Fig. 9(a)): DataFrame in, tidy
DataFrame out.

A pool is the ``samples.csv`` rows of one session (columns ``config.<knob>``, ``score``,
``status``) plus ``system``, ``system_kind`` and ``seed``. Configurations are normalised to
[0, 1] per knob over the pool (min-max for numbers, category rank for enums and booleans);
LHS pools span each knob's range, so this matches the tuner's encoding up to log scales.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["encode_pool", "error_vs_samples", "regression_errors", "winners_recognised"]

log = logging.getLogger(__name__)


def encode_pool(pool: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(points in [0,1]^d, scores) of the successful samples of one pool, in trial order."""
    ok = pool[pool["status"] == "SUCCEEDED"].sort_values("trial")
    cols = [c for c in ok.columns if c.startswith("config.")]
    parts = []
    for col in cols:
        values = ok[col]
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all() and values.dtype != bool:
            lo, hi = float(numeric.min()), float(numeric.max())
            parts.append(((numeric - lo) / (hi - lo) if hi > lo else numeric * 0.0).to_numpy())
        else:
            codes = values.astype(str).astype("category").cat.codes.to_numpy(dtype=float)
            top = codes.max()
            parts.append(codes / top if top > 0 else codes)
    points = np.column_stack(parts).astype(float)
    return points, ok["score"].to_numpy(dtype=float)


def _pools(pools: pd.DataFrame) -> list[tuple[str, str, int, pd.DataFrame]]:
    return [
        (str(sysname), str(g["system_kind"].iloc[0]), int(seed), g)
        for (sysname, seed), g in pools.groupby(["system", "seed"], sort=True)
    ]


def winners_recognised(
    pools: pd.DataFrame,
    classifiers: Sequence[str] = ("xgboost",),
    inductions: Sequence[str] = ("zorder",),
    n_train: int = 50,
    n_winners: int = 20,
    regressor: bool = False,
) -> pd.DataFrame:
    """Share of held-out winners each (classifier, induction) recognises (Fig. 5, Fig. 9(a)).

    Per pool: the first ``n_train`` successful samples train the model; the pivot is their
    best; winners are the first ``n_winners`` later samples scoring above it. A classifier
    recognises a winner when it predicts "winner beats pivot"; with ``regressor`` a decision
    tree regressor on the same samples recognises it when it predicts a value above the
    pivot's measured score (the paper's regression contrast).
    """
    from classytune.classifiers import make_classifier, predict_better
    from classytune.induction import induce_against, induce_all_pairs

    rows = []
    for system, kind, seed, pool in _pools(pools):
        points, scores = encode_pool(pool)
        xt, yt = points[:n_train], scores[:n_train]
        pivot = int(np.argmax(yt))
        later = np.nonzero(scores[n_train:] > yt[pivot])[0][:n_winners] + n_train
        if len(later) == 0:
            log.warning("%s seed %d: no held-out winner; skipped", system, seed)
            continue
        base = {"system": system, "system_kind": kind, "seed": seed, "winners": len(later)}
        for induction in inductions:
            x, y = induce_all_pairs(xt, yt, induction)
            for name in classifiers:
                model = make_classifier(name, seed).fit(x, y)
                hits = predict_better(model, induce_against(points[later], xt[pivot], induction))
                rows.append(
                    {
                        **base,
                        "model": name,
                        "induction": induction,
                        "found": int(hits.sum()),
                        "share": float(hits.mean()),
                    }
                )
        if regressor:
            from sklearn.tree import DecisionTreeRegressor

            tree = DecisionTreeRegressor(random_state=seed).fit(xt, yt)
            hits = tree.predict(points[later]) > yt[pivot]
            rows.append(
                {
                    **base,
                    "model": "dt_regressor",
                    "induction": "none",
                    "found": int(hits.sum()),
                    "share": float(hits.mean()),
                }
            )
    return pd.DataFrame(rows)


def regression_errors(
    pools: pd.DataFrame, models: Sequence[str] = ("cart", "gbrt", "svr", "rfr"), n_train: int = 100
) -> pd.DataFrame:
    """Max relative error on the held-out samples of models trained on ``n_train`` (Fig. 2a)."""
    from baselines.regression import holdout_max_relative_error

    rows = []
    for system, kind, seed, pool in _pools(pools):
        points, scores = encode_pool(pool)
        keep = scores != 0
        points, scores = points[keep], scores[keep]
        for model in models:
            err = holdout_max_relative_error(
                model, points[:n_train], scores[:n_train], points[n_train:], scores[n_train:], seed
            )
            rows.append(
                {
                    "system": system,
                    "system_kind": kind,
                    "seed": seed,
                    "model": model,
                    "n_train": n_train,
                    "max_rel_error": err,
                }
            )
    return pd.DataFrame(rows)


def error_vs_samples(
    pools: pd.DataFrame,
    sizes: Sequence[int] = (25, 50, 100, 200, 400),
    model: str = "rfr",
    n_test: int = 200,
) -> pd.DataFrame:
    """Max relative error as the training set grows (Fig. 2b); the last ``n_test`` samples of
    each pool are the fixed test set."""
    from baselines.regression import holdout_max_relative_error

    rows = []
    for system, kind, seed, pool in _pools(pools):
        points, scores = encode_pool(pool)
        keep = scores != 0
        points, scores = points[keep], scores[keep]
        xs, ys = points[-n_test:], scores[-n_test:]
        for n in sizes:
            if n > len(scores) - n_test:
                continue
            err = holdout_max_relative_error(model, points[:n], scores[:n], xs, ys, seed)
            rows.append(
                {
                    "system": system,
                    "system_kind": kind,
                    "seed": seed,
                    "model": model,
                    "n_train": n,
                    "max_rel_error": err,
                }
            )
    return pd.DataFrame(rows)
