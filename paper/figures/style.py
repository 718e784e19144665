"""One look for every figure: each series' colour and marker, and where legends go.

A reader compares figures side by side, so a tuner (or a classifier, an induction method) is
drawn in the same colour and with the same marker wherever it appears: the styles are fixed
here by name, never by a series' position in one figure. Names this module does not know get
the spare colours left over in their figure, in order, so that they never take a known
series' colour in that figure.

Legends are placed outside the axes (to their right), because inside they hide bars and
points whatever corner they pick.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.legend import Legend

__all__ = [
    "STYLES",
    "SURROGATE_NOTE",
    "SeriesStyle",
    "legend_beside",
    "series_styles",
    "shared_legend",
    "style_of",
    "system_label",
]


@dataclass(frozen=True)
class SeriesStyle:
    """How one series (a tuner, a model, an induction) is drawn in every figure."""

    colour: str
    marker: str


#: Tuners (conf/tuner/), then the other series the figures compare. Names are unique across
#: the groups, so one table serves all; the first colours go to the paper's comparisons.
STYLES: dict[str, SeriesStyle] = {
    # tuners
    "classytune_paper": SeriesStyle("tab:blue", "o"),
    "classytune": SeriesStyle("tab:orange", "s"),
    "bestconfig": SeriesStyle("tab:green", "^"),
    "gpbo": SeriesStyle("tab:red", "v"),
    "gpbo_paper": SeriesStyle("tab:purple", "D"),
    "default": SeriesStyle("tab:gray", "X"),
    "expert_manual": SeriesStyle("tab:brown", "P"),
    "expert_script": SeriesStyle("tab:pink", "*"),
    "random": SeriesStyle("tab:olive", "h"),
    "lhs": SeriesStyle("tab:cyan", "p"),
    "optuna_tpe": SeriesStyle("navy", "<"),
    "optuna_gp": SeriesStyle("teal", ">"),
    "smac": SeriesStyle("goldenrod", "d"),
    # regression tuners, also Fig. 2's models: tuners too, so colours no other tuner has
    "gbrt": SeriesStyle("#637939", "o"),
    "svr": SeriesStyle("#8c6d31", "s"),
    "rfr": SeriesStyle("#843c39", "^"),
    "cart": SeriesStyle("#7b4173", "v"),
    # Fig. 5's classifiers (and the regressor they are contrasted with)
    "xgboost": SeriesStyle("tab:blue", "o"),
    "decision_tree": SeriesStyle("tab:orange", "s"),
    "logistic": SeriesStyle("tab:green", "^"),
    "svm": SeriesStyle("tab:red", "v"),
    "mlp": SeriesStyle("tab:purple", "D"),
    "random_forest": SeriesStyle("tab:brown", "P"),
    "dt_regressor": SeriesStyle("tab:gray", "X"),
    # Fig. 9's induction methods
    "zorder": SeriesStyle("tab:blue", "o"),
    "difference": SeriesStyle("tab:orange", "s"),
    "concat": SeriesStyle("tab:green", "^"),
}

#: for names not in STYLES (systems, initial sample sizes): the tab10 colours, in order
_SPARE = tuple(
    SeriesStyle(f"tab:{c}", m)
    for c, m in zip(
        ("blue", "orange", "green", "red", "purple", "brown", "pink", "gray", "olive", "cyan"),
        "os^vDPX*hp",
        strict=True,
    )
)


def style_of(name: str) -> SeriesStyle:
    """The fixed style of a known series; KeyError for a name :data:`STYLES` lacks."""
    return STYLES[name]


def series_styles(names: Sequence[str]) -> dict[str, SeriesStyle]:
    """The style of each of one figure's series: known names their fixed style, the others
    the spare colours their figure leaves free, in the order given."""
    taken = {STYLES[n].colour for n in names if n in STYLES}
    free = iter([s for s in _SPARE if s.colour not in taken] + list(_SPARE))
    return {n: STYLES[n] if n in STYLES else next(free) for n in names}


def legend_beside(ax: Axes, **keywords: Any) -> Legend | None:
    """The legend of ``ax``'s labelled artists, to the right of its axes (off the data)."""
    handles, labels = ax.get_legend_handles_labels()
    return _place(ax, handles, labels, **keywords)


def shared_legend(axes: Iterable[Axes], holder: Axes, **keywords: Any) -> Legend | None:
    """One legend for every series of ``axes`` (each label once, first seen first), to the
    right of ``holder``: the panels of one figure share their series' styles."""
    seen: dict[str, Artist] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    return _place(holder, list(seen.values()), list(seen), **keywords)


def _place(ax: Axes, handles: list[Artist], labels: list[str], **keywords: Any) -> Legend | None:
    if not handles:
        return None
    options: dict[str, Any] = {
        "loc": "upper left",
        "bbox_to_anchor": (1.01, 1.0),
        "borderaxespad": 0.0,
        "fontsize": 8,
        "frameon": False,
    }
    return ax.legend(handles, labels, **{**options, **keywords})


#: What the dagger after a system's name means (every figure that shows a surrogate says it).
SURROGATE_NOTE = (
    "† surrogate: a random-forest model of real samples BestConfig's authors recorded, "
    "not the real system"
)


def system_label(name: object) -> str:
    """A system's label: surrogates marked with † (:data:`SURROGATE_NOTE` says what it means)."""
    text = str(name)
    return f"{text.removeprefix('surrogate_')} †" if text.startswith("surrogate_") else text
