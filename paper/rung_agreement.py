"""How well a screening rung ranks configurations like a full test does.

``python -m paper.rung_agreement <session folder> [<session folder> ...] [--out FILE]``

For a session run with ``session.fidelity`` (:mod:`harness.session.screening`), every promoted
configuration was measured at a screening rung and again one rung up. This reports, per
session and pair of rungs, the number of such configurations and the Spearman rank
correlation of their two scores. Only promoted configurations have both, so the correlation is
over the top of the screening rung (a truncated sample, which lowers it against the
correlation over all configurations); with few pairs it is noisy, and the report says how many
there are. Writes Markdown (``--out``, default printed).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

from scipy import stats

from harness.records import Observation, config_key
from harness.session.screening import fidelity_of
from harness.store.samples import SampleStore

__all__ = ["main", "paired_scores", "rung_rows"]


def paired_scores(
    observations: Sequence[Observation],
) -> dict[tuple[float, float], list[tuple[float, float]]]:
    """For each pair of rungs (lower, next higher), the (lower score, higher score) of every
    configuration that succeeded at both (its first measurement at each)."""
    first: dict[tuple[str, float], float] = {}
    for obs in observations:
        key = (config_key(obs.config), fidelity_of(obs))
        if obs.ok and obs.score is not None and key not in first:
            first[key] = obs.score
    rungs = sorted({fidelity for _, fidelity in first})
    pairs: dict[tuple[float, float], list[tuple[float, float]]] = {}
    for low, high in pairwise(rungs):
        pairs[(low, high)] = [
            (score, first[(config, high)])
            for (config, fidelity), score in first.items()
            if fidelity == low and (config, high) in first
        ]
    return pairs


def rung_rows(name: str, observations: Sequence[Observation]) -> list[str]:
    """The report's table rows of one session."""
    rows = []
    for (low, high), pairs in paired_scores(observations).items():
        if len(pairs) >= 3:
            rho = float(stats.spearmanr([p[0] for p in pairs], [p[1] for p in pairs])[0])
            shown = f"{rho:.2f}"
        else:
            shown = "too few pairs"
        rows.append(f"| {name} | {low:g} → {high:g} | {len(pairs)} | {shown} |")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paper.rung_agreement", description=__doc__)
    parser.add_argument("folders", type=Path, nargs="+", help="session folders")
    parser.add_argument("--out", type=Path, help="write the report here (default: print it)")
    args = parser.parse_args(argv)
    lines = [
        "| session | rungs | promoted configurations | Spearman ρ |",
        "|---|---|---|---|",
    ]
    for folder in args.folders:
        lines += rung_rows(folder.name, SampleStore(folder).load())
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
