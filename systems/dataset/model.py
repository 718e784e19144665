"""The surrogate model: a random forest on the encoded space, its fidelity, and a fit cache.

* Regression: scikit-learn's ``RandomForestRegressor`` on successful rows, fitted in the
  encoded ``[0, 1]^d`` space (so it sees configurations exactly as tuners do). Random forest
  rather than XGBoost on purpose: ClassyTune's own learner is XGBoost, and a surrogate made of
  the same learner would flatter it.
* Failures: a separate ``RandomForestClassifier`` on all rows (failed vs not), only when the
  data holds at least ``min_failures`` failed rows; otherwise a handful of failures cannot
  outline a failure region and they are left out with a note.
* Noise: out-of-bag residuals of the regressor (each row predicted by the trees that did not
  see it), so a draw reflects how far a real measurement falls from the surrogate.
* Fidelity: ``folds``-fold cross-validation with a seeded shuffle (each fold holds out
  ``1/folds`` of the rows, 25% for 4 folds); R², Kendall τ and top-k recall are computed on
  the pooled held-out predictions, so every row is held out exactly once.

Fitted models are cached twice: on disk in ``cache_dir`` (across processes and runs) and in this
process's memory (:data:`_FITTED`), so building the same surrogate again — a benchmark worker's
next session — neither refits nor unpickles. Both caches are keyed by :func:`cache_key`.

Prediction bypasses scikit-learn's joblib dispatch and sums the trees directly, which turns a
one-row prediction from ~4 ms into ~0.3 ms for 100 trees.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import pickle
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import sklearn
from scipy.stats import kendalltau
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import balanced_accuracy_score, r2_score
from sklearn.model_selection import KFold, StratifiedKFold

__all__ = [
    "Fidelity",
    "ModelSettings",
    "SurrogateModel",
    "cache_key",
    "clear_memory_cache",
    "cross_validate",
    "fidelity_scores",
    "load_or_fit",
]

log = logging.getLogger(__name__)

_CACHE_VERSION = 1
Direction = Literal["max", "min"]

#: Models fitted or loaded by this process, by :func:`cache_key`. A model is never changed
#: after its fit (predictions only read it), so sessions can share one.
_FITTED: dict[str, SurrogateModel] = {}
#: Cache files this process could not write (warned once, not at every build).
_UNWRITABLE: set[Path] = set()


@dataclass(frozen=True)
class ModelSettings:
    """Hyper-parameters of the surrogate and of its fidelity check (all part of the cache key)."""

    n_estimators: int = 100
    min_samples_leaf: int = 2
    max_features: float = 1.0
    max_samples: float | None = None
    seed: int = 0
    folds: int = 4
    top_fraction: float = 0.1
    min_failures: int = 3

    def forest_kwargs(self) -> dict[str, Any]:
        return {
            "n_estimators": self.n_estimators,
            "min_samples_leaf": self.min_samples_leaf,
            "max_features": self.max_features,
            "max_samples": self.max_samples,
            "random_state": self.seed,
        }


@dataclass(frozen=True)
class Fidelity:
    """How well the surrogate predicts held-out rows (see the module docstring)."""

    r2: float
    tau: float
    topk_recall: float
    rows: int  # successful rows the regressor was checked on
    top_k: int  # size of the "true top" set (top_fraction of rows)
    folds: int
    failures: int = 0  # failed rows in the data
    failure_balanced_accuracy: float | None = None  # of the failure classifier, if fitted

    def problems(self, r2_warn: float = 0.5, tau_warn: float = 0.4) -> list[str]:
        """Human-readable reasons why predictions should not be trusted (empty if fine)."""
        found = []
        if not self.r2 >= r2_warn:
            found.append(f"R²={self.r2:.2f} < {r2_warn}")
        if not self.tau >= tau_warn:
            found.append(f"Kendall τ={self.tau:.2f} < {tau_warn}")
        return found

    def summary(self) -> str:
        text = (
            f"R²={self.r2:.2f} τ={self.tau:.2f} top-{self.top_k} recall="
            f"{self.topk_recall:.2f} on {self.rows} held-out rows ({self.folds}-fold)"
        )
        if self.failure_balanced_accuracy is not None:
            text += f"; failure model balanced accuracy={self.failure_balanced_accuracy:.2f}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def fidelity_scores(
    y_true: np.ndarray, y_pred: np.ndarray, direction: Direction, top_fraction: float = 0.1
) -> tuple[float, float, float, int]:
    """(R², Kendall τ, top-k recall, k) of predictions against truth.

    Top-k recall: of the ``k = ceil(top_fraction * n)`` truly best rows (largest for max,
    smallest for min), the fraction that are also among the k best predicted rows.
    """
    y_true = np.asarray(y_true, dtype=float)
    y_pred = np.asarray(y_pred, dtype=float)
    if y_true.shape != y_pred.shape or len(y_true) < 2:
        raise ValueError("need two equally long arrays of at least 2 values")
    r2 = float(r2_score(y_true, y_pred))
    tau_value = kendalltau(y_true, y_pred).statistic
    tau = float(tau_value) if np.isfinite(tau_value) else 0.0  # constant predictions: no rank
    k = max(1, math.ceil(top_fraction * len(y_true)))
    sign = -1.0 if direction == "max" else 1.0
    true_top = set(np.argsort(sign * y_true, kind="stable")[:k].tolist())
    pred_top = set(np.argsort(sign * y_pred, kind="stable")[:k].tolist())
    return r2, tau, len(true_top & pred_top) / k, k


def _regressor(settings: ModelSettings, oob: bool = False) -> RandomForestRegressor:
    return RandomForestRegressor(**settings.forest_kwargs(), oob_score=oob, n_jobs=1)


def _classifier(settings: ModelSettings) -> RandomForestClassifier:
    return RandomForestClassifier(**settings.forest_kwargs(), class_weight="balanced", n_jobs=1)


def cross_validate(
    points: np.ndarray,
    values: np.ndarray,
    failed: np.ndarray,
    direction: Direction,
    settings: ModelSettings,
) -> Fidelity:
    """Fidelity of the surrogate's learners by seeded ``settings.folds``-fold CV."""
    ok = ~failed
    x, y = points[ok], values[ok]
    pred = np.empty_like(y)
    splitter = KFold(settings.folds, shuffle=True, random_state=settings.seed)
    for train, test in splitter.split(x):
        pred[test] = _regressor(settings).fit(x[train], y[train]).predict(x[test])
    r2, tau, recall, k = fidelity_scores(y, pred, direction, settings.top_fraction)
    n_fail = int(failed.sum())
    balanced = None
    if n_fail >= max(settings.min_failures, settings.folds) and ok.sum() >= settings.folds:
        labels = np.zeros(len(failed), dtype=int)
        strat = StratifiedKFold(settings.folds, shuffle=True, random_state=settings.seed)
        for train, test in strat.split(points, failed):
            clf = _classifier(settings).fit(points[train], failed[train])
            labels[test] = clf.predict(points[test])
        balanced = float(balanced_accuracy_score(failed, labels.astype(bool)))
    return Fidelity(
        r2=r2,
        tau=tau,
        topk_recall=recall,
        rows=len(y),
        top_k=k,
        folds=settings.folds,
        failures=n_fail,
        failure_balanced_accuracy=balanced,
    )


