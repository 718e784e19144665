"""The comparator both ClassyTune tuners share: induced pairs → a trained comparison classifier.

:class:`Comparator` holds everything that decides how "is setting a better than b?" is learned:
the induction (:mod:`classytune.induction`), the classifier factory
(:mod:`classytune.classifiers`), how ties are labelled, an optional cap on the number of
training pairs and the experience rules (:mod:`classytune.rules`). Its :meth:`fit`
trains a fresh classifier on every ordered pair of the samples so far. The paper's Algorithm 1
(:class:`~classytune.paper_tuner.ClassyTunePaper`) and the ranked search
(:class:`~classytune.ranked_tuner.ClassyTuneRanked`) differ only in how they use it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from classytune.classifiers import ClassifierFactory, describe, resolve
from classytune.induction import DEFAULT_BITS, induce, induce_all_pairs, induced_dim
from classytune.margin import margin_pairs
from classytune.rules import Rule, parse_rules, rule_pairs
from harness.errors import ConfigError
from harness.space import Space

__all__ = ["Comparator"]


class Comparator:
    """How pairs are induced and the comparison classifier is trained.

    Parameters:
        space: the tuned knob space (for the rules and the induced dimension).
        seed: checks that the classifier can be built (each :meth:`fit` draws its own seed).
        induction: ``zorder`` (the paper), ``difference`` or ``concat`` (Fig. 9 ablation).
        bits: bits per value for the z-order induction (<= 26 keeps it exact in float64).
        classifier: a factory ``(seed) -> classifier`` (a config node with ``_target_`` and
            ``_partial_: true``) or a short name from
            :data:`classytune.classifiers.CLASSIFIERS`.
        ties: ``skip`` pairs with equal scores (default) or label them ``zero`` in both
            orders, which is the paper's Eq. (1) (label 1 iff f(Xa) > f(Xb)) and the paper
            mode's default.
        rules: experience rules (see :mod:`classytune.rules`); off when empty.
        rule_samples: base settings drawn per rule (each gives up to two rows).
        max_pairs: train on a random subset of at most this many ordered pairs (None: all).
    """

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        induction: str = "zorder",
        bits: int = DEFAULT_BITS,
        classifier: str | ClassifierFactory = "xgboost",
        ties: str = "skip",
        rules: Sequence[Mapping[str, Any]] | None = None,
        rule_samples: int = 100,
        max_pairs: int | None = None,
    ) -> None:
        try:
            self.factory = resolve(classifier)
            induced_dim(induction, space.dim)
            induce(np.zeros((1, 1)), np.zeros((1, 1)), induction, bits)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if ties not in ("skip", "zero"):
            raise ConfigError(f"ties must be 'skip' or 'zero', got {ties!r}")
        self.space = space
        self.induction, self.bits, self.ties = induction, int(bits), ties
        self.classifier, self.classifier_options = describe(self.factory)
        try:  # a bad option fails now, in one line, not in the first training round
            self.factory(seed=seed)
        except (TypeError, ValueError) as exc:
            raise ConfigError(
                f"classifier {self.classifier!r} with options {self.classifier_options}: {exc}"
            ) from None
        self.rules: list[Rule] = parse_rules(rules, space)
        self.rule_samples = int(rule_samples)
        self.max_pairs = int(max_pairs) if max_pairs else None

    def params(self) -> dict[str, object]:
        """The settings, flat, for the tuner's ``params()``."""
        return {
            "induction": self.induction,
            "bits": self.bits,
            "classifier": self.classifier,
            "classifier_options": json.dumps(self.classifier_options, sort_keys=True, default=str),
            "ties": self.ties,
            "rules": json.dumps([r.as_dict() for r in self.rules]),
            "rule_samples": self.rule_samples,
            "max_pairs": self.max_pairs or 0,
        }

    def fit(
        self,
        points: np.ndarray,
        scores: np.ndarray,
        rng: np.random.Generator,
        margin: float = 0.0,
        prior: Sequence[tuple[np.ndarray, np.ndarray]] = (),
        prior_pairs: int | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Train a fresh classifier on every ordered pair of ``points`` (and the rules' pairs);
        ``(None, info)`` when there is nothing to learn (fewer than two distinct labels).

        ``prior`` adds earlier sessions' pairs (:meth:`pairs` of each session's samples, made
        within that session only: :mod:`classytune.warm_start`), at most ``prior_pairs`` of
        each, drawn anew every fit.
        ``rng`` draws, in this order, the pair subset (``max_pairs``), the priors' subsets,
        the rules' base settings and the classifier's seed; the tuner passes its own
        generator, so a session is reproducible from its seed."""
        started = time.perf_counter()
        rows, labels = _subset(*self.pairs(points, scores, margin), rng, self.max_pairs)
        n_prior = 0
        for prior_rows, prior_labels in prior:
            more_rows, more = _subset(prior_rows, prior_labels, rng, prior_pairs)
            rows, labels = np.vstack([rows, more_rows]), np.concatenate([labels, more])
            n_prior += len(more)
        n_rule_rows = 0
        if self.rules:
            xa, xb, rule_labels = rule_pairs(self.rules, self.space, self.rule_samples, rng)
            n_rule_rows = len(rule_labels)
            rows = np.vstack([rows, induce(xa, xb, self.induction, self.bits)])
            labels = np.concatenate([labels, rule_labels])
        info: dict[str, Any] = {
            "n_samples": len(points),
            "n_pairs": len(labels) - n_rule_rows - n_prior,
            "n_rule_rows": n_rule_rows,
        }
        if prior:
            info["n_prior_pairs"] = n_prior
        if len(np.unique(labels)) < 2:
            info["train_s"] = time.perf_counter() - started
            return None, info
        model = self.factory(seed=int(rng.integers(2**31 - 1)))
        model.fit(rows, labels)
        info["train_s"] = time.perf_counter() - started
        return model, info

    def pairs(
        self, points: np.ndarray, scores: np.ndarray, margin: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every labelled ordered pair of one set of samples, induced (ties as configured;
        with a ``margin``, near-ties skipped: :mod:`classytune.margin`)."""
        if margin > 0:
            return margin_pairs(points, scores, margin, self.induction, self.bits)
        return induce_all_pairs(points, scores, self.induction, self.bits, self.ties)


def _subset(
    rows: np.ndarray, labels: np.ndarray, rng: np.random.Generator, cap: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """At most ``cap`` of the pairs, drawn at random. Fit time grows with the n(n-1) pairs; a
    random subset keeps every sample in ~cap/n pairs on average, plenty for a tree ensemble."""
    if cap is None or len(labels) <= cap:
        return rows, labels
    keep = np.sort(rng.choice(len(labels), cap, replace=False))
    return rows[keep], labels[keep]
