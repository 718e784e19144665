"""The ClassyTune tuner: LHS sample → comparison classifier → search → resample, in rounds.

Round 0 is the initial Latin-hypercube sample (``n_initial`` tests, the default configuration
included). Every later round retrains the comparator on *all* samples so far (every ordered
pair, :mod:`tuners.classytune.induction`), plus experience-rule pairs if any
(:mod:`tuners.classytune.rules`), searches with it (:mod:`tuners.classytune.search`) and hands
out an LHS batch inside the promising subspaces. ``rounds=1`` is the paper's one-shot
("integral") mode; ``rounds>1`` is this project's iterative extension. The answer is always
the best *measured* setting (:meth:`harness.tuner.Tuner.best`).

Failures: comparisons use :meth:`harness.tuner.Tuner.scores`, which imputes a failed, crashed,
timed-out or infeasible test below the worst success, so a failed setting loses every
comparison with a success (two failures tie and their pairs are skipped, see ``ties``).

Defaults, chosen with ``scripts/compare_classytune.py`` on the synthetic systems (10 and 30
knobs, budget 100, seeds 0-9; one factor at a time around the paper mode, table in
``results/classytune/sweep_synthetic.md``, reasoning in ``tuners/classytune/README.md``):
``initial_fraction=0.5`` (0.3 and 0.7 were worse on both systems), ``s_factor=100``, i.e.
|S| = 100·d (10 and 300 were worse on both), ``k_max=5``. The class defaults are the paper's
one-shot mode; the project's best mode (``conf/tuner/classytune.yaml``) adds ``rounds=5`` and
``include_pivot=True``, which beat one-shot on both systems.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import ConfigError
from harness.space import Space
from harness.tuner import Tuner
from tuners.classytune.classifiers import CLASSIFIERS, make_classifier
from tuners.classytune.induction import DEFAULT_BITS, induce, induce_all_pairs, induced_dim
from tuners.classytune.ranked import ranked_batch
from tuners.classytune.rules import Rule, parse_rules, rule_pairs
from tuners.classytune.search import SearchResult, find_subspaces

__all__ = ["ClassyTuneTuner", "round_sizes"]

log = logging.getLogger(__name__)


def round_sizes(budget: int, n_initial: int, rounds: int) -> list[int]:
    """Tests per round: ``[n_initial, r_1, ..., r_R]``; the resampling budget is split evenly,
    the remainder going to the earliest rounds; rounds that would get no test are dropped."""
    rest = max(budget - n_initial, 0)
    rounds = max(1, min(rounds, rest)) if rest else 0
    return [n_initial] + [rest // rounds + (1 if i < rest % rounds else 0) for i in range(rounds)]


class ClassyTuneTuner(Tuner):
    """Classification-based tuning (Zhu & Liu, TCC 2019), one-shot or iterative.

    Parameters (besides ``space``, ``seed``, ``budget``):
        initial_fraction: share of the budget spent on the initial LHS sample (default included);
            ignored when ``n_initial`` is given.
        n_initial: initial sample size, default configuration included (>= 2).
        rounds: train → search → resample rounds after the initial sample (1 = the paper).
        s_factor: |S| = ``s_factor`` × d candidates compared with the pivot per round;
            ignored when ``n_candidates`` is given.
        n_candidates: fixed |S|.
        k_max: largest number of clusters the elbow criterion may choose.
        induction: ``zorder`` (the paper), ``difference`` or ``concat`` (Fig. 9 ablation).
        bits: bits per value for the z-order induction (<= 26 keeps it exact in float64).
        classifier: one of :data:`tuners.classytune.classifiers.CLASSIFIERS`.
        classifier_options: keyword overrides of the classifier's defaults, flat or keyed by
            classifier name (``{xgboost: {n_estimators: 100}}``; other classifiers get none).
        ties: ``skip`` pairs with equal scores (default) or label them ``zero``.
        rules: experience rules (see :mod:`tuners.classytune.rules`); off when empty.
        rule_samples: base settings drawn per rule (each gives up to two rows).
        dedupe: redraw resampled points that snap onto an already measured setting.
        max_winners: keep only the most confident winners (None: all, as in the paper).
        centre: ``mean`` (KMeans centres, the paper) or ``best`` (each cluster's most
            confident winner).
        include_pivot: also resample the subspace around the pivot (not in the paper).
        strategy: ``subspaces`` (the paper: LHS inside the winners' subspaces) or ``ranked``
            (the comparator ranks candidates and the best ones are tested,
            :mod:`tuners.classytune.ranked`; not in the paper).
        local_factor: ranked only: ``local_factor`` × |S| extra candidates perturbing the
            ``n_elite`` best measured settings (``local_dims`` knobs on average moved by a
            Gaussian step of width ``local_scale``).
        opponents: ranked only: candidates are scored by their mean win probability against
            this many best measured settings (1 = the pivot alone).
        global_share: ranked only: this share of each round's tests goes to the best-ranked
            LHS candidates, the rest to the best-ranked of all (exploration).
        max_pairs: train on a random subset of at most this many ordered pairs (None: all).
    """

    name = "classytune"

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
        k_max: int = 5,
        induction: str = "zorder",
        bits: int = DEFAULT_BITS,
        classifier: str = "xgboost",
        classifier_options: Mapping[str, Any] | None = None,
        ties: str = "skip",
        rules: Sequence[Mapping[str, Any]] | None = None,
        rule_samples: int = 100,
        dedupe: bool = True,
        max_winners: int | None = None,
        centre: str = "mean",
        include_pivot: bool = False,
        strategy: str = "subspaces",
        local_factor: float = 0.0,
        n_elite: int = 5,
        opponents: int = 1,
        local_scale: float = 0.1,
        local_dims: float = 3.0,
        max_pairs: int | None = None,
        global_share: float = 0.0,
    ) -> None:
        super().__init__(space, seed, budget)
        if classifier not in CLASSIFIERS:
            raise ConfigError(
                f"unknown classifier {classifier!r}; choose {', '.join(CLASSIFIERS)}"
            )
        try:
            induced_dim(induction, space.dim)
            induce(np.zeros((1, 1)), np.zeros((1, 1)), induction, bits)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if ties not in ("skip", "zero"):
            raise ConfigError(f"ties must be 'skip' or 'zero', got {ties!r}")
        if n_initial is None:
            if not 0.0 < initial_fraction <= 1.0:
                raise ConfigError(f"initial_fraction must be in (0, 1], got {initial_fraction}")
            n_initial = round(initial_fraction * budget)
        if rounds < 1 or k_max < 1:
            raise ConfigError("rounds and k_max must be >= 1")
        self.initial_fraction = float(initial_fraction)
        self.n_initial = max(2, min(int(n_initial), budget))
        self.rounds = int(rounds)
        self.s_factor = float(s_factor)
        self.n_candidates = (
            int(n_candidates) if n_candidates else max(1, round(self.s_factor * space.dim))
        )
        self.k_max = int(k_max)
        self.induction, self.bits, self.ties = induction, int(bits), ties
        self.classifier = classifier
        self.classifier_options = _options_for(classifier, classifier_options)
        try:  # a bad name or option fails now, in one line, not in the first training round
            make_classifier(self.classifier, seed, **self.classifier_options)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"classifier {classifier!r} with options {self.classifier_options}: {exc}"
            ) from None
        self.rules: list[Rule] = parse_rules(rules, space)
        self.rule_samples = int(rule_samples)
        self.dedupe = bool(dedupe)
        if centre not in ("mean", "best"):
            raise ConfigError(f"centre must be 'mean' (paper) or 'best', got {centre!r}")
        self.max_winners = int(max_winners) if max_winners else None
        self.centre = centre
        self.include_pivot = bool(include_pivot)
        if strategy not in ("subspaces", "ranked"):
            raise ConfigError(
                f"strategy must be 'subspaces' (paper) or 'ranked', got {strategy!r}"
            )
        if opponents < 1 or n_elite < 1 or local_factor < 0 or local_scale <= 0:
            raise ConfigError(
                "opponents and n_elite must be >= 1, local_factor >= 0 and local_scale > 0"
            )
        self.strategy = strategy
        self.local_factor, self.n_elite, self.opponents = (
            float(local_factor),
            int(n_elite),
            int(opponents),
        )
        self.local_scale, self.local_dims = float(local_scale), float(local_dims)
        self.max_pairs = int(max_pairs) if max_pairs else None
        if not 0.0 <= global_share <= 1.0:
            raise ConfigError(f"global_share must be in [0, 1], got {global_share}")
        self.global_share = float(global_share)
        self.plan = round_sizes(budget, self.n_initial, self.rounds)
        self.model: Any = None
        self.round_log: list[dict[str, Any]] = []
        self.searches: list[SearchResult] = []
        self._round = 0
        self._queue = np.empty((0, space.dim))
        self.preferred_batch = self.plan[0]

    # -- protocol ---------------------------------------------------------------------------
    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "initial_fraction": self.initial_fraction,
            "n_initial": self.n_initial,
            "rounds": self.rounds,
            "s_factor": self.s_factor,
            "n_candidates": self.n_candidates,
            "k_max": self.k_max,
            "induction": self.induction,
            "bits": self.bits,
            "classifier": self.classifier,
            "classifier_options": json.dumps(self.classifier_options, sort_keys=True),
            "ties": self.ties,
            "rules": json.dumps([r.as_dict() for r in self.rules]),
            "rule_samples": self.rule_samples,
            "dedupe": self.dedupe,
            "max_winners": self.max_winners or 0,
            "centre": self.centre,
            "include_pivot": self.include_pivot,
            "strategy": self.strategy,
            "local_factor": self.local_factor,
            "n_elite": self.n_elite,
            "opponents": self.opponents,
            "local_scale": self.local_scale,
            "local_dims": self.local_dims,
            "max_pairs": self.max_pairs or 0,
            "global_share": self.global_share,
            "plan": json.dumps(self.plan),
        }

    def _propose(self, n: int) -> np.ndarray:
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
        started = time.perf_counter()
        points, scores = self.points(), self.scores()
        rows, labels = induce_all_pairs(points, scores, self.induction, self.bits, self.ties)
        if self.max_pairs is not None and len(labels) > self.max_pairs:
            # Fit time grows with the n(n-1) pairs; a random subset keeps every sample in
            # ~max_pairs/n pairs on average, plenty for the tree ensemble.
            keep = np.sort(self.rng.choice(len(labels), self.max_pairs, replace=False))
            rows, labels = rows[keep], labels[keep]
        n_rule_rows = 0
        if self.rules:
            xa, xb, rule_labels = rule_pairs(self.rules, self.space, self.rule_samples, self.rng)
            n_rule_rows = len(rule_labels)
            rows = np.vstack([rows, induce(xa, xb, self.induction, self.bits)])
            labels = np.concatenate([labels, rule_labels])
        info: dict[str, Any] = {
            "n_samples": len(points),
            "n_pairs": len(labels) - n_rule_rows,
            "n_rule_rows": n_rule_rows,
        }
        if len(np.unique(labels)) < 2:
            info["train_s"] = time.perf_counter() - started
            return None, info
        seed = int(self.rng.integers(2**31 - 1))
        model = make_classifier(self.classifier, seed, **self.classifier_options)
        model.fit(rows, labels)
        info["train_s"] = time.perf_counter() - started
        return model, info

    def _search_round(self, index: int, size: int) -> np.ndarray:
        model, info = self.fit()
        entry: dict[str, Any] = {"round": index, "batch": size, **info}
        if model is None:
            # Nothing to compare (no success, or all scores equal): explore the whole space.
            entry.update(search_s=0.0, fallback="no_comparisons", k=0, n_winners=0)
            self.round_log.append(entry)
            log.info("classytune round %d: no comparisons to learn from, LHS of the space", index)
            return self.lhs(size)
        self.model = model
        points, scores = self.points(), self.scores()
        if self.strategy == "ranked":
            return self._ranked_round(entry, model, points, scores, size)
        result = find_subspaces(
            model,
            points,
            scores,
            self.n_candidates,
            self.k_max,
            self.rng,
            int(self.rng.integers(2**31 - 1)),
            self.induction,
            self.bits,
            self.max_winners,
            self.centre,
            self.include_pivot,
        )
        self.searches.append(result)
        started = time.perf_counter()
        batch = self._sample(result, size, points)
        entry.update(
            search_s=result.seconds + time.perf_counter() - started,
            n_candidates=result.n_candidates,
            n_winners=result.n_winners,
            k=result.k,
            fallback="pivot_subspace" if result.fallback else "",
            pivot_score=float(scores.max()),
            box_width=float(np.mean(result.highs - result.lows)),
        )
        self.round_log.append(entry)
        log.info(
            "classytune round %d: %d pairs, %d/%d winners, k=%d, train %.2fs search %.2fs",
            index,
            entry["n_pairs"],
            result.n_winners,
            result.n_candidates,
            result.k,
            entry["train_s"],
            entry["search_s"],
        )
        return batch

    def _ranked_round(
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
            self.induction,
            self.bits,
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
            "classytune round %d (ranked): %d pairs, %d of %d chosen local, train %.2fs "
            "search %.2fs",
            entry["round"],
            entry["n_pairs"],
            info["n_local_chosen"],
            size,
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

    # -- model reuse ------------------------------------------------------------------------
    def save_artifacts(self, directory: Path) -> None:
        """Save the classifier (trained now on all samples), the samples and the settings."""
        from tuners.classytune.model_io import save_artifacts

        model = self.model
        if self.history:
            model = self.fit()[0] or model  # the final model sees every measured sample
        save_artifacts(Path(directory), self, model)


def _options_for(classifier: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``classifier_options`` is either flat (for the chosen classifier) or keyed by classifier
    name, so that ``tuner.classifier=decision_tree`` does not inherit XGBoost's settings."""
    options = dict(options or {})
    if options and set(options) <= set(CLASSIFIERS):
        return dict(options.get(classifier) or {})
    return options
