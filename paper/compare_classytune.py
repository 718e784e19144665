"""Compare ClassyTune (paper and best mode) with random and LHS on the synthetic systems.

Each tuner runs a whole in-memory session per system and seed through :mod:`harness.api`
(:func:`paper.bench.session_row`, as the benchmark runs them); the script prints, per system
and tuner, the mean and std of the final best throughput, the mean improvement over the
default configuration, the mean fraction of the known optimum, how many seeds beat ``lhs``
and ``random`` on the same seed, and the tuner's mean computation time.

Tuners are given as ``label=conf_name[:key=value,...]`` (``conf_name`` is a file of
``harness/conf/tuner/``; values are YAML and set ``tuner.<key>``), e.g.
``ct3=classytune:rounds=3,s_factor=30``.

    python -m paper.compare_classytune --seeds 10 --out results/classytune/compare_synthetic.md
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from paper.bench import session_row
from systems.synthetic import SyntheticSystem

DEFAULT_TUNERS = [
    "classytune_paper=classytune_paper",
    "classytune=classytune",
    "random=random",
    "lhs=lhs",
]


def parse_tuner(spec: str) -> tuple[str, str, dict[str, Any]]:
    label, _, rest = spec.partition("=")
    conf, _, overrides = (rest or label).partition(":")
    values: dict[str, Any] = {}
    for item in filter(None, overrides.split(",")):
        key, _, value = item.partition("=")
        values[key] = yaml.safe_load(value)
    return label, conf, values


def run(
    conf: str, overrides: dict[str, Any], knob_set: str, seed: int, budget: int
) -> dict[str, float]:
    """One session of tuner config ``conf`` (with ``tuner.<key>`` overrides) on
    ``synthetic<knob_set>``; throughput is maximised, so scores are throughputs."""
    row = session_row(conf, f"synthetic{knob_set}", seed, budget, tuner_options=overrides)
    if "error" in row:
        raise SystemExit(f"{conf} on synthetic{knob_set} seed {seed}: {row['error']}")
    assert row["metric"] == "throughput" and row["direction"] == "max"
    assert row["best"] is not None and row["tests"] == budget
    return {
        "best": row["best"],
        "improvement": row["best"] / row["default"] - 1.0,
        "optimum_fraction": row["best"] / row["optimum"],
        "tuner_s": row["compute_s"],
        "wall_s": row["wall_s"],
        "failures": row["failures"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuners", nargs="+", default=DEFAULT_TUNERS)
    parser.add_argument("--systems", nargs="+", default=["10", "30"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--out", type=Path, help="also write the report (markdown) here")
    args = parser.parse_args(argv)
    specs = [parse_tuner(s) for s in args.tuners]
    lines = [
        f"Command: `python -m paper.compare_classytune {' '.join(argv or sys.argv[1:])}`",
        "",
        f"Budget {args.budget} (default included), seeds 0..{args.seeds - 1}; "
        "best = final best measured throughput (ops/s, noise-free synthetic system); "
        "impr = improvement over the default; opt = fraction of the known optimum; "
        ">lhs / >rnd = seeds on which the tuner's best beats lhs / random on the same seed; "
        "tuner s = tuner computation per session (train + search + sampling).",
        "",
    ]
    for knob_set in args.systems:
        results: dict[str, list[dict[str, float]]] = {}
        for label, conf, overrides in specs:
            results[label] = [
                run(conf, overrides, knob_set, seed, args.budget) for seed in range(args.seeds)
            ]
            print(f"  done {label} on synthetic{knob_set}", file=sys.stderr, flush=True)
        optimum = SyntheticSystem(knob_set).known_optimum()[1]
        lines += [
            f"## synthetic{knob_set} (known optimum {optimum:.0f})",
            "",
            "| tuner | best mean | best std | impr mean | opt mean | >lhs | >rnd "
            "| failed tests | tuner s |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for label, rows in results.items():
            best = [r["best"] for r in rows]

            def beats(
                other: str,
                rows: list[dict[str, float]] = rows,
                results: dict[str, list[dict[str, float]]] = results,
            ) -> str:
                if other not in results:
                    return "-"
                wins = sum(
                    a["best"] > b["best"] for a, b in zip(rows, results[other], strict=True)
                )
                return f"{wins}/{len(rows)}"

            lines.append(
                f"| {label} | {statistics.mean(best):.0f} | {statistics.pstdev(best):.0f} "
                f"| {np.mean([r['improvement'] for r in rows]):+.1%} "
                f"| {np.mean([r['optimum_fraction'] for r in rows]):.3f} "
                f"| {beats('lhs')} | {beats('random')} "
                f"| {np.mean([r['failures'] for r in rows]):.1f} "
                f"| {np.mean([r['tuner_s'] for r in rows]):.2f} |"
            )
        lines.append("")
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
