"""Ablation of the default ``classytune`` tuner's options on the development suite only.

Each variant is ``label=key=value,...`` (values are YAML; a dotted key sets an option of a
group, e.g. ``trust_region.enabled=true``) on top of today's ``conf/tuner/classytune.yaml``;
every variant runs on every problem of :func:`paper.suites.expand` of ``--suite`` (``dev``,
or its ``hard`` part: never ``surrogate_*``) and every seed given (default 100-102: the
evaluation protocol's seeds 0-9 are never used here), one session each through
:func:`paper.bench.session_row`, on ``--processes`` worker processes (run it under
``nice -n 19``). Sessions are cached in a JSON file keyed by label, options, problem, seed,
budget and the digest of the code and configs the session depends on
(:func:`paper.code_version.code_digest`, as the benchmark's cache is), so a stopped run
resumes and a changed tuner is recomputed.

``warm_start=prior`` in a variant stands for an earlier session of the same problem in another
environment (:func:`prior_table`: today's default ``classytune`` with 5 % measurement noise,
seed + 1000), made once into ``--prior-dir`` and passed as that session's samples.csv.

    nice -n 19 python -m paper.ablation --noise 0 0.15 --seeds 100 101 102 \\
        --variants base= ts=ensemble.members=4,ensemble.acquisition=thompson \\
        --out results/classytune/ablation.md
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from paper import suites
from paper.bench import session_row
from paper.bench_score import mean_ranks, normalised_score
from paper.code_version import code_digest
from paper.variants import parse_variant

ROOT = Path(__file__).resolve().parent.parent

DEV_SEEDS = (100, 101, 102)


def _variant(spec: str) -> tuple[str, dict[str, Any]]:
    """``label=key=value,...`` (``label=``: today's defaults) as (label, options)."""
    variant = parse_variant(spec, fixed_conf="classytune")
    return variant.label, variant.options


def prior_table(problem: str, seed: int, budget: int, folder: Path) -> str:
    """The samples.csv of the earlier session a ``warm_start=prior`` variant starts from: the
    same system measured with 5 % noise, by today's default tuner with seed + 1000."""
    import tempfile

    from harness import api
    from harness.store.samples import export_csv

    earlier = suites.variant(suites.base_system(problem), 0.05)
    path = folder / f"{earlier}_s{seed + 1000}_b{budget}.csv"
    if not path.exists():
        with tempfile.TemporaryDirectory() as scratch:
            cfg = api.compose(
                [
                    "tuner=classytune",
                    *suites.overrides(earlier, seed + 1000),
                    f"seed={seed + 1000}",
                    f"budget={budget}",
                    "tracking=none",
                    "session.progress=false",
                    f"results_dir={scratch}",
                ]
            )
            result = api.run(api.prepare(cfg, store="memory"))
        folder.mkdir(parents=True, exist_ok=True)
        export_csv(result.observations, path)
    return str(path)


def paired(rows: list[dict[str, Any]], labels: list[str]) -> str:
    """Markdown: each variant against the first, paired over (problem, seed): the mean
    difference of normalised scores with its standard error, wins and losses."""
    first = {(r["system"], r["seed"]): r["norm"] for r in rows if r["tuner"] == labels[0]}
    lines = [
        "",
        f"Paired against `{labels[0]}` over the (problem, seed) pairs both finished: mean "
        "difference of normalised scores ± its standard error; wins / losses.",
        "",
        "| variant | pairs | all problems | noisy problems only | wins / losses |",
        "|---|---|---|---|---|",
    ]

    def mean_se(values: list[float]) -> str:
        if len(values) < 2:
            return "-"
        se = statistics.stdev(values) / math.sqrt(len(values))
        return f"{statistics.fmean(values):+.4f} ± {se:.4f}"

    for label in labels[1:]:
        diffs = [
            (r["system"], r["norm"] - first[(r["system"], r["seed"])])
            for r in rows
            if r["tuner"] == label
            and math.isfinite(r["norm"])
            and math.isfinite(first.get((r["system"], r["seed"]), math.nan))
        ]
        values = [d for _, d in diffs]
        noisy = [d for problem, d in diffs if suites.noise_of(problem) > 0]
        wins, losses = sum(d > 1e-9 for d in values), sum(d < -1e-9 for d in values)
        lines.append(
            f"| {label} | {len(values)} | {mean_se(values)} | {mean_se(noisy)} | "
            f"{wins} / {losses} |"
        )
    return "\n".join(lines) + "\n"


def key_of(label: str, options: dict[str, Any], problem: str, seed: int, budget: int) -> str:
    """The cache key of one session: the variant, the job and the code it runs."""
    digest = code_digest("classytune", suites.system_config(problem))
    return f"{label}|{json.dumps(options, sort_keys=True)}|{problem}|{seed}|{budget}|{digest}"


Job = tuple[str, str, dict[str, Any], str, int, int]  # key, label, options, problem, seed, budget


def run_job(job: Job) -> tuple[str, dict[str, Any], float]:
    """One variant's session (a pool worker's task): its key, row and wall seconds."""
    key, _, options, problem, seed, budget = job
    started = time.perf_counter()
    return (
        key,
        session_row("classytune", problem, seed, budget, options),
        (time.perf_counter() - started),
    )


def run_all(jobs: list[Job], processes: int, cache: dict[str, Any], path: Path) -> None:
    """Run the jobs not in ``cache``, saving it after each session (a stopped run resumes)."""
    import multiprocessing

    todo = [job for job in jobs if job[0] not in cache]
    if not todo:
        return
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        for key, row, seconds in pool.imap_unordered(run_job, todo):
            cache[key] = row
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(cache))
            tmp.replace(path)
            label = key.split("|", 1)[0]
            print(
                f"{label:>10} {row['system']:<26} s{row['seed']} {seconds:5.1f}s "
                f"{row.get('error', '')}",
                flush=True,
            )


