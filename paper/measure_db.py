"""Measure per-test wall time of a database system x workload with the shipped defaults.

``python -m paper.measure_db postgres tpcc --tests 3`` builds the system and workload
from ``conf/system/<system>.yaml`` (default durations), sets up once, runs ``--tests`` tests
(the default configuration, then LHS samples) and prints one Markdown table row.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from hydra.utils import instantiate
from omegaconf import OmegaConf

from harness.conf import CONFIG_DIR
from harness.loop import tune
from harness.objective import Objective
from tuners.sampling import LHSTuner

CONF = CONFIG_DIR / "system"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("system")
    parser.add_argument("workload")
    parser.add_argument("--tests", type=int, default=3)
    args = parser.parse_args()
    cfg = OmegaConf.load(CONF / f"{args.system}.yaml")
    system = instantiate(cfg.adapter)
    workload = instantiate(cfg.workloads[args.workload])
    workload.name = args.workload
    objective = Objective.for_workload(workload.metrics)
    with tempfile.TemporaryDirectory(prefix="measure-") as workdir:
        started = time.perf_counter()
        try:
            system.setup(Path(workdir), workload)
            setup_s = time.perf_counter() - started
            tuner = LHSTuner(system.space, seed=0, budget=args.tests)
            observations = tune(
                tuner,
                system,
                workload,
                objective,
                args.tests,
                timeout_s=workload.duration_s * 3 + 60,
            )
        finally:
            system.teardown()
    walls = [o.duration_s for o in observations]
    default = observations[0].metrics.get(objective.metric, float("nan"))
    statuses = ",".join(o.status.value[0] for o in observations)
    print(
        f"| {args.system} | {args.workload} | {workload.duration_s:g} s | {setup_s:.1f} s | "
        f"{statistics.mean(walls):.1f} s ({min(walls):.1f}-{max(walls):.1f}) | "
        f"{statistics.mean(system.restore_times):.2f} s | {objective.metric} {default:.1f} | "
        f"{statuses} |"
    )


if __name__ == "__main__":
    main()