class SurrogateModel:
    """Fitted regressor (+ optional failure classifier), OOB residuals and fidelity."""

    def __init__(
        self,
        regressor: RandomForestRegressor,
        classifier: RandomForestClassifier | None,
        residuals: np.ndarray,
        fidelity: Fidelity,
        value_range: tuple[float, float],
    ) -> None:
        self.regressor = regressor
        self.classifier = classifier
        self.residuals = residuals
        self.fidelity = fidelity
        self.value_range = value_range
        self._fail_class = (
            int(np.flatnonzero(classifier.classes_ == 1)[0]) if classifier is not None else -1
        )

    @classmethod
    def fit(
        cls,
        points: np.ndarray,
        values: np.ndarray,
        failed: np.ndarray,
        direction: Direction,
        settings: ModelSettings,
    ) -> SurrogateModel:
        fidelity = cross_validate(points, values, failed, direction, settings)
        ok = ~failed
        regressor = _regressor(settings, oob=True).fit(points[ok], values[ok])
        oob = np.asarray(regressor.oob_prediction_, dtype=float)
        residuals = values[ok] - oob
        residuals = residuals[np.isfinite(residuals)]  # rows no tree left out (tiny forests)
        classifier = None
        if int(failed.sum()) >= settings.min_failures:
            classifier = _classifier(settings).fit(points, failed.astype(int))
        elif failed.any():
            log.info(
                "only %d failed row(s): too few to learn a failure region; the surrogate "
                "never fails",
                int(failed.sum()),
            )
        y = values[ok]
        return cls(regressor, classifier, residuals, fidelity, (float(y.min()), float(y.max())))

    @staticmethod
    def _as_input(points: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.atleast_2d(points), dtype=np.float32)

    def predict(self, points: np.ndarray) -> np.ndarray:
        """Mean of the trees' predictions (same as ``regressor.predict``, without joblib)."""
        x = self._as_input(points)
        total = np.zeros(len(x))
        for tree in self.regressor.estimators_:
            total += tree.tree_.predict(x).reshape(len(x), -1)[:, 0]
        return total / len(self.regressor.estimators_)

    def failure_probability(self, points: np.ndarray) -> np.ndarray:
        """Probability that a configuration fails (zeros if no failure model was fitted)."""
        x = self._as_input(points)
        if self.classifier is None:
            return np.zeros(len(x))
        total = np.zeros(len(x))
        for tree in self.classifier.estimators_:
            proba = tree.tree_.predict(x).reshape(len(x), -1)  # (n, classes), one output
            total += proba[:, self._fail_class] / np.maximum(proba.sum(axis=1), 1e-12)
        return total / len(self.classifier.estimators_)


