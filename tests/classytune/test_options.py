"""The ranked mode's options: ensembles, categorical moves, trust region, failure model."""

from __future__ import annotations

import itertools
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from classytune import ClassyTuneRanked
from classytune.classifiers import make_classifier, xgboost
from classytune.comparator import Comparator
from classytune.ensemble import acquisition_orders, bootstrap_indices, fit_members
from classytune.failure import failure_probability, forest_failure, knn_failure
from classytune.induction import induce_all_pairs
from classytune.margin import margin_pairs
from classytune.ranked import category_levels, greedy_pick, local_candidates, ranked_batch
from classytune.ranked_options import Ensemble, FailureModel, LocalMoves, TrustRegion
from classytune.ranked_options import Remeasure as RemeasureOptions
from classytune.trust import improved, update_scale
from harness.api import run_objects
from harness.errors import ConfigError
from harness.space import Knob, Space
from systems.synthetic import SyntheticSystem, SyntheticWorkload


def mixed_space() -> Space:
    return Space(
        (
            Knob("i", "int", 3, low=1, high=7),
            Knob("f", "float", 0.5, low=0.0, high=2.0),
            Knob("e", "enum", "b", values=("a", "b", "c")),
            Knob("n", "enum", 2, values=(1, 2, 4, 8)),
            Knob("b", "bool", False),
        )
    )


# -- (a) ensemble ---------------------------------------------------------------------------
def test_bootstrap_indices_are_sorted_draws_with_replacement() -> None:
    idx = bootstrap_indices(50, np.random.default_rng(0))
    assert idx.shape == (50,) and np.all(np.diff(idx) >= 0) and idx.min() >= 0 and idx.max() < 50
    assert len(np.unique(idx)) < 50  # with replacement: ~63% distinct


def test_fit_members_gives_distinct_fitted_comparators() -> None:
    rng = np.random.default_rng(1)
    points = rng.random((20, 3))
    scores = points[:, 0]
    factory = partial(xgboost, n_estimators=10)
    members = fit_members(factory, points, scores, 3, rng, max_pairs=100)
    assert len(members) == 3
    probe = induce_all_pairs(points[:5], scores[:5])[0]
    preds = [m.predict_proba(probe)[:, 1] for m in members]
    assert not np.allclose(preds[0], preds[1])  # different resamples, different members
    # a constant score gives one label only: no member can be fitted
    assert fit_members(factory, points, np.zeros(20), 2, rng, ties="zero") == []


def test_acquisition_orders_by_hand() -> None:
    rng = np.random.default_rng(0)
    scores = np.array([[0.5, 0.45], [0.5, 0.15]])  # mean 0.5, 0.3; std 0, 0.15
    orders, slots = acquisition_orders(scores, 3, "mean", rng)
    assert [o.tolist() for o in orders] == [[0, 1]] and slots == [0, 0, 0]
    orders, _ = acquisition_orders(scores, 3, "ucb", rng, kappa=2.0)  # 0.5 vs 0.3 + 0.3
    assert orders[0].tolist() == [1, 0]
    orders, slots = acquisition_orders(scores, 5, "thompson", rng)
    assert [o.tolist() for o in orders] == [[0, 1], [0, 1]]
    assert sorted(slots[:2]) == [0, 1] and slots[2:] == slots[:2] + slots[:1]  # cycled
    with pytest.raises(ValueError, match="acquisition"):
        acquisition_orders(scores, 1, "ei", rng)


def test_thompson_slots_take_each_members_favourite() -> None:
    orders = [np.array([0, 1, 2]), np.array([2, 1, 0])]
    snapped = np.array([[0.1], [0.5], [0.9]])
    picked = greedy_pick(orders, [0, 1], snapped, np.empty((0, 1)))
    assert picked.tolist() == [0, 2]  # the mean would have taken 1 of them and 1
    assert greedy_pick(orders, [0, 0], snapped, np.empty((0, 1))).tolist() == [0, 1]


