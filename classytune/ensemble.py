"""Uncertainty for the ranked mode: bootstrap ensembles of comparators and batch acquisition.

One comparator says how likely a candidate is to win, not how sure it is. An ensemble of
comparators, each trained on the induced pairs of a bootstrap resample of the *samples*
(:func:`fit_members`), disagrees where the data are thin. The round's batch then uses that
spread (:func:`acquisition_orders`):

* ``mean``: rank by the members' mean win probability (pure exploitation, the old behaviour
  with one member);
* ``ucb``: rank by mean + ``kappa`` × standard deviation (optimism under uncertainty);
* ``thompson``: each slot of the batch ranks by one member, the members taken in a random
  order (cycled when the batch is larger than the ensemble), which spreads a batch over the
  members' different favourites.

Resampling samples (not pairs) matters: a pair subset still contains every sample, so its
members would agree almost everywhere; a sample bootstrap leaves about a third of the
settings out of each member.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from classytune.classifiers import ClassifierFactory
from classytune.induction import induce_all_pairs
from classytune.margin import margin_pairs

__all__ = ["ACQUISITIONS", "acquisition_orders", "bootstrap_indices", "fit_members"]

ACQUISITIONS = ("mean", "ucb", "thompson")


def bootstrap_indices(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` sample indices drawn with replacement, sorted (a duplicate's pairs with itself
    tie and are skipped, so duplicates only weigh their pairs with other samples)."""
    return np.sort(rng.integers(n, size=n))


def fit_members(
    factory: ClassifierFactory,
    points: np.ndarray,
    scores: np.ndarray,
    n_members: int,
    rng: np.random.Generator,
    induction: str = "zorder",
    bits: int = 26,
    ties: str = "skip",
    max_pairs: int | None = None,
    margin: float = 0.0,
) -> list[Any]:
    """Up to ``n_members`` comparators, each fitted on the induced pairs of a bootstrap
    resample of (``points``, ``scores``), at most ``max_pairs`` pairs each (near-ties within
    a relative ``margin`` skipped, :mod:`classytune.margin`); a resample with a single label
    is skipped (so the list may be shorter)."""
    members: list[Any] = []
    for _ in range(max(n_members, 0)):
        idx = bootstrap_indices(len(points), rng)
        if margin > 0:
            rows, labels = margin_pairs(points[idx], scores[idx], margin, induction, bits)
        else:
            rows, labels = induce_all_pairs(points[idx], scores[idx], induction, bits, ties)
        if max_pairs is not None and len(labels) > max_pairs:
            keep = np.sort(rng.choice(len(labels), max_pairs, replace=False))
            rows, labels = rows[keep], labels[keep]
        seed = int(rng.integers(2**31 - 1))
        if len(np.unique(labels)) < 2:
            continue
        model = factory(seed=seed)
        model.fit(rows, labels)
        members.append(model)
    return members


def acquisition_orders(
    member_scores: np.ndarray,
    m: int,
    acquisition: str,
    rng: np.random.Generator,
    kappa: float = 1.0,
) -> tuple[list[np.ndarray], list[int]]:
    """Candidate orders (best first) and, per batch slot, which order the slot takes from.

    ``member_scores`` has one row per member, one column per candidate. ``mean`` and ``ucb``
    give one order for every slot; ``thompson`` one order per member and the slots' members
    in a random permutation, cycled. Ties keep the candidates' order."""
    if acquisition not in ACQUISITIONS:
        raise ValueError(f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r}")
    rows = np.atleast_2d(np.asarray(member_scores, dtype=float))
    if acquisition == "thompson" and len(rows) > 1:
        orders = [np.argsort(-row, kind="stable") for row in rows]
        cycle = rng.permutation(len(rows))
        return orders, [int(cycle[i % len(rows)]) for i in range(max(m, 0))]
    value = rows.mean(axis=0)
    if acquisition == "ucb":
        value = value + kappa * rows.std(axis=0)
    return [np.argsort(-value, kind="stable")], [0] * max(m, 0)
