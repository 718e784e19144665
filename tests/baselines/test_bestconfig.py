"""BestConfig: DDS is a maximin Latin hypercube, RBS bounds as hand-computed, budget stop."""

from __future__ import annotations

import tempfile

import numpy as np
import pytest

from baselines.bestconfig import (
    BestConfigTuner,
    bound,
    choose_maximin,
    dds,
    min_pairwise_sq_distance,
)
from harness import api
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from systems.synthetic import SyntheticSystem, SyntheticWorkload


def _cells(points: np.ndarray, low: np.ndarray, high: np.ndarray, m: int) -> np.ndarray:
    return np.floor((points - low) / ((high - low) / m)).astype(int)


@pytest.mark.parametrize(("m", "dim"), [(1, 3), (5, 1), (7, 3), (20, 10), (20, 30)])
def test_dds_is_latin_hypercube_in_the_box(m: int, dim: int) -> None:
    rng = np.random.default_rng(m * 100 + dim)
    low, high = rng.random(dim) * 0.4, 0.6 + rng.random(dim) * 0.4
    points = dds(m, low, high, rng, designs=4)
    assert points.shape == (m, dim)
    assert np.all(points >= low) and np.all(points <= high)
    cells = _cells(points, low, high, m)
    for j in range(dim):  # exactly one point per cell in every dimension
        assert sorted(cells[:, j]) == list(range(m))


def test_dds_keeps_the_maximin_candidate() -> None:
    m, dim, designs = 8, 4, 6
    points = dds(m, np.zeros(dim), np.ones(dim), np.random.default_rng(3), designs)
    # Regenerate the candidates the documented way: dimension 0 in order, others permuted.
    rng = np.random.default_rng(3)
    candidates = []
    for _ in range(designs):
        cells = np.empty((m, dim), dtype=int)
        cells[:, 0] = np.arange(m)
        for j in range(1, dim):
            cells[:, j] = rng.permutation(m)
        candidates.append(cells)
    chosen = _cells(points, np.zeros(dim), np.ones(dim), m)
    best = max(min_pairwise_sq_distance(c) for c in candidates)
    assert min_pairwise_sq_distance(chosen) == best
    assert any(np.array_equal(chosen, c) for c in candidates)


def test_choose_maximin_on_hand_made_designs() -> None:
    diagonal = np.array([[0, 0], [1, 1], [2, 2]])  # min squared distance 2
    spread = np.array([[0, 1], [1, 2], [2, 0]])  # min squared distance 2 as well
    bad = np.array([[0, 0], [0, 1], [2, 2]])  # 1
    far = np.array([[0, 0], [3, 3]])  # 18
    assert min_pairwise_sq_distance(bad) == 1
    assert choose_maximin([bad, diagonal, spread]) == 1  # first of the tied best
    assert choose_maximin([bad, far]) == 1


def test_more_candidates_spread_points_more() -> None:
    def mean_min_distance(designs: int) -> float:
        values = []
        for seed in range(30):
            pts = dds(10, np.zeros(3), np.ones(3), np.random.default_rng(seed), designs)
            values.append(min_pairwise_sq_distance(_cells(pts, np.zeros(3), np.ones(3), 10)))
        return float(np.mean(values))

    assert mean_min_distance(50) > mean_min_distance(1)


def test_bound_hand_computed() -> None:
    best = np.array([0.5, 0.5])
    others = np.array([[0.2, 0.9], [0.7, 0.6], [0.4, 0.1]])
    low, high = bound(best, others, np.zeros(2), np.ones(2))
    np.testing.assert_allclose(low, [0.4, 0.1])
    np.testing.assert_allclose(high, [0.7, 0.6])