# -- (e) batch diversity ----------------------------------------------------------------------
def test_min_distance_spreads_the_batch() -> None:
    order = [np.array([0, 1, 2, 3])]
    snapped = np.array([[0.10], [0.12], [0.50], [0.52]])
    none = np.empty((0, 1))
    assert greedy_pick(order, [0, 0], snapped, none).tolist() == [0, 1]
    assert greedy_pick(order, [0, 0], snapped, none, min_distance=0.1).tolist() == [0, 2]
    # tests chosen earlier in the round count too
    kept = greedy_pick(order, [0], snapped, none, 0.1, batch=np.array([[0.11]]))
    assert kept.tolist() == [2]


# -- (b) categorical moves --------------------------------------------------------------------
def test_category_levels_by_mode() -> None:
    space = mixed_space()
    assert category_levels(space, "off").tolist() == [0, 0, 0, 0, 0]
    assert category_levels(space, "nominal").tolist() == [0, 0, 3, 0, 2]  # numeric enum: ordered
    assert category_levels(space, "all").tolist() == [0, 0, 3, 4, 2]
    with pytest.raises(ValueError, match="categorical_moves"):
        category_levels(space, "some")


def test_categorical_moves_take_another_value_uniformly() -> None:
    # one enum knob of 4 values at cell 0 (u = 0.125), always moved (n_dims = d = 1)
    elites = np.array([[0.125]])
    out = local_candidates(elites, 3000, 0.2, 1.0, np.random.default_rng(0), np.array([4]))
    values, counts = np.unique(out[:, 0], return_counts=True)
    assert np.allclose(values, [0.375, 0.625, 0.875])  # the other cells' centres, never 0.125
    assert np.all(np.abs(counts / 3000 - 1 / 3) < 0.04)  # uniform over the other three
    # a bool always flips when moved; a float next to it keeps its Gaussian step
    out = local_candidates(
        np.array([[0.25, 0.5]]), 200, 0.05, 2.0, np.random.default_rng(1), np.array([2, 0])
    )
    assert np.all(out[:, 0] == 0.75) and 0 < np.std(out[:, 1]) < 0.1


# -- (c) trust region ------------------------------------------------------------------------
def test_trust_region_steps_by_hand() -> None:
    assert update_scale(0.2, True, 1.5, 0.5, 0.05, 0.5) == pytest.approx(0.3)
    assert update_scale(0.2, False, 1.5, 0.5, 0.05, 0.5) == pytest.approx(0.1)
    assert update_scale(0.4, True, 1.5, 0.5, 0.05, 0.5) == 0.5  # bounded above
    assert update_scale(0.06, False, 1.5, 0.5, 0.05, 0.5) == 0.05  # and below
    assert improved(2.0, 1.0) and not improved(1.0, 1.0) and not improved(3.0, None)
    assert not improved(-1.0 + 1e-14, -1.0)  # float noise is no improvement


# -- (d) failure model -----------------------------------------------------------------------
def test_knn_failure_by_hand() -> None:
    points = np.array([[0.0], [0.1], [0.2], [0.8], [0.9]])
    failed = np.array([False, False, False, True, True])
    p = knn_failure(np.array([[0.05], [0.85], [0.5]]), points, failed, k=2)
    # 0.05: 0.0 and 0.1 (ok); 0.85: 0.8 and 0.9 (failed); 0.5: 0.2 and 0.8 (one of two)
    assert p.tolist() == [0.0, 1.0, 0.5]
    assert knn_failure(np.array([[0.5]]), points, np.zeros(5, dtype=bool), 3).tolist() == [0.0]


def test_forest_failure_finds_an_axis_aligned_crash_region() -> None:
    rng = np.random.default_rng(2)
    points = rng.random((80, 10))
    failed = points[:, 0] > 0.85  # a crash decided by one knob of ten
    probe = rng.random((200, 10))
    p = forest_failure(probe, points, failed, seed=0)
    inside = probe[:, 0] > 0.9
    assert p[inside].mean() > 0.6 and p[probe[:, 0] < 0.7].mean() < 0.2


def test_failure_probability_is_zero_without_failures_and_draws_nothing() -> None:
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    zeros = failure_probability("forest", np.ones((4, 2)), np.ones((3, 2)), np.zeros(3), rng)
    assert zeros.tolist() == [0.0] * 4 and rng.bit_generator.state == state
    with pytest.raises(ValueError, match="failure_model"):
        failure_probability("svm", np.ones((1, 1)), np.ones((1, 1)), np.ones(1), rng)


