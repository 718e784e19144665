"""Pure plotting functions: a tidy DataFrame in, a matplotlib Figure out (no I/O).

Each function documents the columns it needs; the CLI writes the figures to PNG files.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and in CI

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

__all__ = [
    "fig2_errors",
    "fig5_classifiers",
    "fig6_improvement",
    "fig9_induction",
    "fig10b_time",
    "grouped_bars",
]


def _require(df: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} needs columns {missing}; got {list(df.columns)}")
    if df.empty:
        raise ValueError(f"{what}: no rows to plot")


def grouped_bars(ax: matplotlib.axes.Axes, df: pd.DataFrame, group: str, series: str,
                 value: str, order: list[str] | None = None) -> None:
    """Mean of ``value`` per (group, series) as grouped bars with min-max whiskers."""
    stats = df.groupby([group, series])[value].agg(["mean", "min", "max"]).reset_index()
    groups = sorted(stats[group].unique())
    present = set(stats[series])
    names = [n for n in order or [] if n in present]  # the paper's order first, then others
    names += sorted(present - set(names))
    width = 0.8 / max(len(names), 1)
    x = np.arange(len(groups))
    for i, name in enumerate(names):
        part = stats[stats[series] == name].set_index(group).reindex(groups)
        mean = part["mean"].to_numpy(dtype=float)
        err = np.vstack([mean - part["min"].to_numpy(dtype=float),
                         part["max"].to_numpy(dtype=float) - mean])
        ax.bar(x + (i - (len(names) - 1) / 2) * width, mean, width, label=name, yerr=err,
               capsize=2)
    ax.set_xticks(x)
    ax.set_xticklabels([g.replace("surrogate_", "s:") for g in groups], rotation=30,
                       ha="right", fontsize=8)
    ax.legend(fontsize=8)


def fig6_improvement(df: pd.DataFrame) -> Figure:
    """Fig. 6: improvement over default (columns system, tuner, improvement), mean of seeds."""
    _require(df, ("system", "tuner", "improvement"), "fig6")
    data = df.assign(improvement_pct=100.0 * df["improvement"])
    fig = Figure(figsize=(max(6.0, 1.1 * data["system"].nunique() + 3), 4))
    ax = fig.subplots()
    grouped_bars(ax, data, "system", "tuner", "improvement_pct",
                 ["classytune", "bestconfig", "gpbo"])
    ax.set_ylabel("improvement over default (%)")
    ax.set_title("Fig. 6: 100 tests, mean of seeds (whiskers: min-max)", fontsize=10)
    fig.tight_layout()
    return fig


def fig10b_time(df: pd.DataFrame) -> Figure:
    """Fig. 10(b): tuning computation time (columns system, tuner, tuner_seconds_total)."""
    _require(df, ("system", "tuner", "tuner_seconds_total"), "fig10b")
    fig = Figure(figsize=(5, 4))
    ax = fig.subplots()
    grouped_bars(ax, df, "system", "tuner", "tuner_seconds_total", ["classytune", "gpbo"])
    ax.set_ylabel("tuner computation time (s), tests excluded")
    ax.set_title("Fig. 10(b): 30 knobs, 100 tests")
    fig.tight_layout()
    return fig


def fig5_classifiers(df: pd.DataFrame) -> Figure:
    """Fig. 5: share of held-out winners recognised (columns system, model, share)."""
    _require(df, ("system", "model", "share"), "fig5")
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    grouped_bars(ax, df.assign(pct=100.0 * df["share"]), "system", "model", "pct",
                 ["xgboost", "decision_tree", "logistic", "svm", "mlp", "random_forest",
                  "dt_regressor"])
    ax.set_ylabel("held-out winners recognised (%)")
    ax.set_title("Fig. 5: classifiers trained on 50 samples")
    fig.tight_layout()
    return fig


def fig9_induction(share: pd.DataFrame, sessions: pd.DataFrame | None = None) -> Figure:
    """Fig. 9: (a) winners recognised per induction (columns system, induction, share);
    (b) optional tuning improvement per induction (columns system, induction, improvement)."""
    _require(share, ("system", "induction", "share"), "fig9(a)")
    order = ["zorder", "difference", "concat"]
    panels = 2 if sessions is not None and not sessions.empty else 1
    fig = Figure(figsize=(5.5 * panels, 4))
    axes = np.atleast_1d(fig.subplots(1, panels))
    grouped_bars(axes[0], share.assign(pct=100.0 * share["share"]), "system", "induction",
                 "pct", order)
    axes[0].set_ylabel("held-out winners recognised (%)")
    axes[0].set_title("(a) XGBoost on 50 samples")
    if panels == 2 and sessions is not None:
        _require(sessions, ("system", "induction", "improvement"), "fig9(b)")
        grouped_bars(axes[1], sessions.assign(pct=100.0 * sessions["improvement"]), "system",
                     "induction", "pct", order)
        axes[1].set_ylabel("improvement over default (%)")
        axes[1].set_title("(b) ClassyTune, 100 tests")
    fig.suptitle("Fig. 9: induction methods")
    fig.tight_layout()
    return fig


def fig2_errors(errors: pd.DataFrame, curve: pd.DataFrame | None = None) -> Figure:
    """Fig. 2: (a) max relative error per model at 100 samples (columns system, model,
    max_rel_error); (b) optional error vs training size (columns system, n_train,
    max_rel_error)."""
    _require(errors, ("system", "model", "max_rel_error"), "fig2(a)")
    panels = 2 if curve is not None and not curve.empty else 1
    fig = Figure(figsize=(5.5 * panels, 4))
    axes = np.atleast_1d(fig.subplots(1, panels))
    grouped_bars(axes[0], errors, "system", "model", "max_rel_error",
                 ["gbrt", "svr", "rfr", "cart"])
    axes[0].set_ylabel("max relative error")
    axes[0].set_title("(a) 100 training samples")
    if panels == 2 and curve is not None:
        _require(curve, ("system", "n_train", "max_rel_error"), "fig2(b)")
        mean = curve.groupby(["system", "n_train"])["max_rel_error"].mean().reset_index()
        for system, part in mean.groupby("system"):
            axes[1].plot(part["n_train"], part["max_rel_error"], marker="o",
                         label=str(system).replace("surrogate_", "s:"))
        axes[1].set_xlabel("training samples")
        axes[1].set_ylabel("max relative error (RFR)")
        axes[1].set_title("(b) error vs samples")
        axes[1].legend(fontsize=8)
    fig.suptitle("Fig. 2: regression models")
    fig.tight_layout()
    return fig
