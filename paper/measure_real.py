"""Measure one real system: default configuration 3x, a few single-knob changes, the expert
settings; one line per test with every metric and the test's wall time.

    python -m paper.measure_real tomcat
    python -m paper.measure_real spark pagerank
    python -m paper.measure_real mapreduce wordcount
    python -m paper.measure_real tomcat --default 12 --set warmup_s=10   # the default's noise

The system, its workload (the positional ``job`` picks one of its workloads, e.g. ``pagerank``),
the objective (the workload's first metric) and the expert rules are built from the system's
configs, composed through :func:`harness.api.compose` as a session's are; only the single-knob
variations are this tool's own (:data:`VARIATIONS`). The tests run as one session of
:class:`paper.listed.ListTuner` through :func:`harness.api.run_objects` (in memory, untracked;
the work folder is kept under ``--workdir/<system>``). Timeouts are so generous that no test
is cut short, and crashed tests do not stop the session; only a failing default configuration
(trial 0) does, as in any session.

The measurement runs in a control group of its own where the machine lets it make one
(:mod:`harness.hosts.other_work`), so each line also shows ``other_cpu``: the share of the
machine's CPU that other processes took during the test's runs (``kernel_cpu``: the kernel threads'
part of it; and ``steal``, the hypervisor's).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from hydra.utils import instantiate

from baselines.expert import load_rules
from harness import api
from harness.builder.session import make_objective, make_workload
from harness.errors import ConfigError
from harness.hosts.machine import Machine
from harness.hosts.other_work import CGROUP_ENV, join, own_cgroup
from harness.objectives.objective import Objective
from harness.records import Observation
from harness.system import System, Workload
from paper.listed import ListTuner

#: Session options of a measurement: never time a test out, never give up on crashes.
MEASURE_OPTIONS: dict[str, Any] = {
    "first_timeout_s": 24 * 3600.0,
    "min_timeout_s": 24 * 3600.0,
    "timeout_factor": 1000.0,
    "max_consecutive_crashes": 1000,
    "keep_workdir": True,
}


#: What each system measures beside its default: a few single-knob changes (data per system;
#: the system, its workload, objective and expert rules come from its config).
VARIATIONS: dict[str, list[dict[str, Any]]] = {
    "tomcat": [
        {"maxThreads": 4},
        {"maxKeepAliveRequests": 1},
        {"jvm.gc": "Serial", "jvm.heap_mb": 64},
    ],
    "spark": [{"spark.sql.shuffle.partitions": 8}, {"spark.sql.adaptive.enabled": False}],
    "mapreduce": [
        {"mapreduce.task.io.sort.mb": 10},
        {
            "mapreduce.input.fileinputformat.split.maxsize": 4,
            "mapreduce.local.map.tasks.maximum": 2,
        },
    ],
}


@dataclass(frozen=True)
class Measured:
    """What one measurement runs: built from the system's config like any session's."""

    system: System
    workload: Workload
    objective: Objective
    variations: list[dict[str, Any]]
    rules: ModuleType  # the expert rules the system's config names (system.expert_rules)


def build(system: str, job: str | None, workload_args: dict[str, Any] | None = None) -> Measured:
    """``system`` with its workload ``job`` (default: the system's own) and ``workload_args``,
    composed as ``python -m harness system=<system> workload=<job> workload.<key>=<value>``
    would; the objective is the workload's first metric."""
    overrides = [f"system={system}", "tracking=none"]
    overrides += [f"workload={job}"] if job else []
    overrides += [f"++workload.{key}={value}" for key, value in (workload_args or {}).items()]
    cfg = api.compose(overrides)
    workload = make_workload(cfg)
    return Measured(
        system=instantiate(cfg.system.adapter),
        workload=workload,
        objective=make_objective(cfg, workload, {}),
        variations=VARIATIONS.get(system, []),
        rules=load_rules(cfg.system.get("expert_rules"), system),
    )


def workload_arg(text: str) -> tuple[str, float]:
    """``key=value`` of ``--set``: a numeric argument of the workload (warmup_s=10); like every
    workload number, finite and not negative."""
    key, sep, value = text.partition("=")
    try:
        number = float(value)
        if not sep or not key.isidentifier() or not math.isfinite(number) or number < 0:
            raise ValueError(text)
        return key, number
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: write a workload argument as key=number (0 or more), e.g. warmup_s=10"
        ) from None


