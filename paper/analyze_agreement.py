"""How often ``python -m classytune.analyze`` agrees with the true surface (synthetic systems).

For each (system, seed): a ClassyTune session (the default tuner) runs in a temporary folder
through :mod:`harness.api`; its artifacts are analysed as the CLI does
(:func:`classytune.analyze.knob_influence`); the truth for each knob comes from the synthetic
system's noise-free function at the same probes (the values measured tests took, above and
below the best setting): ``raise`` if most upward probes truly beat the best and most
downward ones do not, ``lower`` the mirror, ``keep`` if neither direction mostly wins.

Printed (markdown): per system, the share of knobs with a definite verdict (not ``unsure``),
the agreement on those, the agreement over all knobs counting ``unsure`` as ``keep``, and the
trivial answer's agreement (``keep`` everywhere).

    python -m paper.analyze_agreement --seeds 100 101 102 \
        > results/classytune/analyze_agreement.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile

import numpy as np

from classytune.analyze import knob_influence
from classytune.influence import covered_probes
from classytune.model_io import load_artifacts
from harness import api
from systems.synthetic import function


def truth(points: np.ndarray, best: np.ndarray, probes: int) -> list[str]:
    """The true verdict per knob at the analysis's own probes."""
    base = float(function.response(best[None, :])[0])
    verdicts = []
    for i in range(points.shape[1]):
        wins = {}
        for side, values in covered_probes(points, best, i, probes).items():
            if not len(values):
                wins[side] = False
                continue
            variants = np.repeat(best[None, :], len(values), axis=0)
            variants[:, i] = values
            wins[side] = float(np.mean(function.response(variants) > base)) > 0.5
        up, down = wins["up"], wins["down"]
        verdicts.append("raise" if up and not down else "lower" if down and not up else "keep")
    return verdicts


def one(system: str, seed: int, budget: int, probes: int, members: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="agree-") as folder:
        cfg = api.compose(
            [
                f"system={system}",
                f"seed={seed}",
                f"budget={budget}",
                "tracking=none",
                "session.progress=false",
                f"results_dir={folder}",
            ]
        )
        result = api.run(api.prepare(cfg))
        art = load_artifacts(result.directory)
        rows, calibration = knob_influence(art, probes, members)
        true = truth(art.points, art.points[art.best_index], probes)
    said = [r.verdict for r in rows]
    definite = [(s, t) for s, t in zip(said, true, strict=True) if s in ("raise", "lower", "keep")]
    as_keep = ["keep" if s == "unsure" else s for s in said]
    return {
        "coverage": len(definite) / len(said),
        "agree_definite": (
            float(np.mean([s == t for s, t in definite])) if definite else float("nan")
        ),
        "agree_all": float(np.mean([s == t for s, t in zip(as_keep, true, strict=True)])),
        "trivial": float(np.mean([t == "keep" for t in true])),
        "accuracy": calibration.accuracy,
        "majority": calibration.trivial,
        "moves": float(np.mean([t != "keep" for t in true])),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.analyze_agreement", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--systems", nargs="+", default=["synthetic10", "synthetic30"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[100, 101, 102])
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--probes", type=int, default=8)
    parser.add_argument("--members", type=int, default=8)
    args = parser.parse_args(argv)
    print(f"Command: `python -m paper.analyze_agreement {' '.join(sys.argv[1:])}`\n")
    print(
        "| system | seeds | knobs with a verdict | agreement on those | agreement, unsure as "
        "keep | always 'keep' | truth moves a knob | held-out pair accuracy (majority) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for system in args.systems:
        runs = [one(system, s, args.budget, args.probes, args.members) for s in args.seeds]

        def mean(key: str, runs: list[dict[str, float]] = runs) -> float:
            values = [r[key] for r in runs if r[key] == r[key]]
            return statistics.fmean(values) if values else float("nan")

        print(
            f"| {system} | {len(runs)} | {mean('coverage'):.2f} | {mean('agree_definite'):.2f} "
            f"| {mean('agree_all'):.2f} | {mean('trivial'):.2f} | {mean('moves'):.2f} | "
            f"{mean('accuracy'):.2f} ({mean('majority'):.2f}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
