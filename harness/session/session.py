"""A tuning session: durable, tracked and resumable, around the one ask/tell loop.

Per test: ask the tuner → run the test (reset, apply, start, workload × repeats) → append to the
store (fsync) → log to MLflow → tell the tuner. The session composes its parts: the
:class:`~harness.session.scheduler.Scheduler` hands tests to its hosts (one host is a pool of one),
:class:`~harness.session.references.ReferenceTests` re-measures the default and the answer, and the
session itself is the scheduler's :class:`~harness.session.scheduler.TestLedger`: it runs each test
and keeps its records (store, tracking, progress, the tuner's telling). A resumed session rebuilds
the tuner from its seed and replays the stored observations through the same ask/tell sequence, so
no finished test runs twice and the tuner ends in the state it would have had.

Timeouts follow BestConfig: after the default configuration (trial 0) has been measured, a
workload run is killed at ``timeout_factor`` × the default's run time (at least
``min_timeout_s``). Failed tests count against the budget and reach the tuner with status and
no score (see :meth:`harness.tuner.Tuner.scores` for how tuners score them).

A session holds its store's lock for its whole life, works only inside its own work folder
(created by it and marked, so :meth:`Session.remove_workdir` never deletes a folder it did not
create), turns SIGINT and SIGTERM into an orderly stop at any phase (setup included, and also
when SIGINT was inherited as ignored), and exports ``HARNESS_SESSION=<id>`` to every process it
starts, so that a leftover process of a session can always be found.
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.errors import (
    ConfigError,
    HarnessError,
    HostUnreachable,
    SessionAborted,
    StoreError,
    SystemStartError,
    WorkloadError,
)
from harness.hosts.pool import Worker, setup_workers, teardown_workers
from harness.objectives.objective import Objective
from harness.records import Observation, Status, best_measured, config_key
from harness.session import workdir
from harness.session.early_stop import EarlyStopRule, Judge, early_stop_gap, judge_for, judging
from harness.session.end import session_metrics, write_session_outputs
from harness.session.meta import open_tracking
from harness.session.options import SessionOptions, SessionResult, resume_command
from harness.session.references import ReferenceTests
from harness.session.scheduler import Job, Scheduler
from harness.session.screening import Rungs, screening_gap, shortened
from harness.session.signals import SignalGuard, exported
from harness.session.trial import run_test
from harness.space import Config
from harness.store.samples import Store, atomic_write
from harness.system import System, Workload
from harness.tracking import keys
from harness.tracking.tracker import Tracker
from harness.tuner import Tuner, tuner_name_of

__all__ = ["Session", "SessionOptions", "SessionResult"]

log = logging.getLogger(__name__)

TunerFactory = Callable[..., Tuner]
Progress = Callable[[Observation, float | None], None] | None
#: Exported to every process a session starts (servers, clients), to find strays by.
SESSION_ENV = "HARNESS_SESSION"


class Session:
    """Runs (or resumes) one tuning session against one system and workload."""

    def __init__(
        self,
        *,
        session_id: str,
        store: Store,
        tuner_factory: TunerFactory,
        system: System,
        workload: Workload,
        objective: Objective,
        tracker: Tracker,
        options: SessionOptions,
        fixed: Config | None = None,
        workdir: Path | None = None,
        pool: Sequence[Worker] = (),
        export_answer: Callable[[Path], object] | None = None,
    ) -> None:
        self.session_id = session_id
        self.store = store
        self.tuner_factory = tuner_factory
        self.system = system
        self.workload = workload
        self.objective = objective
        self.tracker = tracker
        self.options = options
        self.fixed = dict(fixed or {})
        self.workdir = workdir or store.directory / "work"
        #: More hosts that run tests beside :attr:`system` (``session.parallel``:
        #: harness.hosts.pool).
        self.pool = list(pool)
        #: Writes the answer in the system's own syntax at the end (none: no ``export/``).
        self.export_answer = export_answer
        self.tuner: Tuner | None = None
        self._crashes = 0
        self._default_run_s: float | None = None
        self._best_value: float | None = None
        self._best_score: float | None = None
        self._signals = SignalGuard()
        self._observations: list[Observation] = []
        self._on_progress: Progress = None
        self._logged: set[int] = set()
        self._references: list[Observation] = []
        self.reference_tests = ReferenceTests(
            options=options,
            system=system,
            workload=workload,
            objective=objective,
            store=store,
            tracker=tracker,
            fixed=self.fixed,
            timeout=self._timeout,
        )

    # -- public ---------------------------------------------------------------------------
    @property
    def tuner_name(self) -> str:
        """The tuner's name (:func:`harness.tuner.tuner_name_of` its factory)."""
        return tuner_name_of(self.tuner_factory)

    def run(
        self, on_progress: Callable[[Observation, float | None], None] | None = None
    ) -> SessionResult:
        """Run until the budget is spent; resumes from the store if it holds tests."""
        self.store.lock()
        try:
            with SignalGuard() as self._signals, exported(SESSION_ENV, self.session_id):
                return self._run(on_progress)
        finally:
            self.store.unlock()

    def _run(
        self, on_progress: Callable[[Observation, float | None], None] | None
    ) -> SessionResult:
        stored = self.store.load()
        references = self.store.load(reference=True)
        if len(stored) > self.options.budget:
            raise SessionAborted(
                f"the store holds {len(stored)} tests, more than budget={self.options.budget}"
            )
        self.tuner = self.tuner_factory(
            space=self.system.space if not self.fixed else self._tuned_space(),
            seed=self.options.seed,
            budget=self.options.budget,
        )
        if self.pool and not self.tuner.proposes_batches:
            log.warning(
                "session.parallel=%d: tuner %s proposes one configuration per result after its "
                "initial design; its proposals do not see the tests still running",
                len(self.pool) + 1,
                self.tuner_name,
            )
        self._logged = open_tracking(
            self.store, self.tracker, self._tuner(), self.workload, self.session_id
        )
        self._on_progress = on_progress
        observations = self._observations = []
        status, message = "FINISHED", ""
        try:
            owes = self.reference_tests.owes_confirmation(stored, references)
            if len(stored) < self.options.budget or owes:
                self._prepare_workdir()
                self._setup_system()
            self._references = references
            if self.options.early_stop and (gap := early_stop_gap(self.workload, self.objective)):
                log.warning("%s", gap)
            if self.options.fidelity and (gap := screening_gap(self.workload)):
                log.warning("%s", gap)
            self._schedule(stored, references)
            answer = self.session_answer(observations)
            self.reference_tests.confirm(answer, observations, references)
        except KeyboardInterrupt:
            status = "INTERRUPTED"
            self._catch_up(observations)
            message = (
                f"interrupted after {len(observations)}/{self.options.budget} tests; "
                f"resume with: {resume_command(self.store.directory)}"
            )
        except SessionAborted as exc:
            status, message = "ABORTED", str(exc)
        except (HostUnreachable, StoreError) as exc:
            status = "ABORTED"
            message = (
                f"{exc}; the {len(observations)} finished tests are kept: resume with "
                f"{resume_command(self.store.directory)}"
            )
        except Exception as exc:  # a bug in an adapter or tuner: keep the tests, say where
            status = "ABORTED"
            trace = self.store.directory / "error.log"
            if self.store.persistent:
                with contextlib.suppress(OSError):
                    atomic_write(trace, traceback.format_exc())
            else:
                log.error("%s", traceback.format_exc())
            message = (
                f"internal error {type(exc).__name__}: {exc} (a bug; traceback in "
                f"{trace}); the {len(observations)} finished tests are kept: resume "
                f"with {resume_command(self.store.directory)}"
            )
        finally:
            self._teardown()
            self._signals.armed = False
        result = SessionResult(
            self.session_id,
            self.store.directory,
            self.objective,
            observations,
            references,
            status,
            self.tracker.where(),
            message=message,
            tuner_seconds=self.tuner.compute_seconds,
            notes=self.system.summary_lines(),
            space=self.system.space,
            answer_trial=self._answer_trial(observations),
        )
        try:
            self._finish(result)
        finally:
            self.tracker.close()  # send (or report) whatever tracking still has queued
        return result

    def _teardown(self) -> None:
        """Stop the system whatever happened; a second Ctrl-C must not skip this."""
        teardown_workers(self.pool)
        try:
            self.system.teardown()
        except HarnessError as exc:
            log.warning("teardown of %s failed: %s", self.system.name, exc)
        except KeyboardInterrupt:  # a signal during teardown: finish stopping, then report
            log.warning("interrupted while stopping %s; stopping it again", self.system.name)
            with contextlib.suppress(Exception, KeyboardInterrupt):
                self.system.teardown()

    # -- the work folder --------------------------------------------------------------------
    def _setup_system(self) -> None:
        """The system's setup; a setting it refuses, a system that cannot start or input that
        cannot be made aborts the session with the adapter's message (which names the fix)."""
        try:
            self.system.setup(self.workdir, self.workload)
            setup_workers(self.pool, self.workdir)
        except (ConfigError, SystemStartError, WorkloadError) as exc:
            raise SessionAborted(
                f"setup failed: {exc}; resume with "
                f"{resume_command(self.store.directory)} once it is fixed"
            ) from exc

    def _prepare_workdir(self) -> None:
        workdir.prepare(self.workdir, self.session_id)

    def remove_workdir(self) -> None:
        """Delete the session's work folder here and on its remote hosts — only if this
        session created it (its marker names this session)."""
        from harness.hosts.connect import remove_remote_workdirs

        for system in [self.system, *(worker.system for worker in self.pool)]:
            remove_remote_workdirs(system, self.workdir)
        workdir.remove(self.workdir, self.session_id)

    # -- the loop -------------------------------------------------------------------------
    def _schedule(self, stored: list[Observation], references: list[Observation]) -> None:
        Scheduler(
            self._tuner(),
            [Worker(self.system, self.workload), *self.pool],
            self,
            budget=self.options.budget,
            default_every=self.options.default_every,
            stored=stored,
            observations=self._observations,
            references=references,
            fixed=self.fixed,
            rungs=self._rungs(),
        ).run()

    def _rungs(self) -> Rungs | None:
        """The screening rungs (``session.fidelity``), or None: full tests only."""
        fractions = self.options.fidelity
        if not fractions or screening_gap(self.workload) is not None:
            return None
        return Rungs(fractions, self.options.fidelity_promote)

    # -- the scheduler's ledger (harness.session.scheduler.TestLedger) ------------------------
    def run_job(self, job: Job) -> Observation:
        """Run a scheduled job on its host: a proposal, or the default re-measured."""
        if job.config is None:
            return self.reference_tests.measure(
                self.reference_tests.default_config, 0, True, job.worker
            )
        full = {**job.config, **self.fixed}
        workload = job.worker.workload
        with judging(self._judge(workload)), shortened(workload, job.fidelity):
            obs = run_test(
                job.worker.system,
                job.worker.workload,
                self.objective,
                full,
                len(self._observations),
                repeats=self.options.repeats,
                timeout_s=self._timeout(),
                start_timeout_s=self.options.start_timeout_s,
                is_default=not self._observations,
            )
        if job.fidelity < 1.0:
            obs.extra["fidelity"] = job.fidelity  # a screening run: never the answer
        return obs

    def _judge(self, workload: Workload) -> Judge | None:
        """Who judges the next test for an early stop (None: it runs its full length)."""
        if not self.options.early_stop:
            return None
        rule = EarlyStopRule(
            window_s=self.options.early_stop_window_s,
            rank=self.options.early_stop_rank,
            margin=self.options.early_stop_margin,
        )
        return judge_for(workload, self.objective, rule, list(self._observations))

    def replayed(self, obs: Observation) -> Observation:
        """A stored test read back on resume, logged to tracking if it was not."""
        if obs.trial not in self._logged:
            self.tracker.log_test(obs, self._objective_value(obs))
        return obs

    def stored(self, obs: Observation) -> Observation:
        """A finished test: on disk, then in tracking."""
        self.store.append(obs)
        self.tracker.log_test(obs, self._objective_value(obs))
        return obs

    def record(self, obs: Observation, replayed: bool) -> None:
        """A finished (or replayed) test joins the session's observations, before the tuner
        is told it."""
        if obs.trial == 0 and obs.ok:  # the timeout reference, also when replayed
            self._default_run_s = float(obs.extra.get("run_s", obs.duration_s))
        if obs.status is not Status.SUCCEEDED and not replayed:
            log.info("trial %d: %s %s", obs.trial, obs.status.value, obs.message)
        self._observations.append(obs)
        self._track_best(obs)
        if self._on_progress:
            self._on_progress(obs, self._best_value)
        self._check_crashes(obs, replayed=replayed)

    def tell(self, told: list[Observation]) -> None:
        """Tell the tuner, and log its computation time."""
        tuner = self._tuner()
        step_from = len(tuner.compute_log)
        tuner.tell(told)
        for record in tuner.compute_log[max(step_from - 2, 0) :]:
            self.tracker.log_step(record.step, {keys.METRIC_TUNER_SECONDS: record.seconds})

    def keep_reference(self, obs: Observation, after: int) -> None:
        """The default re-measured after ``after`` tests joins the reference tests."""
        self.reference_tests.keep(obs, after, self._references)

    def _timeout(self) -> float:
        if self._default_run_s is None:
            return self.options.first_timeout_s
        return max(self.options.timeout_factor * self._default_run_s, self.options.min_timeout_s)

    def _check_crashes(self, obs: Observation, replayed: bool = False) -> None:
        if obs.status is Status.CRASHED and obs.trial == 0:
            raise SessionAborted(
                f"the default configuration did not start ({obs.message}); "
                f"check the {self.system.name} setup before tuning"
            )
        if obs.trial == 0 and obs.status in (Status.FAILED, Status.TIMED_OUT):
            # Every later test would fail the same way and burn the whole budget.
            raise SessionAborted(
                f"the default configuration {obs.status.value} its workload ({obs.message}); "
                "fix the workload or the objective before tuning"
            )
        if replayed:
            # A resume starts a new count: the user resumed because the cause may be fixed
            # (a narrowed range, a new floor), and replayed crashes would abort it at once.
            return
        self._crashes = self._crashes + 1 if obs.status is Status.CRASHED else 0
        if self._crashes >= self.options.max_consecutive_crashes:
            raise SessionAborted(
                f"{self._crashes} consecutive tests crashed {self.system.name} (last: "
                f"{obs.message}); the knob ranges may exceed what this machine allows: narrow "
                "them (+system.ranges.<knob>.max=...) or raise session.max_consecutive_crashes"
            )

    def _track_best(self, obs: Observation) -> None:
        if obs.ok and (self._best_score is None or obs.score > self._best_score):  # type: ignore[operator]
            self._best_score = obs.score
            self._best_value = self._objective_value(obs)
        if self._best_value is not None:
            self.tracker.log_step(obs.trial, {keys.METRIC_BEST_SO_FAR: self._best_value})

    def _objective_value(self, obs: Observation) -> float | None:
        return self.objective.value(obs.metrics) if obs.ok else None

    def _tuned_space(self) -> Any:
        free = [name for name in self.system.space.names if name not in self.fixed]
        if not free:  # every knob pinned (an export's "measure it again"): whatever the tuner
            return self.system.space  # proposes, the pins override, so each test measures them
        return self.system.space.subspace(free)

    # -- the answer and the end -------------------------------------------------------------
    def session_answer(self, observations: list[Observation]) -> Observation | None:
        """The session's answer so far: the tuner's own (:meth:`harness.tuner.Tuner.answer`)
        once it has been told every test, else the best measured setting."""
        tuner = self.tuner
        told = tuner is not None and len(tuner.history) >= len(observations)
        answer = tuner.answer() if tuner is not None and told else None
        return answer if answer is not None else best_measured(observations)

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

    def _tuner(self) -> Tuner:
        assert self.tuner is not None, "the tuner is built first"
        return self.tuner

    def _answer_trial(self, observations: list[Observation]) -> int | None:
        """The trial of the tuner's own answer when it is another setting than the best
        measured (:attr:`SessionResult.answer_trial`), else None."""
        answer, best = self.session_answer(observations), best_measured(observations)
        if answer is None or best is None or config_key(answer.config) == config_key(best.config):
            return None
        return answer.trial

    def _finish(self, result: SessionResult) -> None:
        # The answer is in session.json before the export reads it.
        try:
            self.store.update_meta(answer_trial=result.answer_trial)
        except StoreError as exc:
            log.error("%s", exc)
        artifacts = write_session_outputs(self.store, self.tuner, result, self.export_answer)
        best = result.answer
        params = {f"{keys.PREFIX_CONFIG}{k}": v for k, v in best.config.items()} if best else {}
        try:
            self.store.update_meta(
                status=result.status, finished=time.time(), tests=len(result.observations)
            )
        except StoreError as exc:
            log.error("%s", exc)
        try:
            self.tracker.finish(
                result.status,
                session_metrics(result),
                params,
                artifacts,
                best=best,
                best_value=result.value(best),
            )
        except Exception as exc:
            log.warning("could not finish the MLflow run: %s", exc)
