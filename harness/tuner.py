"""The tuner protocol: batch ``ask(n)`` / ``tell(observations)`` / ``best()``.

The session loop lives outside the tuner (as in SMAC/Optuna ask-tell and MLOS suggest/register).
Every tuner derives from :class:`Tuner`, which guarantees the shared contract:

* trial 0 is always the space's default configuration, measured like any other test;
* ``ask`` returns valid configurations of the space and never more than asked for;
* the tuner is deterministic given its seed and the observations it was told;
* ``best()`` is the best *measured* observation, never a prediction; ``answer()``, the setting
  the tuner's method recommends, is ``best()`` unless a tuner defines its own output (the
  paper's Algorithm 1 returns the best of its resampled tests only), and is measured too;
* the tuner's own computation time is accounted per call in :attr:`Tuner.compute_log`.

Subclasses implement :meth:`Tuner._propose` (points or configurations) and optionally
:meth:`Tuner._observe`. Scores are "larger is better"; see :meth:`Tuner.scores` for failures.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from harness.records import Observation, Status, best_measured
from harness.space import Config, Space

__all__ = ["ComputeRecord", "Tuner", "imputed_scores", "tuner_name_of"]


def imputed_scores(observations: Sequence[Observation]) -> np.ndarray:
    """Scores of ``observations``, larger is better, with failures imputed.

    A failed, crashed, timed-out or infeasible test scores below the worst successful one:
    ``worst - 0.1 * (best - worst)`` (or ``worst - 1`` when all successes tie), so it loses
    every comparison and pulls models away from its region without dominating their scale.
    With no success at all every failure scores 0.

    A test stopped early (``STOPPED_EARLY``) scores at its censored bound,
    ``extra["censored"]["score_bound"]``: an upper estimate of the score it would have
    measured, below the k-th best when it was stopped, so it never outranks the contenders yet
    keeps its place among the rest (a model learns its region is poor, by about how much). One
    stored without a bound scores like a failure.
    """
    ok = np.array([o.score for o in observations if o.ok], dtype=float)
    if ok.size:
        worst, spread = float(ok.min()), float(ok.max() - ok.min())
        penalty = worst - (0.1 * spread if spread > 0 else 1.0)
    else:
        penalty = 0.0
    return np.array([_imputed(o, penalty) for o in observations], dtype=float)


def _imputed(obs: Observation, penalty: float) -> float:
    """One test's score: measured, censored (its bound) or imputed (``penalty``)."""
    if obs.ok and obs.score is not None:
        return obs.score
    if obs.status is Status.STOPPED_EARLY:
        bound = obs.extra.get("censored", {}).get("score_bound")
        if isinstance(bound, int | float) and math.isfinite(bound):
            return float(bound)
    return penalty


@dataclass(frozen=True)
class ComputeRecord:
    """Tuner computation time of one ask or tell call (excludes test time)."""

    step: int
    phase: str  # "ask" or "tell"
    seconds: float
    n: int


