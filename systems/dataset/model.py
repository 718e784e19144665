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

A fitted model is its trees: :class:`SurrogateModel` keeps scikit-learn's low-level ``Tree``
objects and sums their predictions directly (no joblib dispatch: a one-row prediction takes
~0.3 ms for 100 trees instead of ~4 ms).

Fitted models are cached twice: in this process's memory (:data:`_FITTED`) and on disk in
``cache_dir`` as ``surrogate-<key>.npz``, both keyed by :func:`cache_key`. The disk cache is
data only, because a cache folder is a config value and its files are untrusted: plain arrays
read with ``allow_pickle=False``, every one checked before a tree is rebuilt from it
(:mod:`systems.dataset.trees`); the stored key and data digest must equal the ones looked up,
and the folder and file must be this user's own (:mod:`systems.dataset.cache`). Anything
else is ignored with a warning and the model refitted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np
import sklearn
from scipy.stats import kendalltau
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import balanced_accuracy_score, r2_score
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.tree._tree import Tree

from systems.dataset.cache import private_dir, read_private, resolve_cache_dir, write_private
from systems.dataset.trees import finite_pair, from_npz, to_npz

__all__ = [
    "Fidelity",
    "ModelSettings",
    "SurrogateModel",
    "cache_key",
    "clear_memory_cache",
    "cross_validate",
    "data_digest",
    "fidelity_scores",
    "load_or_fit",
]

log = logging.getLogger(__name__)

_KEY_VERSION = 1  # of cache_key
_CACHE_VERSION = 2  # of the file format
_FORMAT = "classytune-harness surrogate trees"
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
    """Fitted regression trees (+ optional failure-classifier trees), OOB residuals, fidelity.

    ``trees`` predict the target; ``failure_trees`` (``None`` without a failure model) predict
    per-class fractions, ``fail_class`` being the column of "failed"."""

    def __init__(
        self,
        trees: list[Tree],
        failure_trees: list[Tree] | None,
        residuals: np.ndarray,
        fidelity: Fidelity,
        value_range: tuple[float, float],
        fail_class: int = 1,
    ) -> None:
        self.trees = trees
        self.failure_trees = failure_trees
        self.residuals = residuals
        self.fidelity = fidelity
        self.value_range = value_range
        self.fail_class = fail_class

    @property
    def has_failure_model(self) -> bool:
        return self.failure_trees is not None

    @classmethod
    def fit(
        cls,
        points: np.ndarray,
        values: np.ndarray,
        failed: np.ndarray,
        direction: Direction,
        settings: ModelSettings,
    ) -> SurrogateModel:
        if len(points) >= _LARGE:
            log.info(
                "fitting the surrogate on %d rows (%d-fold check, then the final forest)...",
                len(points),
                settings.folds,
            )
        fidelity = cross_validate(points, values, failed, direction, settings)
        ok = ~failed
        regressor = _regressor(settings, oob=True).fit(points[ok], values[ok])
        oob = np.asarray(regressor.oob_prediction_, dtype=float)
        residuals = values[ok] - oob
        residuals = residuals[np.isfinite(residuals)]  # rows no tree left out (tiny forests)
        failure_trees, fail_class = None, 1
        if int(failed.sum()) >= settings.min_failures:
            classifier = _classifier(settings).fit(points, failed.astype(int))
            failure_trees = [e.tree_ for e in classifier.estimators_]
            fail_class = int(np.flatnonzero(classifier.classes_ == 1)[0])
        elif failed.any():
            log.info(
                "only %d failed row(s): too few to learn a failure region; the surrogate "
                "never fails",
                int(failed.sum()),
            )
        y = values[ok]
        trees = [e.tree_ for e in regressor.estimators_]
        value_range = (float(y.min()), float(y.max()))
        return cls(trees, failure_trees, residuals, fidelity, value_range, fail_class)

    @staticmethod
    def _as_input(points: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.atleast_2d(points), dtype=np.float32)

    def predict(self, points: np.ndarray) -> np.ndarray:
        """Mean of the trees' predictions (what ``RandomForestRegressor.predict`` returns)."""
        x = self._as_input(points)
        total = np.zeros(len(x))
        for tree in self.trees:
            total += tree.predict(x).reshape(len(x), -1)[:, 0]
        return total / len(self.trees)

    def failure_probability(self, points: np.ndarray) -> np.ndarray:
        """Probability that a configuration fails (zeros if no failure model was fitted)."""
        x = self._as_input(points)
        if self.failure_trees is None:
            return np.zeros(len(x))
        total = np.zeros(len(x))
        for tree in self.failure_trees:
            proba = tree.predict(x).reshape(len(x), -1)  # (n, classes), one output
            total += proba[:, self.fail_class] / np.maximum(proba.sum(axis=1), 1e-12)
        return total / len(self.failure_trees)

    # -- the data-only cache format (systems.dataset.trees) ----------------------------------
    def to_bytes(self, key: str, digest: str, n_features: int) -> bytes:
        """The model as one ``.npz`` of plain arrays (see the module docstring)."""
        meta = {
            "format": _FORMAT,
            "version": _CACHE_VERSION,
            "key": key,
            "data": digest,
            "n_features": n_features,
            "value_range": list(self.value_range),
            "fidelity": self.fidelity.as_dict(),
            "fail_class": self.fail_class,
        }
        return to_npz(meta, self.residuals, self.trees, self.failure_trees)

    @classmethod
    def from_bytes(cls, raw: bytes, key: str, digest: str, n_features: int) -> SurrogateModel:
        """The model :meth:`to_bytes` wrote for ``key``/``digest``; ``ValueError`` naming the
        first check that fails (nothing in the file is trusted before it is checked)."""
        expected = {"format": _FORMAT, "version": _CACHE_VERSION, "key": key, "data": digest}
        meta, residuals, trees, failure_trees = from_npz(raw, expected, n_features)
        value_range = finite_pair(meta.get("value_range"))
        fidelity = _fidelity(meta.get("fidelity"))
        fail_class = meta.get("fail_class")
        if fail_class not in (0, 1) or isinstance(fail_class, bool):
            raise ValueError(f"its failure class index {fail_class!r} is not 0 or 1")
        return cls(trees, failure_trees, residuals, fidelity, value_range, int(fail_class))


