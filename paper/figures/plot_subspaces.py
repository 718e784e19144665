"""Fig. 8: the promising subspaces ClassyTune found, over the knob its classifier ranks first.

A numeric knob is drawn on its own axis (logarithmic where its range is); an enum or bool knob
is drawn as categories (one column per value, the points spread within it so that they do not
hide each other), with a subspace shading the categories it spans, never as a number line.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from paper.figures.plots import caption, require_columns
from paper.figures.style import SURROGATE_NOTE, legend_beside, system_label
from paper.figures.units import axis_label, knob_unit, metric_unit

__all__ = ["fig8_subspaces"]

_COLOURS = ["tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink"]
_SPREAD = 0.3  # half-width of a category's column of points


def _categories(points: pd.DataFrame) -> list[str] | None:
    """The knob's values as ordered categories, or None for a numeric knob."""
    kinds = set(points["knob_type"].astype(str)) if "knob_type" in points else set()
    numeric = pd.to_numeric(points["value"], errors="coerce")
    if not kinds & {"enum", "bool"} and numeric.notna().all():
        return None
    values = points["value"].astype(str)
    if numeric.notna().all():  # numbers as categories: in numeric order
        return [str(v) for v in sorted(set(points["value"]), key=float)]
    return sorted(set(values))


def _score_label(points: pd.DataFrame) -> str:
    if "metric" in points and points["metric"].notna().any():
        metric = str(points["metric"].iloc[0])
        return axis_label(metric, metric_unit(metric))
    return "recorded performance, larger is better"


def _draw(ax: Axes, part: pd.DataFrame, own: pd.DataFrame, cats: list[str] | None) -> None:
    where = {c: i for i, c in enumerate(cats or [])}
    spread = np.random.default_rng(0)

    def x_of(values: pd.Series) -> np.ndarray:
        if cats is None:
            return values.to_numpy(dtype=float)
        base = values.astype(str).map(where).to_numpy(dtype=float)
        return base + spread.uniform(-_SPREAD, _SPREAD, len(base))

    for phase, colour in (("initial", "tab:gray"), ("resampled", "tab:blue")):
        sel = part[part["phase"] == phase]
        ax.scatter(x_of(sel["value"]), sel["score"], s=8, alpha=0.6, color=colour,
                   label=f"{phase} ({len(sel)})")  # fmt: skip
    for i, box in enumerate(own.itertuples()):
        if cats is None:
            low, high = float(box.low), float(box.high)
        else:  # the categories the box spans, whole
            low, high = where[str(box.low)] - 0.45, where[str(box.high)] + 0.45
        ax.axvspan(low, high, alpha=0.25, color=_COLOURS[i % len(_COLOURS)],
                   label=f"subspace {i + 1} ({box.winners} winners)")  # fmt: skip
    if not own.empty:
        pivot = own["pivot"].iloc[0]
        x = float(pivot) if cats is None else float(where[str(pivot)])
        ax.axvline(x, color="black", linestyle="--", linewidth=1, label="pivot (best measured)")
    if cats is not None:
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats)
    elif "log_scale" in own and own["log_scale"].astype(str).eq("True").any():
        ax.set_xscale("log")


def _zoom(ax: Axes, own: pd.DataFrame) -> None:
    lo, hi = float(own["low"].min()), float(own["high"].max())
    if ax.get_xscale() == "log":
        ax.set_xlim(lo / 1.1, hi * 1.1)
    else:
        pad = 0.1 * (hi - lo) or 0.05 * abs(hi) or 1.0
        ax.set_xlim(lo - pad, hi + pad)
    ax.set_title("zoom on the subspaces", fontsize=9)


def fig8_subspaces(points: pd.DataFrame, boxes: pd.DataFrame) -> Figure:
    """Every test's performance over the most influential knob, the promising subspaces'
    bounds over that knob as shaded spans; one column per system, the full range on top and,
    for a numeric knob, a zoom on the subspaces below (they are narrow: bounded by the nearest
    evaluated settings).

    ``points``: system, knob, value, score, status, phase (initial/resampled), optional
    knob_type, metric and unit; ``boxes``: system, low, high, winners, pivot, optional
    log_scale."""
    require_columns(points, ("system", "knob", "value", "score", "status", "phase"), "fig8")
    require_columns(boxes, ("system", "low", "high", "winners", "pivot"), "fig8 subspaces")
    systems = sorted(points["system"].unique())
    fig = Figure(figsize=(7.5 * len(systems), 8))
    grid = np.array(fig.subplots(2, len(systems), squeeze=False))
    notes = []
    for col, system in enumerate(systems):
        part = points[(points["system"] == system) & (points["status"] == "SUCCEEDED")]
        own = boxes[boxes["system"] == system]
        cats = _categories(part)
        knob = str(part["knob"].iloc[0]) if len(part) else "knob"
        for row, ax in enumerate(grid[:, col]):
            if row == 1 and (cats is not None or own.empty):
                ax.set_visible(False)  # categories need no zoom: each is a whole column
                continue
            _draw(ax, part, own, cats)
            unit = knob_unit(str(system), knob)
            ax.set_xlabel(axis_label(knob, "categories" if cats is not None else unit))
            ax.set_ylabel(_score_label(part))
            if row == 0:
                ax.set_title(system_label(system), fontsize=10)
                legend_beside(ax, fontsize=7)
            else:
                _zoom(ax, own)
        if str(system).startswith("surrogate_"):
            notes.append(SURROGATE_NOTE + " (its data gives the performance no unit)")
        if cats is not None:
            notes.append(
                f"{system_label(system)}: {knob} is an enum; points spread within a column"
            )
    fig.suptitle("Fig. 8: promising subspaces over the most influential knob")
    caption(fig, notes)
    return fig
