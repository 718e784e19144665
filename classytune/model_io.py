"""Save and load ClassyTune's reusable outputs: the classifier, the samples and the settings.

A directory written by :func:`save_artifacts` holds:

* ``settings.json``: format version, the tuner's ``params()``, the knob space (catalogue
  entries, so the space can be rebuilt without the system), induction method and bit depth,
  classifier name (``xgboost``, ... or a factory's ``module.name``) and model file, the best
  trial, the per-round log;
* ``classifier.json``: XGBoost's own JSON model format, the only model file written or read;
  absent when no model could be trained (fewer than two distinct scores) and for every other
  classifier, which :mod:`classytune.analyze` refits from the samples;
* ``samples.csv`` (one row per test: trial, status, score, imputed score, encoded point
  ``u.<knob>`` and value ``config.<knob>``; a text cell a spreadsheet would run as a formula
  gets a leading ``'``) and ``samples.json`` (the same as arrays).

:func:`load_artifacts` reads it back for :mod:`classytune.analyze`. An artifact folder is
data that may come from someone else, so nothing in it is deserialised into code: no pickle
or joblib file is ever loaded (a scikit-learn model cannot be saved without one, hence the
refit), the model file must be exactly ``classifier.json`` inside the folder (not a symbolic
link, not a path ``settings.json`` names), and malformed JSON is one ConfigError line.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import ConfigError
from harness.space import Knob, Space, knob_from_dict
from harness.store.samples import spreadsheet_safe
from harness.tuner import Tuner

__all__ = ["FORMAT", "MODEL_FILE", "SETTINGS", "Artifacts", "load_artifacts", "save_artifacts"]

FORMAT = 1
SETTINGS = "settings.json"
MODEL_FILE = "classifier.json"
#: The name older versions gave a pickled (joblib) model: recognised, never loaded.
_PICKLED_MODEL = "classifier.joblib"


def _knob_entry(knob: Knob) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": knob.name,
        "type": knob.type,
        "default": knob.default,
        "log": knob.log,
        "unit": knob.unit,
        "description": knob.description,
    }
    if knob.low is not None:
        entry["min"], entry["max"] = knob.low, knob.high
    if knob.values:
        entry["values"] = list(knob.values)
    return entry


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def save_artifacts(
    directory: Path,
    tuner: Tuner,
    model: Any,
    *,
    induction: str,
    bits: int,
    classifier: str,
    round_log: list[dict[str, Any]],
) -> None:
    """Write the artifact set for ``tuner`` (its samples and ``params()``, the final ``model``
    trained with ``induction``/``bits``, the ``classifier``'s name, the per-round log) into
    ``directory``. Any :class:`~harness.tuner.Tuner` works: this module knows no tuner class."""
    directory.mkdir(parents=True, exist_ok=True)
    space = tuner.space
    points = tuner.points() if tuner.history else np.empty((0, space.dim))
    scores = tuner.scores() if tuner.history else np.empty(0)
    model_file = None
    if model is not None:
        from xgboost import XGBClassifier

        if isinstance(model, XGBClassifier):  # XGBoost's own, version-stable JSON format
            model_file = MODEL_FILE
            model.save_model(str(directory / model_file))
    best = tuner.best()
    settings = {
        "format": FORMAT,
        "tuner": tuner.params(),
        "space": [_knob_entry(k) for k in space.knobs],
        "induction": induction,
        "bits": bits,
        "classifier": classifier,
        "model_file": model_file,
        "best_trial": best.trial if best else None,
        "round_log": round_log,
    }
    (directory / SETTINGS).write_text(json.dumps(_jsonable(settings), indent=2))
    samples = {
        "trials": [o.trial for o in tuner.history],
        "status": [o.status.value for o in tuner.history],
        "score": [o.score for o in tuner.history],
        "imputed_score": scores.tolist(),
        "points": points.tolist(),
        "configs": [o.config for o in tuner.history],
    }
    (directory / "samples.json").write_text(json.dumps(_jsonable(samples)))
    with (directory / "samples.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "trial",
                "status",
                "score",
                "imputed_score",
                *(f"u.{n}" for n in space.names),
                *(f"config.{n}" for n in space.names),
            ]
        )
        for obs, point, imputed in zip(tuner.history, points, scores, strict=True):
            writer.writerow(
                [
                    obs.trial,
                    obs.status.value,
                    obs.score,
                    imputed,
                    *point,
                    *(spreadsheet_safe(obs.config[n]) for n in space.names),
                ]
            )


@dataclass
class Artifacts:
    """A loaded artifact directory."""

    directory: Path
    settings: dict[str, Any]
    space: Space
    model: Any  # None: not saved in a reloadable form (see ``note``); refit from the samples
    points: np.ndarray
    scores: np.ndarray
    configs: list[dict[str, Any]]
    note: str = ""

    @property
    def best_index(self) -> int:
        return int(np.argmax(self.scores))


def load_artifacts(directory: str | Path) -> Artifacts:
    """Read a directory written by :func:`save_artifacts` (or a session folder holding one in
    ``artifacts/``); raise ConfigError with a one-line reason if it is not one."""
    directory = Path(directory)
    if not directory.exists():
        raise ConfigError(
            f"{directory} does not exist; pass a ClassyTune artifact directory "
            "(results/sessions/<id>/artifacts)"
        )
    if not (directory / SETTINGS).exists() and (directory / "artifacts" / SETTINGS).exists():
        directory = directory / "artifacts"
    settings_path = directory / SETTINGS
    if not settings_path.is_file():
        raise ConfigError(
            f"{directory} holds no {SETTINGS}; it is not a ClassyTune artifact "
            "directory (sessions run with tuner=classytune write one)"
        )
    settings = _json_object(settings_path)
    samples = _json_object(directory / "samples.json")
    try:
        # artifacts saved before the catalogues dropped their unused `restart` field carry it
        knobs = [{k: v for k, v in entry.items() if k != "restart"} for entry in settings["space"]]
        space = Space(tuple(knob_from_dict(k) for k in knobs))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{directory}: unreadable ClassyTune artifacts ({exc})") from None
    if settings.get("format") != FORMAT:
        raise ConfigError(
            f"{directory}: artifact format {settings.get('format')!r}, this version reads {FORMAT}"
        )
    _check_settings(directory, settings)
    points, scores, configs = _samples(directory, samples, space)
    model, note = _model(directory, settings)
    return Artifacts(directory, settings, space, model, points, scores, configs, note)


def _json_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path``; ConfigError (one line) if it is unreadable or not one."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path.parent}: unreadable ClassyTune artifacts ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: unreadable ClassyTune artifacts (a JSON {type(data).__name__}, "
            "not an object)"
        )
    return data


def _check_settings(directory: Path, settings: dict[str, Any]) -> None:
    """The fields :mod:`classytune.analyze` uses have the types it expects."""
    checks = {
        "induction": isinstance(settings.get("induction"), str),
        "bits": isinstance(settings.get("bits"), int) and not isinstance(settings["bits"], bool),
        "tuner": isinstance(settings.get("tuner", {}), dict),
        "classifier": isinstance(settings.get("classifier", ""), str | None),
    }
    bad = [name for name, ok in checks.items() if not ok]
    if bad:
        raise ConfigError(f"{directory}: {SETTINGS} has no valid {', '.join(bad)}")


def _samples(
    directory: Path, samples: dict[str, Any], space: Space
) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
    """(points, imputed scores, configurations) of ``samples.json``, checked for shape."""
    try:
        points = np.asarray(samples["points"], dtype=float).reshape(-1, space.dim)
        scores = np.asarray(samples["imputed_score"], dtype=float)
        configs = samples["configs"]
    except (KeyError, ValueError, TypeError) as exc:
        raise ConfigError(f"{directory}: samples.json is not a samples table ({exc})") from None
    ok = (
        scores.ndim == 1
        and isinstance(configs, list)
        and len(points) == len(scores) == len(configs) > 0
        and all(isinstance(c, dict) for c in configs)
        and bool(np.isfinite(points).all() and np.isfinite(scores).all())
    )
    if not ok:
        raise ConfigError(
            f"{directory}: samples.json is not a samples table (points, imputed_score and "
            "configs of one length, finite numbers)"
        )
    return points, scores, configs


def _model(directory: Path, settings: dict[str, Any]) -> tuple[Any, str]:
    """(the saved model or None, a note saying why it is None)."""
    model_file = settings.get("model_file")
    classifier = settings.get("classifier") or "xgboost"
    not_saved = (
        f"the {classifier} classifier's model is not saved in a reloadable form (only "
        "XGBoost's JSON model is; pickled models are never loaded): refitted from samples.json"
    )
    if model_file == _PICKLED_MODEL or (model_file is None and classifier != "xgboost"):
        return None, not_saved
    if model_file is None:
        raise ConfigError(
            f"{directory}: no trained classifier saved (the session had fewer "
            "than two distinct scores)"
        )
    if model_file != MODEL_FILE:
        raise ConfigError(
            f"{directory}: {SETTINGS} names the model file {str(model_file)[:80]!r}; only "
            f"{MODEL_FILE} in the artifact folder is read"
        )
    return _load_model(directory, directory / MODEL_FILE), ""


def _load_model(directory: Path, path: Path) -> Any:
    """XGBoost's JSON model in ``path``, a regular file inside ``directory``."""
    if path.is_symlink() or path.resolve().parent != directory.resolve():
        raise ConfigError(f"{path}: a symbolic link; the model file must be in the folder")
    if not path.is_file():
        raise ConfigError(
            f"{directory}: the model file {MODEL_FILE} is missing or not a regular file"
        )
    try:
        from xgboost import XGBClassifier

        model = XGBClassifier()
        model.load_model(str(path))
        return model
    except Exception as exc:  # XGBoost raises its own XGBoostError and others
        raise ConfigError(f"{path}: cannot load the classifier ({exc})") from None
