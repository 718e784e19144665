"""The session's reference tests: the default re-measured during the session (machine drift)
and, after the budget, the default and the best re-measured alternately (:mod:`harness.confirm`).

Reference tests go to the store's reference file, never to the tuner, and do not count toward
the budget; a resumed session runs only those still missing.
"""

from __future__ import annotations

import logging
from typing import Any

from harness import tracking_keys as keys
from harness.confirm import pending_roles, tagged, to_confirm
from harness.objective import Objective
from harness.pool import Worker
from harness.records import Observation, best_measured
from harness.session_options import SessionOptions
from harness.space import Config
from harness.store import Store
from harness.system import System, Workload
from harness.trial import run_test

__all__ = ["ReferenceRuns"]

log = logging.getLogger("harness.session")

#: Sessions with at least this budget confirm by default on real systems.
CONFIRM_FROM_BUDGET = 20


class ReferenceRuns:
    """Mixin of :class:`harness.session.Session`: its reference tests."""

    options: SessionOptions
    system: System
    workload: Workload
    objective: Objective
    store: Store
    tracker: Any
    fixed: Config
    tuner: Any

    def session_answer(self, observations: list[Observation]) -> Observation | None:
        """The session's answer so far: the tuner's own (:meth:`harness.tuner.Tuner.answer`)
        once it has been told every test, else the best measured setting."""
        told = self.tuner is not None and len(self.tuner.history) >= len(observations)
        answer = self.tuner.answer() if told else None
        return answer if answer is not None else best_measured(observations)

    def _timeout(self) -> float:  # pragma: no cover - Session's
        raise NotImplementedError

    def _objective_value(self, obs: Observation) -> float | None:  # pragma: no cover
        raise NotImplementedError

    def _maybe_remeasure_default(self, trial: int, references: list[Observation]) -> None:
        every = self.options.default_every
        if not every or trial == 0 or trial % every:
            return
        if any(int(r.extra.get("after_trial", -1)) == trial for r in references):
            return  # measured before an interruption
        ref = self._measure({**self.system.space.default(), **self.fixed}, trial, True)
        self._keep_reference(ref, trial, references)

    def _keep_reference(self, ref: Observation, after: int, references: list[Observation]) -> None:
        """Store and log the default re-measured after ``after`` tests."""
        ref = Observation(**{**ref.__dict__, "extra": {**ref.extra, "after_trial": after}})
        self.store.append(ref, reference=True)
        references.append(ref)
        value = self._objective_value(ref)
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

    def _owes_confirmation(self, stored: list[Observation], refs: list[Observation]) -> bool:
        """Whether a resumed session whose budget is spent may still owe confirmation runs
        (its system must then be set up; the tuner has not replayed yet, so its answer is not
        known: an answer that turns out to be the default runs none)."""
        rounds = self.confirm_rounds
        return len(stored) >= self.options.budget and bool(pending_roles(rounds, refs))

    def _confirm(self, observations: list[Observation], references: list[Observation]) -> None:
        """The answer and the default re-measured, alternating (:mod:`harness.confirm`)."""
        best = self.session_answer(observations)
        owed = to_confirm(self.confirm_rounds, self.options.budget, observations, references, best)
        for role in owed:
            log.info("confirming the %s configuration", role)
            if role == "default" or best is None:
                ref = self._measure({**self.system.space.default(), **self.fixed}, 0, True)
            else:
                ref = self._measure(best.config, best.trial, False)
            ref = tagged(ref, role, len(observations))
            self.store.append(ref, reference=True)
            references.append(ref)

    def _measure(
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
            timeout_s=self._timeout(),
            start_timeout_s=self.options.start_timeout_s,
            is_default=is_default,
        )
