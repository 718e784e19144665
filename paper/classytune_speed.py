"""Benchmark ClassyTune's computation: training + search for n samples over d knobs.

For each d, ``--repeats`` times, one session of the paper's ClassyTune
(``tuner=classytune_paper tuner.rounds=1 tuner.n_initial=n``, through :mod:`harness.api`) on
the synthetic system (10 or 30 knobs): n LHS samples with their true responses, then one full
round as the tuner runs it (induce all n(n-1) pairs, fit the default XGBoost comparator,
compare |S| = s_factor x d candidates with the pivot, elbow + KMeans, bounds, LHS resampling
of ``--batch`` points). Prints the medians of train, search and total time (the round's
``ask``), and the process's peak RSS.

Then the speed targets' numbers (at most 0.5 s at d = 30 and 3 s at d ~ 110, n = 100): the
default ``classytune``'s whole computation over a budget-n session (every ask and tell, as
the summary's "tuner computation"), median over ``--repeats`` seeds, on ``--sessions``
problems (default synthetic10, synthetic30 and the 120-knob ``family120`` of
:mod:`paper.suites`, an instance per seed). Timing is only meaningful on a quiet machine: the
script waits until the 1-minute load average is below ``--max-load`` (0 to skip).

    nice -n 19 python -m paper.classytune_speed --out results/bench/classytune_speed.md
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness import api
from harness.tuner import Tuner
from paper import suites

SESSIONS = ("synthetic10", "synthetic30", "family120")


def _tuner_after_session(overrides: list[str]) -> Tuner:
    """Run one untracked in-memory session on the synthetic system; its tuner, for its logs."""
    with tempfile.TemporaryDirectory(prefix="ct-speed-") as results_dir:
        cfg = api.compose(
            [*overrides, "tracking=none", "session.progress=false", f"results_dir={results_dir}"]
        )
        session = api.prepare(cfg, store="memory")
        result = api.run(session)
    assert result.status == "FINISHED" and session.tuner is not None, result.message
    return session.tuner


def one_round(knob_set: str, n: int, seed: int, batch: int, s_factor: float) -> dict[str, float]:
    """Train/search/total seconds of the round that follows the n initial samples."""
    tuner = _tuner_after_session(
        [
            "tuner=classytune_paper",
            "tuner.rounds=1",
            f"tuner.n_initial={n}",
            f"tuner.s_factor={s_factor}",
            f"system=synthetic{knob_set}",
            f"seed={seed}",
            f"budget={n + batch}",
        ]
    )
    # The compute log holds ask(n) (the initial sample), tell(n), then the round's ask.
    log = tuner.compute_log
    told = next(i for i, r in enumerate(log) if r.phase == "tell")
    round_ask = next(r for r in log[told:] if r.phase == "ask")
    assert round_ask.n == batch, f"the round proposed {round_ask.n}, not {batch}"
    entry = tuner.round_log[-1]  # type: ignore[attr-defined]
    return {"train": entry["train_s"], "search": entry["search_s"], "total": round_ask.seconds}


def whole_session(problem: str, n: int, seed: int) -> tuple[int, float]:
    """Knobs and seconds of the default ``classytune``'s own computation over a budget-n
    session on ``problem`` (a :mod:`paper.suites` problem name)."""
    overrides = ["tuner=classytune", *suites.overrides(problem, seed), f"seed={seed}"]
    tuner = _tuner_after_session([*overrides, f"budget={n}"])
    return tuner.space.dim, tuner.compute_seconds


def wait_for_quiet(max_load: float, patience_s: float = 1800.0) -> float:
    """The 1-minute load average once it is below ``max_load`` (waits up to ``patience_s``)."""
    deadline = time.monotonic() + patience_s
    load = os.getloadavg()[0]
    while max_load > 0 and load >= max_load and time.monotonic() < deadline:
        time.sleep(30)
        load = os.getloadavg()[0]
    return load


def round_table(args: argparse.Namespace) -> list[str]:
    """Markdown rows: one paper-mode round after n samples, at d = 10 and 30."""
    lines = [
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
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="samples (pairs: n(n-1))")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--batch", type=int, default=50, help="resampled points per round")
    parser.add_argument("--s-factor", type=float, default=100.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--sessions", nargs="+", default=list(SESSIONS))
    parser.add_argument("--max-load", type=float, default=0.7)
    parser.add_argument("--patience", type=float, default=1800.0, help="seconds to wait")
    parser.add_argument(
        "--sessions-only", action="store_true", help="only the whole-session table"
    )
    args = parser.parse_args(argv)
    # the load before the warm-up (which is this benchmark's own load)
    load = wait_for_quiet(args.max_load, args.patience)
    if args.max_load > 0 and load >= args.max_load:
        raise SystemExit(f"the machine stayed busy (load {load:.2f}): no timing taken")
    one_round("10", 20, 0, 5, args.s_factor)  # warm-up: imports, thread pools
    lines = [
        f"Command: `python -m paper.classytune_speed {' '.join(argv or sys.argv[1:])}`",
        "",
        f"{os.cpu_count()} cores, 1-minute load average {load:.2f} at the start.",
        "",
    ]
    if not args.sessions_only:
        lines += [
            f"One ClassyTune round after n={args.n} samples: train = induce {args.n}x"
            f"{args.n - 1} pairs + fit XGBoost; search = |S| = {args.s_factor:g} x d "
            f"candidates vs pivot, elbow + KMeans, bounds, LHS of {args.batch}; total = the "
            f"whole ask() call. Median of {args.repeats} (seeds 0..{args.repeats - 1}).",
            "",
            *round_table(args),
        ]
    lines += [
        "",
        f"The default `classytune`, a whole session of budget {args.n}: its own computation "
        f"(every ask and tell), median of {args.repeats} seeds (0..{args.repeats - 1}).",
        "",
        "| problem | d | session computation s (median) | (min – max) |",
        "|---|---|---|---|",
    ]
    for problem in args.sessions:
        runs = [whole_session(problem, args.n, seed) for seed in range(args.repeats)]
        seconds = [s for _, s in runs]
        lines.append(
            f"| {problem} | {runs[0][0]} | {statistics.median(seconds):.2f} "
            f"| {min(seconds):.2f} – {max(seconds):.2f} |"
        )
    lines.append(f"\n1-minute load average at the end: {os.getloadavg()[0]:.2f}")
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
