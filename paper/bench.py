"""Tuner benchmark: every tuner × a suite of systems × seeds, efficacy and overhead in one run.

Each (tuner, system, seed) job is one session through the front door, exactly as
``python -m harness tuner=<t> system=<s> seed=<k> budget=<n> tracking=none`` would run it:
:func:`harness.api.compose` of the shipped configs, :func:`harness.api.prepare` with an
in-memory store (no session folder, no MLflow) and :func:`harness.api.run`. The systems are
``harness/conf/system/<name>.yaml`` (synthetic ones with an analytic optimum, surrogates with
the committed best-known optimum). Jobs run on a process pool whose workers live for the whole
run, so a surrogate's parsed data and fitted model are built once per worker (the per-process
cache of :mod:`systems.dataset`) and each later session on it starts in milliseconds.

Finished sessions are cached in a JSON file keyed by the job and a digest of the code and
configs it depends on (:func:`paper.code_version.code_digest`), so a rerun or a resumed run
computes only what is missing, and a fix in a tuner, a system or the core recomputes what it
touches. Scoring and the report are in :mod:`paper.bench_score`.

    python -m paper.bench --quick
    python -m paper.bench --seeds 5 --budget 100 --processes 2 --out results/bench
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import multiprocessing
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.conf import CONFIG_DIR
from harness.hosts.process import die_with_parent
from paper import suites
from paper.bench_score import grouped_summaries, plot_scores, report_sections
from paper.code_version import code_digest
from paper.stats import plot_cd

__all__ = [
    "DEFAULT_TUNERS",
    "TUNER_DIR",
    "draw_cd_figures",
    "job_key",
    "main",
    "run_jobs",
    "run_session",
    "session_row",
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


def suite_names() -> list[str]:
    """The full suite: synthetic10, synthetic30 and every conf/system/surrogate_*.yaml."""
    surrogates = sorted(p.stem for p in SYSTEM_DIR.glob("surrogate_*.yaml"))
    return ["synthetic10", "synthetic30", *surrogates]


def tuner_names(only: list[str] | None) -> list[str]:
    """Tuner config names in conf/tuner/ except the expert ones (they need a real system)."""
    names = sorted(p.stem for p in TUNER_DIR.glob("*.yaml") if not p.stem.startswith("expert"))
    return [n for n in names if not only or n in only]


def session_row(
    tuner: str,
    system: str,
    seed: int,
    budget: int,
    tuner_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one in-memory session through :mod:`harness.api`; return its summary.

    ``system`` is a problem name of :mod:`paper.suites` (a system config, or one with a
    ``~noise<percent>`` suffix). ``tuner_options`` set ``tuner.<key>`` in the composed config
    (checked like command-line overrides when the session is prepared). Scores are
    larger-is-better; on a noisy problem ``default`` and ``best`` are the *noise-free* scores
    of the default and of the best measured configuration (``best_measured`` keeps the noisy
    one). A session that does not finish (e.g. its default configuration failed) gives
    ``error`` = its status and message; one that cannot be built (an optional peer not
    installed) also ``retry``, so it is not cached; a tuner that raises gives ``error`` with
    the exception and ``crashed``, so one broken peer cannot end the whole benchmark.
    """
    from omegaconf import OmegaConf

    from harness import api
    from harness.errors import HarnessError

    started = time.perf_counter()
    head = {"tuner": tuner, "system": system, "seed": seed, "budget": budget}
    with tempfile.TemporaryDirectory(prefix="bench-") as results_dir:
        cfg = api.compose(
            [
                f"tuner={tuner}",
                *suites.overrides(system, seed),
                f"seed={seed}",
                f"budget={budget}",
                "tracking=none",
                "session.progress=false",
                f"results_dir={results_dir}",
            ]
        )
        for key, value in (tuner_options or {}).items():
            OmegaConf.update(cfg.tuner, key, value, force_add=True)
        try:
            session = api.prepare(cfg, store="memory")
            cpu = time.process_time()
            result = api.run(session)
            cpu = time.process_time() - cpu
        except (ImportError, HarnessError) as exc:  # e.g. an optional peer not installed
            return {**head, "error": str(exc), "retry": True}
        except Exception as exc:  # a tuner's bug: a failed session, recorded
            log.warning("%s on %s seed %d raised %r", tuner, system, seed, exc)
            return {**head, "error": f"{type(exc).__name__}: {exc}", "crashed": True}
    objective, observations = session.objective, result.observations
    if result.status != "FINISHED":
        return {**head, "error": f"{result.status}: {result.message}"}
    default, best = result.default, result.answer  # the tuner's own answer, if it has one
    adapter: Any = session.system  # the bench's systems all know their optimum
    extra: dict[str, Any] = {}
    if hasattr(adapter, "default_values"):  # recorded-data systems: default rules and noise
        score = objective.score
        extra["default_by_rule"] = {
            rule: score({objective.metric: v}) if math.isfinite(v) else None
            for rule, v in adapter.default_values().items()
        }
        extra["noise"] = adapter.noise_measured.sd if adapter.noise_measured else None
    default_score = default.score if default is not None and default.ok else None
    best_score = best.score if best is not None else None
    if suites.noise_of(system) > 0:  # judge on truth: a lucky draw must not count
        extra["best_measured"], extra["default_measured"] = best_score, default_score
        truth = adapter.noise_free_metrics
        best_score = objective.score(truth(best.config)) if best is not None else None
        if default is not None and default.ok:
            default_score = objective.score(truth(default.config))
    return {
        **extra,
        **head,
        "suite": suites.suite_of(system),
        "measurement_noise": suites.noise_of(system),
        "metric": objective.metric,
        "direction": objective.direction,
        "dim": adapter.space.dim,
        "tests": len(observations),
        "default": default_score,
        "best": best_score,
        "optimum": objective.score({objective.metric: adapter.known_optimum()[1]}),
        "failures": sum(not o.ok for o in observations),
        "compute_s": result.tuner_seconds,
        "cpu_s": cpu,  # process CPU of the run (the synthetic/surrogate tests cost ~nothing)
        "wall_s": time.perf_counter() - started,
    }


