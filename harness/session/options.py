"""What a session is told (:class:`SessionOptions`, validated before the first test) and what
it reports (:class:`SessionResult`, for the summary and for callers)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.hosts.process import this_python
from harness.objectives.objective import Objective
from harness.records import Observation, Status, answer_of, best_measured, measurement_count
from harness.space import Space

__all__ = [
    "MAX_BUDGET",
    "MAX_CONFIRM",
    "MAX_REPEATS",
    "SessionOptions",
    "SessionPolicy",
    "SessionResult",
    "resume_command",
]

#: Caps no real session reaches (the paper's sessions run 50-500 tests of minutes each), so
#: that a typo in a count is refused in one line instead of allocating memory for it
#: (``budget=2000000000`` asked the initial sample for 179 GiB) or running for ever.
MAX_BUDGET = 100_000
MAX_REPEATS = 100
MAX_CONFIRM = 100


@dataclass
class SessionPolicy:
    """How a session runs its tests: the ``session.*`` keys of the config, declared only here
    (the config schema :class:`harness.conf.schema.SessionConf` extends this class)."""

    #: A workload run is killed after this many times the default configuration's run time.
    timeout_factor: float = 1.9
    #: ... but never before this many seconds.
    min_timeout_s: float = 10.0
    #: The timeout of the default configuration's own run (trial 0).
    first_timeout_s: float = 600.0
    #: How long a server may take to start and become ready.
    start_timeout_s: float = 120.0
    #: Abort after this many crashed tests in a row (the ranges may exceed the machine).
    max_consecutive_crashes: int = 5
    #: Re-measure the default every N tests (0: never), to see the machine's drift.
    default_every: int = 0
    #: After the budget, measure the default and the best this many times each, alternating
    #: (harness.session.confirm); None: 3 on real systems with budget >= 20, else 0.
    confirm: int | None = None
    #: Show a progress bar on stderr.
    progress: bool = True
    #: Keep the work folder (servers' data, logs) after a finished session.
    keep_workdir: bool = False
    #: A ``session.name`` whose folder exists: ``fail``, or ``resume`` (a rerun sweep skips a
    #: finished session and continues a stopped one: harness.cli.rerun).
    existing: str = "fail"
    #: Tests run at once, each on its own SUT host of the inventory (``hosts=``;
    #: harness.hosts.pool).
    parallel: int = 1
    #: Stop a running test whose intervals show it cannot reach the k-th best, or a job already
    #: slower than the best by the margin (harness.session.early_stop); off: full tests only.
    early_stop: bool = False
    #: Seconds at the start of each run that are never judged (warm-up, connecting).
    early_stop_window_s: float = 3.0
    #: The k of "cannot reach the k-th best" (rates).
    early_stop_rank: int = 3
    #: A job is stopped once it is this fraction slower than the best job time.
    early_stop_margin: float = 0.25
    #: Screening rungs as fractions of a full test, ending at 1.0, e.g. [0.2, 1.0]
    #: (harness.session.screening); None: full tests only.
    fidelity: list[float] | None = None
    #: The share of each rung promoted to the next (successive halving's 1/eta).
    fidelity_promote: float = 0.34


@dataclass
class SessionOptions(SessionPolicy):
    """Everything a session is told: the policy plus budget, seed and repeats (validated
    before the first test)."""

    budget: int = 100
    seed: int = 0
    repeats: int = 1

    def __post_init__(self) -> None:
        from harness.errors import ConfigError

        if not 1 <= self.budget <= MAX_BUDGET:
            raise ConfigError(
                f"budget must be at least 1 test and at most {MAX_BUDGET}, got {self.budget}; "
                "e.g. budget=50"
            )
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise ConfigError(
                f"repeats must be at least 1 and at most {MAX_REPEATS}, got {self.repeats}; "
                "e.g. repeats=3"
            )
        if self.seed < 0:
            raise ConfigError(f"seed must be 0 or more, got {self.seed}; e.g. seed=0")
        if not self.timeout_factor > 1.0 or self.timeout_factor == float("inf"):
            raise ConfigError(f"session.timeout_factor must exceed 1, got {self.timeout_factor}")
        for name in ("min_timeout_s", "first_timeout_s", "start_timeout_s"):
            value = getattr(self, name)
            if not 0 < value < float("inf"):
                raise ConfigError(
                    f"session.{name} must be a positive number of seconds, got {value}"
                )
        if self.max_consecutive_crashes < 1:
            raise ConfigError("session.max_consecutive_crashes must be at least 1")
        if self.default_every < 0:
            raise ConfigError("session.default_every must be 0 (off) or a number of tests")
        if self.parallel < 1:
            raise ConfigError(f"session.parallel must be at least 1, got {self.parallel}")
        if self.existing not in ("fail", "resume"):
            raise ConfigError(f"session.existing must be fail or resume, got {self.existing!r}")
        _check_early_stop(self)
        _check_fidelity(self)
        if self.confirm is not None and not 0 <= self.confirm <= MAX_CONFIRM:
            raise ConfigError(
                f"session.confirm must be 0 (off) or a number of runs up to {MAX_CONFIRM}, "
                f"got {self.confirm}; e.g. session.confirm=3"
            )


def _check_fidelity(policy: SessionPolicy) -> None:
    from harness.errors import ConfigError

    if policy.fidelity is None:
        return
    rungs = [float(f) for f in policy.fidelity]
    increasing = all(a < b for a, b in pairwise(rungs))
    if len(rungs) < 2 or not increasing or rungs[0] <= 0 or rungs[-1] != 1.0:
        raise ConfigError(
            f"session.fidelity must rise from above 0 to 1.0, e.g. [0.2,1.0]; got {rungs}"
        )
    if not 0 < policy.fidelity_promote < 1:
        raise ConfigError("session.fidelity_promote must be a fraction between 0 and 1")
    policy.fidelity = rungs


def _check_early_stop(policy: SessionPolicy) -> None:
    from harness.errors import ConfigError

    if not 0 <= policy.early_stop_window_s < float("inf"):
        raise ConfigError("session.early_stop_window_s must be 0 or a number of seconds")
    if policy.early_stop_rank < 1:
        raise ConfigError("session.early_stop_rank must be at least 1 (the best)")
    if not 0 <= policy.early_stop_margin < float("inf"):
        raise ConfigError("session.early_stop_margin must be a fraction of 0 or more, e.g. 0.25")


@dataclass
class SessionResult:
    """What a session measured, for the summary and for callers."""

    session_id: str
    directory: Path
    objective: Objective
    observations: list[Observation]
    references: list[Observation]
    status: str  # FINISHED | ABORTED | INTERRUPTED
    tracking: str
    csv_path: Path | None = None
    message: str = ""
    tuner_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    #: The system's own lines for the summary (:meth:`harness.system.System.summary_lines`).
    notes: list[str] = field(default_factory=list)
    #: The system's knobs (units and risks in the summary); ``None`` when not known.
    space: Space | None = None
    #: The trial of the tuner's own answer when it is not the best measured setting (e.g.
    #: ``classytune_paper`` with ``answer=algorithm``); ``None``: the best measured is it.
    answer_trial: int | None = None

    @property
    def default(self) -> Observation | None:
        return self.observations[0] if self.observations else None

    @property
    def best(self) -> Observation | None:
        """The best measured setting; one measured again is judged on the mean of its
        measurements (:func:`harness.records.best_measured`)."""
        return best_measured(self.observations)

    @property
    def answer(self) -> Observation | None:
        """The session's answer, which the summary, the export, the confirmation runs and the
        benchmarks use: the tuner's own (:attr:`answer_trial`) or else :attr:`best`."""
        return answer_of(self.observations, self.answer_trial)

    def measurements_of_answer(self) -> int:
        """How many tests measured the answer's configuration (more than 1 after a
        re-measure)."""
        answer = self.answer
        return measurement_count(self.observations, answer.config) if answer else 0

    def value(self, obs: Observation | None) -> float | None:
        """The raw objective value of a test that ran (also when it broke a constraint)."""
        if obs is None or obs.status not in (Status.SUCCEEDED, Status.INFEASIBLE):
            return None
        try:
            return self.objective.value(obs.metrics)
        except HarnessError:
            return None

    def improvement(self) -> float | None:
        best, default = self.value(self.answer), self.value(self.default)
        if best is None or default is None:
            return None
        return self.objective.improvement(best, default)

    def nearest_default(self) -> Observation | None:
        """The default measurement nearest in time to the answer (noise-aware baseline)."""
        best = self.answer
        again = [o for o in self.references if o.is_default]  # not the best's confirmations
        candidates = [o for o in [self.default, *again] if o is not None and o.ok]
        if best is None or not candidates:
            return None
        return min(
            candidates, key=lambda o: abs(int(o.extra.get("after_trial", o.trial)) - best.trial)
        )

    def improvement_vs_nearest(self) -> float | None:
        best, near = self.value(self.answer), self.value(self.nearest_default())
        if best is None or near is None:
            return None
        return self.objective.improvement(best, near)


def resume_command(directory: Path) -> str:
    """The command that resumes the session in ``directory``, runnable as printed."""
    return shlex.join([this_python(), "-m", "harness", f"resume={directory}"])
