"""The one ask/tell loop: tests over a pool of hosts, one host being a pool of one.

After the default (trial 0), which runs alone because later timeouts are measured against it,
a host that finishes a test takes the next configuration at once: there are no waves. A test's
trial number is the order in which it *finished*, so the store stays append-only and in trial
order, and a test another host is still running never holds back one that has finished (nor is
a finished test lost when another host fails). On one host this is the plain sequential loop.

When the tuner is asked:

* first, on a pool of one, the tuner's first round, which opens with the default as the tuner
  planned it; on a larger pool the default alone, so the first round the hosts share is a whole
  multiple of the pool;
* a tuner that proposes batches (LHS, BestConfig's and ClassyTune's rounds, the regression
  tuners) is asked for its next batch, rounded up to whole multiples of the pool's size, once
  every test of the last batch has been told: a round is chosen from the results of the round
  before, as on one host; hosts wait only at the end of a round;
* a one-step tuner (GP-BO) is asked after each result it is told, for as many settings as hosts
  are free: its proposals do not see the tests still running (no fantasised results), the
  usual trade of asynchronous Bayesian optimisation.

Each result is told as it finishes; a tuner's ``tell`` is per observation, so telling a round
test by test is telling it at once.

Resume replays the store through the same schedule: the stored tests "finish" in their trial
order, so the tuner is asked and told in the order it was before, and the tests that were
running at the interruption are asked again and run. Should a tuner propose differently on
replay (one that is not deterministic), a stored result stands for the oldest running proposal.

The default re-measured every ``session.default_every`` tests runs on the first host that frees
up once that many tests have finished (:mod:`harness.session.references`).

With screening rungs (``session.fidelity``, :mod:`harness.session.screening`) a free host takes
a promotion (a screened configuration run again one rung up) before a new proposal, and new
proposals run at the lowest rung; every test of any rung counts toward the budget, so nothing
is handed out once the finished and running tests fill it.

Where the parallelism lives: a pool of one runs its test on the session's own thread (a signal
interrupts the test itself); a larger pool runs one thread per host. The scheduler never runs a
test itself: :meth:`TestLedger.run_job` does, so a cheaper test (stopped early, or run at a
screening fidelity) changes what a :class:`Job` asks for and what the ledger records, not this
loop.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Protocol

from harness.hosts.pool import Worker, batch_size, tagged
from harness.records import Observation, config_key
from harness.session.screening import Rungs, fidelity_of
from harness.space import Config
from harness.tuner import Tuner

__all__ = ["Job", "Scheduler", "TestLedger"]


@dataclass
class Job:
    """A test a host runs (``future``), or one a replay has not started yet (None)."""

    config: Config | None  # None: the default re-measured (a reference test)
    worker: Worker
    after: int = 0  # a reference test: the number of tests it follows
    future: Future[Observation] | None = None
    fidelity: float = 1.0  # the fraction of a full test (screening rungs)


class TestLedger(Protocol):
    """What the scheduler needs from its session: running a job, and the records around it."""

    def run_job(self, job: Job) -> Observation:
        """Run ``job`` on its host: a tuner's proposal (numbered again when it finishes) or the
        default re-measured."""

    def replayed(self, obs: Observation) -> Observation:
        """A stored test read back on resume (logged to tracking if it was not)."""

    def stored(self, obs: Observation) -> Observation:
        """A finished test written to the store and tracking, before the tuner hears of it."""

    def record(self, obs: Observation, replayed: bool) -> None:
        """A finished (or replayed) test joins the session's observations."""

    def tell(self, told: list[Observation]) -> None:
        """Tell the tuner, and account its computation time."""

    def keep_reference(self, obs: Observation, after: int) -> None:
        """Store the default re-measured after ``after`` tests (never told to the tuner)."""


class _OnThisThread:
    """The executor of a pool of one: the test runs at submission, on the caller's thread."""

    def submit(self, run: Callable[[Job], Observation], job: Job) -> Future[Observation]:
        future: Future[Observation] = Future()
        try:
            future.set_result(run(job))
        except Exception as exc:  # re-raised where the result is read, as from a thread
            future.set_exception(exc)
        return future

    def shutdown(self) -> None:
        """Nothing runs in the background."""


class _OneThreadPerHost:
    """The executor of a larger pool: a thread per host."""

    def __init__(self, hosts: int) -> None:
        self._threads = ThreadPoolExecutor(max_workers=hosts, thread_name_prefix="harness-test")

    def submit(self, run: Callable[[Job], Observation], job: Job) -> Future[Observation]:
        return self._threads.submit(run, job)

    def shutdown(self) -> None:
        # An interrupt or an unreachable host: the tests still running end when the session's
        # teardown stops their systems; their results are not stored.
        self._threads.shutdown(wait=False, cancel_futures=True)


