"""Comparator classifiers: one small factory per classifier (Fig. 5 of the paper compares them).

A tuner gets its classifier as a *factory* ``(seed) -> unfitted classifier``, normally built by
Hydra from a config node::

    classifier:
      _target_: classytune.classifiers.xgboost
      _partial_: true
      n_estimators: 100       # any keyword overrides the factory's default

so ``tuner.classifier._target_=classytune.classifiers.random_forest`` (options kept) or
``tuner.classifier.n_estimators=50`` work from the command line, and so does the short form
``tuner.classifier=decision_tree``: a name from :data:`CLASSIFIERS` stands for that factory
with its defaults (:func:`resolve`).

As in the paper, no hyper-parameter search: each factory has fixed, sensible defaults, and the
seed is passed to every classifier that draws random numbers.

* :func:`xgboost` (default): ``xgboost.XGBClassifier`` with 200 trees of depth 3 (learning rate
  0.3), histogram method, ``n_jobs=1``. Shallow trees were chosen over XGBoost's depth 6 on the
  synthetic systems (50-100 LHS samples, 10 and 30 knobs, 4 seeds): the correlation of the
  predicted win probability against the pivot with the true response rose from 0.15-0.29 to
  0.23-0.45, and the share of true winners among predicted ones from 2-4% to 6-8%.
  One thread: on this shared 2-core machine two OpenMP threads made a 1 s fit take 5-20 s
  whenever other jobs held the cores (oversubscription); one thread is predictable.
* :func:`decision_tree`, :func:`random_forest` (100 trees), :func:`logistic` (logistic
  regression), :func:`svm` (RBF SVC; its training is quadratic in the ~10^4 rows, so it is the
  slowest by far), :func:`mlp` (two hidden layers of 64, early stopping): scikit-learn.
  ``logistic``, ``svm`` and ``mlp`` are wrapped in a pipeline with feature standardisation,
  which they need.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

__all__ = [
    "CLASSIFIERS",
    "FACTORIES",
    "ClassifierFactory",
    "decision_tree",
    "describe",
    "feature_importances",
    "logistic",
    "make_classifier",
    "mlp",
    "predict_better",
    "random_forest",
    "resolve",
    "svm",
    "win_score",
    "xgboost",
]


class ClassifierFactory(Protocol):
    """``factory(seed=...)`` returns a fresh, unfitted classifier with ``fit``/``predict``
    (and ``predict_proba`` or ``decision_function``); the same seed gives the same model."""

    def __call__(self, seed: int = ...) -> Any: ...


def _seed(seed: int) -> int:
    return int(seed) % (2**31 - 1)


def xgboost(seed: int = 0, **options: Any) -> Any:
    """``XGBClassifier``: 200 trees of depth 3, learning rate 0.3, hist, one thread."""
    from xgboost import XGBClassifier

    params: dict[str, Any] = dict(
        n_estimators=200,
        max_depth=3,
        learning_rate=0.3,
        tree_method="hist",
        n_jobs=1,
        random_state=_seed(seed),
        verbosity=0,
    )
    return XGBClassifier(**{**params, **options})


def decision_tree(seed: int = 0, **options: Any) -> Any:
    """scikit-learn's ``DecisionTreeClassifier`` with its defaults."""
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(**{"random_state": _seed(seed), **options})


def random_forest(seed: int = 0, **options: Any) -> Any:
    """``RandomForestClassifier`` with 100 trees, one thread."""
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(
        **{"n_estimators": 100, "n_jobs": 1, "random_state": _seed(seed), **options}
    )


def logistic(seed: int = 0, **options: Any) -> Any:
    """Standardisation + ``LogisticRegression(max_iter=1000)`` (deterministic: no seed)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(**{"max_iter": 1000, **options}))


def svm(seed: int = 0, **options: Any) -> Any:
    """Standardisation + RBF ``SVC`` (no probabilities: ranked by its decision function)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    return make_pipeline(StandardScaler(), SVC(**{"random_state": _seed(seed), **options}))


def mlp(seed: int = 0, **options: Any) -> Any:
    """Standardisation + ``MLPClassifier``: two hidden layers of 64, early stopping."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    defaults: dict[str, Any] = {
        "hidden_layer_sizes": (64, 64),
        "early_stopping": True,
        "max_iter": 300,
        "random_state": _seed(seed),
    }
    return make_pipeline(StandardScaler(), MLPClassifier(**{**defaults, **options}))


#: The factories by short name (the names Fig. 5 and the command line's short form use).
FACTORIES: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (xgboost, decision_tree, logistic, svm, mlp, random_forest)
}
CLASSIFIERS: tuple[str, ...] = tuple(FACTORIES)


def make_classifier(name: str = "xgboost", seed: int = 0, **options: Any) -> Any:
    """A fresh, unfitted classifier by short name (``options`` override its defaults)."""
    return resolve(name)(seed=seed, **options)


def resolve(classifier: str | ClassifierFactory) -> ClassifierFactory:
    """The factory for a short name from :data:`CLASSIFIERS`, or ``classifier`` itself if it
    is one already (ValueError for an unknown name or a classifier that is not a factory)."""
    if isinstance(classifier, str):
        try:
            return FACTORIES[classifier]
        except KeyError:
            raise ValueError(
                f"unknown classifier {classifier!r}; choose one of {', '.join(CLASSIFIERS)} "
                "or a factory node (_target_: classytune.classifiers.<name>, "
                "_partial_: true)"
            ) from None
    if not callable(classifier) or hasattr(classifier, "fit"):
        raise ValueError(
            f"classifier must be a factory (seed) -> model, got {type(classifier).__name__}; "
            "a config node needs _partial_: true"
        )
    return classifier


def describe(factory: ClassifierFactory) -> tuple[str, dict[str, Any]]:
    """A factory's name (short for ours, ``module.name`` otherwise) and its bound options,
    for ``params()`` and the saved settings."""
    options: dict[str, Any] = {}
    func: Any = factory
    while isinstance(func, functools.partial):
        options = {**func.keywords, **options}
        func = func.func
    name = getattr(func, "__name__", type(func).__name__)
    if FACTORIES.get(name) is not func:
        name = f"{getattr(func, '__module__', '?')}.{name}"
    return name, options


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
