"""The best-known optimum of a surrogate: a large search of the surrogate itself.

Tuners are scored as a fraction of this value. The search is a Latin hypercube of
``n_points`` over ``[0, 1]^d`` (configurations the failure model predicts to fail are skipped),
then a local refinement of the best ``starts`` points by shrinking Gaussian steps; candidates
are finally snapped to representable configurations and re-predicted, so the returned value is
exactly what the surrogate reports for the returned configuration (without noise).

:func:`stable_optimum` makes the value stable: it searches in stages of doubling size, each
starting also from the previous stage's winner (so a larger search can never report a worse
optimum), until a stage improves the value by at most ``tol`` of the recorded value range
(converged) or ``max_points`` is reached (reported as not converged). The result is cached
with its provenance (stages, values, convergence, model key, seed) as JSON in the model cache
folder, keyed by the model key and the space, so a session computes it once per
(table, backend, knob inference). A cached optimum is data from a folder others may reach, so
it is used only when it names this key, its folder and file are the user's own
(:mod:`systems.dataset.cache`), and its value is exactly the model's prediction at its
configuration; else it is searched again (a planted "best known: 99999" is never reported).

Committed results live in ``systems/dataset/optima.yaml`` (written by
``scripts/surrogate_optima.py``), keyed by surrogate name and checked against
the model's cache key so a stale entry is never used.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from harness.sampling import latin_hypercube
from harness.space import Config, Space
from systems.dataset.cache import private_dir, read_private, resolve_cache_dir, write_private
from systems.dataset.model import SurrogateModel

__all__ = ["OPTIMA_FILE", "load_optima", "search_optimum", "stable_optimum"]

log = logging.getLogger(__name__)

OPTIMA_FILE = Path(__file__).with_name("optima.yaml")
_FAIL_THRESHOLD = 0.5


def _scores(model: SurrogateModel, points: np.ndarray, sign: float) -> np.ndarray:
    """Larger-is-better predicted score; -inf where the failure model predicts a failure."""
    score = sign * model.predict(points)
    if model.has_failure_model:
        score[model.failure_probability(points) >= _FAIL_THRESHOLD] = -np.inf
    return score


def search_optimum(
    model: SurrogateModel,
    space: Space,
    direction: str,
    *,
    n_points: int = 200_000,
    seed: int = 0,
    starts: int = 16,
    steps: int = 60,
    batch: int = 32,
    init: np.ndarray | None = None,
) -> tuple[Config, float]:
    """Best configuration of the surrogate and its predicted value (see the module docstring).

    ``init``: points (e.g. an earlier search's winners) that join the pool of starts."""
    rng = np.random.default_rng(seed)
    sign = 1.0 if direction == "max" else -1.0
    keep_points: list[np.ndarray] = []
    keep_scores: list[np.ndarray] = []
    chunk = 20_000
    for begin in range(0, n_points, chunk):
        pts = latin_hypercube(min(chunk, n_points - begin), space.dim, rng)
        sc = _scores(model, pts, sign)
        best = np.argsort(-sc)[:starts]
        keep_points.append(pts[best])
        keep_scores.append(sc[best])
    if init is not None and len(init):
        keep_points.append(np.atleast_2d(init))
        keep_scores.append(_scores(model, np.atleast_2d(init), sign))
    pool, pool_scores = np.vstack(keep_points), np.concatenate(keep_scores)
    order = np.argsort(-pool_scores)[:starts]
    current, current_scores = pool[order], pool_scores[order]
    candidates = [current.copy()]
    n = len(current)
    for step in range(steps):
        sigma = 0.1 * (0.02 ** (step / max(steps - 1, 1)))  # 0.1 -> 0.002
        # All starts at once: (n, batch, d) perturbations predicted in one call.
        steps_ = rng.normal(0.0, sigma, (n, batch, space.dim))
        trial = np.clip(current[:, None, :] + steps_, 0.0, 1.0)
        sc = _scores(model, trial.reshape(-1, space.dim), sign).reshape(n, batch)
        j = np.argmax(sc, axis=1)
        better = sc[np.arange(n), j] > current_scores
        current[better] = trial[np.arange(n), j][better]
        current_scores[better] = sc[np.arange(n), j][better]
        candidates.append(current.copy())
    # Snap every refinement stage's points to real configurations and pick the best of those.
    unique = np.unique(np.vstack(candidates), axis=0)
    configs = [space.decode(p) for p in unique]
    snapped = space.encode_many(configs)
    sc = _scores(model, snapped, sign)
    winner = int(np.argmax(sc))
    if not np.isfinite(sc[winner]):
        raise RuntimeError("every searched configuration is predicted to fail")
    return configs[winner], float(model.predict(snapped[winner])[0])


def load_optima(path: Path = OPTIMA_FILE) -> dict[str, dict[str, Any]]:
    """Committed optima by surrogate name (empty if the file does not exist yet)."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    return {str(k): dict(v) for k, v in data.items()}


def stable_optimum(
    model: SurrogateModel,
    space: Space,
    direction: str,
    *,
    key: str,
    cache_dir: str | Path | None = None,
    points: int = 20_000,
    max_points: int = 160_000,
    tol: float = 1e-3,
    seed: int = 0,
) -> tuple[Config, float, dict[str, Any]]:
    """A convergence-checked optimum and its provenance (see the module docstring)."""
    folder = resolve_cache_dir(cache_dir)
    folder = private_dir(folder) if folder is not None else None
    path = folder / f"optimum-{key}.json" if folder is not None else None
    cached = _cached(path, model, space, key) if path is not None else None
    if cached is not None:
        return cached
    sign = 1.0 if direction == "max" else -1.0
    scale = max(abs(model.value_range[1] - model.value_range[0]), 1e-12)
    stages: list[dict[str, Any]] = []
    best: tuple[Config, float] | None = None
    n, stage = points, 0
    converged = False
    while True:
        init = space.encode(best[0])[None, :] if best else None
        config, value = search_optimum(
            model, space, direction, n_points=n, seed=seed + stage, init=init
        )
        if best is not None and sign * value < sign * best[1]:
            config, value = best  # never worse than the smaller search
        gain = math.inf if best is None else sign * (value - best[1]) / scale
        stages.append({"points": n, "value": round(value, 6)})
        best = (config, value)
        if gain <= tol:
            converged = True
            break
        if n * 2 > max_points:
            break
        n, stage = n * 2, stage + 1
    provenance = {
        "method": "Latin hypercube + local refinement, stages of doubling size",
        "stages": stages,
        "converged": converged,
        "tolerance": f"{tol} of the recorded value range",
        "seed": seed,
        "model_key": key,
    }
    if path is not None:
        record = {"key": key, "config": best[0], "value": best[1], "provenance": provenance}
        write_private(path, json.dumps(record, default=_plain).encode())
    return best[0], best[1], provenance


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else str(value)


def _cached(
    path: Path, model: SurrogateModel, space: Space, key: str
) -> tuple[Config, float, dict[str, Any]] | None:
    """The cached optimum in ``path`` if it checks out (see :func:`_check_cached`), else
    ``None`` (a warning when a file was there but refused)."""
    raw = read_private(path)
    if raw is None:
        return None
    try:
        return _check_cached(json.loads(raw), model, space, key)
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("ignoring the cached optimum %s (%s); searching again", path, exc)
        return None


def _check_cached(
    cached: Any, model: SurrogateModel, space: Space, key: str
) -> tuple[Config, float, dict[str, Any]]:
    """A cached optimum, trusted only as far as it is checked: written for this model and
    space (``key``), a valid configuration, and a value that is exactly what the model
    predicts there (inside the recorded range), where no failure is predicted."""
    if not isinstance(cached, dict) or cached.get("key") != key:
        raise ValueError(f"it was not written for this model and space ({key})")
    config = space.validate(cached["config"])
    value = float(cached["value"])
    point = space.encode(config)[None, :]
    predicted = float(model.predict(point)[0])
    low, high = model.value_range
    if not (low <= value <= high and math.isclose(value, predicted, rel_tol=1e-9, abs_tol=1e-12)):
        raise ValueError(f"its value {value:g} is not the model's {predicted:g} at its config")
    if model.has_failure_model and model.failure_probability(point)[0] >= _FAIL_THRESHOLD:
        raise ValueError("the model predicts its configuration fails")
    if not isinstance(cached.get("provenance"), dict):
        raise ValueError("it has no provenance")
    return config, value, cached["provenance"]
