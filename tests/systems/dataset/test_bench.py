"""The benchmark's recorded-data checks: problems within the table's noise are not scored,
and scores under each default rule are reported where the rules differ."""

from __future__ import annotations

import math
from typing import Any

from paper.bench_score import noise_verdict, report_markdown, summarise


def _row(tuner: str, system: str, best: float, noise: float | None) -> dict[str, Any]:
    return {
        "tuner": tuner,
        "system": system,
        "seed": 0,
        "best": best,
        "default": 0.0,
        "optimum": 1.0,
        "tests": 10,
        "compute_s": 0.1,
        "dim": 3,
        "noise": noise,
        "default_by_rule": {"data row 1": 0.0, "median/mode": 0.5},
    }


def test_noise_verdicts() -> None:
    assert noise_verdict(_row("a", "s", 0.5, 0.6)) == "within noise"
    assert noise_verdict(_row("a", "s", 0.5, 0.1)) == "ok"
    assert noise_verdict(_row("a", "s", 0.5, None)) == "noise not measured"
    assert noise_verdict({"default": 0.0, "optimum": 1.0}) == ""  # not a recorded problem


def test_problems_within_noise_are_not_scored_and_rules_are_reported() -> None:
    rows = [
        _row("a", "noisy", 0.9, 0.6),
        _row("b", "noisy", 0.1, 0.6),
        _row("a", "clean", 0.9, None),
        _row("b", "clean", 0.6, None),
    ]
    summary = summarise(rows)
    assert all(math.isnan(r["norm"]) for r in rows if r["system"] == "noisy")
    assert summary["tuners"]["a"]["rank"] == 1.0  # ranked on the clean problem only
    checks = summary["recorded"]
    assert checks["noisy"]["verdict"] == "within noise"
    assert checks["clean"]["by_rule"]["median/mode"]["a"] == (0.9 - 0.5) / (1.0 - 0.5)
    text = report_markdown(summary, "python -m paper.bench")
    assert "## Recorded-data problems: noise and default rules" in text
    assert "| noisy | 1 | 0.6 | within noise |" in text
    assert "Scores on clean against the default of each rule" in text