def test_ranked_batch_avoids_candidates_likely_to_fail() -> None:
    rng = np.random.default_rng(4)
    points = rng.random((30, 2))
    scores = points[:, 0]  # better towards x0 = 1, where the system crashes (p_fail = 1)
    rows, labels = induce_all_pairs(points, scores)
    model = make_classifier("xgboost", 0, n_estimators=30).fit(rows, labels)
    space = Space(tuple(Knob(f"k{i}", "float", 0.5, low=0.0, high=1.0) for i in range(2)))
    options: dict[str, Any] = dict(
        n_global=200, n_local=0, n_elite=1, opponents=3, scale=0.1, n_dims=1.0
    )
    batch, _ = ranked_batch(model, points, scores, 8, space, np.random.default_rng(0), **options)
    assert np.mean(batch[:, 0] > 0.7) > 0.5  # unweighted: the best-ranked are up there

    def fail(c: np.ndarray) -> np.ndarray:
        return (c[:, 0] > 0.7).astype(float)

    batch, info = ranked_batch(
        model, points, scores, 8, space, np.random.default_rng(0), fail_prob=fail, **options
    )
    assert np.all(batch[:, 0] <= 0.7) and info["p_fail_chosen"] == 0.0


# -- the tuner ------------------------------------------------------------------------------
def run_tuner(results: Path, seed: int, **kwargs: Any) -> ClassyTuneRanked:
    system, workload = SyntheticSystem("10"), SyntheticWorkload()
    tuner = ClassyTuneRanked(
        system.space,
        seed=seed,
        budget=40,
        rounds=3,
        s_factor=20,
        max_pairs=500,
        classifier=partial(xgboost, n_estimators=30),
        **kwargs,
    )
    result = run_objects(tuner, system, workload, budget=40, results_dir=results, seed=seed)
    assert len(result.observations) == 40
    return tuner


def test_every_option_runs_and_is_deterministic(tmp_path: Path) -> None:
    options: dict[str, Any] = dict(
        ensemble={"members": 2, "pairs": 300, "estimators": 10, "acquisition": "thompson"},
        local={"categorical": "nominal"},
        trust_region={"enabled": True},
        failure_model={"method": "knn"},
        min_distance=0.02,
        pair_margin=0.02,
    )
    tuner = run_tuner(tmp_path, 7, **options)
    again = run_tuner(tmp_path, 7, **options)
    assert [o.config for o in again.history] == [o.config for o in tuner.history]
    log = tuner.round_log
    assert [r["n_members"] for r in log] == [3, 3, 3]
    # the trust region's width is logged, starts at local_scale and moves by grow / shrink
    assert log[0]["local_scale"] == 0.2 and not log[0]["improved"]
    for before, after in itertools.pairwise(log):
        factor = 1.5 if after["improved"] else 0.6
        assert after["local_scale"] == pytest.approx(
            min(max(before["local_scale"] * factor, 0.05), 0.5)
        )
    assert tuner.params()["ensemble.acquisition"] == "thompson"


def test_a_collapsed_trust_region_starts_over(tmp_path: Path) -> None:
    """Moving every knob, a round that does not improve shrinks the step below its minimum,
    so the region restarts at the initial width; an improving round grows it."""
    tuner = run_tuner(
        tmp_path,
        3,
        trust_region={"enabled": True, "restart": True, "shrink": 0.5, "min": 0.15},
        local={"dims": "all"},
    )
    log = tuner.round_log
    assert log[0]["restarts"] == 0
    for before, after in itertools.pairwise(log):
        if after["improved"]:
            assert after["local_scale"] == pytest.approx(min(before["local_scale"] * 1.5, 0.5))
        else:
            assert after["local_scale"] == 0.2
            assert after["restarts"] == before["restarts"] + 1
    assert log[-1]["restarts"] >= 1


