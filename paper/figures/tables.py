"""Tidy tables of the figures whose runs need more than the session summary row (Fig. 1, 3, 7,
8, 10(a)): read from an MLflow store with :mod:`paper.figures.loader`, one DataFrame per CSV
in ``results/figures/data/``. Pure helpers (``subspace_tables``) are separated from reading.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import pandas as pd

from harness.space import Space
from paper.figures.loader import NoRunsError, load_samples, load_sessions, load_tuner_artifacts

__all__ = [
    "best_so_far",
    "fig1_tables",
    "fig3_tables",
    "fig7_tables",
    "fig8_tables",
    "fig10a_tables",
    "subspace_tables",
]

log = logging.getLogger(__name__)
Tables = dict[str, pd.DataFrame]
_SESSION_COLS = [
    "system",
    "system_kind",
    "tuner",
    "seed",
    "default_value",
    "best_value",
    "improvement",
    "tests",
    "tuner_seconds_total",
]


def _sessions(uri: str, experiment: str) -> pd.DataFrame:
    df = load_sessions(uri, experiment)
    if df.empty:
        raise NoRunsError(f"no finished sessions in experiment {experiment!r} of {uri}")
    return df


def subspace_tables(
    samples: pd.DataFrame,
    subspaces: dict[str, Any],
    space: Space,
    importances: dict[str, float],
    n_initial: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 8 for one session: (every test's value of the most influential knob and its score,
    the decoded bounds of each promising subspace over that knob).

    ``samples``: the session's samples.csv; ``subspaces``: the tuner's subspaces.json;
    ``importances``: knob -> classifier feature importance; trials below ``n_initial`` are the
    initial LHS sample, the rest were resampled inside the subspaces."""
    knob = max(importances, key=lambda k: importances[k])
    ranked = sorted(importances, key=lambda k: -importances[k])
    spec = space[knob]
    points = samples[["trial", "status", "score", f"config.{knob}"]].rename(
        columns={f"config.{knob}": "value"}
    )
    phase = np.where(points["trial"] < n_initial, "initial", "resampled")
    points = points.assign(knob=knob, knob_type=spec.type, phase=phase)
    i = subspaces["knobs"].index(knob)
    boxes = []
    for entry in subspaces["rounds"]:
        for b, box in enumerate(entry["boxes"]):
            boxes.append(
                {
                    "round": entry["round"],
                    "box": b,
                    "knob": knob,
                    "importance": importances[knob],
                    "runner_up": ranked[1] if len(ranked) > 1 else "",
                    "low": spec.decode(box["low"][i]),
                    "high": spec.decode(box["high"][i]),
                    "centre": spec.decode(box["centre"][i]),
                    "winners": box["size"],
                    "n_winners": entry["n_winners"],
                    "n_candidates": entry["n_candidates"],
                    "pivot": spec.decode(entry["pivot"][i]),
                    "log_scale": spec.log,
                }
            )
    return points, pd.DataFrame(boxes)


def fig8_tables(uri: str) -> Tables:
    """Fig. 8: per session of experiment ``fig8``, the tests and the subspaces over the knob
    the saved classifier ranks most important (the importance of
    ``python -m classytune.analyze``)."""
    from classytune.analyze import importances
    from classytune.model_io import load_artifacts
    from paper.figures.tuners import SUBSPACES

    runs = _sessions(uri, "fig8").drop_duplicates(["system", "seed"])
    all_points, all_boxes = [], []
    for row in runs.itertuples():
        folder = load_tuner_artifacts(uri, str(row.run_id), row.session_dir)
        if not (folder / SUBSPACES).exists():
            log.warning(
                "%s: no %s (not run with the recording tuner); skipped", row.run_id, SUBSPACES
            )
            continue
        art = load_artifacts(folder)
        found = importances(art)
        importance = {
            k.name: float(found[i]) if found is not None else 0.0
            for i, k in enumerate(art.space.knobs)
        }
        subspaces = json.loads((folder / SUBSPACES).read_text())
        samples = load_samples(uri, str(row.run_id), row.session_dir)
        points, boxes = subspace_tables(
            samples, subspaces, art.space, importance, int(art.settings["tuner"]["n_initial"])
        )
        ident = {"system": row.system, "system_kind": row.system_kind, "seed": row.seed}
        all_points.append(points.assign(system=row.system, seed=row.seed))
        all_boxes.append(boxes.assign(**ident))
    if not all_points:
        raise NoRunsError(f"no fig8 session in {uri} recorded its subspaces")
    return {
        "fig8": pd.concat(all_points, ignore_index=True),
        "fig8_subspaces": pd.concat(all_boxes, ignore_index=True),
    }


