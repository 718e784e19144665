"""Measure per-test wall time of a database system x workload with the shipped defaults.

``python -m paper.measure_db postgres tpcc --tests 3`` runs the session
``python -m harness system=<system> workload=<workload> tuner=lhs budget=<tests>`` would run
(default durations; :func:`harness.api.compose`), in memory and untracked: the default
configuration, then LHS samples. Every test may take 3x the workload's duration + 60 s. It
prints one Markdown table row.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from harness import api
from harness.records import Observation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system")
    parser.add_argument("workload")
    parser.add_argument("--tests", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="measure-") as results_dir:
        cfg = api.compose(
            [
                f"system={args.system}",
                f"workload={args.workload}",
                "tuner=lhs",
                "seed=0",
                f"budget={args.tests}",
                "tracking=none",
                "session.progress=false",
                f"results_dir={results_dir}",
            ]
        )
        duration = float(cfg.workload.get("duration_s") or 0.0)
        cfg.session.first_timeout_s = cfg.session.min_timeout_s = duration * 3 + 60
        session = api.prepare(cfg, store="memory")
        started = time.perf_counter()
        setup: list[float] = []

        def first(obs: Observation, _best: float | None) -> None:
            if obs.trial == 0:  # the session set the system up just before this test
                setup.append(time.perf_counter() - started - obs.duration_s)

        result = api.run(session, on_progress=first)
    if result.status != "FINISHED":
        raise SystemExit(f"{result.status}: {result.message}")
    system, workload, objective = session.system, session.workload, session.objective
    observations = result.observations
    walls = [o.duration_s for o in observations]
    default = observations[0].metrics.get(objective.metric, float("nan"))
    statuses = ",".join(o.status.value[0] for o in observations)
    restores = getattr(system, "restore_times", None) or [float("nan")]
    print(
        f"| {args.system} | {args.workload} | {workload.duration_s:g} s | {setup[0]:.1f} s | "
        f"{statistics.mean(walls):.1f} s ({min(walls):.1f}-{max(walls):.1f}) | "
        f"{statistics.mean(restores):.2f} s | {objective.metric} {default:.1f} | "
        f"{statuses} |"
    )


if __name__ == "__main__":
    main()
