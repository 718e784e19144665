"""ClassyTune's ranked mode (this project's best mode, the default tuner; not in the paper).

The paper's comparator is kept (:mod:`classytune.comparator`: z-order induced pairs,
XGBoost), but each round spends its tests on the candidates the comparator ranks highest
(:func:`classytune.ranked.ranked_batch`): an LHS set of ``s_factor`` × d (at most
``max_candidates``) plus perturbations of the best measured settings (``local``), scored by
their mean win probability against the ``opponents`` best measured settings, a
``global_share`` of each round taken from the LHS set alone.

The search options come in groups (:mod:`classytune.ranked_options`): how far and how many
knobs a perturbation moves and whether that reach adapts (``local``, ``trust_region``), one
comparator or a bootstrap ensemble ranked by Thompson sampling (``ensemble``), the risk of
failing (``failure_model``), measuring noisy winners again (``remeasure``); a warm start
from earlier sessions (``warm_start``) helps when a user has them. Which of them are on by
default, and why, is measured on the development suite (``classytune/README.md``).
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from classytune.base import ClassyTuneBase, round_sizes
from classytune.classifiers import ClassifierFactory, xgboost
from classytune.ensemble import fit_members
from classytune.failure import failure_probability
from classytune.induction import DEFAULT_BITS
from classytune.ranked import category_levels, ranked_batch
from classytune.ranked_options import (
    Ensemble,
    FailureModel,
    LocalMoves,
    Remeasure,
    TrustRegion,
    flat_params,
    option_group,
)
from classytune.remeasure import Challenger
from classytune.remeasure import Remeasure as EndPhase
from classytune.trust import improved, update_scale
from classytune.warm_start import elite_points, load_priors, source_list
from classytune.warm_start import preflight as check_sources
from harness.errors import ConfigError
from harness.space import Config, Space

__all__ = ["ClassyTuneRanked"]

log = logging.getLogger(__name__)

#: 100 trees (not the factory's 200): the ranked rounds retrain often, and 100 ranked as well;
#: 64 histogram bins (not 256) halve a fit at d = 120 and ranked as well on the dev suite.
RANKED_CLASSIFIER: ClassifierFactory = functools.partial(xgboost, n_estimators=100, max_bin=64)


class ClassyTuneRanked(ClassyTuneBase):
    """The comparator ranks candidates; each round tests the best-ranked unmeasured ones.

    Parameters (besides those of :class:`~classytune.base.ClassyTuneBase`):
        max_candidates: at most this many LHS candidates per round (``s_factor`` × d grows
            the ranking's cost with d; ``None``: no cap).
        opponents: candidates are scored by their mean win probability against this many
            best measured settings (1 = the pivot alone).
        global_share: this share of each round's tests goes to the best-ranked LHS
            candidates, the rest to the best-ranked of all (exploration).
        min_distance: tests of one round keep at least this RMS distance per knob ([0, 1]
            units) from each other (0: off).
        pair_margin: train only on pairs whose scores differ by more than this share of the
            larger magnitude (near-ties under noise, :mod:`classytune.margin`; 0: all).
        local, trust_region, ensemble, failure_model, remeasure: option groups
            (:mod:`classytune.ranked_options`), each a mapping of its own keys.
        warm_start: earlier sessions (folders or samples.csv) whose pairs, at most
            ``warm_pairs`` each, train the comparator too; their ``warm_elite`` best
            settings join the initial sample (:mod:`classytune.warm_start`).
    """

    name = "classytune"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        budget: int = 100,
        initial_fraction: float = 0.2,
        n_initial: int | None = None,
        rounds: int = 6,
        s_factor: float = 100.0,
        n_candidates: int | None = None,
        max_candidates: int | None = None,
        induction: str = "zorder",
        bits: int = DEFAULT_BITS,
        classifier: str | ClassifierFactory = RANKED_CLASSIFIER,
        ties: str = "skip",
        rules: Sequence[Mapping[str, Any]] | None = None,
        rule_samples: int = 100,
        max_pairs: int | None = 3000,
        opponents: int = 5,
        global_share: float = 0.2,
        min_distance: float = 0.0,
        pair_margin: float = 0.0,
        local: Mapping[str, Any] | LocalMoves | None = None,
        trust_region: Mapping[str, Any] | TrustRegion | None = None,
        ensemble: Mapping[str, Any] | Ensemble | None = None,
        failure_model: Mapping[str, Any] | FailureModel | None = None,
        remeasure: Mapping[str, Any] | Remeasure | None = None,
        warm_start: str | Sequence[str] = (),
        warm_pairs: int = 1500,
        warm_elite: int = 0,
    ) -> None:
        super().__init__(
            space,
            seed,
            budget,
            initial_fraction=initial_fraction,
            n_initial=n_initial,
            rounds=rounds,
            s_factor=s_factor,
            n_candidates=n_candidates,
            induction=induction,
            bits=bits,
            classifier=classifier,
            ties=ties,
            rules=rules,
            rule_samples=rule_samples,
            max_pairs=max_pairs,
        )
        self._check_scalars(opponents, global_share, min_distance, pair_margin, max_candidates)
        self.max_candidates = int(max_candidates) if max_candidates else None
        if self.max_candidates:
            self.n_candidates = min(self.n_candidates, self.max_candidates)
        self.opponents, self.global_share = int(opponents), float(global_share)
        self.min_distance, self.pair_margin = float(min_distance), float(pair_margin)
        self.local = option_group(LocalMoves, local, "local")
        self.trust = option_group(TrustRegion, trust_region, "trust_region")
        self.ensemble = option_group(Ensemble, ensemble, "ensemble")
        self.failure = option_group(FailureModel, failure_model, "failure_model")
        self.noise = option_group(Remeasure, remeasure, "remeasure")
        if self.trust.enabled and not self.trust.min <= self.local.scale <= self.trust.max:
            raise ConfigError("trust_region: need min <= local.scale <= max")
        self.levels = category_levels(space, self.local.categorical)
        self._members_ready: list[Any] | None = None
        self._scale = self.local.scale
        self._best_before: float | None = None
        self._restarts = 0
        self._end_phase = self._plan_end_phase(budget)
        self._challenger = Challenger(
            self.noise.challenger_max if self.noise.challenger else 0, self.noise.tolerance
        )
        if warm_pairs < 1 or warm_elite < 0:
            raise ConfigError("warm_pairs must be >= 1 and warm_elite >= 0")
        self.warm_start = source_list(warm_start)  # a path given as text is one source
        self.warm_pairs, self.warm_elite = int(warm_pairs), int(warm_elite)
        self._priors = load_priors(self.warm_start, space)
        self._prior_pairs: list[tuple[np.ndarray, np.ndarray]] | None = None

    #: The warm-start sources, checked before the session is created (exit 2, no folder).
    preflight = staticmethod(check_sources)

    @staticmethod
    def _check_scalars(
        opponents: int,
        global_share: float,
        min_distance: float,
        pair_margin: float,
        max_candidates: int | None,
    ) -> None:
        negative_cap = max_candidates is not None and max_candidates < 0
        if opponents < 1 or min_distance < 0 or negative_cap:
            raise ConfigError("opponents must be >= 1, min_distance and max_candidates >= 0")
        if not 0.0 <= global_share <= 1.0:
            raise ConfigError(f"global_share must be in [0, 1], got {global_share}")
        if not 0 <= pair_margin < 1:
            raise ConfigError(f"pair_margin must be in [0, 1), got {pair_margin}")

    def _plan_end_phase(self, budget: int) -> EndPhase:
        """The end-of-budget re-measurements (``remeasure.tests``), kept out of the rounds."""
        room = budget - self.n_initial  # tests after the initial sample
        tests = self.noise.tests
        if tests and tests >= room:
            raise ConfigError(
                f"remeasure.tests must be 0 or fewer than the {max(room, 0)} tests after the "
                f"initial sample, got {tests}"
            )
        if tests:
            self.plan = round_sizes(budget - tests, self.n_initial, self.rounds)
        return EndPhase(tests, self.noise.top, self.noise.tolerance)

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "max_candidates": self.max_candidates or 0,
            "opponents": self.opponents,
            "global_share": self.global_share,
            "min_distance": self.min_distance,
            "pair_margin": self.pair_margin,
            **flat_params("local", self.local),
            **flat_params("trust_region", self.trust),
            **flat_params("ensemble", self.ensemble),
            **flat_params("failure_model", self.failure),
            **flat_params("remeasure", self.noise),
            "warm_start": json.dumps(self.warm_start),
            "warm_pairs": self.warm_pairs,
            "warm_elite": self.warm_elite,
        }

    def fit(self) -> tuple[Any, dict[str, Any]]:
        """The comparator on all samples (with ``pair_margin``, the pairs beyond it) and the
        earlier sessions' pairs."""
        if not self.pair_margin and not self._priors:
            return super().fit()
        if self._prior_pairs is None:  # the earlier sessions' pairs never change: induce once
            margin = self.pair_margin
            self._prior_pairs = [
                self.comparator.pairs(p.points, p.scores, margin) for p in self._priors
            ]
        return self.comparator.fit(
            self.points(),
            self.scores(),
            self.rng,
            self.pair_margin,
            self._prior_pairs,
            self.warm_pairs,
        )

    def _propose(self, n: int) -> Sequence[Config] | np.ndarray:
        at_boundary = not len(self._queue)
        if at_boundary and 1 <= self._round < len(self.plan):
            again = self._challenger.propose(self.history)
            if again is not None:  # one test: the next round must see its result
                self.preferred_batch = 1
                return [again]
        if at_boundary and self._round >= len(self.plan) and self._end_phase.active:
            again = self._end_phase.propose(self.history)
            if again is not None:  # one at a time: the next choice needs this result
                self.preferred_batch = 1
                return [again]
            log.info("%s: re-measuring ends (%s)", self.name, self._end_phase.stopped_because)
            self.plan.append(self.remaining)  # the tests left go back to the search
        return super()._propose(n)

    def _next_round(self, wanted: int) -> np.ndarray:
        batch = super()._next_round(wanted)
        if self._round == 1 and self.warm_elite and self._priors:  # the initial sample
            default = self.space.encode(self.space.default())
            elite = elite_points(self._priors, min(self.warm_elite, len(batch)), default)
            batch = np.vstack([elite, batch[len(elite) :]])
        return batch

    def _search_round(self, index: int, size: int) -> np.ndarray:
        if not self.ensemble.members or self.ensemble.full_model:
            return super()._search_round(index, size)
        # The members replace the full comparator: about one comparator's fit in all.
        started = time.perf_counter()
        points, scores = self.points(), self.scores()
        members = self._fit_members(points, scores)
        entry: dict[str, Any] = {
            "round": index,
            "batch": size,
            "n_samples": len(points),
            "n_pairs": 0,
            "n_rule_rows": 0,
            "train_s": time.perf_counter() - started,
        }
        if not members:
            entry.update(search_s=0.0, fallback="no_comparisons", k=0, n_winners=0)
            self.round_log.append(entry)
            return self.lhs(size)
        self.model, self._members_ready = members[0], members
        return self._resample(entry, members[0], points, scores, size)

    def _members(self, model: Any, points: np.ndarray, scores: np.ndarray) -> list[Any]:
        """The trained comparator plus the ensemble's bootstrap members (or the members alone
        when they replace it, ``ensemble.full_model`` False)."""
        if self._members_ready is not None:
            members, self._members_ready = self._members_ready, None
            return members
        if not self.ensemble.members:
            return [model]
        return [model, *self._fit_members(points, scores)]

    def _fit_members(self, points: np.ndarray, scores: np.ndarray) -> list[Any]:
        factory: Any = self.comparator.factory
        takes_trees = self.comparator.classifier in ("xgboost", "random_forest")
        if self.ensemble.estimators and takes_trees:
            # Cheaper members keep the ensemble's cost near one comparator's fit.
            factory = functools.partial(factory, n_estimators=self.ensemble.estimators)
        return fit_members(
            factory,
            points,
            scores,
            self.ensemble.members,
            self.rng,
            self.comparator.induction,
            self.comparator.bits,
            self.comparator.ties,
            self.ensemble.pairs or None,
            self.pair_margin,
        )

    def _step_scale(self, scores: np.ndarray) -> bool:
        """Adapt the local step to whether the last round improved the best (trust region);
        with ``restart``, a region that would shrink below its minimum starts over."""
        best_now = float(scores.max())
        success = improved(best_now, self._best_before)
        trust = self.trust
        if trust.enabled and self._best_before is not None:
            collapsed = not success and self._scale * trust.shrink < trust.min
            if collapsed and trust.restart:
                self._scale, self._restarts = self.local.scale, self._restarts + 1
            else:
                self._scale = update_scale(
                    self._scale, success, trust.grow, trust.shrink, trust.min, trust.max
                )
        self._best_before = best_now
        return success

    def _fail_prob(self, points: np.ndarray) -> Any:
        """``candidates -> P(fail)`` from the measured failures, or None (model off)."""
        if self.failure.method == "off":
            return None
        failed = np.array([not o.ok for o in self.history], dtype=bool)

        def fail_prob(candidates: np.ndarray) -> np.ndarray:
            return failure_probability(
                self.failure.method, candidates, points, failed, self.rng, self.failure.k
            )

        return fail_prob

    def _resample(
        self, entry: dict[str, Any], model: Any, points: np.ndarray, scores: np.ndarray, size: int
    ) -> np.ndarray:
        started = time.perf_counter()
        success = self._step_scale(scores)
        members = self._members(model, points, scores)
        batch, info = ranked_batch(
            members if len(members) > 1 else model,
            points,
            scores,
            size,
            self.space,
            self.rng,
            self.n_candidates,
            round(self.local.factor * self.n_candidates),
            self.local.n_elite,
            self.opponents,
            self._scale,
            self.local.moved_knobs(self.space.dim),
            self.comparator.induction,
            self.comparator.bits,
            self.global_share,
            acquisition=self.ensemble.acquisition,
            kappa=self.ensemble.kappa,
            levels=self.levels if self.levels.any() else None,
            fail_prob=self._fail_prob(points),
            min_distance=self.min_distance,
        )
        entry.update(
            search_s=time.perf_counter() - started,
            k=0,
            n_winners=0,
            fallback="",
            pivot_score=float(scores.max()),
            local_scale=self._scale,
            improved=success,
            restarts=self._restarts,
            remeasured=self._challenger.count,
            **info,
        )
        self.round_log.append(entry)
        log.info(
            "%s round %d (ranked): %d pairs, %d of %d chosen local, train %.2fs search %.2fs",
            self.name,
            entry["round"],
            entry["n_pairs"],
            info["n_local_chosen"],
            size,
            entry["train_s"],
            entry["search_s"],
        )
        return batch
