"""The bare tuning loop: one test, and ask → test → tell until the budget is spent.

:func:`run_test` turns a configuration into an :class:`~harness.records.Observation`, mapping the
system's and workload's exceptions to a status. :func:`tune` drives a tuner in-process with no
store and no tracking; benchmarks and tests use it, and :mod:`harness.session` wraps the same
:func:`run_test` with durability, MLflow, timeouts and progress.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable
from typing import Any

from harness.errors import (
    HarnessError,
    HostUnreachable,
    SystemStartError,
    WorkloadError,
    WorkloadTimeout,
)
from harness.objective import Objective, assess
from harness.records import Observation, Status
from harness.space import Config
from harness.system import System, Workload
from harness.tuner import Tuner

__all__ = ["aggregate", "run_test", "tune"]

log = logging.getLogger(__name__)


def aggregate(runs: list[dict[str, float]]) -> dict[str, float]:
    """Median of each metric over repeated runs (robust to one outlier run)."""
    names = sorted(set().union(*runs)) if runs else []
    return {n: float(statistics.median(r[n] for r in runs if n in r)) for n in names}


def run_test(
    system: System,
    workload: Workload,
    objective: Objective,
    config: Config,
    trial: int,
    *,
    repeats: int = 1,
    timeout_s: float | None = None,
    start_timeout_s: float = 120.0,
    is_default: bool = False,
) -> Observation:
    """Reset, apply, start, run the workload ``repeats`` times, stop; never raises HarnessError."""
    started = time.perf_counter()
    status, message = Status.SUCCEEDED, ""
    metrics: dict[str, float] = {}
    extra: dict[str, Any] = {}
    score: float | None = None
    try:
        system.reset()
        system.apply(config)
        system.start(start_timeout_s)
        run_started = time.perf_counter()
        runs = [workload.run(system, timeout_s) for _ in range(repeats)]
        extra["run_s"] = (time.perf_counter() - run_started) / repeats
        metrics = aggregate(runs)
        if repeats > 1:
            extra["runs"] = runs
        verdict = assess(objective, metrics)
        score, status, message = verdict.score, Status(verdict.status), verdict.message
    except SystemStartError as exc:
        status, message = Status.CRASHED, str(exc)
        extra["log_tail"] = exc.log_tail
    except WorkloadTimeout as exc:
        status, message = Status.TIMED_OUT, str(exc)
        extra["output_tail"] = exc.output_tail
    except WorkloadError as exc:
        status, message = Status.FAILED, str(exc)
        extra["output_tail"] = exc.output_tail
    except HostUnreachable:
        raise  # not the configuration's fault: the session stops and can resume later
    except HarnessError as exc:  # e.g. a value the adapter could not render: the system refuses
        status, message = Status.CRASHED, str(exc)
    finally:
        try:
            system.stop()
        except HarnessError as exc:  # (also an unreachable host: the exception in flight wins)
            log.warning("stopping %s after trial %d failed: %s", system.name, trial, exc)
    return Observation(
        trial=trial,
        config=dict(config),
        status=status,
        score=score if status is Status.SUCCEEDED else None,
        metrics=metrics,
        duration_s=time.perf_counter() - started,
        is_default=is_default,
        message=message,
        extra=extra,
    )


def tune(
    tuner: Tuner,
    system: System,
    workload: Workload,
    objective: Objective,
    budget: int,
    on_observation: Callable[[Observation], None] | None = None,
    **test_options: float,
) -> list[Observation]:
    """Run a whole in-process session (no store, no tracking) and return every observation.

    The system must already be set up (``system.setup(workdir, workload)``).
    """
    observations: list[Observation] = []
    while len(observations) < budget:
        batch = tuner.ask(min(tuner.preferred_batch, budget - len(observations)))
        told: list[Observation] = []
        for config in batch:
            trial = len(observations)
            obs = run_test(
                system,
                workload,
                objective,
                config,
                trial,
                is_default=trial == 0,
                **test_options,  # type: ignore[arg-type]
            )
            observations.append(obs)
            told.append(obs)
            if on_observation:
                on_observation(obs)
        tuner.tell(told)
    return observations
