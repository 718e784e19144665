"""The false-stop rate of early stop: rerun stopped tests to full length and count the wrong calls.

``python -m paper.false_stops <session folder> [--sample N] [--seed S] [--out FILE]``

A session run with ``session.early_stop=on`` stores each stopped test with the value it was
judged against (``extra["censored"]["threshold"]``: the k-th best rate, or the best job time)
and its censored bound (:mod:`harness.session.early_stop`). This command draws a sample of the
stopped tests (all of them when there are at most ``--sample``), sets the session's system up
once on this machine from its stored config, reruns each sampled configuration at full length
with no early stop, and reports for each:

- **false stop**: the full run reached the value it was stopped against (the rule's own claim
  was wrong: with a 95 % bound this should be rare);
- **would have won**: the full run beat the session's best measured test (the cost that
  matters: the session's answer would have been different).

The rate of each is the count over the sample, given with the sample size: a handful of
reruns bounds the rate only loosely, and the report says so. Reruns are measurements on the
same machine later in time, so they carry the machine's drift; the session's best is not
re-measured here. Writes a Markdown report (``--out``, default printed).
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.builder.export import build_adapter
from harness.builder.session import load_resumed_config, make_objective, make_workload
from harness.objectives.objective import Objective
from harness.records import Observation, Status, best_measured
from harness.session.trial import run_test
from harness.store.samples import SampleStore

__all__ = ["Rerun", "main", "report", "sample_stopped"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rerun:
    """A stopped test and what its configuration measured when run whole."""

    stopped: Observation
    full: Observation
    value: float | None  # the full run's objective value (None: it did not succeed)
    threshold: float
    best: float

    def reached(self, objective: Objective, target: float) -> bool:
        return self.value is not None and not objective.better(target, self.value)

    def false_stop(self, objective: Objective) -> bool:
        """The full run reached the value the test was stopped against."""
        return self.reached(objective, self.threshold)

    def would_have_won(self, objective: Objective) -> bool:
        """The full run beat (or tied) the session's best measured test."""
        return self.reached(objective, self.best)


def sample_stopped(observations: Sequence[Observation], size: int, seed: int) -> list[Observation]:
    """Up to ``size`` stopped tests with a censored value, drawn without replacement (in trial
    order)."""
    stopped = [
        o
        for o in observations
        if o.status is Status.STOPPED_EARLY and "threshold" in o.extra.get("censored", {})
    ]
    chosen = stopped if len(stopped) <= size else random.Random(seed).sample(stopped, size)
    return sorted(chosen, key=lambda o: o.trial)


def rerun_stopped(folder: Path, size: int, seed: int) -> tuple[Objective, list[Rerun], int]:
    """Rerun a sample of the session's stopped tests whole; the objective, the reruns and how
    many tests were stopped in all."""
    cfg = load_resumed_config(str(folder))
    observations = SampleStore(folder).load()
    stopped_count = sum(o.status is Status.STOPPED_EARLY for o in observations)
    chosen = sample_stopped(observations, size, seed)
    system, workload = build_adapter(cfg), make_workload(cfg)
    objective: Objective = make_objective(cfg, workload, {})
    best = best_measured(observations)
    if best is None or not chosen:
        return objective, [], stopped_count
    best_value = objective.value(best.metrics)
    default = next((o for o in observations if o.trial == 0 and o.ok), None)
    timeout = 3 * float(default.extra.get("run_s", 600)) if default else None
    reruns = []
    with tempfile.TemporaryDirectory(prefix="false-stops-") as work:
        system.setup(Path(work) / "work", workload)
        try:
            for obs in chosen:
                full = run_test(
                    system, workload, objective, obs.config, obs.trial, timeout_s=timeout
                )
                value = objective.value(full.metrics) if full.ok else None
                threshold = float(obs.extra["censored"]["threshold"])
                reruns.append(Rerun(obs, full, value, threshold, best_value))
                log.info(
                    "trial %d rerun whole: %s (stopped against %.4g)", obs.trial, value, threshold
                )
        finally:
            system.teardown()
    return objective, reruns, stopped_count


def report(
    folder: Path, objective: Objective, reruns: Sequence[Rerun], stopped_count: int, total: int
) -> str:
    """The Markdown report: one row per rerun, then the two counts over the sample."""
    false_stops = sum(r.false_stop(objective) for r in reruns)
    winners = sum(r.would_have_won(objective) for r in reruns)
    n = len(reruns)
    lines = [
        f"# False stops of `{folder.name}`",
        "",
        f"Session: {total} tests, {stopped_count} stopped early; {n} stopped configurations "
        f"rerun at full length (`python -m paper.false_stops {folder}`). Objective: "
        f"{objective.direction}imise `{objective.metric}`; session best {reruns[0].best:.4g}"
        if reruns
        else f"Session: {total} tests, {stopped_count} stopped early; nothing to rerun.",
        "",
        "| trial | censored bound | stopped against | full run | false stop | would have won |",
        "|---|---|---|---|---|---|",
    ]
    for r in reruns:
        censored = r.stopped.extra["censored"]
        full = f"{r.value:.4g}" if r.value is not None else r.full.status.value
        lines.append(
            f"| {r.stopped.trial} | {censored['bound']:.4g} ({censored['side']}) | "
            f"{r.threshold:.4g} | {full} | {'yes' if r.false_stop(objective) else 'no'} | "
            f"{'yes' if r.would_have_won(objective) else 'no'} |"
        )
    if n:
        lines += [
            "",
            f"**False stops: {false_stops} of {n}** (the full run reached the value it was "
            f"stopped against). **Would have beaten the session's best: {winners} of {n}.**",
            _sample_note(n, false_stops),
        ]
    return "\n".join(lines) + "\n"


def _sample_note(n: int, events: int) -> str:
    """What a sample of ``n`` says about a rate (the exact 95 % bound when nothing happened)."""
    if events:
        return f"A sample of {n}: the observed rate is {events / n:.0%}."
    return (
        f"A sample of {n} with no false stop: the exact binomial 95 % upper bound on the rate "
        f"is {1 - 0.05 ** (1 / n):.0%}, so a sample this small bounds it only loosely."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paper.false_stops", description=__doc__)
    parser.add_argument("folder", type=Path, help="a session folder (results/runs/...)")
    parser.add_argument("--sample", type=int, default=10, help="stopped tests to rerun")
    parser.add_argument("--seed", type=int, default=0, help="which ones, when more are stopped")
    parser.add_argument("--out", type=Path, help="write the report here (default: print it)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    objective, reruns, stopped_count = rerun_stopped(args.folder, args.sample, args.seed)
    total = len(SampleStore(args.folder).load())
    text = report(args.folder, objective, reruns, stopped_count, total)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
