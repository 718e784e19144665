"""Benchmark ClassyTune's computation: training + search for n samples over d knobs.

For each d, ``--repeats`` times: n LHS samples of the synthetic system (10 or 30 knobs) with their
true responses, then one full ClassyTune round as the tuner runs it (induce all n(n-1) pairs, fit
the default XGBoost comparator, compare |S| = s_factor x d candidates with the pivot, elbow +
KMeans, bounds, LHS resampling of ``--batch`` points). Prints the medians of train, search and
total time, and the process's peak RSS.

    python scripts/bench_classytune_speed.py --out results/classytune/speed.md
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from harness.records import Observation, Status
from systems.synthetic import SyntheticSystem, function
from tuners.classytune import ClassyTuneTuner


def one_round(knob_set: str, n: int, seed: int, batch: int, s_factor: float) -> dict[str, float]:
    space = SyntheticSystem(knob_set).space
    tuner = ClassyTuneTuner(
        space, seed=seed, budget=n + batch, n_initial=n, rounds=1, s_factor=s_factor
    )
    configs = tuner.ask(n)
    points = space.encode_many(configs)
    values = function.response(points) * 10_000.0
    crashed = function.crashes(points)
    tuner.tell(
        [
            Observation(
                i,
                c,
                Status.CRASHED if crashed[i] else Status.SUCCEEDED,
                None if crashed[i] else float(values[i]),
            )
            for i, c in enumerate(configs)
        ]
    )
    started = time.perf_counter()
    proposed = tuner.ask(batch)
    total = time.perf_counter() - started
    assert len(proposed) == batch
    entry = tuner.round_log[-1]
    return {"train": entry["train_s"], "search": entry["search_s"], "total": total}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="samples (pairs: n(n-1))")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--batch", type=int, default=50, help="resampled points per round")
    parser.add_argument("--s-factor", type=float, default=100.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    one_round("10", 20, 0, 5, args.s_factor)  # warm-up: imports, thread pools
    lines = [
        f"Command: `python scripts/bench_classytune_speed.py {' '.join(argv or sys.argv[1:])}`",
        "",
        f"One ClassyTune round after n={args.n} samples: train = induce {args.n}x"
        f"{args.n - 1} pairs + fit XGBoost; search = |S| = {args.s_factor:g} x d candidates "
        f"vs pivot, elbow + KMeans, bounds, LHS of {args.batch}; total = the whole ask() "
        f"call. Median of {args.repeats} (seeds 0..{args.repeats - 1}); 2-core machine "
        "shared with other jobs.",
        "",
        "| d | train s (median) | search s (median) | total s (median) | total s (max) |",
        "|---|---|---|---|---|",
    ]
    for knob_set in ("10", "30"):
        runs = [
            one_round(knob_set, args.n, seed, args.batch, args.s_factor)
            for seed in range(args.repeats)
        ]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        worst = max(r["total"] for r in runs)
        lines.append(
            f"| {knob_set} | {med['train']:.3f} | {med['search']:.3f} "
            f"| {med['total']:.3f} | {worst:.3f} |"
        )
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    lines += [
        "",
        f"Peak RSS of the benchmark process: {peak_mib:.0f} MiB",
        f"(numpy {np.__version__})",
    ]
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