def best_so_far(samples: pd.DataFrame) -> pd.Series:
    """Best score after each trial (failures ignored), in trial order."""
    ok = samples.sort_values("trial")
    score = ok["score"].where(ok["status"] == "SUCCEEDED")
    return score.cummax().ffill()


def fig3_tables(uri: str) -> Tables:
    """Fig. 3: GP-BO sessions by initial sample size: final improvements, and the best-so-far
    curve of every session (from its samples)."""
    runs = _sessions(uri, "fig3").drop_duplicates(["system", "tuner.n_initial", "seed"])
    runs = runs.rename(columns={"tuner.n_initial": "n_initial"})
    runs["n_initial"] = pd.to_numeric(runs["n_initial"])
    curves = []
    for row in runs.itertuples():
        samples = load_samples(uri, str(row.run_id), row.session_dir).sort_values("trial")
        curves.append(
            pd.DataFrame(
                {
                    "system": row.system,
                    "n_initial": row.n_initial,
                    "seed": row.seed,
                    "trial": samples["trial"].to_numpy(),
                    "best": best_so_far(samples).to_numpy(),
                }
            )
        )
    return {
        "fig3": runs[
            [
                "system",
                "system_kind",
                "n_initial",
                "seed",
                "default_value",
                "best_value",
                "improvement",
            ]
        ],
        "fig3_curves": pd.concat(curves, ignore_index=True),
    }


def fig10a_tables(uri: str) -> Tables:
    """Fig. 10(a): improvement per tuner with 30 knobs."""
    runs = _sessions(uri, "fig10a").drop_duplicates(["system", "tuner", "seed"])
    return {"fig10a": runs[_SESSION_COLS]}


def fig7_tables(uri: str) -> Tables:
    """Fig. 7: the best value of every tuner, plus the default as its own bar (the first test
    of every session measures it; on a deterministic surrogate they are all equal)."""
    runs = _sessions(uri, "fig7")
    if "tuner.style" in runs.columns:  # sessions before 2026-12-04 tag both styles "expert"
        expert = runs["tuner"] == "expert"
        runs.loc[expert, "tuner"] = "expert_" + runs.loc[expert, "tuner.style"].astype(str)
    runs = runs.drop_duplicates(["system", "tuner", "seed"])
    default = runs.drop_duplicates(["system"]).assign(tuner="default", seed=0)
    default = default.assign(
        best_value=default["default_value"], improvement=0.0, tests=1, tuner_seconds_total=np.nan
    )  # not a session of its own
    return {"fig7": pd.concat([default, runs], ignore_index=True)[_SESSION_COLS]}


def fig1_tables(uri: str) -> Tables:
    """Fig. 1: every test of every sweep session: the swept knob's value and the metric."""
    runs = _sessions(uri, "fig1")
    if "tuner.knob" not in runs.columns:
        raise NoRunsError(f"no sweep sessions (tuner.knob) in experiment 'fig1' of {uri}")
    frames = []
    for row in runs.drop_duplicates(["system", "workload", "tuner.knob"]).itertuples():
        knob = runs.loc[runs["run_id"] == row.run_id, "tuner.knob"].iloc[0]
        samples = load_samples(uri, str(row.run_id), row.session_dir)
        metric = str(row.objective)
        column = f"result.{metric}" if f"result.{metric}" in samples else "score"
        frames.append(
            pd.DataFrame(
                {
                    "system": row.system,
                    "system_kind": row.system_kind,
                    "workload": row.workload,
                    "knob": knob,
                    "trial": samples["trial"],
                    "status": samples["status"],
                    "is_default": samples["is_default"],
                    "value": samples[f"config.{knob}"],
                    "metric": metric,
                    "performance": pd.to_numeric(samples[column], errors="coerce"),
                }
            )
        )
    return {"fig1": pd.concat(frames, ignore_index=True)}
