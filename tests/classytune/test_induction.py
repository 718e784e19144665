"""Sample induction: the z-order bijection (property tests) and the pair construction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from classytune.induction import (
    DEFAULT_BITS,
    dezorder,
    induce,
    induce_against,
    induce_all_pairs,
    induced_dim,
    quantise,
    zorder,
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
bits_st = st.integers(min_value=1, max_value=DEFAULT_BITS)


@settings(max_examples=120, deadline=None)
@given(unit, unit, bits_st)
def test_round_trip_recovers_the_quantised_pair(a: float, b: float, bits: int) -> None:
    z = zorder(np.array([a]), np.array([b]), bits)
    assert 0.0 <= z[0] < 1.0
    ra, rb = dezorder(z, bits)
    scale = float(1 << bits)
    assert ra[0] == quantise(np.array([a]), bits)[0] / scale
    assert rb[0] == quantise(np.array([b]), bits)[0] / scale
    # the recovered value is the lower edge of the cell holding the original
    assert ra[0] <= a and (a - ra[0] < 1.0 / scale or a == 1.0)


@settings(max_examples=120, deadline=None)
@given(unit, unit, unit, unit, bits_st)
def test_distinct_quantised_pairs_give_distinct_values(
    a: float, b: float, c: float, d: float, bits: int
) -> None:
    q = quantise(np.array([a, b, c, d]), bits)
    z1 = zorder(np.array([a]), np.array([b]), bits)[0]
    z2 = zorder(np.array([c]), np.array([d]), bits)[0]
    assert (z1 == z2) == (q[0] == q[2] and q[1] == q[3])


@settings(max_examples=100, deadline=None)
@given(unit, unit)
def test_order_matters(a: float, b: float) -> None:
    za = zorder(np.array([a]), np.array([b]))[0]
    zb = zorder(np.array([b]), np.array([a]))[0]
    qa, qb = quantise(np.array([a, b]))
    assert (za == zb) == (qa == qb)
    # the first value's bit leads: a larger first cell means a larger z-value
    if qa > qb:
        assert za > zb


def test_hand_computed_two_bit_codes() -> None:
    # a = 0.5 -> 10b, b = 0.25 -> 01b; interleaved a1 b1 a2 b2 = 1001b = 9/16
    assert zorder(np.array([0.5]), np.array([0.25]), 2)[0] == 9 / 16
    assert zorder(np.array([0.25]), np.array([0.5]), 2)[0] == 6 / 16
    assert zorder(np.array([1.0]), np.array([1.0]), 2)[0] == 15 / 16


def test_all_pairs_shapes_labels_and_ties() -> None:
    rng = np.random.default_rng(0)
    points = rng.random((100, 30))
    scores = rng.random(100)
    rows, labels = induce_all_pairs(points, scores)
    assert rows.shape == (9900, 30) and labels.mean() == 0.5
    # row for (a, b) decodes to a's and b's cells
    ra, rb = dezorder(rows[0])
    assert np.allclose(ra, points[0], atol=2**-26) and np.allclose(rb, points[1], atol=2**-26)
    assert labels[0] == int(scores[0] > scores[1])
    tied = np.array([1.0, 1.0, 2.0])
    rows, labels = induce_all_pairs(points[:3], tied)
    assert len(rows) == 4  # the two orders of the tied pair are skipped
    rows, labels = induce_all_pairs(points[:3], tied, ties="zero")
    assert len(rows) == 6 and labels.sum() == 2


def test_alternatives_and_errors() -> None:
    a, b = np.array([[0.2, 0.9]]), np.array([[0.5, 0.1]])
    assert np.allclose(induce(a, b, "difference"), [[-0.3, 0.8]])
    assert np.allclose(induce(a, b, "concat"), [[0.2, 0.9, 0.5, 0.1]])
    assert induced_dim("concat", 10) == 20 and induced_dim("zorder", 10) == 10
    assert induce_against(np.zeros((5, 2)), np.ones(2)).shape == (5, 2)
    with pytest.raises(ValueError, match="unknown induction"):
        induce(a, b, "hilbert")
    with pytest.raises(ValueError, match="bits"):
        zorder(a, b, 27)
