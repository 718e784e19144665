"""Development sweep for ClassyTune's best mode on a split of seeds the benchmark does not use.

Runs tuner variants (``label=conf[:key=value,...]``, values are YAML, e.g.
``ct_r8=classytune:rounds=8,initial_fraction=0.3``) and reference tuners on suite systems
(``harness/conf/system/<name>.yaml``) and dev seeds (default 100-104; the benchmark uses 0-4),
as :func:`paper.bench.session_row` runs them (in memory, through :mod:`harness.api`; overrides
set ``tuner.<key>``). Each variant is ranked *separately* against the
references on every (system, seed) problem, so adding variants does not change another
variant's rank. Sessions are cached by label, overrides, system, seed and budget.

    nice -n 19 python -m paper.tune_classytune --variants ct=classytune \\
        --refs gbrt optuna_tpe rfr svr --out results/classytune/dev.md
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from paper.bench import session_row, suite_names
from paper.bench_score import normalised_score, rank_average
from paper.variants import parse_variant

ROOT = Path(__file__).resolve().parent.parent

Job = tuple[str, str, str, int, int]  # label, spec (conf:overrides), system, seed, budget


def parse_spec(spec: str) -> tuple[str, str, dict[str, Any]]:
    """``label=conf:key=value,...`` -> (label, conf, overrides) (:mod:`paper.variants`)."""
    variant = parse_variant(spec)
    return variant.label, variant.conf, variant.options


def run_job(job: Job) -> dict[str, Any]:
    """One session, summarised by :func:`paper.bench.session_row` and labelled."""
    label, spec, system_name, seed, budget = job
    _, conf, overrides = parse_spec(f"x={spec}")
    return {"label": label, **session_row(conf, system_name, seed, budget, overrides)}


def speed(specs: list[tuple[str, str, dict[str, Any]]], repeats: int, budget: int) -> str:
    """Per variant, medians over ``repeats`` serial sessions on synthetic10/30: the tuner's
    wall compute (``Tuner.compute_seconds``, as the benchmark reports it) and the session's
    process CPU time (the synthetic system costs microseconds, so this is the tuner's CPU
    time; unlike wall time it barely depends on what else the machine runs)."""
    lines = [
        "| tuner | d | n | compute wall s (median) | CPU s (median) |",
        "|---|---|---|---|---|",
    ]
    for label, conf, overrides in specs:
        spec = conf + (
            ":" + ",".join(f"{k}={json.dumps(v)}" for k, v in overrides.items())
            if overrides
            else ""
        )
        for system in ("synthetic10", "synthetic30"):
            walls, cpus = [], []
            for seed in range(100, 100 + repeats):
                row = run_job((label, spec, system, seed, budget))
                if "error" in row:
                    raise SystemExit(f"{label} on {system} seed {seed}: {row['error']}")
                cpus.append(row["cpu_s"])
                walls.append(row["compute_s"])
            lines.append(
                f"| {label} | {row['dim']} | {budget} | {statistics.median(walls):.2f} "
                f"| {statistics.median(cpus):.2f} |"
            )
    return "\n".join(lines) + "\n"


def _key(job: Job) -> str:
    return "|".join(map(str, job[1:]))  # the label is not part of the key: spec is


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["classytune=classytune"])
    parser.add_argument("--refs", nargs="+", default=["gbrt", "optuna_tpe", "rfr", "svr"])
    parser.add_argument("--systems", nargs="+", help="default: the whole benchmark suite")
    parser.add_argument("--seeds", nargs="+", type=int, default=[100, 101, 102, 103, 104])
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=ROOT / "results/classytune/dev_cache.json")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    parser.add_argument(
        "--report",
        action="store_true",
        help="run nothing: report the cached sessions (problems some tuner "
        "lacks are left out of its rows)",
    )
    parser.add_argument(
        "--speed",
        type=int,
        metavar="REPEATS",
        help="only time the variants: REPEATS serial sessions each on "
        "synthetic10 and synthetic30 (no cache)",
    )
    args = parser.parse_args(argv)
    if args.speed:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        report = speed([parse_spec(s) for s in args.variants], args.speed, args.budget)
        print(report)
        if args.out:
            args.out.write_text(report)
        return 0
    systems = args.systems or suite_names()
    refs = [parse_spec(s) for s in args.refs]
    variants = [parse_spec(s) for s in args.variants]
    jobs: list[Job] = []
    for label, conf, overrides in refs + variants:
        spec = conf + (
            ":" + ",".join(f"{k}={json.dumps(v)}" for k, v in overrides.items())
            if overrides
            else ""
        )
        jobs += [(label, spec, s, seed, args.budget) for seed in args.seeds for s in systems]
    cache: dict[str, dict[str, Any]] = (
        json.loads(args.cache.read_text()) if args.cache.exists() else {}
    )
    todo = [] if args.report else [j for j in jobs if _key(j) not in cache]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if todo:
        with multiprocessing.get_context("spawn").Pool(args.processes) as pool:
            for i, (job, result) in enumerate(zip(todo, pool.imap(run_job, todo), strict=True)):
                done = f"{result['wall_s']:.1f}s" if "wall_s" in result else result["error"]
                print(
                    f"[{i + 1}/{len(todo)}] {job[0]} {job[2]} s{job[3]}: {done}",
                    file=sys.stderr,
                    flush=True,
                )
                if result.get("retry"):
                    continue  # e.g. a peer not installed: not cached
                cache[_key(job)] = result
                args.cache.parent.mkdir(parents=True, exist_ok=True)
                tmp = args.cache.with_suffix(".tmp")
                tmp.write_text(json.dumps(cache, indent=1))
                tmp.replace(args.cache)
    table: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    for job in jobs:
        if _key(job) not in cache or "error" in cache[_key(job)]:
            continue  # not run yet, or the session did not finish
        row = dict(cache[_key(job)])
        row["norm"] = normalised_score(row["best"], row["default"], row["optimum"])
        table.setdefault(job[0], {})[(job[2], job[3])] = row
    ref_labels = [r[0] for r in refs]
    lines = [
        f"Command: `python -m paper.tune_classytune {' '.join(argv or sys.argv[1:])}`",
        "",
        f"Seeds {args.seeds}, budget {args.budget}. rank = mean rank of the tuner "
        f"among itself and the references ({', '.join(ref_labels)}) over (system, seed) "
        "problems (best other: the best reference's mean rank in the same pool); "
        "overall = mean of the per-system mean normalised scores; "
        "d30 s = median tuner compute per session on synthetic30.",
        "",
        "| tuner | rank | best other | overall | " + " | ".join(systems) + " | d30 s |",
        "|---" * (len(systems) + 5) + "|",
    ]
    for label in ref_labels + [v[0] for v in variants]:
        # Rank within {label} + references; for a variant also the best reference's rank in
        # that same pool (the variant "ranks first" when its rank is below it).
        group = [label] + [r for r in ref_labels if r != label]
        ranks: dict[str, list[float]] = {name: [] for name in group}
        for problem in table.get(label, {}):
            if any(problem not in table.get(name, {}) for name in group):
                continue
            values = [table[name][problem]["norm"] for name in group]
            if any(math.isnan(v) for v in values):
                continue
            for name, rank in zip(group, rank_average(values), strict=True):
                ranks[name].append(rank)
        if not ranks[label]:
            continue
        means = {name: statistics.fmean(r) for name, r in ranks.items()}
        rival = min(group[1:], key=lambda n: means[n], default=label)
        mine = table[label]
        cells = [
            statistics.fmean(
                [mine[(s, seed)]["norm"] for seed in args.seeds if (s, seed) in mine] or [math.nan]
            )
            for s in systems
        ]
        d30 = [
            row["compute_s"]
            for (s, _), row in mine.items()
            if row["dim"] == 30 and s.startswith("synthetic")
        ]
        lines.append(
            f"| {label} | {means[label]:.2f} ({len(ranks[label])}) | "
            f"{rival} {means[rival]:.2f} | "
            f"{statistics.fmean(c for c in cells if math.isfinite(c)):.3f} | "
            + " | ".join(f"{c:.3f}" for c in cells)
            + f" | {statistics.median(d30) if d30 else math.nan:.2f} |"
        )
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
