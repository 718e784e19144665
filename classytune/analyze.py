"""Knob influence from a saved ClassyTune session: ``python -m classytune.analyze <dir>``.

``<dir>`` is a ClassyTune artifact directory (``results/sessions/<id>/artifacts``, written by
:meth:`classytune.ClassyTuneBase.save_artifacts`, so by either ClassyTune tuner) or
the session folder holding it.

For each knob, from the best measured setting: the calibrated chance that raising it (or
lowering it) to values that measured tests took beats the best setting, with a 10-90 % band
over an ensemble of comparators retrained on bootstrap resamples, and a verdict only where the
band is clear of one half (:mod:`classytune.influence`). The comparator's held-out pair
accuracy is printed beside the trivial accuracy; when it does not beat it, the output says the
verdicts cannot be trusted. Agreement with the true surface on the synthetic systems:
``python scripts/analyze_agreement.py`` (classytune/README.md).

Prints a table and writes a plot (``knob_influence.png`` in the directory, or ``--out``).
Only XGBoost's JSON model is reloaded (:mod:`classytune.model_io` never loads a pickle); the
model of any other classifier is refitted from ``samples.json``, and the output says so in
one line.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np

from classytune.classifiers import CLASSIFIERS, feature_importances, resolve
from classytune.comparator import Comparator
from classytune.influence import Calibration, Direction, KnobInfluence, influence
from classytune.model_io import Artifacts, load_artifacts
from harness.errors import ConfigError, HarnessError

__all__ = [
    "comparator_of",
    "format_table",
    "knob_influence",
    "main",
    "model_of",
    "plot_influence",
    "trust_line",
]

log = logging.getLogger(__name__)


#: What scripts/analyze_agreement.py measured against the known truth of the synthetic systems.
AGREEMENT_NOTE = (
    "note: on the synthetic systems (known truth) these verdicts agreed with the truth no more "
    "often than answering 'keep' for every knob (results/classytune/analyze_agreement.md): "
    "treat a verdict as a hypothesis to test with a session, not as an answer"
)


def model_of(art: Artifacts) -> Any:
    """The session's classifier: the saved XGBoost model, else (no reloadable model is saved
    for other classifiers) one refitted on the samples with the session's settings."""
    if art.model is None:
        seed = art.settings.get("tuner", {}).get("seed", 0)
        rng = np.random.default_rng(seed if isinstance(seed, int) else 0)
        art.model, _ = comparator_of(art).fit(art.points, art.scores, rng)
        if art.model is None:
            raise ConfigError(f"{art.directory}: fewer than two distinct scores, no classifier")
    return art.model


def importances(art: Artifacts) -> np.ndarray | None:
    values = feature_importances(model_of(art))
    if values is None:
        return None
    if values.size == 2 * art.space.dim:  # concat induction: [Xa columns, Xb columns]
        values = values[: art.space.dim] + values[art.space.dim :]
    return values if values.size == art.space.dim else None


