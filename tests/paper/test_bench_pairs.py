"""paper.bench_pairs: paired wins and leave-one-out scores, on rows and on the committed cache."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from paper import bench_pairs

ROOT = Path(__file__).resolve().parents[2]
EVAL_CACHE = ROOT / "results" / "bench" / "eval" / "cache.json"


def _row(tuner: str, system: str, seed: int, best: float, budget: int = 100) -> dict:
    return {
        "tuner": tuner, "system": system, "seed": seed, "budget": budget,
        "default": 0.0, "best": best, "optimum": 1.0,
    }  # fmt: skip


def test_wins_losses_and_ties_are_paired_per_problem_and_group() -> None:
    rows = [
        _row("a", "s1", 0, 0.9), _row("b", "s1", 0, 0.5),
        _row("a", "s1", 1, 0.2), _row("b", "s1", 1, 0.4),
        _row("a", "s2", 0, 0.3), _row("b", "s2", 0, 0.3),
        _row("a", "s1~noise5", 0, 0.1), _row("b", "s1~noise5", 0, 0.6),
        _row("a", "s3", 0, 0.7),  # b never finished s3: not a pair
        {"tuner": "b", "system": "s3", "seed": 0, "budget": 100, "error": "raised"},
    ]  # fmt: skip
    groups = bench_pairs.scores_by_group(rows)
    assert sorted(groups) == ["no noise", "noise5"]
    assert bench_pairs.head_to_head(groups["no noise"], "a", "b") == (1, 1, 1)
    assert bench_pairs.head_to_head(groups["noise5"], "a", "b") == (0, 1, 0)


def test_leave_one_out_shows_a_lead_that_rests_on_one_system() -> None:
    rows = [
        _row("a", "s1", 0, 1.0), _row("b", "s1", 0, 0.0),
        _row("a", "s2", 0, 0.4), _row("b", "s2", 0, 0.5),
        _row("a", "s3", 0, 0.4), _row("b", "s3", 0, 0.5),
    ]  # fmt: skip
    table = bench_pairs.leave_one_out(bench_pairs.scores_by_group(rows)["no noise"], ["a", "b"])
    assert table[""]["a"] == pytest.approx(0.6) and table[""]["b"] == pytest.approx(1 / 3)
    assert table["s1"] == {"a": pytest.approx(0.4), "b": pytest.approx(0.5)}


def test_budget_filter_and_duplicate_jobs() -> None:
    rows = [_row("a", "s1", 0, 0.9, budget=30), _row("a", "s1", 0, 0.5)]
    only = bench_pairs.scores_by_group(rows, budget=100)["no noise"]
    assert only == {("a", "s1", 0): 0.5}
    with pytest.raises(ValueError, match="two cached sessions"):
        bench_pairs.scores_by_group([*rows, _row("a", "s1", 0, 0.7)], budget=100)


def test_the_committed_evaluation_cache_pairs_every_problem(tmp_path: Path, capsys) -> None:
    out = tmp_path / "h2h.md"
    code = bench_pairs.main(
        ["--cache", str(EVAL_CACHE), "--tuner", "classytune", "--against", "smac", "rfr",
         "--budget", "100", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    cache = json.loads(EVAL_CACHE.read_text())
    groups = bench_pairs.scores_by_group(bench_pairs.rows_of_one_run(cache), 100)
    assert sorted(groups, key=bench_pairs._noise_level) == ["no noise", "noise5", "noise15"]
    for scores in groups.values():
        # 8 surrogates x 10 seeds, every one finished by both
        assert sum(bench_pairs.head_to_head(scores, "classytune", "smac")) == 80
        assert not any(math.isnan(v) for v in scores.values())
    assert out.read_text().startswith("# classytune head to head")
    assert "| smac |" in capsys.readouterr().out


def test_a_missing_cache_is_one_line(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        bench_pairs.main(["--cache", str(tmp_path / "none.json"), "--against", "smac"])
    assert "run python -m paper.bench first" in capsys.readouterr().err


def test_a_problem_within_its_tables_noise_is_not_scored_as_in_the_bench() -> None:
    noisy = {**_row("a", "s1", 0, 0.9), "noise": 0.6}  # gap 1.0 <= 2 x 0.6
    scores = bench_pairs.scores_by_group([noisy, {**_row("b", "s1", 0, 0.1), "noise": 0.6}])
    assert math.isnan(scores["no noise"][("a", "s1", 0)])
    assert bench_pairs.head_to_head(scores["no noise"], "a", "b") == (0, 0, 0)


def test_seeds_keep_only_the_first_n_and_gains_read_as_fig6() -> None:
    rows = [
        {**_row("a", "s1", 0, 0.0), "default": 100.0, "best": 125.0},
        {**_row("a", "s1", 1, 0.0), "default": 100.0, "best": 115.0},
        {**_row("a", "s1", 5, 0.0), "default": 100.0, "best": 300.0},  # beyond --seeds 2
        # a minimised metric: scores are negated times, 10 s -> 8 s is 20 % less time
        {**_row("a", "t~noise5", 0, 0.0), "default": -10.0, "best": -8.0},
        {**_row("b", "s1", 0, 0.0), "default": 0.0, "best": 1.0},  # no ratio to a zero default
    ]
    gains = bench_pairs.gains_by_group(rows, budget=100, seeds=2)
    assert gains["no noise"] == {
        ("a", "s1", 0): pytest.approx(0.25),
        ("a", "s1", 1): pytest.approx(0.15),
        ("b", "s1", 0): pytest.approx(math.nan, nan_ok=True),
    }
    assert gains["noise5"] == {("a", "t~noise5", 0): pytest.approx(0.2)}
    table = bench_pairs.gains_table(gains["no noise"], ["a", "b"])
    assert table[2] == "| s1 | +20.0% [+15.0% – +25.0%] (2) | – |"
    one = bench_pairs.gains_table(gains["noise5"], ["a"])
    assert one[2] == "| t~noise5 | +20.0% (1) |"
    assert ("a", "s1", 5) not in bench_pairs.scores_by_group(rows, seeds=2)["no noise"]


def test_the_gains_option_adds_fig6_tables(tmp_path: Path) -> None:
    out = tmp_path / "panel.md"
    code = bench_pairs.main(
        ["--cache", str(EVAL_CACHE), "--tuner", "classytune_paper", "--against", "bestconfig",
         "--budget", "100", "--seeds", "3", "--gains", "--groups", "none", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    text = out.read_text()
    assert "## no noise" in text and "## noise5" not in text
    assert "Fig. 6's measure" in text
    # 3 seeds kept: every cell of the gains table counts 3
    rows = [line for line in text.splitlines() if line.startswith("| surrogate_tomcat |")]
    row = next(line for line in rows if "%" in line)  # not the leave-one-out row
    assert row.count("(3)") == 2


def test_an_unknown_noise_group_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit):
        bench_pairs.main(
            ["--cache", str(EVAL_CACHE), "--against", "smac", "--groups", "noise99"]
        )  # fmt: skip
    assert "the cache has ['no noise', 'noise15', 'noise5']" in capsys.readouterr().err


def test_head_to_head_counts_carry_their_sign_test() -> None:
    scores = {("a", f"s{k}", 0): 0.9 for k in range(10)}
    scores |= {("b", f"s{k}", 0): 0.5 if k < 8 else 0.95 for k in range(10)}
    scores |= {("a", "tie", 0): 0.5, ("b", "tie", 0): 0.5}
    text = bench_pairs.report({"no noise": scores}, "a", ["b"])
    assert "| b | 8 | 2 | 1 | 0.109 |" in text  # the tie is left out of the test
    assert "ties are left out" in text


def test_a_job_cached_under_two_code_digests_counts_with_its_first_session() -> None:
    old = {f"a|s1|{seed}|100|old": _row("a", "s1", seed, 0.5) for seed in range(3)}
    new = {"a|s1|0|100|new": _row("a", "s1", 0, 0.9)}
    rows = bench_pairs.rows_of_one_run({**old, **new})
    assert len(rows) == 3 and all(r["best"] != 0.9 for r in rows)
    bench_pairs.scores_by_group(rows)  # no job twice
