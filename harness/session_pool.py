"""The session loop over a pool of hosts (``session.parallel=<n>``): every host kept busy, each
result stored and told to the tuner as it finishes.

After the default (trial 0), which runs alone because later timeouts are measured against it,
a host that finishes a test takes the next configuration at once: there are no waves. A test's
trial number is the order in which it *finished*, so the store stays append-only and in trial
order, and a test another host is still running never holds back one that has finished (nor is
a finished test lost when another host fails).

When the tuner is asked:

* a tuner that proposes batches (LHS, BestConfig's and ClassyTune's rounds, the regression
  tuners) is asked for its next batch, rounded up to whole multiples of the pool's size, once
  every test of the last batch has been told: a round is chosen from the results of the round
  before, as on one host; hosts wait only at the end of a round;
* a one-step tuner (GP-BO) is asked after each result it is told, for as many settings as hosts
  are free: its proposals do not see the tests still running (no fantasised results), the
  usual trade of asynchronous Bayesian optimisation.

Resume replays the store through the same schedule: the stored tests "finish" in their trial
order, so the tuner is asked and told in the order it was before, and the tests that were
running at the interruption are asked again and run. Should a tuner propose differently on
replay (one that is not deterministic), a stored result stands for the oldest running proposal.

The default re-measured every ``session.default_every`` tests (:mod:`harness.session_references`)
runs on the first host that frees up once that many tests have finished.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from harness.errors import StoreError
from harness.pool import Worker, batch_size, tagged
from harness.records import Observation, config_key
from harness.space import Config
from harness.tuner import Tuner

__all__ = ["PoolLoop"]

log = logging.getLogger("harness.session")

Progress = Callable[[Observation, float | None], None] | None


@dataclass
class _Running:
    """A test a host is running (``future``), or one a replay has not started yet (None)."""

    config: Config | None  # None: the default re-measured (a reference test)
    worker: Worker
    after: int = 0  # a reference test: the number of tests it follows
    future: Future[Observation] | None = None


class PoolLoop:
    """Mixin of :class:`harness.session.Session`: its loop over a pool of hosts."""

    options: Any
    system: Any
    workload: Any
    store: Any
    tracker: Any
    fixed: Config
    pool: list[Worker]

    def _pool_loop(
        self,
        stored: list[Observation],
        observations: list[Observation],
        references: list[Observation],
        logged: set[int],
        on_progress: Progress,
    ) -> None:
        tuner = self._tuner()
        workers = [Worker(self.system, self.workload), *self.pool]
        budget = self.options.budget
        one_step = not tuner.proposes_batches
        (default,) = tuner.ask(1)
        if stored:
            first = self._replayed(stored[0], logged)
        else:
            first = self._stored(tagged(self._run_on(workers[0], default, 0), workers[0]))
        self._record(first, observations, on_progress, replayed=bool(stored))
        self._tell([first])
        free, running = list(workers), list[_Running]()
        pending: deque[Config] = deque()
        asked, asked_since_tell = 1, False
        threads = ThreadPoolExecutor(max_workers=len(workers), thread_name_prefix="harness-test")

        def replaying() -> bool:
            return len(observations) < len(stored)

        def start(job: _Running) -> None:
            running.append(job)
            if not replaying():
                job.future = threads.submit(self._job, job)

        try:
            while len(observations) < budget or running:
                # Every free host takes work: an owed reference first, then the next proposal.
                while free:
                    after = self._reference_owed(len(observations), references, running)
                    if after is not None:
                        start(_Running(None, free.pop(0), after=after))
                        continue
                    if not pending and asked < budget:
                        n = self._ask_size(one_step, asked_since_tell, running, free, workers)
                        batch = tuner.ask(min(n, budget - asked)) if n else []
                        asked += len(batch)
                        asked_since_tell = asked_since_tell or bool(n)
                        pending.extend(batch)
                    if not pending:
                        break
                    start(_Running(pending.popleft(), free.pop(0)))
                if not running:
                    break  # the tuner proposed nothing more
                # The next result: the next stored test on replay, else the first to finish.
                replayed = replaying()
                if replayed:
                    obs = self._replayed(stored[len(observations)], logged)
                    job = self._match(obs, running)
                else:
                    futures = [j.future for j in running if j.future is not None]
                    finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                    job = next(j for j in running if j.future in finished)
                    obs = tagged(job.future.result(), job.worker)  # type: ignore[union-attr]
                if job is not None:
                    running.remove(job)
                    free.append(job.worker)
                if job is not None and job.config is None:
                    self._keep_reference(obs, job.after, references)
                    continue
                if not replayed:
                    obs = self._stored(dataclasses.replace(obs, trial=len(observations)))
                self._record(obs, observations, on_progress, replayed=replayed)
                self._tell([obs])
                asked_since_tell = False
                if replayed and not replaying():  # the store is replayed: the rest run for real
                    for other in running:
                        if other.future is None:
                            other.future = threads.submit(self._job, other)
        finally:
            # An interrupt or an unreachable host: the tests still running end when the
            # session's teardown stops their systems; their results are not stored.
            threads.shutdown(wait=False, cancel_futures=True)

    def _ask_size(
        self,
        one_step: bool,
        asked_since_tell: bool,
        running: list[_Running],
        free: list[Worker],
        workers: list[Worker],
    ) -> int:
        """How many settings to ask the tuner for now; 0: not now. A batch tuner's next round
        waits until the last is told; a one-step tuner is asked once per result, for the free
        hosts."""
        if one_step:
            return 0 if asked_since_tell else len(free)
        if any(job.config is not None for job in running):
            return 0
        return batch_size(self._tuner().preferred_batch, len(workers))

    def _job(self, job: _Running) -> Observation:
        if job.config is None:
            default = {**self.system.space.default(), **self.fixed}
            return self._measure(default, 0, True, job.worker)
        return self._run_on(job.worker, job.config, -1)

    def _stored(self, obs: Observation) -> Observation:
        self.store.append(obs)
        self.tracker.log_test(obs, self._objective_value(obs))
        return obs

    def _catch_up(self, observations: list[Observation]) -> None:
        """Add the tests the store holds beyond ``observations``. A signal that lands after a
        test is stored but before it is recorded (while it is logged to MLflow, say) left the
        summary and session.json one test short of the folder ("interrupted after N tests"
        with N + 1 stored); the store is what a resume continues from, so it is the count."""
        try:
            held = self.store.load()
        except (OSError, StoreError) as exc:
            log.warning("cannot read the stored tests back: %s", exc)
            return
        observations.extend(held[len(observations) :])

    def _replayed(self, obs: Observation, logged: set[int]) -> Observation:
        if obs.trial not in logged:
            self.tracker.log_test(obs, self._objective_value(obs))
        return obs

    def _match(self, obs: Observation, running: list[_Running]) -> _Running | None:
        """The running proposal a stored test stands for on replay: the one with its
        configuration, else the oldest (a tuner that proposed differently this time)."""
        proposals = [job for job in running if job.config is not None]
        wanted = config_key(obs.extra.get("asked", obs.config))
        for job in proposals:
            if config_key({**(job.config or {}), **self.fixed}) == wanted:
                return job
        return proposals[0] if proposals else None

    def _reference_owed(
        self, done: int, references: list[Observation], running: list[_Running]
    ) -> int | None:
        """The number of tests after which the default is owed a re-measurement now (the last
        multiple of ``session.default_every`` reached), or None."""
        every = self.options.default_every
        after = done - done % every if every else 0
        if not after or after >= self.options.budget:
            return None
        if any(int(r.extra.get("after_trial", -1)) == after for r in references):
            return None
        if any(job.config is None and job.after == after for job in running):
            return None
        return after

    # -- the session's own (harness.session.Session) ---------------------------------------
    def _tuner(self) -> Tuner:  # pragma: no cover - Session's
        raise NotImplementedError

    def _run_on(
        self, worker: Worker, config: Config, trial: int
    ) -> Observation:  # pragma: no cover - Session's
        raise NotImplementedError

    def _record(
        self,
        obs: Observation,
        observations: list[Observation],
        on_progress: Progress,
        replayed: bool,
    ) -> None:  # pragma: no cover - Session's
        raise NotImplementedError

    def _tell(self, told: list[Observation]) -> None:  # pragma: no cover - Session's
        raise NotImplementedError

    def _objective_value(self, obs: Observation) -> float | None:  # pragma: no cover
        raise NotImplementedError

    def _measure(
        self, config: Config, trial: int, is_default: bool, worker: Worker | None = None
    ) -> Observation:  # pragma: no cover - ReferenceRuns'
        raise NotImplementedError

    def _keep_reference(
        self, ref: Observation, after: int, references: list[Observation]
    ) -> None:  # pragma: no cover - ReferenceRuns'
        raise NotImplementedError
