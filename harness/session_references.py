"""The session's reference tests: the default re-measured during the session (machine drift)
and, after the budget, the default and the best re-measured alternately (:mod:`harness.confirm`).

Reference tests go to the store's reference file, never to the tuner, and do not count toward
the budget; a resumed session runs only those still missing.
"""

from __future__ import annotations

import logging
from typing import Any

from harness import tracking_keys as keys
from harness.confirm import best_of, tagged, to_confirm
from harness.objective import Objective
from harness.records import Observation
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
        ref = Observation(**{**ref.__dict__, "extra": {**ref.extra, "after_trial": trial}})
        self.store.append(ref, reference=True)
        references.append(ref)
        value = self._objective_value(ref)
        if value is not None:
            self.tracker.log_step(trial, {keys.METRIC_DEFAULT: value})

    @property
    def confirm_rounds(self) -> int:
        """``session.confirm``, or its default: 3 on a real system tuned with a budget of at
        least :data:`CONFIRM_FROM_BUDGET` tests, else 0 (a simulated system has no noise to
        average out; a 2-test smoke session would triple its cost for a meaningless number)."""
        if self.options.confirm is not None:
            return self.options.confirm
        real = self.system.kind in ("real", "remote")
        return 3 if real and self.options.budget >= CONFIRM_FROM_BUDGET else 0

    def _to_confirm(self, observations: list[Observation], refs: list[Observation]) -> list[str]:
        return to_confirm(self.confirm_rounds, self.options.budget, observations, refs)

    def _confirm(self, observations: list[Observation], references: list[Observation]) -> None:
        """The best and the default re-measured, alternating (:mod:`harness.confirm`)."""
        best = best_of(observations)
        for role in self._to_confirm(observations, references):
            log.info("confirming the %s configuration", role)
            if role == "default" or best is None:
                ref = self._measure({**self.system.space.default(), **self.fixed}, 0, True)
            else:
                ref = self._measure(best.config, best.trial, False)
            ref = tagged(ref, role, len(observations))
            self.store.append(ref, reference=True)
            references.append(ref)

    def _measure(self, config: Config, trial: int, is_default: bool) -> Observation:
        """A reference test: recorded apart from the tuner's tests, never told to it."""
        return run_test(
            self.system,
            self.workload,
            self.objective,
            config,
            trial,
            repeats=self.options.repeats,
            timeout_s=self._timeout(),
            start_timeout_s=self.options.start_timeout_s,
            is_default=is_default,
        )
