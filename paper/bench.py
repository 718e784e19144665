"""Tuner benchmark: every tuner × a suite of systems × seeds, efficacy and overhead in one run.

Each (tuner, system, seed) session runs in-process with :func:`harness.loop.tune`; the systems
come from ``conf/system/<name>.yaml`` (synthetic ones with an analytic optimum, surrogates with
the committed best-known optimum). Finished sessions are cached in a JSON file, so a rerun or
a resumed run only computes what is missing. Scoring and the report are in
:mod:`paper.bench_score`.

    python -m paper.bench --quick
    python -m paper.bench --seeds 5 --budget 100 --processes 2 --out results/bench
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import multiprocessing
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from harness.conf import CONFIG_DIR
from paper.bench_score import plot_scores, report_markdown, summarise

__all__ = [
    "DEFAULT_TUNERS",
    "TUNER_DIR",
    "main",
    "run_jobs",
    "run_session",
    "suite_names",
    "tuner_names",
]

log = logging.getLogger(__name__)

TUNER_DIR = CONFIG_DIR / "tuner"
SYSTEM_DIR = CONFIG_DIR / "system"
# optuna_gp and smac are peers too, but take 10-60 s per session of tuner time: only on request.
DEFAULT_TUNERS = (
    "classytune",
    "classytune_paper",
    "bestconfig",
    "gpbo",
    "cart",
    "gbrt",
    "svr",
    "rfr",
    "random",
    "lhs",
    "optuna_tpe",
)
QUICK_TUNERS = (
    "classytune",
    "classytune_paper",
    "bestconfig",
    "gbrt",
    "random",
    "lhs",
    "optuna_tpe",
)
QUICK_SURROGATES = ("surrogate_mysql_oltp", "surrogate_tomcat")

Job = tuple[str, str, int, int]  # tuner config, system config, seed, budget

# Systems built once per worker process: fitting/loading a surrogate costs seconds.
_SYSTEMS: dict[str, Any] = {}


def suite_names() -> list[str]:
    """The full suite: synthetic10, synthetic30 and every conf/system/surrogate_*.yaml."""
    surrogates = sorted(p.stem for p in SYSTEM_DIR.glob("surrogate_*.yaml"))
    return ["synthetic10", "synthetic30", *surrogates]


def tuner_names(only: list[str] | None) -> list[str]:
    """Tuner config names in conf/tuner/ except the expert ones (they need a real system)."""
    names = sorted(p.stem for p in TUNER_DIR.glob("*.yaml") if not p.stem.startswith("expert"))
    return [n for n in names if not only or n in only]


def _system(name: str) -> tuple[Any, Any]:
    """(system, workload) of conf/system/<name>.yaml, set up once per process."""
    if name not in _SYSTEMS:
        from hydra.utils import instantiate
        from omegaconf import OmegaConf

        cfg = OmegaConf.load(SYSTEM_DIR / f"{name}.yaml")
        system = instantiate(cfg.adapter)
        workload = instantiate(cfg.workloads[cfg.default_workload])
        system.setup(Path("."), workload)
        _SYSTEMS[name] = (system, workload)
    return _SYSTEMS[name]


def run_session(job: Job) -> dict[str, Any]:
    """One session; returns its summary (larger-is-better scores) or the error that stopped it."""
    name, system_name, seed, budget = job
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    from harness.loop import tune
    from harness.objective import Objective

    system, workload = _system(system_name)
    objective = Objective.for_workload(workload.metrics)
    metric = objective.metric
    started = time.perf_counter()
    try:
        tuner = instantiate(OmegaConf.load(TUNER_DIR / f"{name}.yaml"))(
            space=system.space, seed=seed, budget=budget
        )
        obs = tune(tuner, system, workload, objective, budget)
    except ImportError as exc:  # an optional peer that is not installed
        return {"tuner": name, "system": system_name, "seed": seed, "error": str(exc)}
    best = tuner.best()
    optimum = objective.score({metric: system.known_optimum()[1]})
    return {
        "tuner": name,
        "system": system_name,
        "seed": seed,
        "budget": budget,
        "metric": metric,
        "direction": objective.direction,
        "dim": system.space.dim,
        "tests": len(obs),
        "default": obs[0].score if obs[0].ok else None,
        "best": best.score if best else None,
        "optimum": optimum,
        "failures": sum(not o.ok for o in obs),
        "compute_s": tuner.compute_seconds,
        "wall_s": time.perf_counter() - started,
    }


def _key(job: Job) -> str:
    """Cache key: the job plus a digest of the tuner's config file, so a changed tuner
    setting (e.g. a new ClassyTune default) is recomputed instead of read back stale."""
    return "{}|{}|{}|{}".format(*job) + f"|{_tuner_digest(job[0])}"


def _tuner_digest(name: str) -> str:
    path = TUNER_DIR / f"{name}.yaml"
    content = path.read_bytes() if path.exists() else name.encode()
    return hashlib.sha256(content).hexdigest()[:10]


def run_jobs(
    jobs: list[Job], processes: int, cache: Path | None, progress: bool = True
) -> list[dict[str, Any]]:
    """Run the jobs not yet in ``cache`` on a process pool; return every job's result in order."""
    cached: dict[str, dict[str, Any]] = {}
    if cache and cache.exists():
        cached = json.loads(cache.read_text())
    todo = [j for j in jobs if _key(j) not in cached]
    # Seed-major order: a run stopped early still holds whole seeds (every tuner on every
    # system), so `--seeds k` reports them; workers keep the systems they built.
    todo.sort(key=lambda j: (j[2], j[1], j[0]))
    # One BLAS thread per worker: the processes already use the cores.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if todo:
        from tqdm import tqdm

        with (
            multiprocessing.get_context("spawn").Pool(processes) as pool,
            tqdm(total=len(todo), file=sys.stderr, disable=not progress, desc="sessions") as bar,
        ):
            for job, result in zip(todo, pool.imap(run_session, todo), strict=True):
                cached[_key(job)] = result
                bar.set_postfix_str(f"{job[0]} {job[1]} s{job[2]}", refresh=False)
                bar.update()
                if cache:  # durable after each session, so an interrupted run resumes
                    cache.parent.mkdir(parents=True, exist_ok=True)
                    tmp = cache.with_suffix(".tmp")
                    tmp.write_text(json.dumps(cached, indent=1))
                    tmp.replace(cache)
    return [cached[_key(j)] for j in jobs]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m paper.bench", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a few minutes: 2 seeds, budget 50, 7 tuners (no GP-BO), "
        "synthetic10 + 2 surrogates (explicit options still win)",
    )
    parser.add_argument("--seeds", type=int, help="seeds 0..N-1 (default 5; quick 2)")
    parser.add_argument("--budget", type=int, help="tests per session (default 100; quick 50)")
    parser.add_argument(
        "--tuners",
        nargs="+",
        help=f"tuner configs (default: {' '.join(DEFAULT_TUNERS)}; also optuna_gp, smac)",
    )
    parser.add_argument(
        "--suite",
        nargs="+",
        help="system configs (default: synthetic10 synthetic30 + every surrogate_*)",
    )
    parser.add_argument(
        "--skip",
        nargs="+",
        default=[],
        metavar="TUNER@SYSTEM",
        help="leave out tuner on system (e.g. gpbo@surrogate_tomcat; "
        "'gpbo@surrogate_*' for all surrogates)",
    )
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("results/bench"))
    parser.add_argument("--cache", type=Path, help="JSON cache (default OUT/cache.json)")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--note",
        type=Path,
        help="a text file added to the report (e.g. why "
        "a tuner was left out, what the machine was doing)",
    )
    return parser


