"""BestConfig (Zhu et al., SoCC 2017): divide-and-diverge sampling (DDS) + recursive
bound-and-search (RBS), reimplemented from the paper's description ("BestConfig: Tapping the
Performance Potential of Systems via Automatic Configuration Tuning", SoCC 2017).

The search runs in rounds of ``m`` tests. The first round is a DDS design over the whole space
plus the default configuration; after each round the best successful point of *that round* is
compared with the best so far. If it is better, the search box is bounded around it by its nearest
neighbours of the round (:func:`bound`) and the next round samples that box; otherwise a restart
is counted and the next round samples the whole space again.

Deviations from the reference implementation, and why:

* **Budget stop.** The reference has no test counter and stops after ``R`` restarts. The harness
  compares tuners at a fixed budget, so the budget (the default configuration included) is a hard
  stop: the last round is shortened to fit. If the ``R`` restarts are used up while budget is left,
  the search keeps going with further whole-space rounds instead of leaving tests unused (a
  session always spends its budget); ``params()`` and ``restarts`` show how many happened.
* **Fresh permutations per round.** The reference reuses the first design's cell permutation for
  every later round (only rescaled into the new box). Here every round draws new candidate
  designs, so successive rounds in the same box do not repeat one pattern.
* **Encoded space.** Sampling and bounding happen in the harness's encoded [0, 1]^d
  (:class:`harness.space.Space`), not in raw knob units: log-scaled knobs are sampled on a log
  scale (the reference has no log scale), integer knobs get equal-width cells per value (the
  reference truncates a real value, which is the same for wide ranges), and enum/bool knobs take
  equal shares of [0, 1] (as the reference encodes enumerations as numeric ranges). Bounding uses
  the sampled coordinates, not the snapped ones, so points that decode to the same enum value
  still order strictly and the box keeps a positive width.
* **Failures.** As in the reference, failed tests are dropped: they neither win a round nor bound
  a box. A round without any success counts as a restart.
* **Number of candidate designs** ``K``: the reference uses ``min(R, m^(d-1))``; that stays the
  default, and ``designs`` can raise it (a stronger maximin choice at negligible cost).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from harness.records import Observation
from harness.space import Space
from harness.tuner import Tuner

__all__ = ["BestConfigTuner", "bound", "choose_maximin", "dds", "min_pairwise_sq_distance"]

log = logging.getLogger(__name__)


def min_pairwise_sq_distance(cells: np.ndarray) -> float:
    """Smallest squared Euclidean distance between two rows of ``cells`` (inf for < 2 rows)."""
    if len(cells) < 2:
        return float("inf")
    diff = cells[:, None, :] - cells[None, :, :]
    dist = np.einsum("ijk,ijk->ij", diff, diff).astype(float)
    dist[np.diag_indices(len(cells))] = np.inf
    return float(dist.min())


def choose_maximin(designs: Sequence[np.ndarray]) -> int:
    """Index of the design whose smallest pairwise distance is largest (first on ties)."""
    scores = [min_pairwise_sq_distance(d) for d in designs]
    return int(np.argmax(scores))


def dds(
    m: int, low: np.ndarray, high: np.ndarray, rng: np.random.Generator, designs: int
) -> np.ndarray:
    """Divide-and-diverge sampling: ``m`` points in the box ``[low, high]``.

    Every dimension is split into ``m`` equal cells; ``designs`` candidate Latin-hypercube
    assignments of cells are drawn (dimension 0 in identity order, the others randomly
    permuted), and the one whose smallest pairwise distance in cell-index space is largest
    (maximin) is kept. Each point lies uniformly at random inside its cell, so every dimension
    has exactly one point per cell.
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    dim = low.shape[0]
    if m <= 0:
        return np.empty((0, dim))
    candidates = []
    for _ in range(max(int(designs), 1)):
        cells = np.empty((m, dim), dtype=int)
        cells[:, 0] = np.arange(m)
        for j in range(1, dim):
            cells[:, j] = rng.permutation(m)
        candidates.append(cells)
    best_cells = candidates[choose_maximin(candidates)]
    width = (high - low) / m
    return low + (best_cells + rng.random((m, dim))) * width


