"""Measure the SQLite system: reset strategies, noise of the default, and a short LHS session.

    python -m paper.measure_sqlite [--mix readwrite] [--budget 12]
        [--duration 4.5] [--repeats 3] [--rows 100000]

Prints a Markdown report (the numbers in systems/sqlite/README.md come from it). The default
runs and the LHS session are two in-memory sessions through :func:`harness.api.run_objects`
(each sets the system up in its own work folder); every test may take 60 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Literal

from baselines.sampling import LHSTuner
from harness import api
from harness.objectives.objective import Objective
from harness.records import Observation
from harness.session.session import SessionResult
from harness.tuner import Tuner
from paper.listed import ListTuner
from systems.sqlite import SQLiteOLTP, SQLiteSystem, worker

TIMEOUT_S = 60.0


def _timed(action: object, repeats: int = 3) -> list[float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return times


def reset_strategies(folder: Path, rows: int) -> dict[str, list[float]]:
    """Seconds to get a fresh database with page_size 16384 in three ways."""
    base = folder / "base.db"
    worker.build(str(base), rows, 0, 4096, "NONE")
    target = str(folder / "t.db")

    def rebuild() -> None:
        worker.build(target, rows, 0, 16384, "NONE")

    def copy_vacuum() -> None:
        shutil.copyfile(base, target)
        conn = sqlite3.connect(target, isolation_level=None)
        conn.execute("PRAGMA page_size=16384")
        conn.execute("VACUUM")
        conn.close()

    def copy_cached() -> None:  # what the adapter does (pristine per page size, then fsync)
        shutil.copyfile(base, target)
        descriptor = os.open(target, os.O_RDONLY)
        os.fsync(descriptor)
        os.close(descriptor)

    return {
        "rebuild in the worker": _timed(rebuild),
        "copy + VACUUM": _timed(copy_vacuum),
        "copy cached pristine + fsync": _timed(copy_cached),
    }


def session(
    tuner: Tuner,
    mix: Literal["readonly", "readwrite"],
    duration: float,
    rows: int,
    budget: int,
    folder: Path,
) -> tuple[SessionResult, float]:
    """One in-memory session of ``tuner``; its result and the system's setup time."""
    system = SQLiteSystem()
    workload = SQLiteOLTP(mix=mix, duration_s=duration, rows=rows)
    started = time.perf_counter()
    setup: list[float] = []

    def first(obs: Observation, _best: float | None) -> None:
        if obs.trial == 0:  # the session set the system up just before this test
            setup.append(time.perf_counter() - started - obs.duration_s)

    result = api.run_objects(
        tuner,
        system,
        workload,
        budget=budget,
        results_dir=folder,
        objective=Objective.for_workload(workload.metrics, None, None),
        on_progress=first,
        first_timeout_s=TIMEOUT_S,
        min_timeout_s=TIMEOUT_S,
    )
    if result.status != "FINISHED":
        raise SystemExit(f"{result.status}: {result.message}")
    return result, setup[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m paper.measure_sqlite", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--mix", default="readwrite", choices=("readonly", "readwrite"))
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--duration", type=float, default=4.5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="measure-sqlite-"))
    try:
        print(f"## SQLite measurements ({args.mix}, {args.rows} rows, {args.duration:g} s runs)\n")
        print("### Reset strategies (s, 3 runs)")
        for name, times in reset_strategies(folder, args.rows).items():
            print(f"- {name}: " + ", ".join(f"{t:.3f}" for t in times))

        space = SQLiteSystem().space
        defaults, setup_s = session(
            ListTuner(space, [{}] * (args.repeats - 1)),
            args.mix,
            args.duration,
            args.rows,
            args.repeats,
            folder,
        )
        print(f"\nsession setup (first pristine build): {setup_s:.2f} s")

        print(f"\n### Default configuration x{args.repeats}")
        values = []
        for obs in defaults.observations:
            values.append(obs.metrics.get("tps", float("nan")))
            print(
                f"- tps {values[-1]:.1f}, p95 {obs.metrics.get('latency_p95_ms', 0):.2f} ms, "
                f"wall {obs.duration_s:.2f} s, setup {obs.metrics.get('setup_s', 0):.3f} s"
            )
        if len(values) > 1:
            cv = statistics.stdev(values) / statistics.mean(values)
            print(
                f"- mean {statistics.mean(values):.1f}, CV {100 * cv:.1f}%, "
                f"max/min {max(values) / min(values):.2f}"
            )

        print(f"\n### LHS session, budget {args.budget} (seed {args.seed})")
        tuner = LHSTuner(space, seed=args.seed, budget=args.budget)
        lhs, _ = session(tuner, args.mix, args.duration, args.rows, args.budget, folder)
        observations = lhs.observations
        for obs in observations:
            print(
                f"- trial {obs.trial}: {obs.status.value} tps "
                f"{obs.metrics.get('tps', float('nan')):.1f} wall {obs.duration_s:.2f} s "
                f"setup {obs.metrics.get('setup_s', 0):.2f} s {obs.message}"
            )
        walls = [obs.duration_s for obs in observations]
        ok = [obs for obs in observations if obs.ok]
        best = max(ok, key=lambda o: o.metrics["tps"])
        default = observations[0].metrics.get("tps", float("nan"))
        print(f"\nper-test wall time: mean {statistics.mean(walls):.2f} s, max {max(walls):.2f} s")
        print(
            f"default tps {default:.1f}; best tps {best.metrics['tps']:.1f} "
            f"(trial {best.trial}, x{best.metrics['tps'] / default:.1f})"
        )
        print(f"best configuration: {best.config}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
