"""The report statistics on small inputs with known answers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from paper import stats
from paper.bench_score import (
    FAITHFUL_TAU,
    compute_by_dim,
    compute_cell,
    fidelity_split,
    grouped_summaries,
    rank_table,
    report_sections,
    surrogate_taus,
)


def test_sign_test_of_8_wins_and_2_losses() -> None:
    # 2 * P(X <= 2), X ~ Bin(10, 1/2) = 2 * 56 / 1024
    assert stats.sign_test(8, 2) == pytest.approx(0.109375)
    assert stats.sign_test_text(8, 2) == "0.109"
    assert stats.sign_test(5, 5) == pytest.approx(1.0)
    assert stats.sign_test(0, 0) == 1.0
    assert stats.sign_test(10, 0) == pytest.approx(2 / 1024)


def test_friedman_on_a_textbook_example() -> None:
    # 4 blocks, 3 treatments: rank sums 5, 7, 12; chi2 = 12/(4*3*4) * (25+49+144) - 3*4*4 = 6.5
    got = stats.friedman({"a": [1, 2, 1, 1], "b": [2, 1, 2, 2], "c": [3, 3, 3, 3]})
    assert got.statistic == pytest.approx(6.5)
    assert got.pvalue == pytest.approx(math.exp(-6.5 / 2))  # chi2 with 2 df
    assert got.blocks == 4 and got.k == 3
    assert "χ² = 6.50 (df 2), p = 0.0388" in got.text()
    assert math.isnan(stats.friedman({"a": [1.0], "b": [2.0], "c": [3.0]}).pvalue)


def test_nemenyi_critical_difference_matches_demsar() -> None:
    # Demšar (2006): q_0.05 = 2.569 for k = 4; N = 14 data sets give CD = 1.25
    assert stats.nemenyi_cd(4, 14) == pytest.approx(1.2536, abs=1e-3)
    assert stats.nemenyi_cd(2, 10) == pytest.approx(1.960 * math.sqrt(6 / 60), abs=1e-3)
    assert math.isnan(stats.nemenyi_cd(1, 10))


def test_bootstrap_intervals_are_fixed_and_bracket_the_mean() -> None:
    values = [0.1, 0.2, 0.3, 0.4]
    low, high = stats.bootstrap_interval(values)
    assert low < 0.25 < high and (low, high) == stats.bootstrap_interval(values)
    assert low >= 0.1 and high <= 0.4
    assert stats.bootstrap_interval([0.3, 0.3]) == (0.3, 0.3)
    assert all(math.isnan(x) for x in stats.bootstrap_interval([0.3]))
    # two seeds each: the difference of means lies between the extreme pairings
    assert stats.bootstrap_difference([0.1, 0.2], [0.0, 0.05]) == pytest.approx((0.05, 0.2))
    assert all(math.isnan(x) for x in stats.bootstrap_difference([0.1], [0.0, 0.1]))


def test_the_cd_diagram_is_a_png(tmp_path: Path) -> None:
    out = tmp_path / "cd.png"
    cd = stats.plot_cd({"classytune": 1.5, "smac": 2.0, "random": 2.5}, 10, out, "test")
    assert cd == pytest.approx(stats.nemenyi_cd(3, 10))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _row(tuner: str, system: str, seed: int, norm_best: float, dim: int = 10) -> dict:
    return {
        "tuner": tuner,
        "system": system,
        "seed": seed,
        "best": norm_best,
        "default": 0.0,
        "optimum": 1.0,
        "tests": 10,
        "compute_s": 0.1 * (seed + 1),
        "dim": dim,
        "norm": norm_best,
    }


def test_rank_table_keeps_blocks_every_tuner_ran_in_one_order() -> None:
    rows = [_row("a", "s", 0, 0.9), _row("b", "s", 0, 0.5), _row("a", "s", 1, 0.2)]
    rows += [_row("b", "s", 1, 0.2), _row("a", "t", 0, 0.7)]  # t: b did not run it
    assert rank_table(rows) == {"a": [1.0, 1.5], "b": [2.0, 1.5]}


def test_computation_times_are_medians_and_ranges_per_dimension() -> None:
    rows = [_row("a", "s", k, 0.5, dim=10) for k in range(3)] + [_row("a", "h", 0, 0.5, 110)]
    times = compute_by_dim(rows)
    assert times == {10: pytest.approx([0.1, 0.2, 0.3]), 110: pytest.approx([0.1])}
    assert compute_cell(times[10]) == "0.2 s [0.1 – 0.3] (3)"
    assert compute_cell([]) == "–"


def test_fidelity_comes_from_the_surrogates_table() -> None:
    taus = surrogate_taus()
    assert taus["surrogate_mysql_oltp"] == pytest.approx(0.73)
    assert taus["surrogate_cassandra_ycsba"] < FAITHFUL_TAU
    faithful, low = fidelity_split(
        ["surrogate_tomcat~noise5", "surrogate_cassandra_ycsba", "surrogate_new"], taus
    )
    assert faithful == ["surrogate_tomcat~noise5"]  # tau 0.43: at the threshold
    assert low == ["surrogate_cassandra_ycsba", "surrogate_new"]  # unknown: not vouched for


def test_the_evaluation_report_splits_by_fidelity_and_carries_the_statistics() -> None:
    systems = ("surrogate_tomcat", "surrogate_cassandra_ycsba")
    jobs = [(t, s, k, 10) for t in ("a", "b", "c") for s in systems for k in (0, 1)]
    score = {"a": 0.9, "b": 0.5, "c": 0.1}
    rows = [_row(t, s, k, score[t]) for t, s, k, _ in jobs]
    for r in rows:
        del r["norm"]
    groups = grouped_summaries(rows, jobs)
    labels = [label for label, _ in groups]
    assert len(labels) == 3
    assert "faithful surrogates (held-out τ ≥ 0.43: tomcat)" in labels[1]
    assert "low-fidelity surrogates (τ < 0.43: cassandra_ycsba)" in labels[2]
    assert groups[1][1]["problems"] == 2 and groups[0][1]["problems"] == 4
    text = report_sections(groups, "python -m paper.bench")
    assert "Friedman test over 4 (problem, seed) blocks of 3 tuners: χ² = 8.00 (df 2)" in text
    assert "Nemenyi critical difference at α = 0.05" in text
    assert "| a | 0.15 s [0.1 – 0.2] (4) |" in text  # the whole group's 4 sessions at d=10
    assert "| a | 0.15 s [0.1 – 0.2] (2) |" in text  # a fidelity side's 2


def test_the_report_gives_the_default_tuners_head_to_head_with_its_sign_test() -> None:
    from paper.bench_score import pairwise_counts

    table = {"classytune": [1.0, 1.0, 2.0, 1.5], "smac": [2.0, 2.0, 1.0, 1.5]}
    assert pairwise_counts(table, "classytune", "smac") == (2, 1, 1)
    jobs = [(t, "synthetic10", k, 10) for t in ("classytune", "smac") for k in range(10)]
    rows = [
        _row(t, s, k, (0.9 if k < 8 else 0.1) if t == "classytune" else 0.5) for t, s, k, _ in jobs
    ]
    for r in rows:
        del r["norm"]
    text = report_sections(grouped_summaries(rows, jobs), "python -m paper.bench")
    assert "| smac | 8 | 2 | 0 | 0.109 |" in text
