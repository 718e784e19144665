"""ClassyTune's ranked mode (this project's best mode, the default tuner; not in the paper).

The paper's comparator is kept (:mod:`classytune.comparator`: z-order induced pairs,
XGBoost), but each round spends its tests on the candidates the comparator ranks highest
(:func:`classytune.ranked.ranked_batch`): an LHS set of ``s_factor`` × d plus
``local_factor`` times as many perturbations of the ``n_elite`` best measured settings, scored
by their mean win probability against the ``opponents`` best measured settings, a
``global_share`` of each round taken from the LHS set alone.

The class defaults are ``conf/tuner/classytune.yaml``'s, chosen on a development split (seeds
100-104, never the benchmark's): ``results/classytune/improve.md``.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from classytune.base import ClassyTuneBase
from classytune.classifiers import ClassifierFactory, xgboost
from classytune.induction import DEFAULT_BITS
from classytune.ranked import ranked_batch
from harness.errors import ConfigError
from harness.space import Space

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

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "local_factor": self.local_factor,
            "n_elite": self.n_elite,
            "local_scale": self.local_scale,
            "local_dims": self.local_dims,
            "opponents": self.opponents,
            "global_share": self.global_share,
        }

    def _resample(
        self, entry: dict[str, Any], model: Any, points: np.ndarray, scores: np.ndarray, size: int
    ) -> np.ndarray:
        started = time.perf_counter()
        batch, info = ranked_batch(
            model,
            points,
            scores,
            size,
            self.space,
            self.rng,
            self.n_candidates,
            round(self.local_factor * self.n_candidates),
            self.n_elite,
            self.opponents,
            self.local_scale,
            self.local_dims,
            self.comparator.induction,
            self.comparator.bits,
            self.global_share,
        )
        entry.update(
            search_s=time.perf_counter() - started,
            k=0,
            n_winners=0,
            fallback="",
            pivot_score=float(scores.max()),
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