def comparator_of(art: Artifacts) -> Comparator:
    """The session's comparator (induction, bits, classifier and its options, ties)."""
    tuner = art.settings.get("tuner", {})
    name = str(art.settings.get("classifier") or tuner.get("classifier") or "xgboost")
    try:
        options = json.loads(tuner.get("classifier_options") or "{}")
        factory = resolve(name) if name in CLASSIFIERS else resolve("xgboost")
        return Comparator(
            art.space,
            induction=art.settings["induction"],
            bits=int(art.settings["bits"]),
            classifier=functools.partial(factory, **options) if options else factory,
            ties=str(tuner.get("ties", "skip")),
            max_pairs=int(tuner.get("max_pairs") or 0) or None,
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise ConfigError(
            f"{art.directory}: the saved comparator settings are invalid ({exc})"
        ) from None


def knob_influence(
    art: Artifacts, probes: int = 8, members: int = 8
) -> tuple[list[KnobInfluence], Calibration]:
    """Per knob, the calibrated chance that raising / lowering it from the best setting wins."""
    return influence(
        art.space,
        comparator_of(art),
        art.points,
        art.scores,
        art.configs,
        importances(art),
        probes,
        members,
    )


def _fmt(d: Direction | None) -> str:
    return "-" if d is None else f"{d.probability:.2f} [{d.low:.2f}, {d.high:.2f}]"


def _value(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def format_table(rows: list[KnobInfluence]) -> str:
    """A plain-text table, most important knobs first (importance unknown: catalogue order).
    Cells: calibrated win chance [10 %, 90 % band over the ensemble]."""
    ordered = sorted(rows, key=lambda r: -(r.importance or 0.0))
    width = max(len("knob"), *(len(r.knob) for r in rows))
    cell = 18
    lines = [
        f"{'knob':<{width}}  {'best value':>14}  {'raise: P(win) [band]':<{cell}}  "
        f"{'lower: P(win) [band]':<{cell}}  {'verdict':<7}  importance"
    ]
    for r in ordered:
        importance = "n/a" if r.importance is None else f"{r.importance:.3f}"
        lines.append(
            f"{r.knob:<{width}}  {_value(r.best_value):>14}  {_fmt(r.up):<{cell}}  "
            f"{_fmt(r.down):<{cell}}  {r.verdict:<7}  {importance}"
        )
    return "\n".join(lines)


def trust_line(calibration: Calibration) -> str:
    """How far the comparator can be trusted, from its held-out pairs."""
    if not calibration.pairs:
        return "trust: no held-out pairs (too few distinct scores): verdicts cannot be checked"
    head = (
        f"trust: held-out pair accuracy {calibration.accuracy:.2f} vs {calibration.trivial:.2f} "
        f"for always answering the majority label ({calibration.pairs} pairs)"
    )
    if calibration.accuracy <= calibration.trivial:
        return head + ": the comparator does NOT beat the trivial answer; do not act on verdicts"
    return head


def plot_influence(rows: list[KnobInfluence], path: Path) -> None:
    """Bar plot: raise/lower win shares per knob, and feature importances."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r.knob for r in rows]
    y = np.arange(len(rows))
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 0.35 * len(rows) + 1.8), sharey=True)
    for offset, label, side in ((-0.2, "raise", "up"), (0.2, "lower", "down")):
        cells = [getattr(r, side) for r in rows]
        mean = [c.probability if c else 0.0 for c in cells]
        err = np.array(
            [[c.probability - c.low, c.high - c.probability] if c else [0, 0] for c in cells]
        )
        left.barh(y + offset, mean, 0.4, xerr=err.T, label=label, capsize=2)
    left.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    left.set_xlim(0, 1)
    left.set_xlabel("calibrated P(beats the best setting); whiskers: 10-90 % over the ensemble")
    left.set_yticks(y, names)
    left.invert_yaxis()
    left.legend(loc="lower right", title="move the knob to measured values")
    right.barh(y, [r.importance or 0.0 for r in rows], color="tab:green")
    right.set_xlabel("classifier feature importance")
    fig.suptitle("ClassyTune knob influence from the best measured setting (dashed: even odds)")
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
    parser.add_argument(
        "--probes", type=int, default=8, help="measured values tried per direction (at most)"
    )
    parser.add_argument("--members", type=int, default=8, help="comparators in the ensemble")
    parser.add_argument("--out", type=Path, help="PNG path (default: <dir>/knob_influence.png)")
    args = parser.parse_args(argv)
    try:
        art = load_artifacts(args.directory)
        if art.note:
            print(f"note: {art.note}")
        rows, calibration = knob_influence(art, max(args.probes, 1), max(args.members, 2))
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
    print(trust_line(calibration))
    print(format_table(rows))
    print(AGREEMENT_NOTE)
    print(f"plot: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
