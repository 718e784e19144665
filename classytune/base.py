"""What both ClassyTune tuners share: the rounds, the comparator, the artifacts.

Round 0 is the initial Latin-hypercube sample (``n_initial`` tests, the default configuration
included). Every later round retrains the comparator on *all* samples so far
(:class:`~classytune.comparator.Comparator`) and asks the subclass for the round's tests
(:meth:`ClassyTuneBase._resample`): the paper's subspaces
(:class:`~classytune.paper_tuner.ClassyTunePaper`) or the ranked candidates
(:class:`~classytune.ranked_tuner.ClassyTuneRanked`). The answer is always the best
*measured* setting (:meth:`harness.tuner.Tuner.best`).

Failures: comparisons use :meth:`harness.tuner.Tuner.scores`, which imputes a failed, crashed,
timed-out or infeasible test below the worst success, so a failed setting loses every
comparison with a success (two failures tie and their pairs are skipped, see ``ties``).
"""

from __future__ import annotations

import json
import logging
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from classytune.classifiers import ClassifierFactory
from classytune.comparator import Comparator
from classytune.model_io import save_artifacts
from harness.errors import ConfigError
from harness.space import Config, Space
from harness.tuner import Tuner

__all__ = ["ClassyTuneBase", "round_sizes"]

log = logging.getLogger(__name__)


def round_sizes(budget: int, n_initial: int, rounds: int) -> list[int]:
    """Tests per round: ``[n_initial, r_1, ..., r_R]``; the resampling budget is split evenly,
    the remainder going to the earliest rounds; rounds that would get no test are dropped."""
    rest = max(budget - n_initial, 0)
    rounds = max(1, min(rounds, rest)) if rest else 0
    return [n_initial] + [rest // rounds + (1 if i < rest % rounds else 0) for i in range(rounds)]


class ClassyTuneBase(Tuner):
    """Initial LHS sample, then ``rounds`` of train comparator → :meth:`_resample`.

    Shared parameters (besides ``space``, ``seed``, ``budget``; subclasses list them again in
    their own signature, so that an unknown option fails when the config is checked):
        initial_fraction: share of the budget spent on the initial LHS sample (default
            included); ignored when ``n_initial`` is given.
        n_initial: initial sample size, default configuration included (>= 2).
        rounds: train → search → resample rounds after the initial sample.
        s_factor: ``s_factor`` × d candidates are compared per round; ignored when
            ``n_candidates`` is given.
        n_candidates: a fixed number of candidates.
        induction, bits, classifier, ties, rules, rule_samples, max_pairs: the
            :class:`~classytune.comparator.Comparator`'s.
    """

    def __init__(
        self,
        space: Space,
        seed: int,
        budget: int,
        *,
        initial_fraction: float,
        n_initial: int | None,
        rounds: int,
        s_factor: float,
        n_candidates: int | None,
        induction: str,
        bits: int,
        classifier: str | ClassifierFactory,
        ties: str,
        rules: Sequence[Mapping[str, Any]] | None,
        rule_samples: int,
        max_pairs: int | None,
    ) -> None:
        super().__init__(space, seed, budget)
        self.comparator = Comparator(
            space, seed, induction, bits, classifier, ties, rules, rule_samples, max_pairs
        )
        if n_initial is None:
            if not 0.0 < initial_fraction <= 1.0:
                raise ConfigError(f"initial_fraction must be in (0, 1], got {initial_fraction}")
            n_initial = round(initial_fraction * budget)
        if rounds < 1:
            raise ConfigError("rounds must be >= 1")
        self.initial_fraction = float(initial_fraction)
        self.n_initial = max(2, min(int(n_initial), budget))
        self.rounds = int(rounds)
        self.s_factor = float(s_factor)
        self.n_candidates = (
            int(n_candidates) if n_candidates else max(1, round(self.s_factor * space.dim))
        )
        self.plan = round_sizes(budget, self.n_initial, self.rounds)
        self.model: Any = None
        self.round_log: list[dict[str, Any]] = []
        self._round = 0
        self._queue = np.empty((0, space.dim))
        self._encoded: list[np.ndarray] = []
        self.preferred_batch = self.plan[0]

    # -- protocol ---------------------------------------------------------------------------
    def points(self) -> np.ndarray:
        """All told configurations as points in [0, 1]^d, each encoded once (the history only
        grows; encoding every told setting again each round cost more than the ranking)."""
        while len(self._encoded) < len(self.history):
            self._encoded.append(self.space.encode(self.history[len(self._encoded)].config))
        return np.array(self._encoded, dtype=float).reshape(len(self._encoded), self.space.dim)

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "initial_fraction": self.initial_fraction,
            "n_initial": self.n_initial,
            "rounds": self.rounds,
            "s_factor": self.s_factor,
            "n_candidates": self.n_candidates,
            **self.comparator.params(),
            "plan": json.dumps(self.plan),
        }

    def _propose(self, n: int) -> Sequence[Config] | np.ndarray:
        taken: list[np.ndarray] = []
        wanted = n
        while wanted > 0:
            if not len(self._queue):
                self._queue = self._next_round(wanted)
            take, self._queue = self._queue[:wanted], self._queue[wanted:]
            taken.append(take)
            wanted -= len(take)
        self.preferred_batch = len(self._queue) or self._next_size(1)
        return np.vstack(taken)

    # -- rounds -----------------------------------------------------------------------------
    def _next_size(self, fallback: int) -> int:
        return self.plan[self._round] if self._round < len(self.plan) else max(fallback, 1)

    def _next_round(self, wanted: int) -> np.ndarray:
        size = self._next_size(wanted)
        index, self._round = self._round, self._round + 1
        if index == 0:
            # The base class hands out the default before asking us: it is one of n_initial.
            return self.lhs(max(size - 1, wanted))
        return self._search_round(index, size)

    def fit(self) -> tuple[Any, dict[str, Any]]:
        """Train a fresh comparator on every told sample (and the rules' pairs)."""
        return self.comparator.fit(self.points(), self.scores(), self.rng)

    def _search_round(self, index: int, size: int) -> np.ndarray:
        model, info = self.fit()
        entry: dict[str, Any] = {"round": index, "batch": size, **info}
        if model is None:
            # Nothing to compare (no success, or all scores equal): explore the whole space.
            entry.update(search_s=0.0, fallback="no_comparisons", k=0, n_winners=0)
            self.round_log.append(entry)
            log.info(
                "%s round %d: no comparisons to learn from, LHS of the space", self.name, index
            )
            return self.lhs(size)
        self.model = model
        return self._resample(entry, model, self.points(), self.scores(), size)

    @abstractmethod
    def _resample(
        self, entry: dict[str, Any], model: Any, points: np.ndarray, scores: np.ndarray, size: int
    ) -> np.ndarray:
        """The round's ``size`` tests (rows in [0, 1]^d) chosen with the trained ``model``;
        completes ``entry`` (``search_s``, ``k``, ``n_winners``, ``fallback``, ...) and appends
        it to :attr:`round_log`."""

    # -- model reuse ------------------------------------------------------------------------
    def save_artifacts(self, directory: Path) -> None:
        """Save the classifier (trained now on all samples), the samples and the settings."""
        model = self.model
        if self.history:
            fitted = self.fit()[0]  # the final model sees every measured sample
            model = fitted if fitted is not None else model
        save_artifacts(
            Path(directory),
            self,
            model,
            induction=self.comparator.induction,
            bits=self.comparator.bits,
            classifier=self.comparator.classifier,
            round_log=self.round_log,
        )
