"""Pure plotting functions: a tidy DataFrame in, a matplotlib Figure out (no I/O).

Each function documents the columns it needs; the CLI writes the figures to PNG files.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and in CI

import numpy as np
import pandas as pd
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from paper.figures.bars import grouped_bars
from paper.figures.style import (
    SURROGATE_NOTE,
    legend_beside,
    series_styles,
    shared_legend,
    system_label,
)
from paper.figures.units import axis_label, knob_unit, metric_unit

__all__ = [
    "FIG5_ORDER",
    "FIG6_ORDER",
    "FIG7_ORDER",
    "SURROGATE_NOTE",
    "caption",
    "fig1_sweep",
    "fig2_errors",
    "fig3_initial",
    "fig5_classifiers",
    "fig6_improvement",
    "fig7_bars",
    "fig7_expert",
    "fig9_induction",
    "fig10a_bars",
    "fig10a_improvement",
    "fig10b_time",
    "grouped_bars",
    "require_columns",
    "system_label",
]


def require_columns(df: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what} needs columns {missing}; got {list(df.columns)}")
    if df.empty:
        raise ValueError(f"{what}: no rows to plot")


def caption(fig: Figure, lines: list[str]) -> None:
    """Lay the figure out with ``lines`` (gaps, what a mark means) printed below the axes."""
    unique = list(dict.fromkeys(lines))
    if not unique:
        fig.tight_layout()
        return
    fig.text(0.01, 0.01, "\n".join(unique), fontsize=7, va="bottom", ha="left")
    height = fig.get_figheight()
    fig.tight_layout(rect=(0.0, min(0.4, (0.18 * len(unique) + 0.1) / height), 1.0, 1.0))


#: The paper's method first, our default mode beside it, then the baselines.
FIG6_ORDER = ["classytune_paper", "classytune", "bestconfig", "gpbo", "gpbo_paper"]


def fig6_improvement(df: pd.DataFrame) -> Figure:
    """Fig. 6: improvement over default (columns system, tuner, improvement), mean of seeds.
    With the real systems' panel: :func:`paper.figures.plot_real.fig6_figure`."""
    fig = Figure(figsize=(fig6_width(df) + 1.5, 4.5))
    ax = fig.subplots()
    lines = fig6_bars(ax, df)
    legend_beside(ax)
    caption(fig, lines)
    return fig


def fig6_width(df: pd.DataFrame) -> float:
    """The surrogate panel's width (inches) for its number of systems."""
    return max(6.0, 1.1 * df["system"].nunique() + 3)


def fig6_bars(ax: matplotlib.axes.Axes, df: pd.DataFrame) -> list[str]:
    """Draw the surrogate/synthetic Fig. 6 panel on ``ax``; return its caption lines."""
    require_columns(df, ("system", "tuner", "improvement"), "fig6")
    data = df.assign(improvement_pct=100.0 * df["improvement"])
    gaps = grouped_bars(ax, data, "system", "tuner", "improvement_pct", FIG6_ORDER)
    ax.set_ylabel("improvement over default (%)")
    if data["improvement_pct"].abs().max() > 1000:
        # one surrogate gains ~40x while others gain a few percent: a linear axis hides them
        ax.set_yscale("symlog", linthresh=10)
        ax.set_ylabel("improvement over default (%, symlog)")
    ax.set_title("Fig. 6: 100 tests, mean of seeds (whiskers: min-max)", fontsize=10)
    return gaps


def fig10b_time(df: pd.DataFrame) -> Figure:
    """Fig. 10(b): tuning computation time (columns system, tuner, tuner_seconds_total) on a
    log axis, each bar labelled with its seconds: ClassyTune's few seconds beside GP-BO's
    hundreds would be an invisible sliver on a linear one."""
    require_columns(df, ("system", "tuner", "tuner_seconds_total"), "fig10b")
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    ax.set_yscale("log")
    gaps = grouped_bars(ax, df, "system", "tuner", "tuner_seconds_total", ["classytune", "gpbo"])
    for bars in ax.containers:
        if isinstance(bars, BarContainer):
            ax.bar_label(bars, fmt="%.3g s", fontsize=8, padding=2)
    low, high = ax.get_ylim()
    ax.set_ylim(low, high * 3)  # room for the tallest bar's label
    ax.set_ylabel("tuner computation time (s, log scale)\ntests excluded")
    ax.set_title("Fig. 10(b): 30 knobs, 100 tests", fontsize=10)
    legend_beside(ax)
    caption(fig, gaps)
    return fig


