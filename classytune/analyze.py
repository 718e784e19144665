"""Knob influence from a saved ClassyTune model: ``python -m classytune.analyze <dir>``.

``<dir>`` is a ClassyTune artifact directory (``results/sessions/<id>/artifacts``, written by
:meth:`classytune.ClassyTuneBase.save_artifacts`, so by either ClassyTune tuner) or
the session folder holding it.

The analysis is comparison-based, as the paper proposes for model reuse: starting from the best
measured setting, each knob in turn is moved up (``probes`` values spread evenly over the range
above the best value) and down (the same below), every other knob kept; the saved classifier
compares each variant with the best setting through the same induction as in training. A
knob's *raise* (*lower*) share is the fraction of upward (downward) variants predicted to beat
the best setting; the verdict is the direction whose share exceeds one half, else ``keep``.
Values that snap back onto the best value (int/enum/bool cells) are not probes; a direction
with no room left shows ``-``. The classifier's feature importances are listed alongside
(for the ``concat`` induction, a knob's two columns are summed).

Prints a table and writes a bar plot (``knob_influence.png`` in the directory, or ``--out``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from classytune.classifiers import feature_importances, predict_better
from classytune.induction import induce_against
from classytune.model_io import Artifacts, load_artifacts
from harness.errors import HarnessError

__all__ = ["KnobInfluence", "format_table", "knob_influence", "main", "plot_influence"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KnobInfluence:
    """Predicted effect of moving one knob away from the best measured setting."""

    knob: str
    best_value: object
    raise_share: float | None  # None: no representable value above the best one
    lower_share: float | None
    importance: float | None

    @property
    def verdict(self) -> str:
        shares = {"raise": self.raise_share, "lower": self.lower_share}
        known = {k: v for k, v in shares.items() if v is not None}
        if not known:
            return "fixed"
        direction = max(known, key=lambda k: known[k])
        return direction if known[direction] > 0.5 else "keep"


def _importances(art: Artifacts) -> np.ndarray | None:
    values = feature_importances(art.model)
    if values is None:
        return None
    if values.size == 2 * art.space.dim:  # concat induction: [Xa columns, Xb columns]
        values = values[: art.space.dim] + values[art.space.dim :]
    return values if values.size == art.space.dim else None


def knob_influence(art: Artifacts, probes: int = 16) -> list[KnobInfluence]:
    """For each knob, the share of raised / lowered variants predicted to beat the best."""
    best = art.points[art.best_index]
    induction, bits = art.settings["induction"], int(art.settings["bits"])
    importances = _importances(art)
    offsets = (np.arange(probes) + 0.5) / probes
    result = []
    for i, knob in enumerate(art.space.knobs):
        shares: list[float | None] = []
        for values in (best[i] + offsets * (1.0 - best[i]), best[i] * offsets):
            variants = np.repeat(best[None, :], probes, axis=0)
            variants[:, i] = values
            variants = art.space.snap(variants)
            variants = variants[~np.isclose(variants[:, i], best[i])]
            if not len(variants):
                shares.append(None)
                continue
            wins = predict_better(art.model, induce_against(variants, best, induction, bits))
            shares.append(float(wins.mean()))
        result.append(
            KnobInfluence(
                knob.name,
                art.configs[art.best_index][knob.name],
                shares[0],
                shares[1],
                None if importances is None else float(importances[i]),
            )
        )
    return result


def _fmt(share: float | None) -> str:
    return "-" if share is None else f"{share:.2f}"


def _value(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def format_table(rows: list[KnobInfluence]) -> str:
    """A plain-text table, most important knobs first (importance unknown: catalogue order)."""
    ordered = sorted(rows, key=lambda r: -(r.importance or 0.0))
    width = max(len("knob"), *(len(r.knob) for r in rows))
    lines = [
        f"{'knob':<{width}}  {'best value':>14}  {'raise':>5}  {'lower':>5}  "
        f"{'verdict':<7}  importance"
    ]
    for r in ordered:
        importance = "n/a" if r.importance is None else f"{r.importance:.3f}"
        lines.append(
            f"{r.knob:<{width}}  {_value(r.best_value):>14}  {_fmt(r.raise_share):>5}  "
            f"{_fmt(r.lower_share):>5}  {r.verdict:<7}  {importance}"
        )
    return "\n".join(lines)


def plot_influence(rows: list[KnobInfluence], path: Path) -> None:
    """Bar plot: raise/lower win shares per knob, and feature importances."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.knob for r in rows]
    y = np.arange(len(rows))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.35 * len(rows) + 1.8), sharey=True)
    left.barh(y - 0.2, [r.raise_share or 0.0 for r in rows], 0.4, label="raise")
    left.barh(y + 0.2, [r.lower_share or 0.0 for r in rows], 0.4, label="lower")
    left.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    left.set_xlim(0, 1)
    left.set_xlabel("share of variants predicted to beat the best setting")
    left.set_yticks(y, names)
    left.invert_yaxis()
    left.legend(loc="lower right")
    right.barh(y, [r.importance or 0.0 for r in rows], color="tab:green")
    right.set_xlabel("classifier feature importance")
    fig.suptitle("ClassyTune knob influence (comparison-based, from the best measured setting)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m classytune.analyze",
        description="Knob influence from a saved ClassyTune model.",
    )
    parser.add_argument(
        "directory",
        type=Path,
        help="ClassyTune artifact directory (or the session folder holding it)",
    )
    parser.add_argument("--probes", type=int, default=16, help="values tried per direction")
    parser.add_argument("--out", type=Path, help="PNG path (default: <dir>/knob_influence.png)")
    args = parser.parse_args(argv)
    try:
        art = load_artifacts(args.directory)
        rows = knob_influence(art, max(args.probes, 1))
        out = args.out or art.directory / "knob_influence.png"
        plot_influence(rows, out)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    best = art.configs[art.best_index]
    print(
        f"best measured setting (trial {art.settings.get('best_trial')}, score "
        f"{art.scores[art.best_index]:g}): {best}"
    )
    print(format_table(rows))
    print(f"plot: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
