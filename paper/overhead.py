"""Benchmark: the harness's own overhead per tuning test (everything but the objective).

Runs full sessions through :mod:`harness.api` as the CLI does (sample store with fsync, MLflow
tracking in a fresh SQLite store, the session loop, progress off) on the synthetic system,
whose objective costs microseconds, and prints per-test overhead: median over repeated sessions
of (session wall time − tuner computation) / tests, with and without MLflow, side by side in
one run. Target: ≤ 0.3 s.

    python -m paper.overhead [--budget 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from harness import api


def one_session(tuner: str, tracking: bool, budget: int) -> tuple[float, float]:
    """Return (overhead per test, tuner seconds per test) of one fresh session."""
    with tempfile.TemporaryDirectory() as tmp:
        overrides = [
            f"results_dir={tmp}",
            "session.progress=false",
            "system=synthetic10",
            f"tuner={tuner}",
            f"budget={budget}",
        ]
        overrides.append(
            f"tracking.uri=sqlite:///{tmp}/mlflow.db" if tracking else "tracking=none"
        )
        cfg = api.compose(overrides)
        started = time.perf_counter()
        session = api.prepare(cfg, overrides)  # includes opening MLflow (once per session)
        result = api.run(session)
        wall = time.perf_counter() - started
        objective = sum(float(o.extra.get("run_s", 0.0)) for o in result.observations)
        tests = len(result.observations)
        return (wall - result.tuner_seconds - objective) / tests, result.tuner_seconds / tests


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m paper.overhead", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"budget {args.budget}, {args.repeats} sessions per row, medians\n")
    print("| tuner | MLflow | harness overhead per test | tuner time per test |")
    print("|---|---|---|---|")
    for tuner in ("lhs", "classytune"):
        for tracking in (False, True):
            rows = [one_session(tuner, tracking, args.budget) for _ in range(args.repeats)]
            overhead = statistics.median(r[0] for r in rows)
            tuner_s = statistics.median(r[1] for r in rows)
            print(
                f"| {tuner} | {'on' if tracking else 'off'} | {overhead * 1000:.1f} ms "
                f"| {tuner_s * 1000:.1f} ms |"
            )


if __name__ == "__main__":
    main()