FIG5_ORDER = [
    "xgboost",
    "decision_tree",
    "logistic",
    "svm",
    "mlp",
    "random_forest",
    "dt_regressor",
]


def fig5_classifiers(df: pd.DataFrame) -> Figure:
    """Fig. 5: share of held-out winners recognised (columns system, model, share)."""
    require_columns(df, ("system", "model", "share"), "fig5")
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    data = df.assign(pct=100.0 * df["share"])
    gaps = grouped_bars(ax, data, "system", "model", "pct", FIG5_ORDER)
    ax.set_ylabel("held-out winners recognised (%)")
    ax.set_title("Fig. 5: classifiers trained on 50 samples", fontsize=10)
    legend_beside(ax)
    caption(fig, gaps)
    return fig


def fig9_induction(share: pd.DataFrame, sessions: pd.DataFrame | None = None) -> Figure:
    """Fig. 9: (a) winners recognised per induction (columns system, induction, share);
    (b) optional tuning improvement per induction (columns system, induction, improvement)."""
    require_columns(share, ("system", "induction", "share"), "fig9(a)")
    order = ["zorder", "difference", "concat"]
    panels = 2 if sessions is not None and not sessions.empty else 1
    fig = Figure(figsize=(5.5 * panels + 1.2, 4))
    axes = np.atleast_1d(fig.subplots(1, panels))
    gaps = grouped_bars(
        axes[0], share.assign(pct=100.0 * share["share"]), "system", "induction", "pct", order
    )
    axes[0].set_ylabel("held-out winners recognised (%)")
    axes[0].set_title("(a) XGBoost on 50 samples", fontsize=10)
    if panels == 2 and sessions is not None:
        require_columns(sessions, ("system", "induction", "improvement"), "fig9(b)")
        data = sessions.assign(pct=100.0 * sessions["improvement"])
        gaps += grouped_bars(axes[1], data, "system", "induction", "pct", order)
        axes[1].set_ylabel("improvement over default (%)")
        axes[1].set_title("(b) ClassyTune, 100 tests", fontsize=10)
    shared_legend(axes, axes[-1])
    fig.suptitle("Fig. 9: induction methods")
    caption(fig, gaps)
    return fig


def fig2_errors(errors: pd.DataFrame, curve: pd.DataFrame | None = None) -> Figure:
    """Fig. 2: (a) max relative error per model at 100 samples (columns system, model,
    max_rel_error); (b) optional error vs training size (columns system, n_train,
    max_rel_error)."""
    require_columns(errors, ("system", "model", "max_rel_error"), "fig2(a)")
    panels = 2 if curve is not None and not curve.empty else 1
    fig = Figure(figsize=(6.5 * panels, 4))
    axes = np.atleast_1d(fig.subplots(1, panels))
    gaps = grouped_bars(
        axes[0], errors, "system", "model", "max_rel_error", ["gbrt", "svr", "rfr", "cart"]
    )
    axes[0].set_ylabel("max relative error")
    axes[0].set_title("(a) 100 training samples", fontsize=10)
    legend_beside(axes[0])
    if panels == 2 and curve is not None:
        require_columns(curve, ("system", "n_train", "max_rel_error"), "fig2(b)")
        _error_curves(axes[1], curve)
    fig.suptitle("Fig. 2: regression models")
    caption(fig, gaps)
    return fig


def _error_curves(ax: matplotlib.axes.Axes, curve: pd.DataFrame) -> None:
    """Fig. 2(b): RFR's mean max relative error per training size, one line per system."""
    mean = curve.groupby(["system", "n_train"])["max_rel_error"].mean().reset_index()
    styles = series_styles([system_label(s) for s in mean["system"].unique()])
    for system, part in mean.groupby("system", sort=False):
        style = styles[system_label(system)]
        ax.plot(
            part["n_train"],
            part["max_rel_error"],
            marker=style.marker,
            color=style.colour,
            label=system_label(system),
        )
    ax.set_xlabel("training samples")
    ax.set_ylabel("max relative error (RFR)")
    ax.set_title("(b) error vs samples", fontsize=10)
    legend_beside(ax)


