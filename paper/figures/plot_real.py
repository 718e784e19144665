"""The real systems' panels of Fig. 6, Fig. 7 and Fig. 10(a): confirmed improvement per system
and tuner, with each system's default noise, drawn beside or below (never into) the surrogate
panel, with one legend for both."""

from __future__ import annotations

from collections.abc import Callable

import matplotlib.axes
import pandas as pd
from matplotlib.figure import Figure

from paper.figures.plots import (
    FIG6_ORDER,
    FIG7_ORDER,
    caption,
    fig6_bars,
    fig6_width,
    fig7_bars,
    fig10a_bars,
    grouped_bars,
    require_columns,
)
from paper.figures.style import legend_beside, shared_legend
from paper.real_panel import pooled_rsd

__all__ = [
    "LEGEND_WIDTH",
    "MAX_WIDTH",
    "beside_real",
    "fig6_figure",
    "fig7_figure",
    "fig10a_figure",
    "real_panel",
]

#: draws the surrogate/synthetic panel on an axes and returns its caption lines
PanelDrawer = Callable[[matplotlib.axes.Axes], list[str]]


def fig6_figure(df: pd.DataFrame, real: pd.DataFrame | None = None) -> Figure:
    """Fig. 6: the surrogate panel, and with ``real`` (one row per real-system session,
    :mod:`paper.real_panel`) the real systems' panel beside it."""
    return beside_real(lambda ax: fig6_bars(ax, df), fig6_width(df), real, FIG6_ORDER, "fig6")


def fig7_figure(df: pd.DataFrame, real: pd.DataFrame | None = None) -> Figure:
    """Fig. 7: the MySQL surrogates' panel, and the real TPC-C sessions' panel beside it."""
    return beside_real(lambda ax: fig7_bars(ax, df), 6.0, real, FIG7_ORDER, "fig7")


def fig10a_figure(df: pd.DataFrame, real: pd.DataFrame | None = None) -> Figure:
    """Fig. 10(a): the 30-knob surrogate panel, and the real 30-knob TPC-C panel beside it."""
    return beside_real(lambda ax: fig10a_bars(ax, df), 6.0, real, FIG6_ORDER, "fig10a")


#: wider than this (inches) side by side, the two panels are stacked: a 5:1 strip is unreadable
MAX_WIDTH = 14.0
#: room for the shared legend to the right of the panels (inches)
LEGEND_WIDTH = 1.6


def beside_real(
    draw: PanelDrawer, width: float, real: pd.DataFrame | None, order: list[str], name: str
) -> Figure:
    """One figure of ``width`` inches drawn by ``draw``; with real sessions, a second axes of
    them to its right, or below it when both side by side would be wider than
    :data:`MAX_WIDTH`. Two axes because a surrogate's best value and a real session's
    confirmed improvement are different measurements: one axis would invite comparing them.
    One legend serves both: a tuner has one colour in every panel."""
    if real is None or real.empty:
        fig = Figure(figsize=(width + LEGEND_WIDTH, 4.5))
        ax = fig.subplots()
        lines = draw(ax)
        legend_beside(ax)
        caption(fig, lines)
        return fig
    groups = int(real[["system", "workload"]].drop_duplicates().shape[0])
    real_width = max(5.0, 1.1 * groups + 2)
    if width + real_width <= MAX_WIDTH:
        fig = Figure(figsize=(width + real_width + LEGEND_WIDTH, 4.5))
        ax, real_ax = fig.subplots(1, 2, width_ratios=[width, real_width])
        holder = real_ax
    else:
        fig = Figure(figsize=(max(width, real_width) + LEGEND_WIDTH, 9.0))
        ax, real_ax = fig.subplots(2, 1)
        holder = ax
    lines = draw(ax) + real_panel(real_ax, real, order, f"{name}_real")
    shared_legend((ax, real_ax), holder)
    caption(fig, lines)
    return fig


def real_panel(
    ax: matplotlib.axes.Axes,
    df: pd.DataFrame,
    order: list[str] = FIG6_ORDER,
    name: str = "fig6_real",
) -> list[str]:
    """Draw the sessions of ``df`` (system, workload, tuner, seed, improvement, default_rsd,
    tests) on ``ax``, tuners in ``order``; return the caption lines (gaps, each system's
    default noise). The caller places the legend."""
    require_columns(
        df, ("system", "workload", "tuner", "seed", "improvement", "default_rsd", "tests"), name
    )
    data = df.assign(
        panel=df["system"] + "/" + df["workload"], improvement_pct=100.0 * df["improvement"]
    )
    gaps = grouped_bars(ax, data, "panel", "tuner", "improvement_pct", order)
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_ylabel("confirmed improvement over default (%)")
    seeds = data.groupby(["panel", "tuner"])["seed"].nunique()
    span = str(seeds.min()) if seeds.min() == seeds.max() else f"{seeds.min()}-{seeds.max()}"
    ax.set_title(f"real systems: mean of {span} seeds (whiskers: min-max)", fontsize=10)
    noise = data.groupby("panel")["default_rsd"].apply(pooled_rsd)
    gaps.append(
        f"real systems: the answer re-measured 3x against the default 3x after {_budgets(data)}"
    )
    gaps.append(
        "real systems' default noise (relative sd of its re-measurements): "
        + ", ".join(f"{p} {100 * v:.0f}%" for p, v in noise.items())
    )
    return gaps


def _budgets(data: pd.DataFrame) -> str:
    """How many tests the sessions ran: "100 tests", or per group of tuners when they differ
    (Fig. 7's expert settings are one test after the default)."""
    per_tuner = data.groupby("tuner")["tests"].max()
    counts = sorted(set(per_tuner))
    if len(counts) == 1:
        return f"{counts[0]} tests"
    return " or ".join(
        f"{n} tests ({', '.join(t for t, c in per_tuner.items() if c == n)})" for n in counts
    )
