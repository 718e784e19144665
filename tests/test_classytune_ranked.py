"""Ranked resampling (the best mode's search): snapping, perturbations, ranking, selection."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pytest

from harness.errors import ConfigError
from harness.loop import tune
from harness.objective import Objective
from harness.space import Knob, Space
from systems.synthetic import SyntheticSystem, SyntheticWorkload
from tuners.classytune import ClassyTuneTuner
from tuners.classytune.classifiers import make_classifier
from tuners.classytune.induction import induce_all_pairs
from tuners.classytune.ranked import (
    local_candidates,
    rank_candidates,
    ranked_batch,
    select_new,
    snap_points,
)


def mixed_space() -> Space:
    return Space(
        (
            Knob("i", "int", 3, low=1, high=7),
            Knob("f", "float", 0.5, low=0.0, high=2.0),
            Knob("lg", "int", 64, low=1, high=4096, log=True),
            Knob("lf", "float", 1.0, low=0.01, high=100.0, log=True),
            Knob("e", "enum", "b", values=("a", "b", "c")),
            Knob("b", "bool", False),
        )
    )


def test_snap_points_equals_space_snap() -> None:
    space = mixed_space()
    points = np.random.default_rng(0).random((500, space.dim))
    points[:3] = np.array([[0.0] * 6, [1.0] * 6, [0.5] * 6])  # the edges too
    assert np.allclose(snap_points(space, points), space.snap(points), rtol=0, atol=1e-12)
    # hand-computed: int 1..7 has 7 cells, u=0.5 -> value 4 -> (4-1+.5)/7; enum of 3: cell 1
    snapped = snap_points(space, np.full((1, 6), 0.5))[0]
    assert snapped[0] == pytest.approx(3.5 / 7) and snapped[4] == pytest.approx(0.5)
    assert snapped[5] == 0.75


def test_local_candidates_move_few_knobs_of_the_elites() -> None:
    rng = np.random.default_rng(1)
    elites = np.array([[0.2] * 20, [0.8] * 20])
    out = local_candidates(elites, 400, scale=0.05, n_dims=2.0, rng=rng)
    assert out.shape == (400, 20) and np.all((out >= 0) & (out <= 1))
    base = elites[np.arange(400) % 2]  # cycled best first
    moved = (out != base).sum(axis=1)
    assert moved.min() >= 1  # at least one knob always moves
    assert 1.5 < moved.mean() < 3.5  # ~n_dims knobs (+ the forced one)
    assert np.abs(out - base).max() < 0.5  # small steps
    assert local_candidates(elites, 0, 0.1, 2.0, rng).shape == (0, 20)


def test_select_new_skips_measured_and_duplicates() -> None:
    candidates = np.array([[0.1], [0.2], [0.3], [0.4]])
    snapped = np.array([[0.1], [0.25], [0.25], [0.4]])  # 1 and 2 snap onto the same cell
    scores = np.array([0.9, 0.8, 0.7, 0.1])
    measured = np.array([[0.1]])
    assert select_new(candidates, scores, 2, snapped, measured).tolist() == [1, 3]
    assert select_new(candidates, scores, 5, snapped, measured).tolist() == [1, 3]
    assert select_new(candidates, scores, 0, snapped, measured).tolist() == []


def test_rank_candidates_prefers_the_better_region() -> None:
    # f(x) = -(x0 - 0.8)^2: a comparator trained on pairs must rank x0 = 0.8 above x0 = 0.1
    rng = np.random.default_rng(2)
    points = rng.random((40, 3))
    scores = -((points[:, 0] - 0.8) ** 2)
    rows, labels = induce_all_pairs(points, scores)
    model = make_classifier("xgboost", 0, n_estimators=50).fit(rows, labels)
    candidates = np.array([[0.8, 0.5, 0.5], [0.1, 0.5, 0.5]])
    opponents = points[np.argsort(-scores)[:5]]
    ranks = rank_candidates(model, candidates, opponents)
    assert ranks.shape == (2,) and ranks[0] > ranks[1] and np.all((ranks >= 0) & (ranks <= 1))


def run_ranked(seed: int, budget: int = 40, **kwargs: Any) -> ClassyTuneTuner:
    system, workload = SyntheticSystem("10"), SyntheticWorkload()
    system.setup(Path("."), workload)
    tuner = ClassyTuneTuner(
        system.space,
        seed=seed,
        budget=budget,
        strategy="ranked",
        rounds=3,
        initial_fraction=0.4,
        s_factor=20,
        local_factor=0.5,
        opponents=3,
        max_pairs=500,
        classifier_options={"n_estimators": 30},
        **kwargs,
    )
    observations = tune(tuner, system, workload, Objective.for_workload(workload.metrics), budget)
    assert len(observations) == budget
    return tuner


def test_ranked_mode_runs_rounds_without_repeats_and_is_deterministic() -> None:
    tuner = run_ranked(seed=5)
    assert tuner.plan == [16, 8, 8, 8]
    assert [r["batch"] for r in tuner.round_log] == [8, 8, 8]
    # 16 samples: 240 pairs; then 24 (552) and 32 (992) samples, capped by max_pairs
    assert [r["n_pairs"] for r in tuner.round_log] == [240, 500, 500]
    assert all(r["n_candidates"] == 300 for r in tuner.round_log)  # 20*10 global + 100 local
    keys = [tuple(sorted(o.config.items())) for o in tuner.history]
    assert len(set(keys)) == len(keys)  # no setting measured twice
    again = run_ranked(seed=5)
    assert [o.config for o in again.history] == [o.config for o in tuner.history]
    params = tuner.params()
    assert params["strategy"] == "ranked" and params["max_pairs"] == 500


def test_ranked_mode_beats_its_own_initial_sample() -> None:
    # the ranked rounds must improve on the initial LHS on most seeds (f is smooth enough)
    better = 0
    for seed in range(4):
        tuner = run_ranked(seed=seed, budget=60)
        scores = [float(o.score or 0.0) for o in tuner.history if o.ok]
        initial = max(float(o.score or 0.0) for o in tuner.history[: tuner.plan[0]] if o.ok)
        better += max(scores) > initial
    assert better >= 3


def test_ranked_options_are_checked() -> None:
    space = SyntheticSystem("10").space
    with pytest.raises(ConfigError, match="strategy"):
        ClassyTuneTuner(space, strategy="greedy")
    with pytest.raises(ConfigError, match="opponents"):
        ClassyTuneTuner(space, strategy="ranked", opponents=0)


class _RankedOptions(TypedDict):
    n_global: int
    n_local: int
    n_elite: int
    opponents: int
    scale: float
    n_dims: float


def test_global_share_keeps_exploring() -> None:
    # the comparator prefers x0 near the elite; perturbations of the elite outrank the LHS set,
    # so without a global share every test is local, with share 1 every test is from the LHS
    rng = np.random.default_rng(3)
    points = rng.random((30, 4))
    scores = -np.abs(points[:, 0] - points[0, 0])
    scores[0] = 1.0
    rows, labels = induce_all_pairs(points, scores)
    model = make_classifier("xgboost", 0, n_estimators=30).fit(rows, labels)
    space = Space(tuple(Knob(f"k{i}", "float", 0.5, low=0.0, high=1.0) for i in range(4)))
    common = _RankedOptions(
        n_global=50, n_local=200, n_elite=1, opponents=3, scale=0.02, n_dims=1.0
    )
    batch, info = ranked_batch(model, points, scores, 6, space, np.random.default_rng(0), **common)
    assert batch.shape == (6, 4) and info["n_local_chosen"] >= 4
    batch, info = ranked_batch(
        model, points, scores, 6, space, np.random.default_rng(0), global_share=1.0, **common
    )
    assert info["n_local_chosen"] == 0
    batch, info = ranked_batch(
        model, points, scores, 6, space, np.random.default_rng(0), global_share=0.5, **common
    )
    assert info["n_local_chosen"] <= 3
