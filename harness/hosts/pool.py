"""Parallel tests across a pool of SUT hosts (``session.parallel=<n>``): the hosts themselves.

A session with a pool owns one system instance per host, each set up with its own data snapshot
(:func:`setup_workers`). The loop that keeps every host busy and tells the tuner each result as
it finishes is :mod:`harness.session.pool_loop`.

The hosts of a pool must be alike: a test is scored wherever it ran, so a faster host makes
its configurations look better. Each observation records the host that measured it
(``extra["host"]``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.records import Observation
from harness.system import System, Workload

__all__ = ["Worker", "batch_size", "setup_workers", "tagged", "teardown_workers"]

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


def batch_size(preferred: int, workers: int) -> int:
    """How many configurations to ask a batch-proposing tuner for: its preferred batch rounded
    up to a whole number of the pool's hosts, so no host idles inside a round."""
    if workers == 1:
        return preferred
    return -(-max(preferred, workers) // workers) * workers


def tagged(obs: Observation, worker: Worker) -> Observation:
    """``obs`` with the host that measured it (``extra["host"]``)."""
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
