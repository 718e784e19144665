"""Grouped bars with min-max whiskers, where a measured zero and a missing value look different.

A bar of height zero is as invisible as a bar nobody measured, and a reader takes one for the
other. :func:`bar_table` states what each (group, series) slot holds (``bar``, ``zero`` or
``missing``); the drawing marks a zero with its series' marker and a "0" on the baseline, and
a missing slot with a grey "n/a", and the caption names every missing bar. Colours and markers
come from :mod:`paper.figures.style`, so a series looks the same in every figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from paper.figures.style import SURROGATE_NOTE, SeriesStyle, series_styles, system_label

__all__ = ["BAR", "MARKS_NOTE", "MISSING", "ZERO", "bar_table", "grouped_bars"]

BAR, ZERO, MISSING = "bar", "zero", "missing"
#: the caption line of a panel that has a zero or a missing slot
MARKS_NOTE = "0 (marker on the baseline): measured as zero; n/a: nothing measured"


def _series_order(present: Iterable[object], order: Sequence[str] | None) -> list[object]:
    """The given order first (the paper's), then the other series alphabetically."""
    have = set(present)
    names: list[object] = [n for n in order or [] if n in have]
    return names + sorted(have - set(names), key=str)


def bar_table(
    df: pd.DataFrame, group: str, series: str, value: str, order: Sequence[str] | None = None
) -> pd.DataFrame:
    """One row per (group, series) slot, groups sorted and series in ``order``: the ``mean``,
    ``low`` and ``high`` of ``value``, ``n`` values, and ``state``: ``missing`` when no value
    was measured, ``zero`` when their mean is 0, else ``bar``."""
    stats = df.groupby([group, series])[value].agg(["mean", "min", "max", "count"])
    groups = sorted(df[group].unique())
    names = _series_order(df[series].unique(), order)
    slots = pd.MultiIndex.from_product([groups, names], names=[group, series])
    table = stats.reindex(slots).reset_index()
    table = table.rename(columns={"min": "low", "max": "high", "count": "n"})
    table["n"] = table["n"].fillna(0).astype(int)
    mean = table["mean"].to_numpy(dtype=float)
    missing = (table["n"] == 0).to_numpy() | np.isnan(mean)
    zero = ~missing & np.isclose(np.nan_to_num(mean), 0.0, rtol=0.0, atol=1e-12)
    table["state"] = np.select([missing, zero], [MISSING, ZERO], BAR)
    return table


def grouped_bars(
    ax: Axes,
    df: pd.DataFrame,
    group: str,
    series: str,
    value: str,
    order: Sequence[str] | None = None,
) -> list[str]:
    """Mean of ``value`` per (group, series) as grouped bars with min-max whiskers, zero and
    missing slots marked; returns the panel's caption lines (each missing bar, stated). Set a
    log y-axis before calling: the marks then sit at the axes' bottom."""
    table = bar_table(df, group, series, value, order)
    groups = list(dict.fromkeys(table[group]))
    names = [str(n) for n in dict.fromkeys(table[series])]
    styles = series_styles(names)
    width = 0.8 / max(len(names), 1)
    x = np.arange(len(groups))
    for i, name in enumerate(names):
        part = table[table[series].astype(str) == name]
        offsets = x + (i - (len(names) - 1) / 2) * width
        _bars(ax, part, offsets, width, name, styles[name])
        _marks(ax, part, offsets, styles[name])
    ax.set_xticks(x)
    ax.set_xticklabels([system_label(g) for g in groups], rotation=30, ha="right", fontsize=8)
    return _caption_lines(table, group, series)


def _bars(
    ax: Axes, part: pd.DataFrame, x: np.ndarray, width: float, name: str, style: SeriesStyle
) -> None:
    shown = (part["state"] != MISSING).to_numpy()
    mean = part["mean"].to_numpy(dtype=float)[shown]
    err = np.vstack(
        [
            mean - part["low"].to_numpy(dtype=float)[shown],
            part["high"].to_numpy(dtype=float)[shown] - mean,
        ]
    )
    ax.bar(x[shown], mean, width, label=name, yerr=err, capsize=2, color=style.colour)


def _marks(ax: Axes, part: pd.DataFrame, x: np.ndarray, style: SeriesStyle) -> None:
    """A zero's marker and "0", a missing slot's "n/a", on the baseline (the axes' bottom on a
    log axis, where 0 has no place)."""
    log = ax.get_yscale() == "log"
    where = ax.get_xaxis_transform() if log else ax.transData
    base = 0.02 if log else 0.0
    state = part["state"].to_numpy()
    for xi in x[state == ZERO]:
        ax.plot(
            [xi],
            [base],
            marker=style.marker,
            color=style.colour,
            markersize=5,
            linestyle="none",
            transform=where,
            zorder=3,
            clip_on=False,  # half of it lies below a bar axis's bottom edge
        )
        ax.annotate(
            "0",
            (xi, base),
            xycoords=where,
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
        )
    for xi in x[state == MISSING]:
        ax.annotate(
            "n/a",
            (xi, base),
            xycoords=where,
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
            color="dimgray",
            rotation=90,
        )


def _caption_lines(table: pd.DataFrame, group: str, series: str) -> list[str]:
    lines = []
    for name, part in table.groupby(series, sort=False):
        missing = part.loc[part["state"] == MISSING, group]
        if len(missing):
            where = ", ".join(system_label(g) for g in missing)
            lines.append(f"no {name} bar: no finished run on {where}")
    if (table["state"] != BAR).any():
        lines.append(MARKS_NOTE)
    if any(str(g).startswith("surrogate_") for g in table[group]):
        lines.append(SURROGATE_NOTE)
    return lines
