"""What a recorded-data system tells its session: at start, in the summary and in its tags.

* :func:`announce` (called from ``setup``, i.e. at session start) logs every inferred knob and
  why, the backend and why, the default and its rule, and the best-known optimum with how it
  was obtained, and returns the lines the session summary shows (the default and the
  optimum; :meth:`harness.system.System.summary_lines`).
* :func:`describe_tags` is the system's ``describe()``: the same facts as tags, which the
  session saves in ``session.json`` and on its MLflow run.
* :func:`best_known` computes the best-known optimum and its provenance.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import numpy as np

from harness.space import Config
from systems.dataset.optimum import load_optima, stable_optimum

#: A :class:`~systems.dataset.system.DatasetSystem` (not imported: it imports this module).
DatasetSystem = Any

__all__ = ["announce", "best_known", "describe_tags", "warn"]

log = logging.getLogger(__name__)

_TAG_LIMIT = 4000  # MLflow tag values are limited (8000 characters); the log has it all


def _config_text(config: Config) -> str:
    return ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in config.items()
    )


def best_known(system: DatasetSystem) -> tuple[Config, float, str]:
    """(config, value, how it was obtained) of the best-known optimum."""
    data = system.dataset
    if system.model is None:
        ok = np.flatnonzero(~data.failed)
        values = data.values[ok]
        index = int(ok[np.argmax(values) if system.direction == "max" else np.argmin(values)])
        source = f"best of the {len(ok)} successful recorded rows: data row {index + 1}"
        return dict(data.configs[index]), float(data.values[index]), source
    entry = load_optima().get(system.name)
    if entry and entry.get("model_key") == system.model_key:
        search = entry.get("search", {})
        source = (
            f"committed search of the surrogate (systems/dataset/optima.yaml: "
            f"{search.get('points')} points, seed {search.get('seed')}, converged: "
            f"{search.get('converged', 'not checked')})"
        )
        return system.space.validate(entry["config"]), float(entry["value"]), source
    space_key = hashlib.sha256(repr(system.space.knobs).encode()).hexdigest()[:8]
    config, value, provenance = stable_optimum(
        system.model,
        system.space,
        system.direction,
        key=f"{system.model_key}-{space_key}",
        cache_dir=system.cache_dir,
    )
    stages = ", ".join(f"{s['points']} points: {s['value']:.6g}" for s in provenance["stages"])
    source = f"search of the surrogate in stages ({stages}); converged: {provenance['converged']}"
    return config, value, source


def warn(system: DatasetSystem) -> None:
    """Log the backend's fidelity: a WARNING when it is poor."""
    if system.problems:
        log.warning(
            "SURROGATE %s HAS POOR FIDELITY (%s): %s; results on it say little "
            "about the real system",
            system.name,
            "; ".join(system.problems),
            system.fidelity.summary(),
        )
    else:
        log.info("surrogate %s (%s): %s", system.name, system.backend, system.fidelity.summary())


def _summary(system: DatasetSystem) -> list[str]:
    (
        config,
        value,
    ) = system.known_optimum()
    unit = f" {system.unit}" if system.unit else ""
    default = system.predict(system.space.default())
    return [
        f"data:      {system.path.name}, {len(system.dataset.configs)} rows, "
        f"backend {system.backend} ({system.choice.reason})",
        f"default:   {default:.6g}{unit}, by the rule: {system.dataset.default_source}",
        f"best known: {value:.6g}{unit} ({system.optimum_source})",
        f"  at {_config_text(config)}",
        "noise:     "
        + (
            system.noise_measured.summary()
            if system.noise_measured
            else "not measured (no configuration recorded twice)"
        ),
    ]


def announce(system: DatasetSystem) -> list[str]:
    """Log what the session runs on; the summary's lines (see the module doc)."""
    log.info(
        "%s: %d knobs inferred from %s:\n  %s",
        system.name,
        system.space.dim,
        system.path.name,
        "\n  ".join(system.dataset.inference + system.dataset.notes),
    )
    lines = _summary(system)
    log.info("%s:\n  %s", system.name, "\n  ".join(lines))
    return lines


def describe_tags(system: DatasetSystem) -> dict[str, str]:
    """The system's tags (``describe()``), saved with the session."""
    fid = system.fidelity
    config, value = system.known_optimum()
    knobs = "; ".join(system.dataset.inference)
    tags = {
        "surrogate_data": system.path.name,
        "surrogate_target": system.target,
        "surrogate_direction": system.direction,
        "surrogate_rows": str(len(system.dataset.configs)),
        "surrogate_knobs": str(system.space.dim),
        "surrogate_default": system.dataset.default_source,
        "surrogate_backend": system.backend,
        "surrogate_backend_reason": system.choice.reason,
        "surrogate_model": (
            "none: recorded rows answer"
            if system.model is None
            else f"RandomForestRegressor(n_estimators={system.settings.n_estimators}, "
            f"min_samples_leaf={system.settings.min_samples_leaf})"
        ),
        "surrogate_model_key": system.model_key,
        "surrogate_inference": knobs if len(knobs) <= _TAG_LIMIT else knobs[:_TAG_LIMIT] + " …",
        "surrogate_noise": system.noise_measured.summary() if system.noise_measured else "none",
        "best_known_value": f"{value:.6g}",
        "best_known_source": system.optimum_source,
        "best_known_config": _config_text(config)[:_TAG_LIMIT],
        "fidelity_r2": f"{fid.r2:.3f}",
        "fidelity_tau": f"{fid.tau:.3f}",
        "fidelity_topk_recall": f"{fid.topk_recall:.3f}",
        "fidelity_warning": "; ".join(system.problems) or "none",
        "surrogate_failure_status": system.failure_status,
        "noise": str(system.noise),
    }
    if system.source:
        tags["surrogate_source"] = system.source
    return tags
