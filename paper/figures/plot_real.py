"""The real systems' panel of Fig. 6: confirmed improvement per system and tuner, with each
system's default noise, drawn beside (never into) the surrogate panel."""

from __future__ import annotations

import matplotlib.axes
import pandas as pd

__all__ = ["real_panel", "real_panels"]


def real_panels(df: pd.DataFrame) -> int:
    """How many system/workload groups the real panel has."""
    return int(df[["system", "workload"]].drop_duplicates().shape[0])


def real_panel(ax: matplotlib.axes.Axes, df: pd.DataFrame) -> list[str]:
    """Draw the sessions of ``df`` (system, workload, tuner, seed, improvement, default_rsd)
    on ``ax``; return the caption lines (gaps, each system's default noise)."""
    from paper.figures.plots import FIG6_ORDER, grouped_bars, require_columns

    require_columns(
        df, ("system", "workload", "tuner", "seed", "improvement", "default_rsd"), "fig6_real"
    )
    data = df.assign(
        panel=df["system"] + "/" + df["workload"], improvement_pct=100.0 * df["improvement"]
    )
    gaps = grouped_bars(ax, data, "panel", "tuner", "improvement_pct", FIG6_ORDER)
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_ylabel("confirmed improvement over default (%)")
    seeds = data.groupby(["panel", "tuner"])["seed"].nunique()
    span = str(seeds.min()) if seeds.min() == seeds.max() else f"{seeds.min()}-{seeds.max()}"
    ax.set_title(f"real systems: mean of {span} seeds (whiskers: min-max)", fontsize=10)
    noise = data.groupby("panel")["default_rsd"].apply(lambda s: (s.dropna() ** 2).mean() ** 0.5)
    gaps.append(
        "real systems: the answer re-measured 3x against the default 3x after 100 tests; "
        "default noise (relative sd of its re-measurements): "
        + ", ".join(f"{p} {100 * v:.0f}%" for p, v in noise.items())
    )
    return gaps
