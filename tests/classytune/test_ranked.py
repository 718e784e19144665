"""Ranked resampling (the best mode's search): snapping, perturbations, ranking, selection."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pytest
from hydra.utils import instantiate

from classytune import ClassyTuneBase, ClassyTunePaper, ClassyTuneRanked
from classytune.classifiers import make_classifier, xgboost
from classytune.induction import induce_all_pairs
from classytune.ranked import (
    local_candidates,
    rank_candidates,
    ranked_batch,
    select_new,
    snap_points,
)
from harness.api import compose, run_objects
from harness.errors import ConfigError
from harness.space import Knob, Space
from systems.synthetic import SyntheticSystem, SyntheticWorkload


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


def run_ranked(results: Path, seed: int, budget: int = 40, **kwargs: Any) -> ClassyTuneRanked:
    system, workload = SyntheticSystem("10"), SyntheticWorkload()
    tuner = ClassyTuneRanked(
        system.space,
        seed=seed,
        budget=budget,
        rounds=3,
        initial_fraction=0.4,
        s_factor=20,
        opponents=3,
        max_pairs=500,
        classifier=partial(xgboost, n_estimators=30),
        global_share=0.0,
        **{"local": {"factor": 0.5, "scale": 0.1}, **kwargs},
    )
    result = run_objects(tuner, system, workload, budget=budget, results_dir=results, seed=seed)
    assert len(result.observations) == budget
    return tuner


def test_ranked_mode_runs_rounds_without_repeats_and_is_deterministic(tmp_path: Path) -> None:
    tuner = run_ranked(tmp_path, seed=5)
    assert tuner.plan == [16, 8, 8, 8]
    assert [r["batch"] for r in tuner.round_log] == [8, 8, 8]
    # 16 samples: 240 pairs; then 24 (552) and 32 (992) samples, capped by max_pairs
    assert [r["n_pairs"] for r in tuner.round_log] == [240, 500, 500]
    assert all(r["n_candidates"] == 300 for r in tuner.round_log)  # 20*10 global + 100 local
    keys = [tuple(sorted(o.config.items())) for o in tuner.history]
    assert len(set(keys)) == len(keys)  # no setting measured twice
    again = run_ranked(tmp_path, seed=5)
    assert [o.config for o in again.history] == [o.config for o in tuner.history]
    params = tuner.params()
    assert params["name"] == "classytune" and params["max_pairs"] == 500
    assert params["opponents"] == 3 and "k_max" not in params and "include_pivot" not in params


def test_ranked_mode_beats_its_own_initial_sample(tmp_path: Path) -> None:
    # the ranked rounds must improve on the initial LHS on most seeds (f is smooth enough)
    better = 0
    for seed in range(4):
        tuner = run_ranked(tmp_path, seed=seed, budget=60)
        scores = [float(o.score or 0.0) for o in tuner.history if o.ok]
        initial = max(float(o.score or 0.0) for o in tuner.history[: tuner.plan[0]] if o.ok)
        better += max(scores) > initial
    assert better >= 3


def test_ranked_options_are_checked() -> None:
    space = SyntheticSystem("10").space
    with pytest.raises(ConfigError, match="opponents"):
        ClassyTuneRanked(space, opponents=0)
    with pytest.raises(ConfigError, match="global_share"):
        ClassyTuneRanked(space, global_share=1.5)
    with pytest.raises(TypeError):  # each tuner takes only its own options
        ClassyTuneRanked(space, k_max=5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ClassyTunePaper(space, opponents=5)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("name", "cls", "classifier", "options"),
    [
        ("classytune", ClassyTuneRanked, "xgboost", '{"max_bin": 64, "n_estimators": 100}'),
        ("classytune_paper", ClassyTunePaper, "xgboost", "{}"),
    ],
)
def test_configs_pick_the_class_and_the_classifier_by_target(
    name: str, cls: type[ClassyTuneBase], classifier: str, options: str
) -> None:
    space = SyntheticSystem("10").space

    def build(*overrides: str) -> ClassyTuneBase:
        cfg = compose([f"tuner={name}", "system=synthetic10", *overrides])
        tuner = instantiate(cfg.tuner)(space=space, seed=0, budget=20)
        assert isinstance(tuner, ClassyTuneBase)
        return tuner

    tuner = build()
    assert type(tuner) is cls and tuner.name == name
    assert (tuner.params()["classifier"], tuner.params()["classifier_options"]) == (
        classifier,
        options,
    )
    # the command line's short form switches cleanly (no options of the old classifier)
    tuner = build("tuner.classifier=decision_tree")
    assert (tuner.params()["classifier"], tuner.params()["classifier_options"]) == (
        "decision_tree",
        "{}",
    )
    target = "tuner.classifier._target_=classytune.classifiers.random_forest"
    # a new _target_ keeps the node's keywords: XGBoost's max_bin goes with ~ (not a forest's)
    drop = ["~tuner.classifier.max_bin"] if name == "classytune" else []
    assert build(target, *drop, "+tuner.classifier.max_depth=4").params()[
        "classifier_options"
    ] == (
        '{"max_depth": 4}'
        if name == "classytune_paper"
        else '{"max_depth": 4, "n_estimators": 100}'
    )


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
