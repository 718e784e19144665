"""An adaptive trust region for the ranked mode's local candidates (TuRBO-like, bounded).

The local candidates perturb the elites by Gaussian steps of width ``scale``. A fixed width is
a guess: too wide near an optimum (the perturbations leave the good basin), too narrow far from
one (the search creeps). As in TuRBO (Eriksson et al., NeurIPS 2019), the width grows after a
round that improved the best measured score and shrinks after one that did not. TuRBO waits
for streaks of successes or failures; a ClassyTune session has only ~6 rounds, so every round
counts as its own streak here. The width stays within [``low``, ``high``].
"""

from __future__ import annotations

__all__ = ["improved", "update_scale"]


def improved(best_now: float, best_before: float | None, rel: float = 1e-9) -> bool:
    """Whether ``best_now`` beats ``best_before`` by more than ``rel`` of its magnitude (float
    noise in recomputed scores must not count); ``None`` (no earlier round) is no improvement."""
    if best_before is None:
        return False
    return best_now > best_before + rel * max(abs(best_before), 1e-12)


def update_scale(
    scale: float, success: bool, grow: float, shrink: float, low: float, high: float
) -> float:
    """The next width: ``scale * grow`` after a success, ``scale * shrink`` otherwise, clipped
    to [``low``, ``high``]."""
    return float(min(max(scale * (grow if success else shrink), low), high))