class Tuner(ABC):
    """Base class of every tuner. Subclasses set :attr:`name` and implement ``_propose``."""

    name: str = "tuner"
    #: How many configurations the tuner would like per ``ask`` (the session may ask fewer).
    preferred_batch: int = 1
    #: Whether ``ask(n)`` returns ``n`` configurations whenever asked (the session runs them
    #: at once with ``session.parallel``); False: one step at a time after its initial design.
    proposes_batches: ClassVar[bool] = True

    @classmethod
    def configured_name(cls, **options: Any) -> str:
        """The name a tuner built with these constructor ``options`` is known by: its
        sessions' tag and default id. The class's :attr:`name`, unless the options choose
        between variants of one class (gbrt and rfr, the two expert styles, GP-BO typed or as
        the paper ran it), which would otherwise share one name in MLflow and the figures."""
        return cls.name

    def __init__(self, space: Space, seed: int = 0, budget: int = 100) -> None:
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        self.space = space
        self.seed = int(seed)
        self.budget = int(budget)
        self.rng = np.random.default_rng(self.seed)
        self.history: list[Observation] = []
        self.compute_log: list[ComputeRecord] = []
        self._asked = 0

    # -- public protocol ------------------------------------------------------------------
    def ask(self, n: int = 1) -> list[Config]:
        """Return up to ``n`` configurations to test next (trial 0 = the default)."""
        if n < 1:
            raise ValueError(f"ask(n) needs n >= 1, got {n}")
        started = time.perf_counter()
        configs: list[Config] = []
        if self._asked == 0:
            configs.append(self.space.default())
        if len(configs) < n:
            proposed = self._propose(n - len(configs))
            configs.extend(self._as_configs(proposed)[: n - len(configs)])
        self._asked += len(configs)
        self._record("ask", started, len(configs))
        return configs

    def tell(self, observations: Sequence[Observation]) -> None:
        """Report finished tests (in any order; failed ones included)."""
        started = time.perf_counter()
        for obs in observations:
            self.history.append(obs)
            self._observe(obs)
        self._record("tell", started, len(observations))

    def best(self) -> Observation | None:
        """The best successful observation so far (ties: the earliest); a configuration
        measured more than once is judged on its mean (:func:`harness.records.best_measured`)."""
        return best_measured(self.history)

    def answer(self) -> Observation | None:
        """The tuner's recommended setting: :meth:`best` unless overridden (a measured one)."""
        return self.best()

    @property
    def remaining(self) -> int:
        """Tests left in the budget, counting those asked but not yet told."""
        return max(self.budget - self._asked, 0)

    @property
    def compute_seconds(self) -> float:
        return sum(r.seconds for r in self.compute_log)

    def params(self) -> dict[str, object]:
        """The tuner's settings, logged with the session as MLflow params
        ``resolved.tuner.<key>`` (override to add more)."""
        return {"name": self.name, "seed": self.seed, "budget": self.budget}

    # -- helpers for subclasses -----------------------------------------------------------
    def points(self) -> np.ndarray:
        """All told configurations as points in [0, 1]^d (in trial order)."""
        return self.space.encode_many(o.config for o in self.history)

    def scores(self) -> np.ndarray:
        """Scores of all told tests, larger is better, with failures imputed
        (:func:`imputed_scores`)."""
        return imputed_scores(self.history)

    def lhs(
        self, n: int, low: np.ndarray | None = None, high: np.ndarray | None = None
    ) -> np.ndarray:
        """``n`` Latin-hypercube points in the box [low, high] (default: the unit cube)."""
        from harness.sampling import latin_hypercube

        return latin_hypercube(n, self.space.dim, self.rng, low, high)

    # -- to implement ---------------------------------------------------------------------
    @abstractmethod
    def _propose(self, n: int) -> Sequence[Config] | np.ndarray:
        """Return ``n`` proposals: configurations, or an ``(n, d)`` array in [0, 1]^d."""

    def _observe(self, observation: Observation) -> None:  # noqa: B027 - optional hook
        """Hook called once per told observation (after it is appended to history)."""

    # -- internals ------------------------------------------------------------------------
    def _as_configs(self, proposed: Sequence[Config] | np.ndarray) -> list[Config]:
        if isinstance(proposed, np.ndarray):
            return self.space.decode_many(proposed) if proposed.size else []
        return [self.space.validate(c) for c in proposed]

    def _record(self, phase: str, started: float, n: int) -> None:
        step = len(self.compute_log)
        self.compute_log.append(ComputeRecord(step, phase, time.perf_counter() - started, n))


def tuner_name_of(factory: Any) -> str:
    """A tuner factory's name (a class or a ``functools.partial`` of one): the class's
    :meth:`Tuner.configured_name` for the factory's options, else the callable's name."""
    func = getattr(factory, "func", factory)
    if isinstance(func, type) and issubclass(func, Tuner):
        return func.configured_name(**getattr(factory, "keywords", {}))
    return str(getattr(func, "name", getattr(func, "__name__", "tuner")))