def test_bound_keeps_current_bound_without_neighbour_and_clips() -> None:
    # Nothing above 0.9: the upper bound stays 0.95; 0.5 is the nearest below.
    low, high = bound(np.array([0.9]), np.array([[0.3], [0.5]]), np.array([0.2]), np.array([0.95]))
    assert (low[0], high[0]) == (0.5, 0.95)
    # A neighbour outside the current box (the default in round one) is clipped to the box.
    low, high = bound(np.array([0.5]), np.array([[0.1], [0.9]]), np.array([0.3]), np.array([0.8]))
    assert (low[0], high[0]) == (0.3, 0.8)
    # Equal coordinates are neither below nor above.
    low, high = bound(np.array([0.5]), np.array([[0.5], [0.6]]), np.zeros(1), np.ones(1))
    assert (low[0], high[0]) == (0.0, 0.6)


def _session(budget: int, seed: int = 0, **kw: int) -> tuple[BestConfigTuner, list[Observation]]:
    """A whole in-memory session of BestConfig on synthetic10 through the API."""
    system, workload = SyntheticSystem("10"), SyntheticWorkload()
    tuner = BestConfigTuner(system.space, seed=seed, budget=budget, **kw)
    with tempfile.TemporaryDirectory() as results_dir:
        result = api.run_objects(
            tuner,
            system,
            workload,
            budget=budget,
            results_dir=results_dir,
            objective=Objective("throughput", "max"),
        )
    assert result.status == "FINISHED", result.message
    return tuner, result.observations


@pytest.mark.parametrize("budget", [1, 2, 21, 22, 37, 100])
def test_budget_is_a_hard_stop(budget: int) -> None:
    tuner, obs = _session(budget)
    assert len(obs) == budget and obs[0].is_default
    assert tuner.remaining == 0
    assert tuner.ask(5) == []  # nothing beyond the budget


def test_rounds_follow_m_and_improve_on_default() -> None:
    tuner, obs = _session(100)
    sizes = [r.n for r in tuner.compute_log if r.phase == "ask"]
    assert sizes == [21, 20, 20, 20, 19]
    assert tuner.rounds_done == 5 and tuner.restarts <= 5
    best = tuner.best()
    assert best is not None and best.score is not None and obs[0].score is not None
    assert best.score > obs[0].score


def _tell(
    tuner: BestConfigTuner, configs: list[dict], scores: list[float | None], first_trial: int
) -> None:
    tuner.tell(
        [
            Observation(
                trial=first_trial + i,
                config=c,
                status=Status.SUCCEEDED if s is not None else Status.CRASHED,
                score=s,
                is_default=first_trial + i == 0,
            )
            for i, (c, s) in enumerate(zip(configs, scores, strict=True))
        ]
    )


def test_rbs_bounds_around_round_best_then_restarts() -> None:
    system = SyntheticSystem("10")
    tuner = BestConfigTuner(system.space, seed=1, budget=100, m=4)
    first = tuner.ask(5)  # default + 4 DDS points
    points = tuner._round.points.copy()  # type: ignore[union-attr]
    _tell(tuner, first, [1.0, 2.0, 5.0, None, 3.0], 0)  # slot 1 best; slot 2 crashed
    default_point = system.space.encode(first[0])
    others = np.vstack([points[[0, 3]], default_point])
    expected = bound(points[1], others, np.zeros(10), np.ones(10))
    np.testing.assert_allclose(tuner.low, expected[0])
    np.testing.assert_allclose(tuner.high, expected[1])
    second = tuner.ask(4)
    inside = tuner._round.points  # type: ignore[union-attr]
    assert np.all(inside >= expected[0]) and np.all(inside <= expected[1])
    _tell(tuner, second, [4.0, 1.0, 2.0, 3.0], 5)  # no better than 5: restart, whole space
    assert tuner.restarts == 1
    np.testing.assert_array_equal(tuner.low, np.zeros(10))
    np.testing.assert_array_equal(tuner.high, np.ones(10))
    third = tuner.ask(4)
    _tell(tuner, third, [None] * 4, 9)  # a round with no success counts as a restart
    assert tuner.restarts == 2 and tuner.rounds_done == 3


def test_deterministic_under_seed() -> None:
    _, a = _session(60, seed=4)
    _, b = _session(60, seed=4)
    _, c = _session(60, seed=5)
    assert [o.config for o in a] == [o.config for o in b]
    assert [o.config for o in a] != [o.config for o in c]