def _wide_log(values: pd.Series) -> bool:
    """A log x-axis for a positive numeric range spanning more than two decades."""
    numeric = pd.to_numeric(values, errors="coerce").dropna()
    return bool(len(numeric) and numeric.min() > 0 and numeric.max() / numeric.min() > 100)


def fig1_sweep(df: pd.DataFrame) -> Figure:
    """Fig. 1: performance vs one knob, the others at their defaults (one panel per system and
    workload; repeated passes drawn as separate points, their mean as the line).

    Columns: system, workload, knob, value, performance, status, is_default."""
    require_columns(df, ("system", "workload", "knob", "value", "performance", "status"), "fig1")
    ok = df[df["status"] == "SUCCEEDED"]
    panels = list(ok.groupby(["system", "workload", "knob"], sort=True).groups)
    fig = Figure(figsize=(5 * max(len(panels), 1) + 1, 4))
    axes = np.atleast_1d(fig.subplots(1, max(len(panels), 1)))
    notes: list[str] = []
    for ax, (system, workload, knob) in zip(axes, panels, strict=False):
        part = ok[(ok["system"] == system) & (ok["workload"] == workload) & (ok["knob"] == knob)]
        notes += _sweep_panel(ax, part, str(system), str(knob))
        ax.set_title(f"{system_label(system)} / {workload}", fontsize=10)
    shared_legend(axes, axes[-1])
    fig.suptitle("Fig. 1: performance vs one knob (others at default)")
    caption(fig, notes)
    return fig


def _sweep_panel(
    ax: matplotlib.axes.Axes, part: pd.DataFrame, system: str, knob: str
) -> list[str]:
    """One Fig. 1 panel: every test, their mean per value, the default starred."""
    numeric = pd.to_numeric(part["value"], errors="coerce")
    if numeric.notna().all():
        part = part.assign(value=numeric)
    mean = part.groupby("value")["performance"].mean()
    ax.scatter(
        part["value"], part["performance"], s=12, color="tab:blue", alpha=0.6, label="tests"
    )
    ax.plot(mean.index, mean.to_numpy(), color="tab:blue", linewidth=1, label="mean")
    if "is_default" in part:
        default = part[part["is_default"].astype(str) == "True"]
        ax.scatter(
            default["value"],
            default["performance"],
            s=40,
            marker="*",
            color="tab:red",
            label="default",
            zorder=3,
        )
    if numeric.notna().all() and _wide_log(part["value"]):
        ax.set_xscale("log")
    ax.set_xlabel(axis_label(knob, knob_unit(system, knob)))
    metric = str(part["metric"].iloc[0]) if "metric" in part else ""
    if system.startswith("surrogate_"):
        ax.set_ylabel("recorded performance, larger is better")
        return [SURROGATE_NOTE + " (its data gives the performance no unit)"]
    ax.set_ylabel(axis_label(metric or "performance", metric_unit(metric)))
    return []


def fig3_initial(runs: pd.DataFrame, curves: pd.DataFrame | None = None) -> Figure:
    """Fig. 3: GP-BO by initial sample size: (a) improvement (columns system, n_initial,
    improvement), (b) optional mean best-so-far curves (columns n_initial, trial, best); one
    colour per initial size in both panels."""
    require_columns(runs, ("system", "n_initial", "improvement"), "fig3")
    panels = 2 if curves is not None and not curves.empty else 1
    fig = Figure(figsize=(5.5 * panels + 1.2, 4))
    axes = np.atleast_1d(fig.subplots(1, panels))
    sizes = [f"n_initial={int(n)}" for n in sorted(runs["n_initial"].unique())]
    data = runs.assign(
        pct=100.0 * runs["improvement"],
        init=runs["n_initial"].map(lambda n: f"n_initial={int(n)}"),
    )
    gaps = grouped_bars(axes[0], data, "system", "init", "pct", sizes)
    axes[0].set_ylabel("improvement over default (%)")
    axes[0].set_title("(a) after 100 tests, mean of seeds", fontsize=10)
    if panels == 2 and curves is not None:
        require_columns(curves, ("n_initial", "trial", "best"), "fig3 curves")
        _convergence(axes[1], curves, sizes)
    shared_legend(axes[:1], axes[-1])
    fig.suptitle("Fig. 3: GP-BO with different initial sample sizes")
    caption(fig, gaps)
    return fig


