"""Comparator classifiers, chosen by name (Fig. 5 of the paper compares them).

As in the paper, no hyper-parameter search: each has fixed, sensible defaults, and the seed is
passed to every one that draws random numbers. Any default can be overridden with keyword
arguments (``classifier_options`` of the tuner).

* ``xgboost`` (default): ``xgboost.XGBClassifier`` with 200 trees of depth 3 (learning rate
  0.3), histogram method, ``n_jobs=1``. Shallow trees were chosen over XGBoost's depth 6 on the
  synthetic systems (50-100 LHS samples, 10 and 30 knobs, 4 seeds): the correlation of the
  predicted win probability against the pivot with the true response rose from 0.15-0.29 to
  0.23-0.45, and the share of true winners among predicted ones from 2-4% to 6-8%.
  One thread: on this shared 2-core machine two OpenMP threads made a 1 s fit take 5-20 s
  whenever other jobs held the cores (oversubscription); one thread is predictable.
* ``decision_tree``, ``random_forest`` (100 trees), ``logistic`` (logistic regression),
  ``svm`` (RBF SVC; its training is quadratic in the ~10^4 rows, so it is the slowest by far),
  ``mlp`` (two hidden layers of 64, early stopping): scikit-learn. ``logistic``, ``svm`` and
  ``mlp`` are wrapped in a pipeline with feature standardisation, which they need.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "CLASSIFIERS",
    "feature_importances",
    "make_classifier",
    "predict_better",
    "win_score",
]

CLASSIFIERS = ("xgboost", "decision_tree", "logistic", "svm", "mlp", "random_forest")


def make_classifier(name: str = "xgboost", seed: int = 0, **options: Any) -> Any:
    """A fresh, unfitted classifier with the project's defaults (``options`` override them)."""
    seed = int(seed) % (2**31 - 1)
    if name == "xgboost":
        from xgboost import XGBClassifier

        params: dict[str, Any] = dict(
            n_estimators=200,
            max_depth=3,
            learning_rate=0.3,
            tree_method="hist",
            n_jobs=1,
            random_state=seed,
            verbosity=0,
        )
        return XGBClassifier(**{**params, **options})
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if name == "decision_tree":
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(**{"random_state": seed, **options})
    if name == "random_forest":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(
            **{"n_estimators": 100, "n_jobs": 1, "random_state": seed, **options}
        )
    if name == "logistic":
        from sklearn.linear_model import LogisticRegression

        return make_pipeline(StandardScaler(), LogisticRegression(**{"max_iter": 1000, **options}))
    if name == "svm":
        from sklearn.svm import SVC

        return make_pipeline(StandardScaler(), SVC(**{"random_state": seed, **options}))
    if name == "mlp":
        from sklearn.neural_network import MLPClassifier

        return make_pipeline(
            StandardScaler(),
            MLPClassifier(
                **{
                    "hidden_layer_sizes": (64, 64),
                    "early_stopping": True,
                    "max_iter": 300,
                    "random_state": seed,
                    **options,
                }
            ),
        )
    raise ValueError(f"unknown classifier {name!r}; choose one of {', '.join(CLASSIFIERS)}")


def predict_better(model: Any, rows: np.ndarray) -> np.ndarray:
    """Boolean "the first setting of the pair wins" for each induced row."""
    if len(rows) == 0:
        return np.zeros(0, dtype=bool)
    return np.asarray(model.predict(rows)).astype(int) == 1


def win_score(model: Any, rows: np.ndarray) -> np.ndarray:
    """A score that grows with the model's confidence that the first setting wins: the class-1
    probability, or the decision function for models without probabilities (SVC)."""
    if len(rows) == 0:
        return np.zeros(0)
    if hasattr(model, "predict_proba"):
        try:
            return np.asarray(model.predict_proba(rows))[:, 1]
        except AttributeError:  # e.g. SVC(probability=False) inside a pipeline
            pass
    return np.asarray(model.decision_function(rows), dtype=float)


def feature_importances(model: Any) -> np.ndarray | None:
    """Per-column importances when the model exposes them (trees: gain/impurity; logistic:
    absolute standardised coefficients, normalised to sum 1); ``None`` for SVM and MLP."""
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    values = getattr(final, "feature_importances_", None)
    if values is None and hasattr(final, "coef_"):
        values = np.abs(np.asarray(final.coef_)).ravel()
    if values is None:
        return None
    values = np.asarray(values, dtype=float)
    total = values.sum()
    return values / total if total > 0 else values