def cache_key(
    points: np.ndarray,
    values: np.ndarray,
    failed: np.ndarray,
    direction: str,
    settings: ModelSettings,
) -> str:
    """Digest of everything a fit depends on (data as typed, settings, library versions)."""
    digest = hashlib.sha256()
    for array in (points, values, failed):
        digest.update(np.ascontiguousarray(array).tobytes())
    meta = {
        "direction": direction,
        "settings": asdict(settings),
        "v": _CACHE_VERSION,
        "sklearn": sklearn.__version__,
        "numpy": np.__version__,
    }
    digest.update(json.dumps(meta, sort_keys=True).encode())
    return digest.hexdigest()[:24]


def load_or_fit(
    points: np.ndarray,
    values: np.ndarray,
    failed: np.ndarray,
    direction: Direction,
    settings: ModelSettings,
    cache_dir: str | Path | None,
) -> tuple[SurrogateModel, str]:
    """The fitted model for this data and settings: from this process's memory, else from
    ``cache_dir``, else fitted now (and then kept in both)."""
    key = cache_key(points, values, failed, direction, settings)
    path = Path(cache_dir) / f"surrogate-{key}.pkl" if cache_dir else None
    model = _FITTED.get(key)
    if model is None and path is not None and path.exists():
        model = _load(path)
    if model is None:
        model = SurrogateModel.fit(points, values, failed, direction, settings)
    _FITTED[key] = model
    if path is not None and path not in _UNWRITABLE and not path.exists():
        _save(model, path)
    return model, key


def clear_memory_cache() -> None:
    """Forget the models this process holds (the disk cache stays)."""
    _FITTED.clear()


def _load(path: Path) -> SurrogateModel | None:
    try:
        with path.open("rb") as fh:
            model = pickle.load(fh)
        if isinstance(model, SurrogateModel):
            log.debug("loaded fitted surrogate from %s", path)
            return model
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError) as exc:
        log.warning("ignoring unreadable surrogate cache %s: %s", path, exc)
    return None


def _save(model: SurrogateModel, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so parallel sessions never read a half-written file.
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as out:
            pickle.dump(model, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(out.name, path)
    except OSError as exc:
        _UNWRITABLE.add(path)
        log.warning("cannot cache the fitted surrogate in %s: %s", path.parent, exc)
