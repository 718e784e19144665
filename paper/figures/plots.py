"""Pure plotting functions: a tidy DataFrame in, a matplotlib Figure out (no I/O).

Each function documents the columns it needs; the CLI writes the figures to PNG files.
"""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and in CI

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper.figures.units import axis_label, knob_unit, metric_unit

__all__ = [
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


def grouped_bars(
    ax: matplotlib.axes.Axes,
    df: pd.DataFrame,
    group: str,
    series: str,
    value: str,
    order: list[str] | None = None,
    legend: dict[str, Any] | None = None,
) -> list[str]:
    """Mean of ``value`` per (group, series) as grouped bars with min-max whiskers, and a
    legend (``legend``: its placement, matplotlib's keywords); returns one caption line per
    series that has no bar on some group (the gap, stated)."""
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
        err = np.vstack(
            [mean - part["min"].to_numpy(dtype=float), part["max"].to_numpy(dtype=float) - mean]
        )
        # a tuner keeps its colour across panels that lack some of the others
        known = order or []
        color = f"C{known.index(name)}" if name in known else f"C{len(known) + i}"
        ax.bar(
            x + (i - (len(names) - 1) / 2) * width,
            mean,
            width,
            label=name,
            yerr=err,
            capsize=2,
            color=color,
        )
    ax.set_xticks(x)
    ax.set_xticklabels([system_label(g) for g in groups], rotation=30, ha="right", fontsize=8)
    ax.legend(fontsize=8, **(legend or {}))
    gaps = []
    for name in names:
        missing = sorted(set(groups) - set(stats.loc[stats[series] == name, group]))
        if missing:
            where = ", ".join(system_label(g) for g in missing)
            gaps.append(f"no {name} bar: no finished run on {where}")
    if any(str(g).startswith("surrogate_") for g in groups):
        gaps.append(SURROGATE_NOTE)
    return gaps


#: What the dagger after a system's name means (every figure that shows a surrogate says it).
SURROGATE_NOTE = (
    "† surrogate: a random-forest model of real samples BestConfig's authors recorded, "
    "not the real system"
)


def caption(fig: Figure, lines: list[str]) -> None:
    """Lay the figure out with ``lines`` (gaps, what a mark means) printed below the axes."""
    unique = list(dict.fromkeys(lines))
    if not unique:
        fig.tight_layout()
        return
    fig.text(0.01, 0.01, "\n".join(unique), fontsize=7, va="bottom", ha="left")
    height = fig.get_figheight()
    fig.tight_layout(rect=(0.0, min(0.4, (0.18 * len(unique) + 0.1) / height), 1.0, 1.0))


def fig6_improvement(df: pd.DataFrame) -> Figure:
    """Fig. 6: improvement over default (columns system, tuner, improvement), mean of seeds.
    With the real systems' panel beside it: :func:`paper.figures.plot_real.fig6_figure`."""
    fig = Figure(figsize=(fig6_width(df), 4.5))
    caption(fig, fig6_bars(fig.subplots(), df))
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


#: The paper's method first, our default mode beside it, then the baselines.
FIG6_ORDER = ["classytune_paper", "classytune", "bestconfig", "gpbo", "gpbo_paper"]


def fig10b_time(df: pd.DataFrame) -> Figure:
    """Fig. 10(b): tuning computation time (columns system, tuner, tuner_seconds_total)."""
    require_columns(df, ("system", "tuner", "tuner_seconds_total"), "fig10b")
    fig = Figure(figsize=(5, 4))
    ax = fig.subplots()
    gaps = grouped_bars(ax, df, "system", "tuner", "tuner_seconds_total", ["classytune", "gpbo"])
    ax.set_ylabel("tuner computation time (s), tests excluded")
    ax.set_title("Fig. 10(b): 30 knobs, 100 tests")
    caption(fig, gaps)
    return fig


def fig5_classifiers(df: pd.DataFrame) -> Figure:
    """Fig. 5: share of held-out winners recognised (columns system, model, share)."""
    require_columns(df, ("system", "model", "share"), "fig5")
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    gaps = grouped_bars(
        ax,
        df.assign(pct=100.0 * df["share"]),
        "system",
        "model",
        "pct",
        ["xgboost", "decision_tree", "logistic", "svm", "mlp", "random_forest", "dt_regressor"],
    )
    ax.set_ylabel("held-out winners recognised (%)")
    ax.set_title("Fig. 5: classifiers trained on 50 samples")
    caption(fig, gaps)
    return fig


def fig9_induction(share: pd.DataFrame, sessions: pd.DataFrame | None = None) -> Figure:
    """Fig. 9: (a) winners recognised per induction (columns system, induction, share);
    (b) optional tuning improvement per induction (columns system, induction, improvement)."""
    require_columns(share, ("system", "induction", "share"), "fig9(a)")
    order = ["zorder", "difference", "concat"]
    panels = 2 if sessions is not None and not sessions.empty else 1
    fig = Figure(figsize=(5.5 * panels, 4))
    axes = np.atleast_1d(fig.subplots(1, panels))
    gaps = grouped_bars(
        axes[0], share.assign(pct=100.0 * share["share"]), "system", "induction", "pct", order
    )
    axes[0].set_ylabel("held-out winners recognised (%)")
    axes[0].set_title("(a) XGBoost on 50 samples")
    if panels == 2 and sessions is not None:
        require_columns(sessions, ("system", "induction", "improvement"), "fig9(b)")
        gaps += grouped_bars(
            axes[1],
            sessions.assign(pct=100.0 * sessions["improvement"]),
            "system",
            "induction",
            "pct",
            order,
        )
        axes[1].set_ylabel("improvement over default (%)")
        axes[1].set_title("(b) ClassyTune, 100 tests")
    fig.suptitle("Fig. 9: induction methods")
    caption(fig, gaps)
    return fig


def fig2_errors(errors: pd.DataFrame, curve: pd.DataFrame | None = None) -> Figure:
    """Fig. 2: (a) max relative error per model at 100 samples (columns system, model,
    max_rel_error); (b) optional error vs training size (columns system, n_train,
    max_rel_error)."""
    require_columns(errors, ("system", "model", "max_rel_error"), "fig2(a)")
    panels = 2 if curve is not None and not curve.empty else 1
    fig = Figure(figsize=(5.5 * panels, 4))
    axes = np.atleast_1d(fig.subplots(1, panels))
    gaps = grouped_bars(
        axes[0], errors, "system", "model", "max_rel_error", ["gbrt", "svr", "rfr", "cart"]
    )
    axes[0].set_ylabel("max relative error")
    axes[0].set_title("(a) 100 training samples")
    if panels == 2 and curve is not None:
        require_columns(curve, ("system", "n_train", "max_rel_error"), "fig2(b)")
        mean = curve.groupby(["system", "n_train"])["max_rel_error"].mean().reset_index()
        for system, part in mean.groupby("system"):
            axes[1].plot(
                part["n_train"],
                part["max_rel_error"],
                marker="o",
                label=system_label(system),
            )
        axes[1].set_xlabel("training samples")
        axes[1].set_ylabel("max relative error (RFR)")
        axes[1].set_title("(b) error vs samples")
        axes[1].legend(fontsize=8)
    fig.suptitle("Fig. 2: regression models")
    caption(fig, gaps)
    return fig


def system_label(name: object) -> str:
    """A system's label: surrogates marked with † (:data:`SURROGATE_NOTE` says what it means)."""
    text = str(name)
    return f"{text.removeprefix('surrogate_')} †" if text.startswith("surrogate_") else text


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
    fig = Figure(figsize=(5 * max(len(panels), 1), 4))
    axes = np.atleast_1d(fig.subplots(1, max(len(panels), 1)))
    notes: list[str] = []
    for ax, (system, workload, knob) in zip(axes, panels, strict=False):
        part = ok[(ok["system"] == system) & (ok["workload"] == workload) & (ok["knob"] == knob)]
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
        ax.set_xlabel(axis_label(str(knob), knob_unit(str(system), str(knob))))
        metric = str(part["metric"].iloc[0]) if "metric" in part else ""
        if str(system).startswith("surrogate_"):
            ax.set_ylabel("recorded performance, larger is better")
            notes.append(SURROGATE_NOTE + " (its data gives the performance no unit)")
        else:
            ax.set_ylabel(axis_label(metric or "performance", metric_unit(metric)))
        ax.set_title(f"{system_label(system)} / {workload}", fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle("Fig. 1: performance vs one knob (others at default)")
    caption(fig, notes)
    return fig


def fig3_initial(runs: pd.DataFrame, curves: pd.DataFrame | None = None) -> Figure:
    """Fig. 3: GP-BO by initial sample size: (a) improvement (columns system, n_initial,
    improvement), (b) optional mean best-so-far curves (columns n_initial, trial, best)."""
    require_columns(runs, ("system", "n_initial", "improvement"), "fig3")
    panels = 2 if curves is not None and not curves.empty else 1
    fig = Figure(figsize=(5.5 * panels, 4))
    axes = np.atleast_1d(fig.subplots(1, panels))
    data = runs.assign(
        pct=100.0 * runs["improvement"],
        init=runs["n_initial"].map(lambda n: f"n_initial={int(n)}"),
    )
    gaps = grouped_bars(
        axes[0],
        data,
        "system",
        "init",
        "pct",
        [f"n_initial={n}" for n in sorted(runs["n_initial"].unique())],
    )
    axes[0].set_ylabel("improvement over default (%)")
    axes[0].set_title("(a) after 100 tests, mean of seeds")
    if panels == 2 and curves is not None:
        require_columns(curves, ("n_initial", "trial", "best"), "fig3 curves")
        mean = curves.groupby(["n_initial", "trial"])["best"].mean().reset_index()
        for n, part in mean.groupby("n_initial"):
            axes[1].plot(part["trial"], part["best"], label=f"n_initial={int(n)}")
        axes[1].set_xlabel("tests")
        axes[1].set_ylabel("best so far (mean of seeds)")
        axes[1].set_title("(b) convergence")
        axes[1].legend(fontsize=8)
    fig.suptitle("Fig. 3: GP-BO with different initial sample sizes")
    caption(fig, gaps)
    return fig


def fig10a_improvement(df: pd.DataFrame) -> Figure:
    """Fig. 10(a): improvement over default with 30 knobs (columns system, tuner,
    improvement), mean of seeds. With the real systems' panel beside it:
    :func:`paper.figures.plot_real.fig10a_figure`."""
    fig = Figure(figsize=(6, 4))
    caption(fig, fig10a_bars(fig.subplots(), df))
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
    fig = Figure(figsize=(6, 4))
    caption(fig, fig7_bars(fig.subplots(), df))
    return fig


def fig7_bars(ax: matplotlib.axes.Axes, df: pd.DataFrame) -> list[str]:
    """Draw Fig. 7's surrogate panel on ``ax``: best value per tuner (columns system, tuner,
    best_value), the default as its own bar, normalised to the default (the paper normalises
    to the manual setting; its ratios were lost). Returns its caption lines."""
    require_columns(df, ("system", "tuner", "best_value"), "fig7")
    default = df[df["tuner"] == "default"].groupby("system")["best_value"].mean()
    data = df.assign(ratio=df["best_value"] / df["system"].map(default))
    gaps = grouped_bars(ax, data, "system", "tuner", "ratio", FIG7_ORDER)
    ax.axhline(1.0, color="grey", linewidth=1, linestyle="--")
    ax.set_ylabel("best throughput / default")
    ax.set_title(
        "Fig. 7 on MySQL surrogates: expert settings (1 test) vs tuners (100 tests)", fontsize=10
    )
    return gaps
