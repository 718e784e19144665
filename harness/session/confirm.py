"""The end of a session: the best and the default configurations re-measured, alternating.

One best test on a noisy machine is an optimistic number: it is the maximum of many noisy
draws, and the machine drifts (5-25 % here). So, after the budget, the session measures the
default and the best configuration ``session.confirm`` times each, alternating (default, best,
default, best, ...) so drift hits both alike, and reports the improvement of the best's median
over the default's median with the range of the alternating pairs' improvements. These runs
are reference tests (``references.jsonl``, marked ``extra["confirm"]``): the tuner never sees
them, the budget does not count them, and a resumed session runs only the ones still missing.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from harness.objectives.objective import Objective
from harness.records import Observation, Status

__all__ = [
    "CONFIRM_KEY",
    "Confirmation",
    "confirmation",
    "pending_roles",
    "tagged",
    "to_confirm",
]

#: ``Observation.extra`` key of a confirmation run: ``"default"`` or ``"best"``.
CONFIRM_KEY = "confirm"
ROLES = ("default", "best")


def pending_roles(rounds: int, references: Sequence[Observation]) -> list[str]:
    """The confirmation runs still to do, in alternating order (default first)."""
    done = [r.extra.get(CONFIRM_KEY) for r in references if CONFIRM_KEY in r.extra]
    plan = [role for _ in range(rounds) for role in ROLES]
    for role in done:  # each finished run removes its first pending twin
        if role in plan:
            plan.remove(role)
    return plan


def to_confirm(
    rounds: int,
    budget: int,
    observations: Sequence[Observation],
    refs: Sequence[Observation],
    answer: Observation | None,
) -> list[str]:
    """The confirmation runs a session still owes for its ``answer``
    (:attr:`harness.session.options.SessionResult.answer`): none before its budget is spent
    or when nothing beat the default (the answer is trial 0)."""
    best = answer
    if best is None or best.trial == 0 or len(observations) < budget:
        return []
    return pending_roles(rounds, refs)


def tagged(ref: Observation, role: str, after_trial: int) -> Observation:
    """``ref`` marked as a confirmation run of ``role`` taken after ``after_trial`` tests."""
    return replace(ref, extra={**ref.extra, "after_trial": after_trial, CONFIRM_KEY: role})


@dataclass(frozen=True)
class Confirmation:
    """What the confirmation runs measured (objective values, in run order)."""

    default: list[float]
    best: list[float]
    improvement: float  # of the best's median over the default's median (a fraction)
    low: float  # smallest improvement of an alternating (default, best) pair
    high: float
    failed: int  # confirmation runs that did not succeed

    def line(self, fmt: Callable[[float], str]) -> str:
        """One summary line; ``fmt`` renders an objective value with its unit."""

        def spread(values: list[float]) -> str:
            return f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"

        failed = f", {self.failed} run(s) failed" if self.failed else ""
        return (
            f"confirmed improvement: {100 * self.improvement:+.1f}% (alternating pairs "
            f"{100 * self.low:+.1f}% to {100 * self.high:+.1f}%): best {spread(self.best)}, "
            f"default {spread(self.default)}, {len(self.best)} runs each{failed}"
        )


def confirmation(objective: Objective, references: Sequence[Observation]) -> Confirmation | None:
    """The confirmation of a finished session, or None if it has no successful pair."""
    runs = [r for r in references if CONFIRM_KEY in r.extra]

    def values(role: str) -> list[float]:
        return [
            objective.value(r.metrics)
            for r in runs
            if r.extra[CONFIRM_KEY] == role and r.status is Status.SUCCEEDED
        ]

    default, best = values("default"), values("best")
    if not default or not best:
        return None
    pairs = [objective.improvement(b, d) for d, b in zip(default, best, strict=False)]
    return Confirmation(
        default,
        best,
        objective.improvement(statistics.median(best), statistics.median(default)),
        min(pairs),
        max(pairs),
        sum(r.status is not Status.SUCCEEDED for r in runs),
    )
