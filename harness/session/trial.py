"""One tuning test: reset, apply, start, run the workload, stop — and its verdict.

Each phase's wall time is kept in the observation's ``extra`` (``reset_s``, ``apply_s``,
``start_s``, ``run_s`` per repeat, ``stop_s``), so the non-workload share of a test can be read
back from any session.

:func:`run_test` turns a configuration into an :class:`~harness.records.Observation`, mapping the
system's and workload's exceptions to a status. The ask/tell loop around it is
:class:`harness.session.session.Session`'s (the only one); :mod:`harness.api` builds and runs
sessions.
"""

from __future__ import annotations

import logging
import os
import statistics
import time
from typing import Any

from harness.errors import (
    HarnessError,
    HostUnreachable,
    SystemStartError,
    WorkloadError,
    WorkloadTimeout,
)
from harness.hosts.other_work import OtherWork
from harness.intervals import StoppedEarly
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.space import Config
from harness.system import System, Workload

__all__ = ["aggregate", "run_test"]

log = logging.getLogger(__name__)


def aggregate(runs: list[dict[str, float]]) -> dict[str, float]:
    """Median of each metric over repeated runs (robust to one outlier run)."""
    names = sorted(set().union(*runs)) if runs else []
    return {n: float(statistics.median(r[n] for r in runs if n in r)) for n in names}


def _since(started: float) -> tuple[float, float]:
    """Seconds since ``started`` (rounded for the record) and the clock now."""
    now = time.perf_counter()
    return round(now - started, 4), now


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
    extra: dict[str, Any] = {"started_at": round(time.time(), 3)}  # wall clock (MLflow runs)
    score: float | None = None
    try:
        phase = time.perf_counter()  # each phase's seconds go to extra["<phase>_s"]
        system.reset()
        extra["reset_s"], phase = _since(phase)
        applied = system.apply(config)
        if applied is not None and dict(applied) != dict(config):
            extra["asked"] = dict(config)  # what the tuner proposed; `config` is what ran
            config = applied
        extra["apply_s"], phase = _since(phase)
        system.start(start_timeout_s)  # start or restart, and wait until ready
        extra["start_s"], run_started = _since(phase)
        before = watch.begin() if (watch := OtherWork.from_env()) else None
        runs = [workload.run(system, timeout_s) for _ in range(repeats)]
        extra["run_s"] = (time.perf_counter() - run_started) / repeats
        # The harness machine's 1-minute load average as the run ends: a test taken while
        # other jobs loaded the machine can be flagged (it covers roughly the last minute).
        extra["loadavg_1m"] = round(os.getloadavg()[0], 2)
        if watch and before:  # in a group of its own: the CPU others took during the runs
            extra.update(watch.since(before))
        metrics = aggregate(runs)
        if repeats > 1:
            extra["runs"] = runs
        verdict = objective.assess(metrics)  # a utility objective adds its own outcomes
        score, status, message = verdict.score, Status(verdict.status), verdict.message
    except StoppedEarly as exc:  # its intervals showed it cannot compete: a bound, no metrics
        status, message = Status.STOPPED_EARLY, str(exc)
        extra["censored"] = exc.censored
        metrics = {}
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
        stop_started = time.perf_counter()
        try:
            system.stop()
        except HarnessError as exc:  # (also an unreachable host: the exception in flight wins)
            log.warning("stopping %s after trial %d failed: %s", system.name, trial, exc)
        extra["stop_s"], _ = _since(stop_started)
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
