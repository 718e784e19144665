"""Knob influence (classytune.influence): covered probes, calibration, bands and verdicts."""

from __future__ import annotations

import numpy as np

from classytune.comparator import Comparator
from classytune.influence import Direction, KnobInfluence, covered_probes, influence
from harness.space import Knob, Space


def test_probes_are_measured_values_above_and_below_the_best() -> None:
    points = np.array([[0.1, 0.5], [0.4, 0.5], [0.7, 0.2], [0.9, 0.5], [0.4, 0.8]])
    probes = covered_probes(points, points[1], 0, probes=8)
    assert list(probes["up"]) == [0.7, 0.9] and list(probes["down"]) == [0.1]
    assert len(covered_probes(points, points[1], 1, probes=8)["up"]) == 1  # 0.8 only
    many = np.linspace(0, 1, 101)[:, None]
    assert len(covered_probes(many, many[0], 0, probes=4)["up"]) == 4  # quantiles


def _d(p: float, low: float, high: float) -> Direction:
    return Direction(p, low, high, 3)


def test_a_verdict_needs_a_band_clear_of_even_odds() -> None:
    def verdict(up: Direction | None, down: Direction | None) -> str:
        return KnobInfluence("k", 1, up, down, None).verdict

    assert verdict(_d(0.8, 0.7, 0.9), _d(0.2, 0.1, 0.3)) == "raise"
    assert verdict(None, _d(0.7, 0.6, 0.8)) == "lower"
    assert verdict(_d(0.6, 0.4, 0.8), _d(0.2, 0.1, 0.3)) == "unsure"  # band straddles 1/2
    assert verdict(_d(0.8, 0.7, 0.9), _d(0.8, 0.6, 0.9)) == "unsure"  # both cannot be true
    assert verdict(_d(0.2, 0.1, 0.3), _d(0.3, 0.2, 0.4)) == "keep"
    assert verdict(None, None) == "no data"


def _space() -> Space:
    return Space(tuple(Knob(f"x{i}", "float", 0.5, low=0.0, high=1.0) for i in range(2)))


def test_an_additive_surface_says_raise_and_never_lower() -> None:
    rng = np.random.default_rng(0)
    points = rng.random((60, 2))
    scores = points.sum(axis=1)  # higher is better in every knob
    space = _space()
    configs = [space.decode(p) for p in points]
    rows, calibration = influence(
        space, Comparator(space, classifier="xgboost"), points, scores, configs, members=4
    )
    verdicts = [r.verdict for r in rows]
    assert "lower" not in verdicts and "raise" in verdicts
    assert calibration.accuracy > calibration.trivial  # it beats always-the-majority


def test_a_best_at_the_peak_is_kept_not_moved_both_ways() -> None:
    rng = np.random.default_rng(1)
    points = rng.random((60, 2))
    scores = -((points - 0.5) ** 2).sum(axis=1)  # a single peak at the centre
    points[0], scores[0] = [0.5, 0.5], 0.0  # the best measured setting is the peak
    space = _space()
    configs = [space.decode(p) for p in points]
    rows, _ = influence(
        space, Comparator(space, classifier="xgboost"), points, scores, configs, members=4
    )
    assert all(r.verdict in ("keep", "unsure") for r in rows), [r.verdict for r in rows]
    for r in rows:
        for d in (r.up, r.down):
            assert d is not None and 0.0 <= d.low <= d.probability <= d.high <= 1.0