def _convergence(ax: matplotlib.axes.Axes, curves: pd.DataFrame, sizes: list[str]) -> None:
    """Fig. 3(b): mean best-so-far per initial size, in the bars' colours."""
    styles = series_styles(sizes)
    mean = curves.groupby(["n_initial", "trial"])["best"].mean().reset_index()
    for n, part in mean.groupby("n_initial"):
        label = f"n_initial={int(n)}"
        colour = styles[label].colour if label in styles else None
        ax.plot(part["trial"], part["best"], color=colour, label=label)
    ax.set_xlabel("tests")
    ax.set_ylabel("best so far (mean of seeds)")
    ax.set_title("(b) convergence", fontsize=10)


def fig10a_improvement(df: pd.DataFrame) -> Figure:
    """Fig. 10(a): improvement over default with 30 knobs (columns system, tuner,
    improvement), mean of seeds. With the real systems' panel beside it:
    :func:`paper.figures.plot_real.fig10a_figure`."""
    fig = Figure(figsize=(7.5, 4))
    ax = fig.subplots()
    lines = fig10a_bars(ax, df)
    legend_beside(ax)
    caption(fig, lines)
    return fig


def fig10a_bars(ax: matplotlib.axes.Axes, df: pd.DataFrame) -> list[str]:
    """Draw the surrogate/synthetic Fig. 10(a) panel on ``ax``; return its caption lines."""
    require_columns(df, ("system", "tuner", "improvement"), "fig10a")
    gaps = grouped_bars(
        ax, df.assign(pct=100.0 * df["improvement"]), "system", "tuner", "pct", FIG6_ORDER
    )
    ax.set_ylabel("improvement over default (%)")
    ax.set_title("Fig. 10(a): 30 knobs, 100 tests (whiskers: min-max)", fontsize=10)
    return gaps


FIG7_ORDER = [
    "default",
    "expert_manual",
    "expert_script",
    "gpbo",
    "gpbo_paper",
    "bestconfig",
    "classytune_paper",
    "classytune",
]


def fig7_expert(df: pd.DataFrame) -> Figure:
    """Fig. 7 on the surrogates alone; with the real TPC-C panel beside it:
    :func:`paper.figures.plot_real.fig7_figure`."""
    fig = Figure(figsize=(7.5, 4))
    ax = fig.subplots()
    lines = fig7_bars(ax, df)
    legend_beside(ax)
    caption(fig, lines)
    return fig


def fig7_bars(ax: matplotlib.axes.Axes, df: pd.DataFrame) -> list[str]:
    """Draw Fig. 7's surrogate panel on ``ax``: each tuner's best value (columns system, tuner,
    best_value) as improvement over the ``default`` rows' value, in %, the default being the
    zero line. Percent, not a ratio: the real panel beside it shows confirmed improvement in
    %, as Fig. 6 and 10(a) do, so every improvement axis of the paper reads the same. The
    surrogates' performance is larger-is-better. The paper normalises to the manual setting;
    its ratios were lost. Returns the panel's caption lines."""
    require_columns(df, ("system", "tuner", "best_value"), "fig7")
    default = df[df["tuner"] == "default"].groupby("system")["best_value"].mean()
    tuned = df[df["tuner"] != "default"]
    data = tuned.assign(pct=100.0 * (tuned["best_value"] / tuned["system"].map(default) - 1.0))
    gaps = grouped_bars(ax, data, "system", "tuner", "pct", FIG7_ORDER)
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_ylabel("improvement over default (%)")
    ax.set_title("MySQL surrogates: expert settings (1 test) vs tuners (100 tests)", fontsize=10)
    return gaps
