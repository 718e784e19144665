"""Compare every tuner in harness/conf/tuner/ (expert ones excepted) on the synthetic systems.

Each (tuner, system, seed) session runs in memory through :mod:`harness.api` at the given
budget (:func:`paper.bench.run_session`, as in the benchmark); the table reports the final
best throughput (mean and standard deviation over seeds), the improvement over the default
configuration, the fraction of the known optimum reached, and the tuner's own computation
time per session (``tuner.compute_seconds``, test time excluded).

    python scripts/compare_tuners.py --seeds 5 --budget 100 --processes 2 \
        --cache results/baselines/compare_cache.json > results/baselines/compare_synthetic.md

``--cache`` keeps finished sessions in a JSON file so an interrupted run resumes (keyed, as the
benchmark's, by the job and a digest of the code and configs it depends on); ``--tuners``
restricts the comparison to some tuner configs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from paper.bench import run_session as bench_session
from paper.bench import tuner_names
from paper.code_version import code_digest

SYSTEMS = ("10", "30")


def run_session(job: tuple[str, str, int, int]) -> dict[str, Any]:
    """One session on ``synthetic<knob_set>`` (shared with :mod:`paper.bench`)."""
    name, knob_set, seed, budget = job
    return bench_session((name, f"synthetic{knob_set}", seed, budget))


def _fmt(values: list[float], digits: int = 0) -> str:
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:,.{digits}f} ± {std:,.{digits}f}"


def table(rows: list[dict[str, Any]], budget: int) -> str:
    """The markdown comparison table, one block per system."""
    lines: list[str] = []
    for system in sorted({r["system"] for r in rows}):
        mine = [r for r in rows if r["system"] == system]
        seeds = sorted({r["seed"] for r in mine})
        lines += [
            f"### {system}, budget {budget}, seeds {seeds[0]}..{seeds[-1]} "
            f"(mean ± std over {len(seeds)} seeds)",
            "",
            "| tuner | best throughput | improvement over default | fraction of optimum "
            "| failed tests | tuner time per session (s) |",
            "|---|---|---|---|---|---|",
        ]
        summary = []
        for name in sorted({r["tuner"] for r in mine}):
            runs = [r for r in mine if r["tuner"] == name]
            if any("error" in r for r in runs):
                lines.append(f"| {name} | not run: {runs[0].get('error', '')} | | | | |")
                continue
            best = [r["best"] for r in runs]
            gain = [100.0 * (r["best"] / r["default"] - 1.0) for r in runs]
            frac = [r["best"] / r["optimum"] for r in runs]
            summary.append((statistics.fmean(best), name, best, gain, frac, runs))
        for _, name, best, gain, frac, runs in sorted(summary, reverse=True):
            lines.append(
                f"| {name} | {_fmt(best)} | {_fmt(gain, 1)} % | {_fmt(frac, 3)} | "
                f"{statistics.fmean(r['failures'] for r in runs):.1f} | "
                f"{_fmt([r['compute_s'] for r in runs], 2)} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--tuners", nargs="*", help="tuner config names (default: all)")
    parser.add_argument("--systems", nargs="*", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--cache", type=Path, help="JSON file of finished sessions (resume)")
    args = parser.parse_args(argv)

    cached: dict[str, dict[str, Any]] = {}
    if args.cache and args.cache.exists():
        cached = json.loads(args.cache.read_text())
    jobs = [
        (name, ks, seed, args.budget)
        for name in tuner_names(args.tuners)
        for ks in args.systems
        for seed in range(args.seeds)
    ]

    def key(name: str, knob_set: str, seed: int, budget: int) -> str:
        digest = code_digest(name, f"synthetic{knob_set}")
        return f"{name}|{knob_set}|{seed}|{budget}|{digest}"

    todo = [j for j in jobs if key(*j) not in cached]
    # One BLAS thread per worker: the processes already use the cores.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
        for job, result in zip(todo, pool.imap(run_session, todo), strict=True):
            cached[key(*job)] = result
            print(
                f"done {key(*job)}: {result.get('best', result.get('error'))}",
                file=sys.stderr,
                flush=True,
            )
            if args.cache:
                args.cache.parent.mkdir(parents=True, exist_ok=True)
                args.cache.write_text(json.dumps(cached, indent=1))
    rows = [cached[key(*j)] for j in jobs]
    command = "python scripts/compare_tuners.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    print(f"<!-- generated by: {command} -->\n")
    print(table(rows, args.budget))
    return 0


if __name__ == "__main__":
    sys.exit(main())
