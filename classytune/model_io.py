"""Save and load ClassyTune's reusable outputs: the classifier, the samples and the settings.

A directory written by :func:`save_artifacts` holds:

* ``settings.json``: format version, the tuner's ``params()``, the knob space (catalogue
  entries, so the space can be rebuilt without the system), induction method and bit depth,
  classifier name (``xgboost``, ... or a factory's ``module.name``) and model file, the best
  trial, the per-round log;
* ``classifier.json`` (XGBoost's own JSON model format) or ``classifier.joblib`` (any other);
  absent when no model could be trained (fewer than two distinct scores);
* ``samples.csv`` (one row per test: trial, status, score, imputed score, encoded point
  ``u.<knob>`` and value ``config.<knob>``) and ``samples.json`` (the same as arrays).

:func:`load_artifacts` reads it back for :mod:`classytune.analyze`.
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
from harness.tuner import Tuner

__all__ = ["FORMAT", "SETTINGS", "Artifacts", "load_artifacts", "save_artifacts"]

FORMAT = 1
SETTINGS = "settings.json"


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
            model_file = "classifier.json"
            model.save_model(str(directory / model_file))
        else:
            import joblib

            model_file = "classifier.joblib"
            joblib.dump(model, directory / model_file)
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
                    *(obs.config[n] for n in space.names),
                ]
            )


@dataclass
class Artifacts:
    """A loaded artifact directory."""

    directory: Path
    settings: dict[str, Any]
    space: Space
    model: Any
    points: np.ndarray
    scores: np.ndarray
    configs: list[dict[str, Any]]

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
    try:
        settings = json.loads(settings_path.read_text())
        samples = json.loads((directory / "samples.json").read_text())
        # artifacts saved before the catalogues dropped their unused `restart` field carry it
        knobs = [{k: v for k, v in entry.items() if k != "restart"} for entry in settings["space"]]
        space = Space(tuple(knob_from_dict(k) for k in knobs))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{directory}: unreadable ClassyTune artifacts ({exc})") from None
    if settings.get("format") != FORMAT:
        raise ConfigError(
            f"{directory}: artifact format {settings.get('format')!r}, this version reads {FORMAT}"
        )
    model_file = settings.get("model_file")
    if not model_file or not (directory / model_file).is_file():
        raise ConfigError(
            f"{directory}: no trained classifier saved (the session had fewer "
            "than two distinct scores, or the model file is missing)"
        )
    model = _load_model(directory / model_file)
    return Artifacts(
        directory,
        settings,
        space,
        model,
        np.asarray(samples["points"], dtype=float).reshape(-1, space.dim),
        np.asarray(samples["imputed_score"], dtype=float),
        samples["configs"],
    )


def _load_model(path: Path) -> Any:
    try:
        if path.suffix == ".json":
            from xgboost import XGBClassifier

            model = XGBClassifier()
            model.load_model(str(path))
            return model
        import joblib

        return joblib.load(path)
    except Exception as exc:
        raise ConfigError(f"{path}: cannot load the classifier ({exc})") from None
