"""Tests for the tuner benchmark: scoring and ranking by hand, and a tiny end-to-end run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from paper.bench import _tuner_digest, main, suite_names
from paper.bench_score import mean_ranks, normalised_score, rank_average, summarise


def test_normalised_score_max() -> None:
    # default 100, optimum 200, best 150: half way.
    assert normalised_score(150.0, 100.0, 200.0) == pytest.approx(0.5)
    assert normalised_score(100.0, 100.0, 200.0) == 0.0
    assert normalised_score(250.0, 100.0, 200.0) == pytest.approx(1.5)


def test_normalised_score_min_is_mirrored() -> None:
    # Latency (minimised): default 40 ms, optimum 10 ms, best 20 ms -> (40-20)/(40-10) = 2/3.
    # Scores are negated values, which mirrors the formula.
    assert normalised_score(-20.0, -40.0, -10.0) == pytest.approx(2 / 3)
    # Worse than the default is negative: 50 ms -> (40-50)/30.
    assert normalised_score(-50.0, -40.0, -10.0) == pytest.approx(-1 / 3)


def test_normalised_score_edge_cases() -> None:
    assert normalised_score(None, 100.0, 200.0) == 0.0  # nothing succeeded
    assert math.isnan(normalised_score(150.0, None, 200.0))  # default unknown
    assert math.isnan(normalised_score(150.0, 200.0, 200.0))  # default already optimal


def test_rank_average_ties_and_nan() -> None:
    assert rank_average([0.2, 0.9, 0.5]) == [3.0, 1.0, 2.0]
    assert rank_average([0.5, 0.9, 0.5, 0.1]) == [2.5, 1.0, 2.5, 4.0]
    assert rank_average([math.nan, 0.3]) == [2.0, 1.0]


def _row(tuner: str, system: str, seed: int, best: float) -> dict[str, object]:
    return {
        "tuner": tuner,
        "system": system,
        "seed": seed,
        "best": best,
        "default": 0.0,
        "optimum": 1.0,
        "tests": 10,
        "compute_s": 0.5,
        "dim": 10,
    }


def test_mean_ranks_and_summary() -> None:
    rows = [
        _row("a", "s1", 0, 0.9),
        _row("b", "s1", 0, 0.5),
        _row("c", "s1", 0, 0.5),
        _row("a", "s1", 1, 0.1),
        _row("b", "s1", 1, 0.8),
        _row("c", "s1", 1, 0.3),
        _row("a", "s2", 0, 0.6),
        _row("b", "s2", 0, 0.6),
        _row("c", "s2", 0, 0.6),
    ]
    summary = summarise(rows)  # adds "norm" (= best here: default 0, optimum 1)
    ranks = mean_ranks(rows)
    # a: 1, 3, 2 -> 2.0; b: 2.5, 1, 2 -> 5.5/3; c: 2.5, 2, 2 -> 6.5/3.
    assert ranks["a"] == pytest.approx(2.0)
    assert ranks["b"] == pytest.approx(5.5 / 3)
    assert ranks["c"] == pytest.approx(6.5 / 3)
    a = summary["tuners"]["a"]
    assert a["cells"]["s1"][0] == pytest.approx(0.5)  # mean of 0.9 and 0.1
    assert a["overall"] == pytest.approx((0.5 + 0.6) / 2)  # mean of per-system means


def test_mean_ranks_skip_incomplete_problems() -> None:
    rows = [_row("a", "s1", 0, 0.9), _row("b", "s1", 0, 0.5), _row("a", "s2", 0, 0.1)]
    summarise(rows)
    assert mean_ranks(rows) == {"a": 1.0, "b": 2.0}


def test_suite_has_every_surrogate() -> None:
    suite = suite_names()
    assert suite[:2] == ["synthetic10", "synthetic30"]
    assert all(s.startswith("surrogate_") for s in suite[2:]) and len(suite) > 2


def test_end_to_end_tiny(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    argv = [
        "--tuners",
        "random",
        "lhs",
        "--suite",
        "synthetic10",
        "--seeds",
        "1",
        "--budget",
        "10",
        "--processes",
        "1",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 0
    report = (out / "REPORT.md").read_text()
    assert "python -m paper.bench --tuners random lhs" in report
    assert "| random |" in report and "| lhs |" in report
    assert (out / "scores.png").stat().st_size > 1000
    cache = json.loads((out / "cache.json").read_text())
    lhs_key = f"lhs|synthetic10|0|10|{_tuner_digest('lhs')}"
    assert set(cache) == {f"random|synthetic10|0|10|{_tuner_digest('random')}", lhs_key}
    for result in cache.values():
        assert result["tests"] == 10 and result["dim"] == 10
        assert result["default"] <= result["best"] <= result["optimum"]
    # A rerun is served from the cache: a changed entry shows up in the report unchanged.
    cache[lhs_key]["best"] = cache[lhs_key]["optimum"]
    (out / "cache.json").write_text(json.dumps(cache))
    assert main(argv) == 0
    assert "| lhs | 1.00 | 1.000 |" in (out / "REPORT.md").read_text()
    # A changed tuner config is a different key: recomputed, not read back stale.
    assert _tuner_digest("lhs") != _tuner_digest("random")
