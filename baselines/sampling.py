"""The simplest baselines: Latin hypercube and uniform random sampling of the whole budget."""

from __future__ import annotations

import numpy as np

from harness.sampling import uniform
from harness.space import Space
from harness.tuner import Tuner

__all__ = ["LHSTuner", "RandomTuner"]


class LHSTuner(Tuner):
    """One Latin-hypercube design over the whole budget (after the default), handed out in order.

    Drawing the design up front keeps the Latin property over all ``budget - 1`` tests, which
    drawing small batches would lose.
    """

    name = "lhs"

    def __init__(self, space: Space, seed: int = 0, budget: int = 100) -> None:
        super().__init__(space, seed, budget)
        self._design = self.lhs(max(budget - 1, 1))
        self._next = 0
        self.preferred_batch = max(budget - 1, 1)

    def _propose(self, n: int) -> np.ndarray:
        if self._next + n > len(self._design):  # asked beyond the budget: extend, stay valid
            self._design = np.vstack([self._design, self.lhs(max(n, 1))])
        points = self._design[self._next : self._next + n]
        self._next += n
        return points


class RandomTuner(Tuner):
    """Independent uniform samples of [0, 1]^d."""

    name = "random"

    def __init__(self, space: Space, seed: int = 0, budget: int = 100) -> None:
        super().__init__(space, seed, budget)
        self.preferred_batch = max(budget - 1, 1)

    def _propose(self, n: int) -> np.ndarray:
        return uniform(n, self.space.dim, self.rng)