class Scheduler:
    """Runs a session's tests over its hosts until the budget is spent (see the module)."""

    def __init__(
        self,
        tuner: Tuner,
        workers: Sequence[Worker],
        ledger: TestLedger,
        *,
        budget: int,
        default_every: int,
        stored: list[Observation],
        observations: list[Observation],
        references: list[Observation],
        fixed: Config,
        rungs: Rungs | None = None,
    ) -> None:
        self.tuner, self.workers, self.ledger = tuner, list(workers), ledger
        self.budget, self.default_every = budget, default_every
        self.stored, self.observations, self.references = stored, observations, references
        self.fixed = fixed
        self.rungs = rungs
        self.free = list(self.workers)
        self.running: list[Job] = []
        self.pending: deque[Config] = deque()
        self.asked = 0
        self.asked_since_tell = False
        pool = len(self.workers)
        self.executor = _OnThisThread() if pool == 1 else _OneThreadPerHost(pool)

    def run(self) -> None:
        """Ask, run, store and tell until every test of the budget has finished."""
        try:
            while len(self.observations) < self.budget or self.running:
                self._give_work_to_free_hosts()
                if not self.running:
                    return  # the tuner proposed nothing more
                self._take_next_result()
        finally:
            self.executor.shutdown()

    # -- handing out work -------------------------------------------------------------------
    def _give_work_to_free_hosts(self) -> None:
        """Every free host takes work: an owed reference first, then the next proposal."""
        while self.free:
            if not self.observations and self.running:
                return  # the default runs alone: later timeouts are measured against it
            after = self._reference_owed()
            if after is not None:
                self._start(Job(None, self.free.pop(0), after=after))
                continue
            if self._budget_taken():
                return
            promotion = self.rungs.next_promotion() if self.rungs and self.observations else None
            if promotion is not None:
                self._start(Job(promotion[0], self.free.pop(0), fidelity=promotion[1]))
                continue
            if not self.pending and self.asked < self.budget:
                self._ask()
            if not self.pending:
                return
            self._start(Job(self.pending.popleft(), self.free.pop(0), fidelity=self._new_rung()))

    def _budget_taken(self) -> bool:
        """Whether the finished and running tests fill the budget (binding with rungs only:
        without, the tuner is never asked for more than the budget)."""
        running = sum(job.config is not None for job in self.running)
        return len(self.observations) + running >= self.budget

    def _new_rung(self) -> float:
        """A new proposal's fraction: the lowest rung, but the default (first) runs in full."""
        first_test = not self.observations and not self.running
        return 1.0 if self.rungs is None or first_test else self.rungs.first

    def _ask(self) -> None:
        size = self._ask_size()
        batch = self.tuner.ask(min(size, self.budget - self.asked)) if size else []
        self.asked += len(batch)
        self.asked_since_tell = self.asked_since_tell or bool(size)
        self.pending.extend(batch)

    def _ask_size(self) -> int:
        """How many settings to ask the tuner for now; 0: not now. A batch tuner's next round
        waits until the last is told; a one-step tuner is asked once per result, for the free
        hosts."""
        if self.asked == 0 and len(self.workers) > 1:
            return 1  # the default alone: the first round handed out is a whole multiple
        if not self.tuner.proposes_batches:
            return 0 if self.asked_since_tell else len(self.free)
        if any(job.config is not None for job in self.running):
            return 0
        return batch_size(self.tuner.preferred_batch, len(self.workers))

    def _start(self, job: Job) -> None:
        self.running.append(job)
        if not self._replaying():
            job.future = self.executor.submit(self.ledger.run_job, job)

    def _reference_owed(self) -> int | None:
        """The number of tests after which the default is owed a re-measurement now (the last
        multiple of ``session.default_every`` reached), or None."""
        done, every = len(self.observations), self.default_every
        after = done - done % every if every else 0
        if not after or after >= self.budget:
            return None
        if any(int(r.extra.get("after_trial", -1)) == after for r in self.references):
            return None
        if any(job.config is None and job.after == after for job in self.running):
            return None
        return after

    # -- taking results ---------------------------------------------------------------------
    def _take_next_result(self) -> None:
        """The next result: the next stored test on replay, else the first to finish."""
        replayed = self._replaying()
        job, obs = self._next_replayed() if replayed else self._next_finished()
        if job is not None:
            self.running.remove(job)
            self.free.append(job.worker)
            if job.config is None:
                self.ledger.keep_reference(obs, job.after)
                return
        if not replayed:
            obs = self.ledger.stored(dataclasses.replace(obs, trial=len(self.observations)))
        self.ledger.record(obs, replayed)
        if self.rungs is not None:
            self.rungs.add(obs)
        self.ledger.tell([obs])
        self.asked_since_tell = False
        if replayed and not self._replaying():  # the store is replayed: the rest run for real
            for job in self.running:
                if job.future is None:
                    job.future = self.executor.submit(self.ledger.run_job, job)

    def _next_replayed(self) -> tuple[Job | None, Observation]:
        obs = self.ledger.replayed(self.stored[len(self.observations)])
        return self._match(obs), obs

    def _next_finished(self) -> tuple[Job, Observation]:
        futures = [job.future for job in self.running if job.future is not None]
        finished, _ = wait(futures, return_when=FIRST_COMPLETED)
        job = next(j for j in self.running if j.future in finished)
        obs = job.future.result()  # type: ignore[union-attr]
        return job, obs if len(self.workers) == 1 else tagged(obs, job.worker)

    def _match(self, obs: Observation) -> Job | None:
        """The running proposal a stored test stands for on replay: the one with its
        configuration, else the oldest (a tuner that proposed differently this time)."""
        proposals = [
            job
            for job in self.running
            if job.config is not None and job.fidelity == fidelity_of(obs)
        ]
        wanted = config_key(obs.extra.get("asked", obs.config))
        for job in proposals:
            if config_key({**(job.config or {}), **self.fixed}) == wanted:
                return job
        return proposals[0] if proposals else None

    def _replaying(self) -> bool:
        return len(self.observations) < len(self.stored)