def run_session(job: Job) -> dict[str, Any]:
    """One benchmark job (a pool worker's task): :func:`session_row` of the job."""
    return session_row(*job)


def _run_numbered(numbered: tuple[int, Job]) -> tuple[int, dict[str, Any]]:
    """:func:`run_session` of a job with its position, for results taken as they finish."""
    index, job = numbered
    return index, run_session(job)


def job_key(job: Job) -> str:
    """Cache key: the job plus :func:`~paper.code_version.code_digest` of its tuner and system
    (their configs and code, and the core's), so a changed tuner setting or a bug fix is
    recomputed instead of read back stale."""
    return "{}|{}|{}|{}".format(*job) + f"|{code_digest(job[0], suites.system_config(job[1]))}"


class _OncePerProcess(logging.Filter):
    """Drops a log message this process has already shown (a surrogate's fidelity warning
    would otherwise repeat at every session a worker builds on it)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


def _init_worker(parent_pid: int) -> None:
    die_with_parent(parent_pid)  # a killed bench leaves no worker computing on
    logging.basicConfig(level=logging.WARNING)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_OncePerProcess())


def run_jobs(
    jobs: list[Job], processes: int, cache: Path | None, progress: bool = True
) -> list[dict[str, Any]]:
    """Run the jobs not yet in ``cache`` on a process pool; return every job's result in order."""
    cached: dict[str, dict[str, Any]] = {}
    if cache and cache.exists():
        cached = json.loads(cache.read_text())
    results = dict(cached)
    todo = [j for j in jobs if job_key(j) not in cached]
    # Seed-major order: a run stopped early still holds whole seeds (every tuner on every
    # system), so `--seeds k` reports them; workers keep the surrogates they built.
    todo.sort(key=lambda j: (j[2], j[1], j[0]))
    # One BLAS thread per worker: the processes already use the cores.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # SMAC's local search orders its start points by string hashing: a fixed hash seed in the
    # (spawned) workers makes its sessions repeat across runs and machines.
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if todo:
        from tqdm import tqdm

        with (
            multiprocessing.get_context("spawn").Pool(
                processes, _init_worker, (os.getpid(),)
            ) as pool,
            tqdm(total=len(todo), file=sys.stderr, disable=not progress, desc="sessions") as bar,
        ):
            # As each session finishes, not in job order: a fast session that finishes behind a
            # slow one is cached at once, so stopping the run never loses it.
            for index, result in pool.imap_unordered(_run_numbered, enumerate(todo)):
                job = todo[index]
                results[job_key(job)] = result
                bar.set_postfix_str(f"{job[0]} {job[1]} s{job[2]}", refresh=False)
                bar.update()
                if result.get("retry"):
                    continue  # not installed now is no verdict on the tuner
                cached[job_key(job)] = result
                if cache:  # durable after each session, so an interrupted run resumes
                    cache.parent.mkdir(parents=True, exist_ok=True)
                    tmp = cache.with_suffix(".tmp")
                    tmp.write_text(json.dumps(cached, indent=1))
                    tmp.replace(cache)
    return [results[job_key(j)] for j in jobs]


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
        help="suites (dev: synthetic + moot_* tables + the hard family, where settings may be "
        "chosen; hard: the family<d> problems alone; eval: the surrogate_* systems, report "
        "only) and/or system configs or family<d> problems "
        "(default: synthetic10 synthetic30 + every surrogate_*)",
    )
    parser.add_argument(
        "--noise",
        nargs="+",
        type=float,
        default=[0.0],
        metavar="SIGMA",
        help="measurement-noise levels: every problem also at each (e.g. 0 0.05 0.15); "
        "noisy sessions are scored on noise-free truth",
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


def _check_composes(tuners: list[str], suite: list[str]) -> None:
    """Compose each tuner and each problem once before any session runs, so a config that
    cannot take the bench's overrides ends the run in seconds with one line, not mid-way."""
    from hydra.errors import HydraException

    from harness import api

    pairs = {(t, suite[0]) for t in tuners} | {(tuners[0], s) for s in suite}
    for tuner, problem in sorted(pairs):
        try:
            api.compose([f"tuner={tuner}", *suites.overrides(problem, 0), "tracking=none"])
        except HydraException as exc:
            one_line = " ".join(str(exc).split())
            raise SystemExit(f"tuner={tuner} on {problem}: {one_line}") from None


def _skipped(tuner: str, system: str, skips: list[str]) -> bool:
    import fnmatch

    return any(fnmatch.fnmatch(f"{tuner}@{system}", pattern) for pattern in skips)


def draw_cd_figures(groups: list[tuple[str, dict[str, Any]]], out: Path) -> None:
    """Each group's critical-difference diagram, ``OUT/cd_<n>.png`` (n = the group's place
    in the report), named in the group's summary so its section links it."""
    for number, (label, summary) in enumerate(groups, start=1):
        test = summary["friedman"]
        if test.k < 2 or test.blocks < 1:
            continue
        name = f"cd_{number}.png"
        ranks = {n: t["rank"] for n, t in summary["tuners"].items()}
        plot_cd(ranks, test.blocks, out / name, f"{label}: {test.blocks} blocks")
        summary["cd_figure"] = name


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    seeds = args.seeds or (2 if args.quick else 5)
    budget = args.budget or (50 if args.quick else 100)
    tuners = args.tuners or list(QUICK_TUNERS if args.quick else DEFAULT_TUNERS)
    names = args.suite or (["synthetic10", *QUICK_SURROGATES] if args.quick else suite_names())
    suite = suites.expand(names, tuple(args.noise))
    unknown = [t for t in tuners if not (TUNER_DIR / f"{t}.yaml").exists()] + [
        s for s in suite if not (SYSTEM_DIR / f"{suites.system_config(s)}.yaml").exists()
    ]
    if unknown:
        raise SystemExit(
            f"unknown tuner/system config(s): {', '.join(unknown)} "
            f"(see harness/conf/tuner/ and harness/conf/system/)"
        )
    _check_composes(tuners, suite)
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
    errors: dict[tuple[str, str, str], int] = {}
    for r in rows:
        if "error" in r:
            where = (r["tuner"], r["system"], r["error"])
            errors[where] = errors.get(where, 0) + 1
    rows = [r for r in rows if "error" not in r]
    given = shlex.join(argv if argv is not None else sys.argv[1:])
    # the report is committed: paths below the working folder are written relative to it
    command = "python -m paper.bench " + given.replace(f"{Path.cwd()}{os.sep}", "")
    notes = (
        f"Tuners: {' '.join(tuners)}. Suite: {' '.join(suite)}. Seeds 0..{seeds - 1}, "
        f"budget {budget}. Sessions: {len(rows)}"
        + (f"; left out: {' '.join(args.skip)}" if args.skip else "")
        + (
            "; not scored: "
            + "; ".join(f"{t}@{s} ({n} sessions): {e}" for (t, s, e), n in errors.items())
            if errors
            else ""
        )
        + f". Sum of session wall times (each computed once, then cached): "
        f"{sum(r['wall_s'] for r in rows):.0f} s; this invocation: "
        f"{time.perf_counter() - started:.0f} s."
        + (f"\n\n{args.note.read_text().strip()}" if args.note else "")
    )
    args.out.mkdir(parents=True, exist_ok=True)
    groups = grouped_summaries(rows, jobs)
    draw_cd_figures(groups, args.out)
    (args.out / "REPORT.md").write_text(report_sections(groups, command, notes))
    label, first = groups[0]
    plot_scores(
        first,
        args.out / "scores.png",
        f"mean normalised score, {label}: {len(first['systems'])} problems × {seeds} seeds, "
        f"budget {budget}",
    )
    print((args.out / "REPORT.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
