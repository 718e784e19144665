"""The session's reference tests: the default re-measured during the session (machine drift)
and, after the budget, the default and the best re-measured alternately
(:mod:`harness.session.confirm`).

Reference tests go to the store's reference file, never to the tuner, and do not count toward
the budget; a resumed session runs only those still missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from harness.hosts.pool import Worker
from harness.objectives.objective import Objective
from harness.records import Observation
from harness.session.confirm import pending_roles, tagged, to_confirm
from harness.session.options import SessionOptions
from harness.session.trial import run_test
from harness.space import Config
from harness.store.samples import Store
from harness.system import System, Workload
from harness.tracking import keys
from harness.tracking.tracker import Tracker

__all__ = ["CONFIRM_FROM_BUDGET", "ReferenceTests"]

log = logging.getLogger("harness.session.session")  # the session's log: one voice per session

#: Sessions with at least this budget confirm by default on real systems.
CONFIRM_FROM_BUDGET = 20


class ReferenceTests:
    """The session's reference tests, run on its system (or a pool's host) with its timeouts."""

    def __init__(
        self,
        *,
        options: SessionOptions,
        system: System,
        workload: Workload,
        objective: Objective,
        store: Store,
        tracker: Tracker,
        fixed: Config,
        timeout: Callable[[], float],
    ) -> None:
        self.options, self.system, self.workload = options, system, workload
        self.objective, self.store, self.tracker = objective, store, tracker
        self.fixed, self.timeout = fixed, timeout

    @property
    def default_config(self) -> Config:
        """The default configuration, with the session's pinned knobs."""
        return {**self.system.space.default(), **self.fixed}

    def keep(self, ref: Observation, after: int, references: list[Observation]) -> None:
        """Store and log the default re-measured after ``after`` tests."""
        ref = Observation(**{**ref.__dict__, "extra": {**ref.extra, "after_trial": after}})
        self.store.append(ref, reference=True)
        references.append(ref)
        value = self.objective.value(ref.metrics) if ref.ok else None
        if value is not None:
            self.tracker.log_step(after, {keys.METRIC_DEFAULT: value})

    @property
    def confirm_rounds(self) -> int:
        """``session.confirm``, or its default: 3 on a real system tuned with a budget of at
        least :data:`CONFIRM_FROM_BUDGET` tests, else 0 (a simulated system has no noise to
        average out; a 2-test smoke session would triple its cost for a meaningless number)."""
        if self.options.confirm is not None:
            return self.options.confirm
        real = self.system.kind in ("real", "remote")
        return 3 if real and self.options.budget >= CONFIRM_FROM_BUDGET else 0

    def owes_confirmation(self, stored: list[Observation], refs: list[Observation]) -> bool:
        """Whether a resumed session whose budget is spent may still owe confirmation runs
        (its system must then be set up; the tuner has not replayed yet, so its answer is not
        known: an answer that turns out to be the default runs none)."""
        rounds = self.confirm_rounds
        return len(stored) >= self.options.budget and bool(pending_roles(rounds, refs))

    def confirm(
        self,
        answer: Observation | None,
        observations: list[Observation],
        references: list[Observation],
    ) -> None:
        """The answer and the default re-measured, alternating (:mod:`harness.session.confirm`)."""
        owed = to_confirm(
            self.confirm_rounds, self.options.budget, observations, references, answer
        )
        for role in owed:
            log.info("confirming the %s configuration", role)
            if role == "default" or answer is None:
                ref = self.measure(self.default_config, 0, True)
            else:
                ref = self.measure(answer.config, answer.trial, False)
            ref = tagged(ref, role, len(observations))
            self.store.append(ref, reference=True)
            references.append(ref)

    def measure(
        self, config: Config, trial: int, is_default: bool, worker: Worker | None = None
    ) -> Observation:
        """A reference test (on the session's system, or a pool's ``worker``): recorded apart
        from the tuner's tests, never told to it."""
        return run_test(
            worker.system if worker else self.system,
            worker.workload if worker else self.workload,
            self.objective,
            config,
            trial,
            repeats=self.options.repeats,
            timeout_s=self.timeout(),
            start_timeout_s=self.options.start_timeout_s,
            is_default=is_default,
        )