def _skipped(tuner: str, system: str, skips: list[str]) -> bool:
    import fnmatch

    return any(fnmatch.fnmatch(f"{tuner}@{system}", pattern) for pattern in skips)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    seeds = args.seeds or (2 if args.quick else 5)
    budget = args.budget or (50 if args.quick else 100)
    tuners = args.tuners or list(QUICK_TUNERS if args.quick else DEFAULT_TUNERS)
    suite = args.suite or (["synthetic10", *QUICK_SURROGATES] if args.quick else suite_names())
    unknown = [t for t in tuners if not (TUNER_DIR / f"{t}.yaml").exists()] + [
        s for s in suite if not (SYSTEM_DIR / f"{s}.yaml").exists()
    ]
    if unknown:
        raise SystemExit(
            f"unknown tuner/system config(s): {', '.join(unknown)} "
            f"(see conf/tuner/ and conf/system/)"
        )
    jobs = [
        (t, s, seed, budget)
        for t in tuners
        for s in suite
        for seed in range(seeds)
        if not _skipped(t, s, args.skip)
    ]
    started = time.perf_counter()
    rows = run_jobs(
        jobs, args.processes, args.cache or args.out / "cache.json", progress=not args.no_progress
    )
    errors = [r for r in rows if "error" in r]
    rows = [r for r in rows if "error" not in r]
    summary = summarise(rows)
    command = "python -m paper.bench " + shlex.join(argv if argv is not None else sys.argv[1:])
    notes = (
        f"Tuners: {' '.join(tuners)}. Suite: {' '.join(suite)}. Seeds 0..{seeds - 1}, "
        f"budget {budget}. Sessions: {len(rows)}"
        + (f"; left out: {' '.join(args.skip)}" if args.skip else "")
        + (
            "; errors: " + "; ".join(f"{e['tuner']}: {e['error']}" for e in errors)
            if errors
            else ""
        )
        + f". Sum of session wall times (each computed once, then cached): "
        f"{sum(r['wall_s'] for r in rows):.0f} s; this invocation: "
        f"{time.perf_counter() - started:.0f} s."
        + (f"\n\n{args.note.read_text().strip()}" if args.note else "")
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "REPORT.md").write_text(report_markdown(summary, command, notes))
    plot_scores(
        summary,
        args.out / "scores.png",
        f"mean normalised score, {len(suite)} systems × {seeds} seeds, budget {budget}",
    )
    print((args.out / "REPORT.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
