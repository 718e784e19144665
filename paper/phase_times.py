"""Where a test's wall time goes: the median of each phase over N tests of one system.

``python -m paper.phase_times mysql readonly --tests 8 --seed 0`` runs the session
``python -m harness system=<system> workload=<workload> tuner=lhs seed=<seed> budget=<tests>``
would run (in memory, untracked; the default configuration first, then LHS samples) and prints
one Markdown row per phase: median, min and max seconds of ``reset``, ``apply``, ``start``
(start or restart, and the readiness wait), ``run`` (the measured window, plus the client's
own start-up and exit), ``stop``, the whole test, and the non-workload share of the test
(everything but ``run``). The phases come from the observations' ``extra`` (``reset_s`` ...),
which :func:`harness.session.trial.run_test` records for every test. More Hydra overrides
after ``--`` (e.g. ``-- system.adapter.reload=true``) change the session under measurement.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence

from harness import api
from harness.records import Observation

__all__ = ["PHASES", "phase_table"]

#: The phases of a test, in the order they run, as ``extra`` keys (``<phase>_s``).
PHASES = ("reset", "apply", "start", "run", "stop")


def _row(name: str, values: Sequence[float]) -> str:
    if not values:
        return f"| {name} | – | – | – |"
    return f"| {name} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |"


def phase_table(observations: Sequence[Observation]) -> list[str]:
    """Markdown rows: each phase's median/min/max seconds over tests that recorded it, the
    whole test, and the non-workload share (1 - run / test) per test."""
    lines = ["| phase | median s | min s | max s |", "|---|---|---|---|"]
    for phase in PHASES:
        values = [float(o.extra[f"{phase}_s"]) for o in observations if f"{phase}_s" in o.extra]
        lines.append(_row(phase, values))
    lines.append(_row("whole test", [o.duration_s for o in observations]))
    shares = [
        1.0 - float(o.extra["run_s"]) / o.duration_s
        for o in observations
        if "run_s" in o.extra and o.duration_s > 0
    ]
    lines.append(_row("non-workload share", shares))
    return lines


def measure(system: str, workload: str, tests: int, seed: int, more: Sequence[str]) -> None:
    """Run the session and print its phase table (and each test's status and metric)."""
    with tempfile.TemporaryDirectory(prefix="phases-") as results_dir:
        cfg = api.compose(
            [
                f"system={system}",
                f"workload={workload}",
                "tuner=lhs",
                f"seed={seed}",
                f"budget={tests}",
                "tracking=none",
                "session.progress=false",
                f"results_dir={results_dir}",
                *more,
            ]
        )
        session = api.prepare(cfg, store="memory")
        result = api.run(session)
    if result.status != "FINISHED":
        raise SystemExit(f"{result.status}: {result.message}")
    observations = result.observations
    metric = session.objective.metric
    print(f"{system} {workload}, {len(observations)} tests, seed {seed}, {' '.join(more)}")
    print("statuses:", ",".join(o.status.value for o in observations))
    values = (o.metrics.get(metric, float("nan")) for o in observations)
    print(f"{metric}:", ", ".join(f"{value:.1f}" for value in values))
    facts = session.system.describe()
    counts = {key: facts[key] for key in ("reload", "reloads", "restores_skipped") if key in facts}
    print("adapter:", ", ".join(f"{key} {value}" for key, value in counts.items()) or "-")
    print("\n".join(phase_table(observations)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system")
    parser.add_argument("workload")
    parser.add_argument("--tests", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)  # after --: more Hydra overrides
    args = parser.parse_args(argv[:cut])
    measure(args.system, args.workload, args.tests, args.seed, argv[cut + 1 :])


if __name__ == "__main__":
    main()
