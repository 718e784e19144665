"""ClassyTune's ranked mode (this project's best mode, the default tuner; not in the paper).

The paper's comparator is kept (:mod:`classytune.comparator`: z-order induced pairs,
XGBoost), but each round spends its tests on the candidates the comparator ranks highest
(:func:`classytune.ranked.ranked_batch`): an LHS set of ``s_factor`` × d plus
``local_factor`` times as many perturbations of the ``n_elite`` best measured settings, scored
by their mean win probability against the ``opponents`` best measured settings, a
``global_share`` of each round taken from the LHS set alone; a perturbed bool or string-enum
knob takes another value uniformly (``categorical_moves``). The further options
(bootstrap ensembles with Thompson sampling or an optimistic bound, an adaptive trust region,
a failure model, a minimum distance within a batch, a pair margin, re-measuring the best
before answering) are off by default: they did not help on the development suite
(``results/classytune/ablation*.md``); a warm start from earlier sessions helps when a user
has them (``warm_start``).

The class defaults are ``conf/tuner/classytune.yaml``'s, chosen on a development split (seeds
100-104, never the benchmark's): ``results/classytune/improve.md``.
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
from classytune.ensemble import ACQUISITIONS, fit_members
from classytune.failure import FAILURE_MODELS, failure_probability
from classytune.induction import DEFAULT_BITS
from classytune.ranked import CATEGORICAL_MOVES, category_levels, ranked_batch
from classytune.remeasure import Remeasure
from classytune.trust import improved, update_scale
from classytune.warm_start import elite_points, load_priors, source_list
from classytune.warm_start import preflight as check_sources
from harness.errors import ConfigError
from harness.space import Config, Space

__all__ = ["ClassyTuneRanked"]

log = logging.getLogger(__name__)

#: 100 trees (not the factory's 200): the ranked rounds retrain often, and 100 ranked as well.
RANKED_CLASSIFIER: ClassifierFactory = functools.partial(xgboost, n_estimators=100)


class ClassyTuneRanked(ClassyTuneBase):
    """The comparator ranks candidates; each round tests the best-ranked unmeasured ones.

    Parameters (besides those of :class:`~classytune.base.ClassyTuneBase`):
        local_factor: ``local_factor`` × |S| extra candidates perturbing the ``n_elite`` best
            measured settings (``local_dims`` knobs on average moved by a Gaussian step of
            width ``local_scale``, in [0, 1] units).
        n_elite: best measured settings that are perturbed.
        local_scale: standard deviation of a perturbation step.
        local_dims: knobs moved per perturbation, on average.
        opponents: candidates are scored by their mean win probability against this many
            best measured settings (1 = the pivot alone).
        global_share: this share of each round's tests goes to the best-ranked LHS
            candidates, the rest to the best-ranked of all (exploration).
        n_members: extra comparators trained on bootstrap resamples of the samples
            (:mod:`classytune.ensemble`), each on at most ``member_pairs`` pairs with
            ``member_estimators`` trees (when the classifier takes ``n_estimators``; 0 keeps
            the comparator's); 0 = the single comparator. ``full_model`` False: the members
            replace the comparator trained on all pairs (the rules are then not used).
        acquisition: how the ensemble ranks: ``mean``, ``ucb`` (mean + ``kappa`` × std of the
            members' win probabilities) or ``thompson`` (each slot ranks by one member).
        categorical_moves: local moves of ``nominal`` (bools, string enums) or ``all`` enum
            and bool knobs take a uniformly chosen other value; ``off``: Gaussian steps.
        trust_region: adapt the local step after each round (:mod:`classytune.trust`):
            × ``scale_grow`` after a round that improved the best, × ``scale_shrink``
            otherwise, within [``scale_min``, ``scale_max``]; starts at ``local_scale``.
        failure_model: ``off``, ``knn`` (share of failed among ``failure_k`` nearest) or
            ``forest``: win probabilities are weighted by 1 - P(fail)
            (:mod:`classytune.failure`).
        min_distance: tests of one round keep at least this RMS distance per knob ([0, 1]
            units) from each other (0: off).
        pair_margin: train only on pairs whose scores differ by more than this share of the
            larger magnitude (near-ties under noise are skipped, :mod:`classytune.margin`;
            0: every unequal pair).
        remeasure: tests kept at the end of the budget to measure the ``remeasure_top``
            best settings again (:mod:`classytune.remeasure`; ends early, giving the tests
            back to the search, when two measurements agree within ``remeasure_tolerance``).
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
        initial_fraction: float = 0.4,
        n_initial: int | None = None,
        rounds: int = 6,
        s_factor: float = 100.0,
        n_candidates: int | None = None,
        induction: str = "zorder",
        bits: int = DEFAULT_BITS,
        classifier: str | ClassifierFactory = RANKED_CLASSIFIER,
        ties: str = "skip",
        rules: Sequence[Mapping[str, Any]] | None = None,
        rule_samples: int = 100,
        max_pairs: int | None = 3000,
        local_factor: float = 0.5,
        n_elite: int = 5,
        local_scale: float = 0.2,
        local_dims: float = 3.0,
        opponents: int = 5,
        global_share: float = 0.2,
        n_members: int = 0,
        member_pairs: int | None = 1000,
        member_estimators: int = 50,
        full_model: bool = True,
        acquisition: str = "mean",
        kappa: float = 1.0,
        categorical_moves: str = "nominal",
        trust_region: bool = False,
        scale_grow: float = 1.5,
        scale_shrink: float = 0.6,
        scale_min: float = 0.05,
        scale_max: float = 0.5,
        failure_model: str = "off",
        failure_k: int = 5,
        min_distance: float = 0.0,
        pair_margin: float = 0.0,
        remeasure: int = 0,
        remeasure_top: int = 3,
        remeasure_tolerance: float = 1e-3,
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
        if opponents < 1 or n_elite < 1 or local_factor < 0 or local_scale <= 0:
            raise ConfigError(
                "opponents and n_elite must be >= 1, local_factor >= 0 and local_scale > 0"
            )
        if not 0.0 <= global_share <= 1.0:
            raise ConfigError(f"global_share must be in [0, 1], got {global_share}")
        self.local_factor = float(local_factor)
        self.n_elite = int(n_elite)
        self.local_scale = float(local_scale)
        self.local_dims = float(local_dims)
        self.opponents = int(opponents)
        self.global_share = float(global_share)
        if n_members < 0 or failure_k < 1 or min_distance < 0 or not 0 <= pair_margin < 1:
            raise ConfigError(
                "n_members >= 0, failure_k >= 1, min_distance >= 0 and 0 <= pair_margin < 1"
            )
        if acquisition not in ACQUISITIONS:
            raise ConfigError(f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r}")
        if categorical_moves not in CATEGORICAL_MOVES:
            raise ConfigError(
                f"categorical_moves must be one of {CATEGORICAL_MOVES}, got {categorical_moves!r}"
            )
        if failure_model not in FAILURE_MODELS:
            raise ConfigError(
                f"failure_model must be one of {FAILURE_MODELS}, got {failure_model!r}"
            )
        if not 0 < scale_min <= local_scale <= scale_max or scale_grow < 1 or scale_shrink > 1:
            raise ConfigError(
                "trust region: need 0 < scale_min <= local_scale <= scale_max, "
                "scale_grow >= 1 and scale_shrink <= 1"
            )
        self.n_members = int(n_members)
        self.member_pairs = int(member_pairs) if member_pairs else None
        self.member_estimators = int(member_estimators)
        self.full_model = bool(full_model)
        self._members_ready: list[Any] | None = None
        self.acquisition = acquisition
        self.kappa = float(kappa)
        self.categorical_moves = categorical_moves
        self.levels = category_levels(space, categorical_moves)
        self.trust_region = bool(trust_region)
        self.scale_grow, self.scale_shrink = float(scale_grow), float(scale_shrink)
        self.scale_min, self.scale_max = float(scale_min), float(scale_max)
        self.failure_model = failure_model
        self.failure_k = int(failure_k)
        self.min_distance = float(min_distance)
        self.pair_margin = float(pair_margin)
        self._scale = self.local_scale
        self._best_before: float | None = None
        room = budget - self.n_initial  # tests after the initial sample
        if remeasure < 0 or (remeasure and remeasure >= room) or remeasure_top < 1:
            raise ConfigError(
                f"remeasure must be 0 or fewer than the {max(room, 0)} tests after the initial "
                f"sample, got {remeasure}; remeasure_top must be >= 1"
            )
        self._remeasure = Remeasure(remeasure, remeasure_top, remeasure_tolerance)
        if remeasure:
            self.plan = round_sizes(budget - remeasure, self.n_initial, self.rounds)
        if warm_pairs < 1 or warm_elite < 0:
            raise ConfigError("warm_pairs must be >= 1 and warm_elite >= 0")
        self.warm_start = source_list(warm_start)  # a path given as text is one source
        self.warm_pairs, self.warm_elite = int(warm_pairs), int(warm_elite)
        self._priors = load_priors(self.warm_start, space)
        self._prior_pairs: list[tuple[np.ndarray, np.ndarray]] | None = None

    #: The warm-start sources, checked before the session is created (exit 2, no folder).
    preflight = staticmethod(check_sources)

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "local_factor": self.local_factor,
            "n_elite": self.n_elite,
            "local_scale": self.local_scale,
            "local_dims": self.local_dims,
            "opponents": self.opponents,
            "global_share": self.global_share,
            "n_members": self.n_members,
            "member_pairs": self.member_pairs or 0,
            "member_estimators": self.member_estimators,
            "full_model": self.full_model,
            "acquisition": self.acquisition,
            "kappa": self.kappa,
            "categorical_moves": self.categorical_moves,
            "trust_region": self.trust_region,
            "scale_grow": self.scale_grow,
            "scale_shrink": self.scale_shrink,
            "scale_min": self.scale_min,
            "scale_max": self.scale_max,
            "failure_model": self.failure_model,
            "failure_k": self.failure_k,
            "min_distance": self.min_distance,
            "pair_margin": self.pair_margin,
            "remeasure": self._remeasure.tests,
            "remeasure_top": self._remeasure.top,
            "remeasure_tolerance": self._remeasure.tolerance,
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
        if self._round >= len(self.plan) and not len(self._queue) and self._remeasure.active:
            again = self._remeasure.propose(self.history)
            if again is not None:  # one at a time: the next choice needs this result
                self.preferred_batch = 1
                return [again]
            log.info("%s: re-measuring ends (%s)", self.name, self._remeasure.stopped_because)
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
        if not self.n_members or self.full_model:
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
        """The trained comparator plus ``n_members`` bootstrap members (or the members alone
        when they replace it, ``full_model`` False)."""
        if self._members_ready is not None:
            members, self._members_ready = self._members_ready, None
            return members
        if not self.n_members:
            return [model]
        return [model, *self._fit_members(points, scores)]

    def _fit_members(self, points: np.ndarray, scores: np.ndarray) -> list[Any]:
        factory: Any = self.comparator.factory
        takes_trees = self.comparator.classifier in ("xgboost", "random_forest")
        if self.member_estimators and takes_trees:
            # Cheaper members keep the ensemble's cost near one comparator's fit.
            factory = functools.partial(factory, n_estimators=self.member_estimators)
        return fit_members(
            factory,
            points,
            scores,
            self.n_members,
            self.rng,
            self.comparator.induction,
            self.comparator.bits,
            self.comparator.ties,
            self.member_pairs,
            self.pair_margin,
        )

    def _step_scale(self, scores: np.ndarray) -> bool:
        """Adapt the local step to whether the last round improved the best (trust region)."""
        best_now = float(scores.max())
        success = improved(best_now, self._best_before)
        if self.trust_region and self._best_before is not None:
            self._scale = update_scale(
                self._scale,
                success,
                self.scale_grow,
                self.scale_shrink,
                self.scale_min,
                self.scale_max,
            )
        self._best_before = best_now
        return success

    def _resample(
        self, entry: dict[str, Any], model: Any, points: np.ndarray, scores: np.ndarray, size: int
    ) -> np.ndarray:
        started = time.perf_counter()
        success = self._step_scale(scores)
        members = self._members(model, points, scores)
        failed = np.array([not o.ok for o in self.history], dtype=bool)

        def fail_prob(candidates: np.ndarray) -> np.ndarray:
            return failure_probability(
                self.failure_model, candidates, points, failed, self.rng, self.failure_k
            )

        batch, info = ranked_batch(
            members if len(members) > 1 else model,
            points,
            scores,
            size,
            self.space,
            self.rng,
            self.n_candidates,
            round(self.local_factor * self.n_candidates),
            self.n_elite,
            self.opponents,
            self._scale,
            self.local_dims,
            self.comparator.induction,
            self.comparator.bits,
            self.global_share,
            acquisition=self.acquisition,
            kappa=self.kappa,
            levels=self.levels if self.levels.any() else None,
            fail_prob=fail_prob if self.failure_model != "off" else None,
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
