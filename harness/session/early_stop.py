"""Early stop: end a running test once its interval reports show it cannot compete.

A workload that reports intervals (:class:`harness.intervals.ReportsIntervals`) is judged
while it runs, by a :class:`Judge` listening to its recorder. Nothing is judged during the
first ``session.early_stop_window_s`` seconds of a run (the warm-up: caches fill, YCSB reports
0 while it connects). After that:

- **Rates** (a ``rate`` recorder whose samples name the objective's metric): the samples after
  the window give a two-sided 95 % confidence interval for the run's mean,
  ``mean ± t·s/√n`` (Student's t with n−1 degrees of freedom, n ≥ 3 samples, unweighted: the
  samples are per-interval rates of equal length but for a last sliver). A maximised metric
  is stopped when the upper end is below the session's k-th best value
  (``session.early_stop_rank``) among the tests measured so far; a minimised one when the lower
  end is above it. The run could still have reached the k-th best only if its remaining
  intervals were far better than every one seen, which a steady benchmark does not do.
- **Job time** (an ``elapsed`` recorder bounding the objective's minimised metric from below):
  stopped once the elapsed time exceeds the best time measured so far by
  ``session.early_stop_margin`` (0.25: 25 % slower than the best is stopped).

A stopped test is stored with status STOPPED_EARLY and its **censored value** in
``extra["censored"]``: the metric, the bound (the interval's end, or the elapsed time), which
side of the true value it bounds, and ``score_bound``, the bound as a larger-is-better score
(an upper bound of the score the test would have had). It is no measurement: it never becomes
the answer (:func:`harness.records.best_measured` takes successes only), it counts toward the
budget like any test, and tuners score it at its bound (:func:`harness.tuner.imputed_scores`).

Nothing is judged before there is something to lose to: the default (trial 0) and the
re-measured references always run whole, and a rate test is judged only once k tests have
succeeded (a job, once one has).
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from harness.intervals import ELAPSED, IntervalRecorder, IntervalSample, ReportsIntervals
from harness.objectives.objective import Objective
from harness.records import Observation
from harness.system import Workload

__all__ = ["EarlyStopRule", "Judge", "early_stop_gap", "judge_for", "judging", "rate_interval"]

log = logging.getLogger(__name__)

#: Fewest samples after the window from which a rate's confidence interval is trusted.
MIN_SAMPLES = 3


@dataclass(frozen=True)
class EarlyStopRule:
    """The ``session.early_stop_*`` settings (see the module)."""

    window_s: float = 3.0
    rank: int = 3
    margin: float = 0.25
    confidence: float = 0.95


def rate_interval(values: Sequence[float], confidence: float) -> tuple[float, float] | None:
    """``(low, high)`` = mean ± t·s/√n of ``values``; None below :data:`MIN_SAMPLES`."""
    n = len(values)
    if n < MIN_SAMPLES:
        return None
    mean, spread = statistics.fmean(values), statistics.stdev(values)
    from scipy import stats  # here: a second of import that only an early-stopping test pays

    t = float(stats.t.ppf(0.5 + confidence / 2, n - 1))
    half = t * spread / math.sqrt(n)
    return mean - half, mean + half


def early_stop_gap(workload: Workload, objective: Objective) -> str | None:
    """Why early stop cannot judge this workload for this objective (one line), or None."""
    if not isinstance(workload, ReportsIntervals):
        return (
            f"session.early_stop=on: workload {workload.name!r} reports no intervals; "
            "every test runs its full length"
        )
    recorder = workload.intervals
    if recorder.kind == "elapsed" and objective.direction != "min":
        return "session.early_stop=on: a job's elapsed time bounds only a minimised time"
    if recorder.target != objective.metric:
        return (
            f"session.early_stop=on: workload {workload.name!r} reports intervals of "
            f"{recorder.target!r}, not of the objective {objective.metric!r}; every test runs "
            "its full length"
        )
    return None


class Judge:
    """Listens to one run's samples and asks the recorder to stop when the rule says so."""

    def __init__(
        self,
        recorder: IntervalRecorder,
        objective: Objective,
        rule: EarlyStopRule,
        threshold: float,
    ) -> None:
        self.recorder, self.objective, self.rule = recorder, objective, rule
        #: The value to beat: the k-th best rate, or the best job time.
        self.threshold = threshold

    def __call__(self, sample: IntervalSample) -> None:
        if sample.offset_s <= self.rule.window_s:
            return
        verdict = self._elapsed(sample) if self.recorder.kind == "elapsed" else self._rate()
        if verdict is not None:
            reason, censored = verdict
            self.recorder.request_stop(reason, censored)

    def _elapsed(self, sample: IntervalSample) -> tuple[str, dict[str, Any]] | None:
        limit = self.threshold * (1 + self.rule.margin)
        if sample.metric != ELAPSED or sample.value <= limit:
            return None
        reason = (
            f"stopped early after {sample.value:.1f}s: already {self.rule.margin:.0%} slower "
            f"than the best {self.objective.metric} ({self.threshold:.4g}s)"
        )
        return reason, self._censored(sample.value, "lower", 1)

    def _rate(self) -> tuple[str, dict[str, Any]] | None:
        metric = self.objective.metric
        values = [
            s.value
            for s in self.recorder.samples
            if s.metric == metric and s.offset_s > self.rule.window_s
        ]
        interval = rate_interval(values, self.rule.confidence)
        if interval is None:
            return None
        low, high = interval
        maximised = self.objective.direction == "max"
        hopeless = high < self.threshold if maximised else low > self.threshold
        if not hopeless:
            return None
        bound, side = (high, "upper") if maximised else (low, "lower")
        reason = (
            f"stopped early: {metric} {statistics.fmean(values):.4g} over {len(values)} "
            f"intervals, {self.rule.confidence:.0%} bound {bound:.4g}, cannot reach the "
            f"k-th best {self.threshold:.4g} (k={self.rule.rank})"
        )
        return reason, self._censored(bound, side, len(values))

    def _censored(self, bound: float, side: str, samples: int) -> dict[str, Any]:
        score_bound = bound if self.objective.direction == "max" else -bound
        return {
            "metric": self.objective.metric,
            "bound": round(bound, 6),
            "side": side,
            "score_bound": round(score_bound, 6),
            "threshold": round(self.threshold, 6),
            "samples": samples,
        }


