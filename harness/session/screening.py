"""Screening rungs: successive halving over fractions of a full test (``session.fidelity``).

``session.fidelity=[0.2,1.0]`` runs each new proposal first at 0.2 of a full test (its measured
window: the ``duration_s`` of a workload that reports rates) and promotes the best of each rung
to the next, up to full tests (1.0). The rule is asynchronous successive halving (ASHA, Li et
al. 2020), so it needs no waves and fits the scheduler's one loop: whenever a host is free, the
best test of the highest rung below 1.0 that is in the top ``session.fidelity_promote`` of its
rung (by score, over the results the rung has so far) and not yet promoted runs again one rung
up; otherwise the host takes a new proposal at the lowest rung. The default configuration (trial
0) is always a full test: later timeouts and the improvement are measured against it.

A screening test is stored like any test with ``extra["fidelity"]`` (its fraction), counts
toward the budget, and is told to the tuner (a shorter window of the same rate: the same mean,
more noise). Only full tests can be the answer (:func:`harness.records.best_measured`).
Decisions depend only on the results in trial order, so a resumed session replays them and
promotes the same tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from harness.intervals import IntervalRecorder
from harness.records import Observation, config_key
from harness.space import Config
from harness.system import Workload

__all__ = ["Rungs", "fidelity_of", "screening_gap", "shortened"]


def fidelity_of(obs: Observation) -> float:
    """The fraction of a full test ``obs`` ran (1.0 for a full test)."""
    value = obs.extra.get("fidelity", 1.0)
    return float(value) if isinstance(value, int | float) else 1.0


def screening_gap(workload: Workload) -> str | None:
    """Why this workload cannot be shortened (one line), or None. Only a client that reports
    rates over a measured window (``duration_s``, a ``rate`` interval recorder) is; a job's
    ``duration_s`` is nominal and its size is its input, which is not scaled yet."""
    recorder = getattr(workload, "intervals", None)
    rate = isinstance(recorder, IntervalRecorder) and recorder.kind == "rate"
    if rate and isinstance(getattr(workload, "duration_s", None), int | float):
        return None
    return (
        f"session.fidelity: workload {workload.name!r} has no measured window to shorten "
        "(a rate client's duration_s; jobs are not scaled by input size yet); every test "
        "runs in full"
    )


@contextmanager
def shortened(workload: Workload, fraction: float) -> Iterator[None]:
    """Run the block with the workload's measured window at ``fraction`` of its length."""
    if fraction >= 1.0 or screening_gap(workload) is not None:
        yield
        return
    full = workload.duration_s  # type: ignore[attr-defined]
    workload.duration_s = full * fraction  # type: ignore[attr-defined]
    try:
        yield
    finally:
        workload.duration_s = full  # type: ignore[attr-defined]


@dataclass
class Rungs:
    """The rungs' results and promotions (see the module)."""

    fractions: Sequence[float]
    promote: float
    results: dict[float, list[Observation]] = field(default_factory=dict)
    promoted: set[tuple[float, str]] = field(default_factory=set)

    @property
    def first(self) -> float:
        """The fraction a new proposal runs at."""
        return float(self.fractions[0])

    def add(self, obs: Observation) -> None:
        """A finished test joins its rung (a full one is a rung too: it is never promoted)."""
        self.results.setdefault(fidelity_of(obs), []).append(obs)

    def next_promotion(self) -> tuple[Config, float] | None:
        """The configuration to run one rung up now, and that rung's fraction; or None."""
        for index in range(len(self.fractions) - 2, -1, -1):
            rung = float(self.fractions[index])
            candidate = self._promotable(rung)
            if candidate is not None:
                self.promoted.add((rung, config_key(candidate.config)))
                return dict(candidate.config), float(self.fractions[index + 1])
        return None

    def _promotable(self, rung: float) -> Observation | None:
        done = [o for o in self.results.get(rung, []) if o.ok and o.score is not None]
        top = math.floor(len(self.results.get(rung, [])) * self.promote)
        ranked = sorted(done, key=lambda o: (-(o.score or 0.0), o.trial))[:top]
        for obs in ranked:
            if (rung, config_key(obs.config)) not in self.promoted:
                return obs
        return None
