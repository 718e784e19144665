"""Algorithm 1's pure decisions (hand-computed), the classifiers and the experience rules."""

from __future__ import annotations

import numpy as np
import pytest

from classytune.classifiers import (
    CLASSIFIERS,
    feature_importances,
    make_classifier,
    predict_better,
    win_score,
)
from classytune.induction import induce_all_pairs
from classytune.rules import parse_rules, rule_pairs
from classytune.search import (
    MAX_CELLS,
    allocate,
    cell_counts,
    cluster_winners,
    elbow_k,
    subspace_bounds,
)
from harness.errors import ConfigError
from harness.space import Knob, Space
from systems.synthetic import SyntheticSystem


def test_elbow_hand_computed() -> None:
    # drop 88: gains 0, .795, .909, .966, 1 vs line 0, .25, .5, .75, 1 -> largest gap at k=2
    assert elbow_k([100, 30, 20, 15, 12]) == 2
    # drop 90: gains 0, .111, .889, .944, 1 -> gaps 0, -.139, .389, .194, 0 -> k=3
    assert elbow_k([100, 90, 20, 15, 10]) == 3
    assert elbow_k([4, 3, 2, 1, 0]) == 1  # straight line: no elbow
    assert elbow_k([10, 2, 1]) == 2  # gains 0, .889, 1 vs line 0, .5, 1
    assert elbow_k([10, 9, 1]) == 1  # convex: the curve stays below the line
    assert elbow_k([5, 5, 5]) == 1  # no drop
    assert elbow_k([7.0, 1.0]) == 1 and elbow_k([3.0]) == 1  # too few values to judge


def test_bounds_hand_computed() -> None:
    centre = np.array([0.5, 0.1, 0.9])
    evaluated = np.array([[0.2, 0.3, 0.95], [0.4, 0.05, 0.2], [0.7, 0.1, 0.5]])
    low, high = subspace_bounds(centre, evaluated)
    # dim 1: the evaluated 0.1 equals the centre and bounds neither side
    assert np.allclose(low, [0.4, 0.05, 0.5]) and np.allclose(high, [0.7, 0.3, 0.95])
    low, high = subspace_bounds(np.array([0.05, 0.99]), np.array([[0.3, 0.5], [0.6, 0.2]]))
    assert np.allclose(low, [0.0, 0.5]) and np.allclose(high, [0.3, 1.0])  # open sides: 0 / 1


def test_bounds_on_encoded_enum_and_bool_cells() -> None:
    # an enum of 4 values is encoded at cell centres .125 .375 .625 .875, a bool at .25 / .75
    evaluated = np.array([[0.125, 0.25], [0.375, 0.75], [0.875, 0.25]])
    low, high = subspace_bounds(np.array([0.625, 0.75]), evaluated)
    assert np.allclose(low, [0.375, 0.25]) and np.allclose(high, [0.875, 1.0])
    assert np.all(low < [0.625, 0.75]) and np.all(high > [0.625, 0.75])  # centre cell inside


def test_allocate_hand_computed() -> None:
    assert allocate(10, [5, 9, 2]) == [3, 4, 3]
    assert allocate(11, [5, 5, 2]) == [4, 4, 3]
    assert allocate(2, [1, 1, 1]) == [1, 1, 0]
    assert allocate(7, []) == [] and sum(allocate(50, [3, 1, 4, 1])) == 50


def test_cluster_winners_finds_two_blobs() -> None:
    rng = np.random.default_rng(0)
    blobs = np.vstack([rng.normal(0.2, 0.02, (40, 3)), rng.normal(0.8, 0.02, (40, 3))])
    centres, sizes, inertias, labels = cluster_winners(blobs, 5, seed=0)
    assert len(centres) == 2 and sorted(sizes) == [40, 40] and len(inertias) == 5
    assert np.allclose(np.sort(centres[:, 0]), [0.2, 0.8], atol=0.02)
    assert len(labels) == 80


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_every_classifier_learns_a_simple_comparison(name: str) -> None:
    rng = np.random.default_rng(1)
    points = rng.random((30, 3))
    rows, labels = induce_all_pairs(points, points[:, 0], "difference")
    model = make_classifier(name, seed=3).fit(rows, labels)
    accuracy = np.mean(predict_better(model, rows) == labels.astype(bool))
    assert accuracy > 0.8
    assert win_score(model, rows[:5]).shape == (5,)
    importances = feature_importances(model)
    if importances is not None:
        assert int(np.argmax(importances)) == 0


def test_unknown_classifier() -> None:
    with pytest.raises(ValueError, match="unknown classifier"):
        make_classifier("gpt")


def test_rules_generate_uniform_labelled_pairs() -> None:
    space = SyntheticSystem("10").space
    rules = parse_rules(
        [
            {"knob": "worker_threads", "direction": "decrease", "low": 1, "high": 128},
            {"knob": "compression"},
        ],
        space,
    )
    xa, xb, labels = rule_pairs(rules, space, 50, np.random.default_rng(0))
    assert len(xa) == len(xb) == len(labels) and len(labels) > 100
    differ = xa != xb
    column = space.names.index("worker_threads")
    first = differ[:, column]
    assert np.all(differ.sum(axis=1) == 1)  # exactly the rule's knob differs
    # decrease rule: the pair whose first setting has more workers is labelled 0
    assert np.all(labels[first] == (xa[first, column] < xb[first, column]))
    assert xa[first, column].max() <= space["worker_threads"].encode(128) + 1e-12
    with pytest.raises(ConfigError, match="unknown knob"):
        parse_rules([{"knob": "nope"}], space)
    with pytest.raises(ConfigError, match="direction"):
        parse_rules([{"knob": "compression", "direction": "sideways"}], space)
    with pytest.raises(ConfigError, match="low must be below high"):
        parse_rules([{"knob": "worker_threads", "low": 100, "high": 10}], space)


def test_cell_counts_of_every_int_range() -> None:
    """Cells per dimension: bool 2, enum its values, a linear int its integers; an int range
    wider than an int64 counts (a byte size up to 2^64 - 1) is continuous, not an overflow."""
    space = Space(
        (
            Knob("huge", "int", default=0, low=0, high=2**64 - 1),
            Knob("edge", "int", default=0, low=0, high=MAX_CELLS - 1),
            Knob("small", "int", default=3, low=-2, high=5),
            Knob("on", "bool", default=False),
            Knob("mode", "enum", default="a", values=("a", "b", "c")),
            Knob("share", "float", default=0.5, low=0.0, high=1.0),
        )
    )
    assert cell_counts(space).tolist() == [0, MAX_CELLS, 8, 2, 3, 0]