def _threshold(
    observations: Sequence[Observation], objective: Objective, rule: EarlyStopRule, kind: str
) -> float | None:
    """The value to beat: the k-th best measured value (rates), the best time (jobs)."""
    values = []
    for obs in observations:
        if obs.ok and objective.metric in obs.metrics:
            values.append(float(obs.metrics[objective.metric]))
    rank = 1 if kind == "elapsed" else rule.rank
    if len(values) < rank:
        return None
    values.sort(reverse=objective.direction == "max")
    return values[rank - 1]


def judge_for(
    workload: Workload,
    objective: Objective,
    rule: EarlyStopRule,
    observations: Sequence[Observation],
) -> Judge | None:
    """The judge of the next test on ``workload``, or None (nothing to judge it by yet, or a
    workload early stop cannot judge: :func:`early_stop_gap`)."""
    if not observations or early_stop_gap(workload, objective) is not None:
        return None
    recorder = workload.intervals  # type: ignore[attr-defined]
    threshold = _threshold(observations, objective, rule, recorder.kind)
    return None if threshold is None else Judge(recorder, objective, rule, threshold)


@contextmanager
def judging(judge: Judge | None) -> Iterator[None]:
    """Let ``judge`` listen to its recorder for the block (nothing when None)."""
    if judge is None:
        yield
        return
    judge.recorder.subscribe(judge)
    try:
        yield
    finally:
        judge.recorder.unsubscribe(judge)
