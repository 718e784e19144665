"""The real systems' panel of Fig. 6: confirmed improvement per system and tuner, with each
system's default noise, drawn beside (never into) the surrogate panel."""

from __future__ import annotations

import matplotlib.axes
import pandas as pd
from matplotlib.figure import Figure

from paper.figures.plots import (
    FIG6_ORDER,
    caption,
    fig6_bars,
    fig6_improvement,
    fig6_width,
    grouped_bars,
    require_columns,
)
from paper.real_panel import pooled_rsd

__all__ = ["fig6_figure", "real_panel", "real_panels"]


def fig6_figure(df: pd.DataFrame, real: pd.DataFrame | None = None) -> Figure:
    """Fig. 6: the surrogate panel, and with ``real`` (one row per real-system session,
    :mod:`paper.real_panel`) the real systems' panel beside it, never mixed into it."""
    if real is None or real.empty:
        return fig6_improvement(df)
    width, real_width = fig6_width(df), max(5.0, 1.1 * real_panels(real) + 2)
    fig = Figure(figsize=(width + real_width, 4.5))
    ax, real_ax = fig.subplots(1, 2, width_ratios=[width, real_width])
    caption(fig, fig6_bars(ax, df) + real_panel(real_ax, real))
    return fig


def real_panels(df: pd.DataFrame) -> int:
    """How many system/workload groups the real panel has."""
    return int(df[["system", "workload"]].drop_duplicates().shape[0])


def real_panel(ax: matplotlib.axes.Axes, df: pd.DataFrame) -> list[str]:
    """Draw the sessions of ``df`` (system, workload, tuner, seed, improvement, default_rsd)
    on ``ax``; return the caption lines (gaps, each system's default noise)."""
    require_columns(
        df, ("system", "workload", "tuner", "seed", "improvement", "default_rsd"), "fig6_real"
    )
    data = df.assign(
        panel=df["system"] + "/" + df["workload"], improvement_pct=100.0 * df["improvement"]
    )
    # The legend goes in a strip above the tallest whisker, so that it never hides a bar.
    strip = {"loc": "upper center", "ncol": 4, "frameon": False}
    gaps = grouped_bars(ax, data, "panel", "tuner", "improvement_pct", FIG6_ORDER, strip)
    low, high = ax.get_ylim()
    ax.set_ylim(low, high + 0.25 * (high - low))
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_ylabel("confirmed improvement over default (%)")
    seeds = data.groupby(["panel", "tuner"])["seed"].nunique()
    span = str(seeds.min()) if seeds.min() == seeds.max() else f"{seeds.min()}-{seeds.max()}"
    ax.set_title(f"real systems: mean of {span} seeds (whiskers: min-max)", fontsize=10)
    noise = data.groupby("panel")["default_rsd"].apply(pooled_rsd)
    gaps.append(
        "real systems: the answer re-measured 3x against the default 3x after 100 tests; "
        "default noise (relative sd of its re-measurements): "
        + ", ".join(f"{p} {100 * v:.0f}%" for p, v in noise.items())
    )
    return gaps
