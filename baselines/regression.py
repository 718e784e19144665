"""Regression-model tuners (CART, boosted trees, SVR, random forest) and the max relative
prediction error that the ClassyTune paper plots in Fig. 2.

A regression tuner models performance directly: after the default, it measures an initial
Latin-hypercube sample of ``n_initial`` settings, fits a scikit-learn regressor on every test
so far (points in the encoded [0, 1]^d; failed tests take the imputed score of
:meth:`harness.tuner.Tuner.scores`), predicts a fresh LHS candidate set of ``n_candidates``
settings, and measures the ``batch`` settings predicted best (not yet measured, no repeats in a
round). It refits on all samples before every round until the budget is spent. Unlike
ClassyTune it trusts the predicted *values*; the paper argues those are too imprecise
(max relative error up to ~2x) to rank settings near the optimum.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from harness.space import Space
from harness.tuner import Tuner

__all__ = [
    "MODELS",
    "RegressionTuner",
    "holdout_max_relative_error",
    "make_model",
    "max_relative_error",
]

log = logging.getLogger(__name__)

MODELS = ("cart", "gbrt", "svr", "rfr")


def make_model(model: str, seed: int = 0) -> Any:
    """A fresh scikit-learn regressor by short name (library defaults, seeded)."""
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR
    from sklearn.tree import DecisionTreeRegressor

    if model == "cart":
        return DecisionTreeRegressor(random_state=seed)
    if model == "gbrt":
        return GradientBoostingRegressor(random_state=seed)
    if model == "rfr":
        return RandomForestRegressor(n_estimators=100, random_state=seed, n_jobs=1)
    if model == "svr":
        # SVR's epsilon and RBF width assume unit-scale data: inputs are in [0, 1] already;
        # targets are standardised (see _ScaledTarget).
        return _ScaledTarget(make_pipeline(StandardScaler(), SVR(C=10.0)))
    raise ValueError(f"unknown regression model {model!r}; choose one of {', '.join(MODELS)}")


class _ScaledTarget:
    """Fit a regressor on standardised targets and predict in the original scale."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.mean, self.std = 0.0, 1.0

    def fit(self, x: np.ndarray, y: np.ndarray) -> _ScaledTarget:
        self.mean, self.std = float(np.mean(y)), float(np.std(y)) or 1.0
        self.inner.fit(x, (y - self.mean) / self.std)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.inner.predict(x)) * self.std + self.mean


def max_relative_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """``max_i |y_i - ŷ_i| / |y_i|`` (Fig. 2); raises if a true value is zero."""
    y_true, y_pred = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    if y_true.shape != y_pred.shape or y_true.size == 0:
        raise ValueError(f"need equal non-empty shapes, got {y_true.shape} and {y_pred.shape}")
    if np.any(y_true == 0):
        raise ValueError("max relative error is undefined where the true value is 0")
    return float(np.max(np.abs(y_true - y_pred) / np.abs(y_true)))


def holdout_max_relative_error(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    seed: int = 0,
) -> float:
    """Fit ``model`` on the training samples and return its max relative error on held-out
    samples (points in [0, 1]^d, e.g. ``space.encode_many(configs)``; raw metric values)."""
    regressor = make_model(model, seed).fit(np.asarray(x_train), np.asarray(y_train))
    return max_relative_error(np.asarray(y_test), regressor.predict(np.asarray(x_test)))


class RegressionTuner(Tuner):
    """Initial LHS, then rounds of the best predicted settings, refitting every round."""

    name = "regression"

    @classmethod
    def configured_name(cls, **options: Any) -> str:
        return str(options.get("model", "rfr"))  # gbrt, rfr, svr, cart: one class, four tuners

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        budget: int = 100,
        model: str = "rfr",
        n_initial: int = 50,
        batch: int = 10,
        n_candidates: int = 5000,
    ) -> None:
        super().__init__(space, seed, budget)
        if model not in MODELS:
            raise ValueError(
                f"unknown regression model {model!r}; choose one of {', '.join(MODELS)}"
            )
        self.model, self.name = model, self.configured_name(model=model)
        self.n_initial = max(int(n_initial), 1)
        self.batch, self.n_candidates = max(int(batch), 1), max(int(n_candidates), 1)
        self._design = self.lhs(min(self.n_initial, max(budget - 1, 1)))
        self._handed = 0
        self.fit_count = 0
        self.preferred_batch = min(len(self._design) + 1, budget)

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "model": self.model,
            "n_initial": self.n_initial,
            "batch": self.batch,
            "n_candidates": self.n_candidates,
        }

    def _propose(self, n: int) -> np.ndarray:
        if self._handed < len(self._design):
            points = self._design[self._handed : self._handed + n]
            self._handed += len(points)
            if self._handed == len(self._design):
                self.preferred_batch = self.batch
            return points
        if not self.history:  # asked again before anything was told: keep sampling
            return self.lhs(min(n, self.batch))
        return self._predicted_best(min(n, self.batch))

    def _predicted_best(self, n: int) -> np.ndarray:
        x, y = self.points(), self.scores()
        regressor = make_model(self.model, int(self.rng.integers(2**31 - 1))).fit(x, y)
        self.fit_count += 1
        candidates = self.space.snap(self.lhs(self.n_candidates))
        predicted = regressor.predict(candidates)
        measured = {tuple(p) for p in np.round(x, 12)}
        chosen: list[np.ndarray] = []
        for i in np.argsort(-predicted, kind="stable"):
            key = tuple(np.round(candidates[i], 12))
            if key in measured:
                continue
            measured.add(key)
            chosen.append(candidates[i])
            if len(chosen) == n:
                break
        log.debug(
            "%s round %d: best predicted %.4g", self.model, self.fit_count, float(predicted.max())
        )
        if not chosen:  # every candidate measured already (a tiny space): test again, by LHS
            return self.lhs(n)
        return np.array(chosen).reshape(-1, self.space.dim)