def test_max_candidates_caps_the_lhs_set_and_local_dims_all_moves_every_knob() -> None:
    space = SyntheticSystem("30").space
    assert ClassyTuneRanked(space).n_candidates == 3000  # s_factor 100 x 30 knobs
    capped = ClassyTuneRanked(space, max_candidates=500)
    assert capped.n_candidates == 500 and capped.params()["max_candidates"] == 500
    every = ClassyTuneRanked(space, local={"dims": "all"})
    assert every.local.moved_knobs(space.dim) == 30.0
    assert ClassyTuneRanked(space).local.moved_knobs(space.dim) == 20.0
    assert ClassyTuneRanked(space, local={"dims": 3}).local.moved_knobs(space.dim) == 3.0


def test_option_checks() -> None:
    space = SyntheticSystem("10").space
    cases: list[tuple[dict[str, Any], str]] = [
        ({"ensemble": {"acquisition": "ei"}}, "tuner.ensemble: acquisition"),
        ({"local": {"categorical": "yes"}}, "tuner.local: categorical"),
        ({"local": {"dims": "most"}}, "tuner.local: dims"),
        ({"failure_model": {"method": "svm"}}, "tuner.failure_model: method"),
        ({"ensemble": {"members": -1}}, "members"),
        ({"trust_region": {"enabled": True, "min": 0.3}}, "trust_region"),
        ({"trust_region": {"grow_by": 2}}, "unknown option.*grow_by.*it has enabled, grow"),
        ({"remeasure": 3}, "tuner.remeasure is a group"),
        ({"pair_margin": 1.0}, "pair_margin"),
    ]
    for bad, match in cases:
        with pytest.raises(ConfigError, match=match):
            ClassyTuneRanked(space, **bad)


# -- (f) pairwise labels with a margin -------------------------------------------------------
def test_margin_pairs_skip_near_ties_by_hand() -> None:
    points = np.array([[0.1], [0.5], [0.9]])
    scores = np.array([100.0, 104.0, 150.0])  # 100 vs 104 differ by 3.8% of 104
    _, labels = margin_pairs(points, scores, 0.05)
    assert len(labels) == 4 and labels.tolist().count(1) == 2  # (0,2) (1,2) both ways
    rows0, labels0 = margin_pairs(points, scores, 0.0)
    assert len(labels0) == 6  # margin 0: every unequal pair, as ties="skip"
    full_rows, full_labels = induce_all_pairs(points, scores)
    assert np.array_equal(rows0, full_rows) and np.array_equal(labels0, full_labels)


def test_a_tiny_margin_fits_like_skipping_ties() -> None:
    space = Space(tuple(Knob(f"k{i}", "float", 0.5, low=0.0, high=1.0) for i in range(3)))
    comparator = Comparator(space, classifier=partial(xgboost, n_estimators=10), max_pairs=50)
    rng = np.random.default_rng(5)
    points = rng.random((15, 3))
    scores = points.sum(axis=1)
    ours, info = comparator.fit(points, scores, np.random.default_rng(0), margin=1e-12)
    theirs, their_info = comparator.fit(points, scores, np.random.default_rng(0))
    probe = induce_all_pairs(points[:4], scores[:4])[0]
    assert info["n_pairs"] == their_info["n_pairs"] == 50
    assert np.allclose(ours.predict_proba(probe), theirs.predict_proba(probe))


def test_the_config_and_the_class_defaults_agree() -> None:
    import inspect

    import yaml

    from harness.conf import CONFIG_DIR

    conf = yaml.safe_load((CONFIG_DIR / "tuner" / "classytune.yaml").read_text())
    params = inspect.signature(ClassyTuneRanked.__init__).parameters
    skip = {"_target_", "_partial_", "classifier", "rules"}
    groups = {
        "local": LocalMoves,
        "trust_region": TrustRegion,
        "ensemble": Ensemble,
        "failure_model": FailureModel,
        "remeasure": RemeasureOptions,
    }
    for key, value in conf.items():
        if key in skip:
            continue
        assert key in params, key
        default = params[key].default
        if key in groups:  # a group: the class default None means the dataclass's defaults
            assert default is None and asdict(groups[key]()) == value, (key, value)
            continue
        if isinstance(default, tuple):  # an immutable default; YAML writes it as a list
            default = list(default)
        assert default == value, (key, default, value)
    assert set(groups) <= set(conf)
