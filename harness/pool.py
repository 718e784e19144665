"""Parallel tests across a pool of SUT hosts (``session.parallel=<n>``).

A session with a pool owns one system instance per host (each set up with its own data
snapshot) and runs a *wave* of tests at once, one per host, each in a thread of its own. The
session appends a wave's observations to the store in trial order after the whole wave has
finished, so the store stays append-only and ordered and a resume replays it exactly as
before; the tuner is told a batch once all its waves are in. Tests of one wave do not see each
other's results: a batch-proposing tuner (LHS, BestConfig's rounds, ClassyTune's rounds) loses
nothing, a one-step-at-a-time tuner (GP-BO) gains parallelism only in its initial design (the
session says so at startup).

The hosts of a pool must be alike: a test is scored wherever it ran, so a faster host makes
its configurations look better. Each observation records the host that measured it
(``extra["host"]``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.records import Observation
from harness.space import Config
from harness.system import System, Workload

__all__ = ["Worker", "batch_size", "run_wave", "setup_workers", "teardown_workers", "waves"]

log = logging.getLogger(__name__)


@dataclass
class Worker:
    """One host of the pool: its own system instance and workload object."""

    system: System
    workload: Workload

    @property
    def host(self) -> str:
        executor = getattr(self.system, "executor", None)
        return str(getattr(executor, "host", self.system.name))


RunOne = Callable[[Worker, Config, int], Observation]


def batch_size(preferred: int, workers: int, done: int) -> int:
    """How many configurations to ask for: the tuner's preferred batch, or with a pool a whole
    number of waves (so no host idles), plus the default, which runs alone (``done == 0``)."""
    if workers == 1:
        return preferred
    new = -(-max(preferred, workers) // workers) * workers
    return new + (1 if done == 0 else 0)


def waves(
    batch: Sequence[Config], first: int, stored: int, workers: int
) -> list[list[tuple[Config, int]]]:
    """A batch of configurations (trials ``first``, ``first + 1``, ...) as waves of
    ``(config, trial)``: each test replayed from the store alone (``trial < stored``), the
    default (trial 0) alone (later timeouts are measured against it), then up to ``workers``
    new tests per wave."""
    result: list[list[tuple[Config, int]]] = []
    for trial, config in enumerate(batch, start=first):
        new = trial >= stored and trial != 0
        if new and result and result[-1][0][1] >= max(stored, 1) and len(result[-1]) < workers:
            result[-1].append((config, trial))
        else:
            result.append([(config, trial)])
    return result


def run_wave(
    workers: Sequence[Worker], jobs: Sequence[tuple[Config, int]], run: RunOne
) -> list[Observation]:
    """Run each ``(config, trial)`` of ``jobs`` on its own worker at the same time; the
    observations in trial order. An exception in a test (an unreachable host, an interrupt)
    is raised at once: the other tests of the wave end when the session's teardown stops
    their systems, and their results are not stored."""
    if len(jobs) > len(workers):
        raise ValueError(f"a wave of {len(jobs)} tests needs as many workers, got {len(workers)}")
    if len(jobs) == 1:  # no thread for a single test (the default's own wave)
        config, trial = jobs[0]
        return [_tagged(run(workers[0], config, trial), workers[0])]
    pool = ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="harness-test")
    futures: list[Future[Observation]] = [
        pool.submit(run, worker, config, trial)
        for worker, (config, trial) in zip(workers, jobs, strict=False)
    ]
    try:
        results = [future.result() for future in futures]
    except BaseException:
        # An interrupt or a failed host: the other tests end when the session stops their
        # systems (teardown); do not wait for them here.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    tagged = [_tagged(obs, worker) for obs, worker in zip(results, workers, strict=False)]
    return sorted(tagged, key=lambda obs: obs.trial)


def _tagged(obs: Observation, worker: Worker) -> Observation:
    obs.extra["host"] = worker.host
    return obs


def setup_workers(workers: Sequence[Worker], workdir: Path) -> None:
    """Set every worker's system up at once, each in ``workdir/<host>`` (its own instance,
    data and snapshot); the first error is raised after all have finished."""
    errors: list[BaseException] = []
    lock = threading.Lock()

    def setup(worker: Worker) -> None:
        folder = workdir / f"pool-{worker.host}"
        folder.mkdir(parents=True, exist_ok=True)
        try:
            worker.system.setup(folder, worker.workload)
        except BaseException as exc:  # re-raised in the caller's thread
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=setup, args=(w,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def teardown_workers(workers: Sequence[Worker]) -> None:
    """Stop every worker's system, whatever the others do."""
    for worker in workers:
        try:
            worker.system.teardown()
        except HarnessError as exc:
            log.warning("teardown of %s on %s failed: %s", worker.system.name, worker.host, exc)