#: From this many rows on, fitting (minutes for 10^6 rows) is announced first.
_LARGE = 50_000


def _fidelity(value: Any) -> Fidelity:
    names = {f.name for f in fields(Fidelity)}
    if not isinstance(value, dict) or set(value) != names:
        raise ValueError("its fidelity record has other fields than a Fidelity")
    optional = {"failure_balanced_accuracy"}
    for name, item in value.items():
        if (item is None and name in optional) or (
            isinstance(item, int | float) and not isinstance(item, bool)
        ):
            continue
        raise ValueError(f"its fidelity field {name!r} is not a number")
    return Fidelity(**value)


def data_digest(points: np.ndarray, values: np.ndarray, failed: np.ndarray) -> str:
    """SHA-256 of the data a fit sees, as typed."""
    digest = hashlib.sha256()
    for array in (points, values, failed):
        digest.update(str((array.dtype.str, array.shape)).encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def cache_key(
    points: np.ndarray,
    values: np.ndarray,
    failed: np.ndarray,
    direction: str,
    settings: ModelSettings,
) -> str:
    """Digest of everything a fit depends on (data as typed, settings, library versions).

    Also the key of the committed optima (``optima.yaml``): change it only with them."""
    digest = hashlib.sha256()
    for array in (points, values, failed):
        digest.update(np.ascontiguousarray(array).tobytes())
    meta = {
        "direction": direction,
        "settings": asdict(settings),
        "v": _KEY_VERSION,
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
    ``cache_dir`` (``user:`` = the user's cache folder; ``None``: off), else fitted now (and
    then kept in both)."""
    key = cache_key(points, values, failed, direction, settings)
    digest = data_digest(points, values, failed)
    folder = resolve_cache_dir(cache_dir)
    folder = private_dir(folder) if folder is not None else None
    path = folder / f"surrogate-{key}.npz" if folder is not None else None
    model = _FITTED.get(key)
    if model is not None and (path is None or path.exists()):
        return model, key
    if model is None and path is not None:
        model = _load(path, key, digest, points.shape[1])
        if model is not None:
            _FITTED[key] = model
            return model, key
    if model is None:
        model = SurrogateModel.fit(points, values, failed, direction, settings)
    _FITTED[key] = model
    if path is not None and path not in _UNWRITABLE and not _save(model, path, key, digest):
        _UNWRITABLE.add(path)
    return model, key


def clear_memory_cache() -> None:
    """Forget the models this process holds (the disk cache stays)."""
    _FITTED.clear()


def _save(model: SurrogateModel, path: Path, key: str, digest: str) -> bool:
    n_features = int(model.trees[0].n_features)
    return write_private(path, model.to_bytes(key, digest, n_features))


def _load(path: Path, key: str, digest: str, n_features: int) -> SurrogateModel | None:
    raw = read_private(path)
    if raw is None:
        return None
    try:
        model = SurrogateModel.from_bytes(raw, key, digest, n_features)
    except (ValueError, KeyError, TypeError, OSError, EOFError) as exc:
        log.warning("ignoring the surrogate cache %s (%s); refitting", path, exc)
        return None
    log.debug("loaded the fitted surrogate from %s", path)
    return model