def bound(
    best: np.ndarray, others: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The RBS box around ``best``: per dimension, the nearest other value below and above.

    A side with no other point strictly below (above) keeps the current bound; the result is
    clipped to the current box ``[low, high]``.
    """
    best = np.asarray(best, dtype=float)
    others = np.asarray(others, dtype=float).reshape(-1, best.shape[0])
    new_low, new_high = np.array(low, dtype=float), np.array(high, dtype=float)
    for i in range(best.shape[0]):
        column = others[:, i]
        below, above = column[column < best[i]], column[column > best[i]]
        if below.size:
            new_low[i] = below.max()
        if above.size:
            new_high[i] = above.min()
    new_low = np.clip(new_low, low, high)
    new_high = np.clip(new_high, low, high)
    return new_low, new_high


@dataclass
class _Round:
    """One RBS round: its points (sampled coordinates), how many were handed out, results."""

    points: np.ndarray
    handed: int = 0
    told: dict[int, float | None] = field(default_factory=dict)  # slot -> score (None: failed)

    @property
    def complete(self) -> bool:
        return self.handed == len(self.points) and len(self.told) == self.handed


class BestConfigTuner(Tuner):
    """DDS + RBS search in rounds of ``m`` tests with up to ``R`` restarts (then the budget)."""

    name = "bestconfig"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        budget: int = 100,
        m: int = 20,
        R: int = 5,
        designs: int | None = None,
    ) -> None:
        super().__init__(space, seed, budget)
        if m < 2:
            raise ValueError(f"bestconfig: m (tests per round) must be >= 2, got {m}")
        if R < 1:
            raise ValueError(f"bestconfig: R (restarts) must be >= 1, got {R}")
        self.m, self.R = int(m), int(R)
        self.designs = int(designs) if designs else min(self.R, self.m ** (space.dim - 1))
        self.low, self.high = np.zeros(space.dim), np.ones(space.dim)
        self.best_score = -np.inf
        self.restarts = 0
        self.rounds_done = 0
        self._round: _Round | None = None
        self._slot: dict[int, int] = {}  # trial number -> index in the current round
        # The default (trial 0) belongs to the first round: (encoded point, score or None).
        self._default: tuple[np.ndarray, float | None] | None = None
        # The first ask hands out the default plus the first DDS round.
        self.preferred_batch = min(self.m + 1, budget)

    def params(self) -> dict[str, object]:
        return {**super().params(), "m": self.m, "R": self.R, "designs": self.designs}

    # -- proposing ------------------------------------------------------------------------
    def _propose(self, n: int) -> np.ndarray:
        # The base class numbers trials in ask order; trial 0 (the default) precedes us.
        trial = max(self._asked, 1)
        n = min(n, self.budget - trial)  # hard stop at the budget
        out: list[np.ndarray] = []
        while n > 0:
            rnd = self._round
            if rnd is None:
                rnd = self._round = _Round(
                    dds(
                        min(self.m, self.budget - trial),
                        self.low,
                        self.high,
                        self.rng,
                        self.designs,
                    )
                )
            elif rnd.handed == len(rnd.points):
                # Asked again before the round was told: enlarge the round in the same box.
                rnd.points = np.vstack(
                    [rnd.points, dds(n, self.low, self.high, self.rng, self.designs)]
                )
            take = min(n, len(rnd.points) - rnd.handed)
            for k in range(take):
                self._slot[trial + k] = rnd.handed + k
            out.append(rnd.points[rnd.handed : rnd.handed + take])
            rnd.handed += take
            trial += take
            n -= take
        self.preferred_batch = max(min(self.m, self.budget - trial), 1)
        return np.vstack(out) if out else np.empty((0, self.space.dim))

    # -- observing ------------------------------------------------------------------------
    def _observe(self, obs: Observation) -> None:
        score = obs.score if obs.ok else None
        if obs.trial == 0:
            self._default = (self.space.encode(obs.config), score)
        else:
            slot = self._slot.pop(obs.trial, None)
            if slot is None or self._round is None:
                log.debug("bestconfig: trial %d is not part of the current round", obs.trial)
                return
            self._round.told[slot] = score
        rnd = self._round
        first_ready = self.rounds_done > 0 or self._default is not None
        if rnd is not None and rnd.complete and first_ready:
            self._finish_round(rnd)

    def _finish_round(self, rnd: _Round) -> None:
        points = [rnd.points[slot] for slot, s in sorted(rnd.told.items()) if s is not None]
        scores = [s for _, s in sorted(rnd.told.items()) if s is not None]
        if self.rounds_done == 0 and self._default is not None and self._default[1] is not None:
            points.append(self._default[0])
            scores.append(self._default[1])
        self._round = None
        self.rounds_done += 1
        if scores and max(scores) > self.best_score:
            k = int(np.argmax(scores))
            self.best_score = scores[k]
            others = np.delete(np.array(points), k, axis=0)
            self.low, self.high = bound(points[k], others, self.low, self.high)
            log.debug(
                "bestconfig round %d: new best %.4g, box volume %.3g",
                self.rounds_done,
                self.best_score,
                float(np.prod(self.high - self.low)),
            )
        else:
            self.restarts += 1
            if self.restarts == self.R:
                log.info(
                    "bestconfig: %d restarts used; whole-space rounds continue until the "
                    "budget is spent",
                    self.R,
                )
            self.low, self.high = np.zeros(self.space.dim), np.ones(self.space.dim)

    def summary(self) -> dict[str, object]:
        """Search statistics for reports: rounds, restarts, the current box."""
        return {
            "rounds": self.rounds_done,
            "restarts": self.restarts,
            "box_low": self.low.tolist(),
            "box_high": self.high.tolist(),
        }
