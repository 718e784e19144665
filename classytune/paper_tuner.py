"""ClassyTune as the paper describes it (Zhu & Liu, TCC 2019, Algorithm 1).

After the initial LHS sample, each round trains the shared comparator
(:mod:`classytune.comparator`), searches with it (:func:`~classytune.search.
find_subspaces`: an LHS set S, snapped to the knobs' cells, is compared with the pivot, the
predicted winners are clustered by KMeans with an elbow k, each centre is bounded by the
measured settings) and hands out an LHS batch inside those promising subspaces. ``rounds=1`` is
the paper's one-shot ("integral") mode and the class default; ``rounds>1``, ``include_pivot``,
``centre: best`` and ``max_winners`` are this project's extensions, for experiments.

Defaults, chosen with ``python -m paper.compare_classytune`` on the synthetic systems (10 and 30
knobs, budget 100, seeds 0-9; one factor at a time around the paper mode, table in
``results/classytune/sweep_synthetic.md``, reasoning in ``classytune/README.md``):
``initial_fraction=0.5`` (0.3 and 0.7 were worse on both systems), ``s_factor=100``, i.e.
|S| = 100·d (10 and 300 were worse on both), ``k_max=5``. The readings of the paper's text
(``bounds``, ``elbow``, ``ties``, ``answer``) were measured with
``scripts/paper_readings.py`` on the development seeds 100-104
(``results/classytune/paper_readings.md``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from classytune.base import ClassyTuneBase
from classytune.classifiers import ClassifierFactory
from classytune.induction import DEFAULT_BITS
from classytune.ranked import snap_points
from classytune.search import BOUNDS, ELBOWS, SearchResult, cell_counts, find_subspaces
from harness.errors import ConfigError
from harness.records import Observation
from harness.space import Space

__all__ = ["ClassyTunePaper"]

log = logging.getLogger(__name__)

#: ``all_tests``: the best of every test (the harness's report); ``algorithm``: what Algorithm 1
#: returns, the best of the resampled tests only (``X_candidates``, lines 10-14).
ANSWERS = ("all_tests", "algorithm")


class ClassyTunePaper(ClassyTuneBase):
    """The paper's Algorithm 1: winners of the comparator → KMeans → subspaces → LHS in them.

    Parameters (besides those of :class:`~classytune.base.ClassyTuneBase`):
        k_max: largest number of clusters the elbow criterion may choose.
        max_winners: keep only the most confident winners (None: all, as in the paper).
        centre: ``mean`` (KMeans centres, the paper) or ``best`` (each cluster's most
            confident winner).
        include_pivot: also resample the subspace around the pivot (not in the paper).
        dedupe: redraw resampled points that snap onto an already measured setting.
        bounds: ``nearest_setting`` (the box reaches to the measured setting nearest to the
            centre) or ``per_dimension`` (the nearest measured values below and above, per
            dimension): :mod:`classytune.search`.
        elbow: ``knee`` (the chord knee of the inertia curve) or ``gap`` (the knee, kept only
            if the winners cluster more than as many uniform points would; else k = 1).
        answer: what :meth:`answer` returns: ``all_tests`` (the best measured setting, as
            :meth:`best`) or ``algorithm`` (Algorithm 1's output: the best resampled test).

    The candidate set S is always snapped to the knobs' int/enum/bool cells before it is
    compared (a fix, not an option: a measured setting always sits at a cell centre).

    :attr:`searches` keeps every round's :class:`~classytune.search.SearchResult`
    (``paper.figures.tuners.SubspaceRecordingClassyTune`` saves them for Fig. 8).
    """

    name = "classytune_paper"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        budget: int = 100,
        initial_fraction: float = 0.5,
        n_initial: int | None = None,
        rounds: int = 1,
        s_factor: float = 100.0,
        n_candidates: int | None = None,
        induction: str = "zorder",
        bits: int = DEFAULT_BITS,
        classifier: str | ClassifierFactory = "xgboost",
        ties: str = "zero",
        rules: Sequence[Mapping[str, Any]] | None = None,
        rule_samples: int = 100,
        max_pairs: int | None = None,
        k_max: int = 5,
        max_winners: int | None = None,
        centre: str = "mean",
        include_pivot: bool = False,
        dedupe: bool = True,
        bounds: str = "nearest_setting",
        elbow: str = "knee",
        answer: str = "all_tests",
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
        if k_max < 1:
            raise ConfigError(f"k_max must be >= 1, got {k_max}")
        if centre not in ("mean", "best"):
            raise ConfigError(f"centre must be 'mean' (paper) or 'best', got {centre!r}")
        for key, value, allowed in (
            ("bounds", bounds, BOUNDS),
            ("elbow", elbow, ELBOWS),
            ("answer", answer, ANSWERS),
        ):
            if value not in allowed:
                raise ConfigError(f"{key} must be one of {', '.join(allowed)}, got {value!r}")
        self.k_max = int(k_max)
        self.max_winners = int(max_winners) if max_winners else None
        self.centre = centre
        self.include_pivot = bool(include_pivot)
        self.dedupe = bool(dedupe)
        self.bounds, self.elbow, self.answer_mode = bounds, elbow, answer
        self.cells = cell_counts(space)
        self.searches: list[SearchResult] = []

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "k_max": self.k_max,
            "max_winners": self.max_winners or 0,
            "centre": self.centre,
            "include_pivot": self.include_pivot,
            "dedupe": self.dedupe,
            "bounds": self.bounds,
            "elbow": self.elbow,
            "answer": self.answer_mode,
        }

    def answer(self) -> Observation | None:
        """``answer: algorithm``: the best successful test of the resampling rounds (trials from
        ``n_initial`` on), what Algorithm 1 returns (with ``rounds > 1``: of all its batches);
        the best of all tests while none exists. ``all_tests``: :meth:`best`."""
        resampled = [o for o in self.history if o.ok and o.trial >= self.plan[0]]
        if self.answer_mode == "all_tests" or not resampled:
            return self.best()
        return max(resampled, key=lambda o: (o.score, -o.trial))

    def _resample(
        self, entry: dict[str, Any], model: Any, points: np.ndarray, scores: np.ndarray, size: int
    ) -> np.ndarray:
        result = find_subspaces(
            model,
            points,
            scores,
            self.n_candidates,
            self.k_max,
            self.rng,
            int(self.rng.integers(2**31 - 1)),
            self.comparator.induction,
            self.comparator.bits,
            self.max_winners,
            self.centre,
            self.include_pivot,
            snap=lambda candidates: snap_points(self.space, candidates),
            cells=self.cells,
            bounds=self.bounds,
            elbow=self.elbow,
        )
        self.searches.append(result)
        started = time.perf_counter()
        batch = self._sample(result, size, points)
        entry.update(
            search_s=result.seconds + time.perf_counter() - started,
            n_candidates=result.n_candidates,
            n_winners=result.n_winners,
            k=result.k,
            knee=result.knee,
            fallback="pivot_subspace" if result.fallback else "",
            pivot_score=float(scores.max()),
            box_width=float(np.mean(result.highs - result.lows)),
        )
        self.round_log.append(entry)
        log.info(
            "%s round %d: %d pairs, %d/%d winners, k=%d, train %.2fs search %.2fs",
            self.name,
            entry["round"],
            entry["n_pairs"],
            result.n_winners,
            result.n_candidates,
            result.k,
            entry["train_s"],
            entry["search_s"],
        )
        return batch

    def _sample(self, result: SearchResult, size: int, evaluated: np.ndarray) -> np.ndarray:
        """LHS in the subspaces; with ``dedupe``, points that snap onto a measured setting (or
        onto each other) are redrawn uniformly in their box, up to 5 times."""
        batch, boxes = result.sample(size, self.rng)
        if not self.dedupe or not len(batch):
            return batch
        seen = {tuple(p) for p in np.round(evaluated, 12)}
        for _ in range(5):
            snapped = np.round(self.space.snap(batch), 12)
            dup, mine = [], set(seen)
            for i, row in enumerate(map(tuple, snapped)):
                if row in mine:
                    dup.append(i)
                mine.add(row)
            if not dup:
                break
            lo, hi = result.lows[boxes[dup]], result.highs[boxes[dup]]
            batch[dup] = lo + self.rng.random(lo.shape) * (hi - lo)
        return batch