def report(
    rows: list[dict[str, Any]], labels: list[str], command: str, problems: list[str]
) -> str:
    """Markdown: per-problem mean normalised score per variant, overall, rank, seconds."""
    for r in rows:
        r["norm"] = (
            math.nan if "error" in r else normalised_score(r["best"], r["default"], r["optimum"])
        )
    seeds = sorted({r["seed"] for r in rows})
    lines = [
        f"Command: `{command}`",
        "",
        f"Development suite only, seeds {', '.join(map(str, seeds))}, budget "
        f"{rows[0]['budget'] if rows else '?'}; cell = mean normalised score (1 = optimum, "
        "0 = default) over the seeds run so far; overall = mean of the problems' means; rank = "
        "mean rank among the variants over (problem, seed); s = median tuner compute "
        "(wall, as the benchmark reports it) over all sessions / on synthetic30.",
        "",
        "| problem | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]
    means: dict[str, list[float]] = {label: [] for label in labels}
    for problem in problems:
        cells = []
        for label in labels:
            vals = [
                r["norm"]
                for r in rows
                if r["tuner"] == label and r["system"] == problem and math.isfinite(r["norm"])
            ]
            mean = statistics.fmean(vals) if vals else math.nan
            if vals:
                means[label].append(mean)
            cells.append(f"{mean:.3f}" if vals else "-")
        lines.append(f"| {problem} | " + " | ".join(cells) + " |")
    ranks = mean_ranks(r for r in rows if "error" not in r)

    def seconds(label: str, system: str | None = None) -> str:
        vals = [
            r["compute_s"]
            for r in rows
            if r["tuner"] == label and "error" not in r and system in (None, r["system"])
        ]
        return f"{statistics.median(vals):.2f}" if vals else "-"

    overall = [f"{statistics.fmean(means[x]):.3f}" if means[x] else "-" for x in labels]
    lines += [
        "| **overall** | " + " | ".join(overall) + " |",
        "| **mean rank** | " + " | ".join(f"{ranks.get(x, math.nan):.2f}" for x in labels) + " |",
        "| tuner s (all) | " + " | ".join(seconds(x) for x in labels) + " |",
        "| tuner s (synthetic30) | "
        + " | ".join(seconds(x, "synthetic30") for x in labels)
        + " |",
        "| sessions | "
        + " | ".join(str(sum(r["tuner"] == x for r in rows)) for x in labels)
        + " |",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["base="])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(DEV_SEEDS))
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument(
        "--suite",
        nargs="+",
        default=["dev"],
        help="dev (synthetic, moot_* and the family), hard (the family<d> problems) or "
        "problem names; never the evaluation suite",
    )
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        help="systems left out (moot_hipacc, moot_llvm: 65-86k rows, ~80 s to build each)",
    )
    parser.add_argument("--cache", type=Path, default=ROOT / "results/classytune/ablation.json")
    parser.add_argument("--out", type=Path, default=ROOT / "results/classytune/ablation.md")
    parser.add_argument(
        "--prior-dir",
        type=Path,
        default=ROOT / "results/classytune/warm_priors",
        help="where warm_start=prior variants keep their earlier sessions' samples",
    )
    parser.add_argument(
        "--speed",
        type=int,
        default=0,
        help="instead: N uncached sessions per variant on synthetic30 (d=30, n=budget); "
        "median tuner compute (wall) and process CPU",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="report the cached sessions, run none"
    )
    args = parser.parse_args(argv)
    if any(s < 100 for s in args.seeds):
        raise SystemExit("seeds below 100 belong to the evaluation protocol; use 100+")
    if any(suites.suite_of(p) == "eval" for p in suites.expand(args.suite)):
        raise SystemExit("settings are never chosen on the evaluation suite")
    if args.speed:
        for label, options in (_variant(v) for v in args.variants):
            runs = [
                session_row("classytune", "synthetic30", seed, args.budget, options)
                for seed in range(100, 100 + args.speed)
            ]
            wall = statistics.median(r["compute_s"] for r in runs)
            cpu = statistics.median(r["cpu_s"] for r in runs)
            print(f"{label}: tuner compute median {wall:.2f} s wall, session CPU {cpu:.2f} s")
        return 0
    problems = [
        p
        for p in suites.expand(args.suite, tuple(args.noise))
        if suites.base_system(p) not in args.skip
    ]
    variants = [_variant(v) for v in args.variants]
    labels = [label for label, _ in variants]
    cache: dict[str, dict[str, Any]] = (
        json.loads(args.cache.read_text()) if args.cache.exists() else {}
    )
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    given = " ".join(argv if argv is not None else sys.argv[1:])
    # the report is committed: paths below the working folder are written relative to it
    command = "nice -n 19 .venv/bin/python -m paper.ablation " + given.replace(
        f"{Path.cwd()}{os.sep}", ""
    )
    jobs: list[Job] = []
    for seed in args.seeds:  # seed-major: a stopped run still holds whole seeds
        for problem in problems:
            for label, options in variants:
                if options.get("warm_start") == "prior":
                    table = prior_table(problem, seed, args.budget, args.prior_dir)
                    options = {**options, "warm_start": [table]}
                key = key_of(label, options, problem, seed, args.budget)
                jobs.append((key, label, options, problem, seed, args.budget))
    if not args.report_only:
        run_all(jobs, args.processes, cache, args.cache)
    rows = [{**cache[job[0]], "tuner": job[1]} for job in jobs if job[0] in cache]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(rows, labels, command, problems) + paired(rows, labels))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
