"""The bias of reloading instead of restarting: one configuration measured both ways, alternating.

``python -m paper.reload_bias mysql readonly --pairs 8`` builds the system and workload the
session ``python -m harness system=<system> workload=<workload> +system.adapter.reload=true``
would (:func:`harness.api.compose`), sets the system up once, and runs ``2 x pairs`` tests of the
default configuration (or of ``--config knob=value ...``), alternating: a *restarted* test (the
server shut down before it, so it starts cold, as every test does with ``reload`` off) and a
*reloaded* test (the server of the test before it kept running: warm caches, no start). It
prints each mode's median metric with its min, max and relative spread ((max - min) / median),
the difference of the medians relative to the restarted median, the same per pair (each
reloaded test against the restarted one just before it, which saw the same minute's load), and
each mode's median start time. Both modes see the snapshot's data (a read-only workload; a
writing one is refused, as the adapter would restart it anyway).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path

from harness import api
from harness.records import Observation, Status
from harness.session.session import Session
from harness.session.trial import run_test
from harness.space import Config
from systems.dbserver.base import ServerSystem
from systems.dbserver.reuse import reads_only

__all__ = ["paired_line", "spread_line"]

MODES = ("restarted", "reloaded")


def spread_line(mode: str, values: Sequence[float]) -> str:
    """``mode: median (min-max, spread %) over n``."""
    median = statistics.median(values)
    spread = (max(values) - min(values)) / median * 100 if median else float("nan")
    return (
        f"{mode}: median {median:.1f} (min {min(values):.1f}, max {max(values):.1f}, "
        f"spread {spread:.1f} %) over {len(values)} tests"
    )


def paired_line(runs: dict[str, list[Observation]], metric: str) -> str:
    """Each reloaded test against the restarted test just before it (the same minute's load):
    the median relative difference, its range, and how many pairs the reloaded one lost."""
    ratios = [
        (reloaded.metrics[metric] - restarted.metrics[metric]) / restarted.metrics[metric] * 100
        for restarted, reloaded in zip(runs["restarted"], runs["reloaded"], strict=True)
    ]
    lower = sum(ratio < 0 for ratio in ratios)
    return (
        f"paired: median {statistics.median(ratios):+.1f} % (min {min(ratios):+.1f}, "
        f"max {max(ratios):+.1f}); reloaded lower in {lower} of {len(ratios)} pairs"
    )


def alternate(
    system: ServerSystem, session: Session, config: Config, pairs: int
) -> dict[str, list[Observation]]:
    """Run the alternating tests on a set-up system; return each mode's observations."""
    workload, objective = session.workload, session.objective
    runs: dict[str, list[Observation]] = {mode: [] for mode in MODES}
    for trial in range(2 * pairs):
        mode = MODES[trial % 2]
        if mode == "restarted":
            system.shutdown()  # a cold start, as every test has with reload off
        observation = run_test(system, workload, objective, config, trial, start_timeout_s=120)
        if observation.status is not Status.SUCCEEDED:
            raise SystemExit(f"test {trial} ({mode}): {observation.status}: {observation.message}")
        runs[mode].append(observation)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system")
    parser.add_argument("workload")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--config", nargs="*", default=[], help="knob=value (else the default)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reload-bias-") as results_dir:
        cfg = api.compose(
            [
                f"system={args.system}",
                f"workload={args.workload}",
                "+system.adapter.reload=true",
                "tracking=none",
                f"results_dir={results_dir}",
            ]
        )
        session = api.prepare(cfg, store="memory")
        system = session.system
        if not isinstance(system, ServerSystem) or not reads_only(session.workload):
            raise SystemExit("a database server system and a read-only workload are needed")
        config = system.space.validate(
            dict(item.split("=", 1) for item in args.config), partial=True
        )
        try:
            system.setup(Path(results_dir), session.workload)
            runs = alternate(system, session, config, args.pairs)
        finally:
            system.teardown()
    metric = session.objective.metric
    print(f"{args.system} {args.workload}, {args.pairs} pairs, config {config or 'default'}")
    medians = {}
    for mode in MODES:
        values = [o.metrics[metric] for o in runs[mode]]
        medians[mode] = statistics.median(values)
        starts = statistics.median(float(o.extra["start_s"]) for o in runs[mode])
        print(f"{metric} {spread_line(mode, values)}; start median {starts:.3f} s")
    difference = (medians["reloaded"] - medians["restarted"]) / medians["restarted"] * 100
    print(f"reloaded vs restarted median: {difference:+.1f} %; reloads {system.reloads}")
    print(paired_line(runs, metric))


if __name__ == "__main__":
    main()
