"""The paper mode's readings of Algorithm 1 (issue #19): snapped candidates, the two bounding
readings, Eq. (1) ties, the elbow's structure check and Algorithm 1's own answer."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

from classytune import ClassyTunePaper
from classytune.classifiers import xgboost
from classytune.comparator import Comparator
from classytune.ranked import snap_points
from classytune.search import (
    beats_uniform,
    cell_counts,
    cluster_winners,
    distinct_new,
    find_subspaces,
    nearest_setting_bounds,
)
from harness.errors import ConfigError
from harness.records import Observation, Status
from harness.space import Knob, Space
from harness.tuner import Tuner

FAST: dict[str, Any] = {"s_factor": 10, "classifier": partial(xgboost, n_estimators=30)}


def mixed_space() -> Space:
    return Space(
        (
            Knob("threads", "int", 4, low=1, high=8),
            Knob("mode", "enum", "b", values=("a", "b", "c")),
            Knob("flag", "bool", False),
            Knob("ratio", "float", 0.5, low=0.0, high=1.0),
            Knob("cache_mb", "int", 64, low=16, high=4096, log=True),
        )
    )


class RecordingModel:
    """Predicts "wins" for every row and keeps the rows it was asked about."""

    def __init__(self) -> None:
        self.rows = np.empty((0, 0))

    def predict(self, rows: np.ndarray) -> np.ndarray:
        self.rows = rows
        return np.ones(len(rows), dtype=int)


# -- 1. the candidate set S is snapped to the knobs' cells -------------------------------------
def test_cell_counts() -> None:
    assert cell_counts(mixed_space()).tolist() == [8, 3, 2, 0, 0]  # log int: continuous


def test_distinct_new_drops_repeats_and_measured_settings_in_order() -> None:
    candidates = np.array([[0.75, 0.1], [0.25, 0.2], [0.75, 0.1], [0.25, 0.3], [0.25, 0.2]])
    measured = np.array([[0.25, 0.3]])
    assert distinct_new(candidates, measured).tolist() == [[0.75, 0.1], [0.25, 0.2]]
    assert distinct_new(np.empty((0, 2)), measured).shape == (0, 2)


def test_candidates_are_compared_as_measurable_settings() -> None:
    space = mixed_space()
    rng = np.random.default_rng(0)
    points = snap_points(space, rng.random((6, space.dim)))
    scores = np.arange(6.0)
    model = RecordingModel()
    result = find_subspaces(
        model,
        points,
        scores,
        200,
        3,
        rng,
        seed=1,
        induction="concat",  # rows = [candidate, pivot]: the candidates can be read back
        snap=partial(snap_points, space),
        cells=cell_counts(space),
    )
    compared = model.rows[:, : space.dim]
    assert np.allclose(compared, snap_points(space, compared))  # at cell centres
    assert np.allclose(model.rows[:, space.dim :], points[5])  # against the pivot
    assert len(np.unique(np.round(compared, 12), axis=0)) == len(compared) == result.n_candidates
    measured = {tuple(p) for p in np.round(points, 12)}
    assert not measured & {tuple(c) for c in np.round(compared, 12)}
    for col, n in ((0, 8), (1, 3), (2, 2)):  # the discrete knobs take only their cells' codes
        assert set(np.round(compared[:, col] * n - 0.5, 9)) <= set(map(float, range(n)))


def test_a_small_discrete_space_compares_each_setting_once() -> None:
    space = Space((Knob("mode", "enum", "a", values=("a", "b", "c")), Knob("on", "bool", False)))
    points = space.encode_many([{"mode": "a", "on": False}, {"mode": "b", "on": True}])
    model = RecordingModel()
    result = find_subspaces(
        model,
        points,
        np.array([1.0, 2.0]),
        100,
        3,
        np.random.default_rng(0),
        seed=0,
        snap=partial(snap_points, space),
        cells=cell_counts(space),
    )
    assert result.n_candidates == len(model.rows) == 4  # 6 settings, 2 of them measured


# -- 2. bounds: nearest_setting ----------------------------------------------------------------
def test_nearest_setting_bounds_hand_computed() -> None:
    centre = np.array([0.5, 0.5])
    # distances: .224, .566, .403 -> the first is nearest: reach (.1, .2) on both sides
    evaluated = np.array([[0.6, 0.3], [0.9, 0.9], [0.1, 0.45]])
    low, high = nearest_setting_bounds(centre, evaluated)
    assert np.allclose(low, [0.4, 0.3]) and np.allclose(high, [0.6, 0.7])
    # clipped to the unit cube
    low, high = nearest_setting_bounds(np.array([0.05, 0.9]), np.array([[0.25, 0.8]]))
    assert np.allclose(low, [0.0, 0.8]) and np.allclose(high, [0.25, 1.0])
    # a centre on a measured setting (the pivot's subspace) reaches to the next nearest one
    low, high = nearest_setting_bounds(centre, np.array([[0.5, 0.5], [0.7, 0.4]]))
    assert np.allclose(low, [0.3, 0.4]) and np.allclose(high, [0.7, 0.6])
    low, high = nearest_setting_bounds(centre, np.array([[0.5, 0.5]]))  # nothing elsewhere
    assert np.allclose(low, 0.0) and np.allclose(high, 1.0)


def test_nearest_setting_bounds_cover_whole_cells() -> None:
    cells = np.array([2, 4, 5, 0])  # a bool, an enum of 4, an int of 5 values, a float
    centre = np.array([0.6, 0.3, 0.5, 0.5])
    nearest = np.array([[0.25, 0.625, 0.7, 0.55]])
    low, high = nearest_setting_bounds(centre, nearest, cells)
    # bool: reach .35 -> [.25, .95] holds both values .25 and .75 -> both cells, [0, 1]
    # enum: reach .325 -> [-.025, .625] holds the values .125, .375, .625 -> cells 0-2, [0, .75]
    # int:  reach .2 -> [.3, .7] holds .3, .5, .7 -> cells 1-3, [.2, .8]; float: .5 +- .05
    assert np.allclose(low, [0.0, 0.0, 0.2, 0.45]) and np.allclose(high, [1.0, 0.75, 0.8, 0.55])
    # a reach that holds no cell value still keeps the centre's own cell
    low, high = nearest_setting_bounds(np.array([0.45]), np.array([[0.44]]), np.array([4]))
    assert np.allclose(low, [0.25]) and np.allclose(high, [0.5])


def test_bounds_reading_is_chosen_by_option() -> None:
    points = np.array([[0.1, 0.1], [0.4, 0.45], [0.9, 0.8]])
    model = RecordingModel()
    boxes = {}
    for bounds in ("per_dimension", "nearest_setting"):
        rng = np.random.default_rng(0)
        boxes[bounds] = find_subspaces(
            model, points, np.array([0.0, 1.0, 0.5]), 50, 1, rng, seed=0, bounds=bounds
        )
    per_dim, nearest = boxes["per_dimension"], boxes["nearest_setting"]
    centre = per_dim.centres[0]
    assert np.allclose(centre, nearest.centres[0])  # same search, different boxes
    assert np.allclose((per_dim.lows[0], per_dim.highs[0]), _per_dimension(centre, points))
    assert np.allclose((nearest.lows[0], nearest.highs[0]), nearest_setting_bounds(centre, points))
    with pytest.raises(ValueError, match="bounds"):
        find_subspaces(model, points, np.zeros(3), 5, 1, rng, seed=0, bounds="ball")


def _per_dimension(centre: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    below = [
        max([p for p in col if p < c], default=0.0)
        for c, col in zip(centre, points.T, strict=True)
    ]
    above = [
        min([p for p in col if p > c], default=1.0)
        for c, col in zip(centre, points.T, strict=True)
    ]
    return np.array(below), np.array(above)


# -- 3. ties as Eq. (1) --------------------------------------------------------------------------
def test_ties_zero_is_eq_1_and_the_paper_default() -> None:
    space = mixed_space()
    points = snap_points(space, np.random.default_rng(0).random((3, space.dim)))
    scores = np.array([1.0, 1.0, 2.0])
    comparator = Comparator(space, ties="zero", classifier="decision_tree")
    _model, info = comparator.fit(points, scores, np.random.default_rng(0))
    assert info["n_pairs"] == 6  # the tied pair is kept, labelled 0 in both orders
    assert (
        Comparator(space, ties="skip").fit(points, scores, np.random.default_rng(0))[1]["n_pairs"]
        == 4
    )
    assert ClassyTunePaper(space).params()["ties"] == "zero"


# -- 4. the elbow says k = 1 without cluster structure -------------------------------------------
def test_uniform_winners_give_one_cluster() -> None:
    rng = np.random.default_rng(4)
    winners = rng.random((120, 10))
    winners[:, 0] = np.where(winners[:, 0] < 0.5, 0.25, 0.75)  # a bool: two values, no clusters
    cells = np.zeros(10, dtype=int)
    cells[0] = 2
    knee = cluster_winners(winners, 5, seed=0)[0]
    assert len(knee) > 1  # the knee alone always finds an elbow
    centres, sizes, inertias, _ = cluster_winners(winners, 5, seed=0, elbow="gap", cells=cells)
    assert len(centres) == 1 and sizes.tolist() == [120] and len(inertias) == 5


def test_three_separated_blobs_give_three_clusters() -> None:
    rng = np.random.default_rng(5)
    # three corners of a cube, as far from each other as from the third (three equally spaced
    # blobs on one line are a tie between the knees at k = 2 and 3, which goes to 2)
    low, high = [0.15] * 5, [0.85] * 5
    middles = np.array([low + low, high + low, low + high])
    winners = np.vstack([np.clip(rng.normal(m, 0.04, (30, 10)), 0, 1) for m in middles])
    centres, sizes, _, _ = cluster_winners(winners, 5, seed=0, elbow="gap")
    assert len(centres) == 3 and sorted(sizes.tolist()) == [30, 30, 30]
    for middle in middles:  # each blob has a centre within 0.03 of its middle
        assert np.abs(centres - middle).max(axis=1).min() < 0.03


def test_beats_uniform_edge_cases() -> None:
    one_point = np.array([[0.5, 0.5]])
    assert not beats_uniform(one_point, 2, 0.0, seed=0)  # n <= k
    same = np.full((5, 2), 0.3)
    assert not beats_uniform(same, 2, 0.0, seed=0)  # no spread at all
    two = np.array([[0.1, 0.1]] * 5 + [[0.9, 0.9]] * 5)
    assert beats_uniform(two, 2, 0.0, seed=0)  # two points repeated: inertia 0, real clusters
    with pytest.raises(ValueError, match="elbow"):
        cluster_winners(two, 3, seed=0, elbow="silhouette")


# -- 5. Algorithm 1's answer: the best resampled test -------------------------------------------
def _feed(tuner: ClassyTunePaper, scores: list[float]) -> None:
    batch = tuner.ask(len(scores))
    start = len(tuner.history)
    tuner.tell(
        [
            Observation(start + i, c, Status.SUCCEEDED, s)
            for i, (c, s) in enumerate(zip(batch, scores, strict=True))
        ]
    )


def test_answer_algorithm_is_the_best_resampled_test() -> None:
    space = mixed_space()
    tuners = {
        answer: ClassyTunePaper(space, seed=0, budget=10, n_initial=5, answer=answer, **FAST)
        for answer in ("algorithm", "all_tests")
    }
    for tuner in tuners.values():
        _feed(tuner, [1.0, 5.0, 2.0, 3.0, 4.0])
        assert tuner.answer() == tuner.best()  # nothing resampled yet: the best so far
        _feed(tuner, [2.0, 3.0, 1.0, 4.5, 0.0])
    algorithm, all_tests = tuners["algorithm"], tuners["all_tests"]
    assert algorithm.best() is not None and algorithm.best().trial == 1  # type: ignore[union-attr]
    assert algorithm.answer() is not None and algorithm.answer().trial == 8  # type: ignore[union-attr]
    assert all_tests.answer() == all_tests.best()
    assert Tuner.answer(algorithm) == algorithm.best()  # the base class's hook: best()
    assert algorithm.params()["answer"] == "algorithm"


def test_invalid_readings_are_config_errors() -> None:
    space = mixed_space()
    for kwargs in ({"bounds": "ball"}, {"elbow": "silhouette"}, {"answer": "prediction"}):
        with pytest.raises(ConfigError):
            ClassyTunePaper(space, **kwargs)  # type: ignore[arg-type]