def in_own_group(argv: list[str]) -> int | None:
    """Run this measurement again, in a control group of its own, and return its exit code;
    None where no group can be made, or when this is that run."""
    if os.environ.get(CGROUP_ENV):
        return None
    with own_cgroup(f"measure-{os.getpid()}", parent="harness-measure") as group:
        if group is None:
            return None
        child = subprocess.Popen(
            [sys.executable, "-m", "paper.measure_real", *argv],
            env={**os.environ, CGROUP_ENV: str(group)},
            preexec_fn=functools.partial(join, group),  # joins, then execs
        )
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:  # the child has it too, and stops its servers in order
                continue


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m paper.measure_real", description=__doc__.splitlines()[0]
    )
    parser.add_argument("system", choices=sorted(VARIATIONS))
    parser.add_argument("job", nargs="?")
    parser.add_argument("--workdir", default="/tmp/measure_real")
    parser.add_argument(
        "--default",
        type=int,
        metavar="N",
        help="only the default configuration, N times (its noise), instead of the usual list",
    )
    parser.add_argument(
        "--set",
        type=workload_arg,
        action="append",
        default=[],
        metavar="KEY=NUMBER",
        help="a workload argument, e.g. --set warmup_s=10 (repeatable)",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.default is not None and args.default < 1:
        parser.error("--default needs a number of runs of at least 1")
    try:
        measured = build(args.system, args.job, dict(args.set))
    except ConfigError as error:  # a workload or argument it does not take, or a bad value
        parser.error(f"--set: {error}" if args.set else str(error))
    system, workload, objective = measured.system, measured.workload, measured.objective
    if (code := in_own_group(argv)) is not None:  # the arguments are good: measure there
        raise SystemExit(code)
    machine = Machine.detect()
    runs: list[tuple[str, dict[str, Any]]] = [("default", {})] * (args.default or 3)
    if args.default is None:
        runs += [(json.dumps(v), v) for v in measured.variations] + [
            ("expert.manual", measured.rules.manual(system.space, machine)),
            ("expert.script", measured.rules.script(system.space, machine)),
        ]
    tuner = ListTuner(system.space, [changes for _, changes in runs[1:]])
    started = time.perf_counter()

    def show(obs: Observation, _best: float | None) -> None:
        if obs.trial == 0:  # the session set the system up just before this test
            setup_s = time.perf_counter() - started - obs.duration_s
            print(f"setup_s {setup_s:.1f}", flush=True)
        metrics = {k: round(v, 2) for k, v in obs.metrics.items()}
        shares = {k: obs.extra[k] for k in ("other_cpu", "kernel_cpu", "steal") if k in obs.extra}
        print(
            runs[obs.trial][0],
            obs.status.value,
            metrics,
            *(f"{k} {v:.3f}" for k, v in shares.items()),
            f"test_wall_s {obs.duration_s:.1f}",
            obs.message[:120],
            flush=True,
        )

    result = api.run_objects(
        tuner,
        system,
        workload,
        budget=len(runs),
        results_dir=Path(args.workdir) / args.system,
        objective=objective,
        on_progress=show,
        **MEASURE_OPTIONS,
    )
    if result.status != "FINISHED":
        print(f"{result.status}: {result.message}", flush=True)
    defaults = [
        o.metrics[objective.metric]
        for o in result.observations
        if o.ok and runs[o.trial][0] == "default"
    ]
    if len(defaults) >= 2:
        mean = statistics.fmean(defaults)
        print(
            f"default x{len(defaults)}: median {statistics.median(defaults):.4g}, "
            f"min {min(defaults):.4g}, max {max(defaults):.4g}, "
            f"relative sd {statistics.stdev(defaults) / mean:.1%}",
            flush=True,
        )


if __name__ == "__main__":
    main()
