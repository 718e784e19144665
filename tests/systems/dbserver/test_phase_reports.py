"""The pure parts of the phase and reload-bias reports (paper.phase_times, paper.reload_bias)."""

from __future__ import annotations

from typing import Any

from harness.records import Observation, Status
from paper.phase_times import phase_table
from paper.reload_bias import paired_line, spread_line


def observation(duration_s: float, tps: float = 100.0, **extra: Any) -> Observation:
    return Observation(
        trial=0,
        config={},
        status=Status.SUCCEEDED,
        score=tps,
        metrics={"tps": tps},
        duration_s=duration_s,
        extra=extra,
    )


def test_phase_table_has_each_phase_the_test_and_the_non_workload_share() -> None:
    tests = [
        observation(12.0, reset_s=1.0, apply_s=0.0, start_s=0.5, run_s=10.0, stop_s=0.5),
        observation(11.0, reset_s=0.0, apply_s=0.0, start_s=0.5, run_s=10.0, stop_s=0.5),
        observation(3.0),  # a test that crashed before its run: no phases but its wall
    ]
    rows = {line.split(" | ")[0].strip("| "): line for line in phase_table(tests)[2:]}
    assert rows["reset"] == "| reset | 0.500 | 0.000 | 1.000 |"
    assert rows["whole test"] == "| whole test | 11.000 | 3.000 | 12.000 |"
    assert rows["non-workload share"] == "| non-workload share | 0.129 | 0.091 | 0.167 |"
    assert phase_table([])[2] == "| reset | – | – | – |"


def test_reload_bias_lines() -> None:
    assert spread_line("restarted", [90.0, 100.0, 110.0]) == (
        "restarted: median 100.0 (min 90.0, max 110.0, spread 20.0 %) over 3 tests"
    )
    runs = {
        "restarted": [observation(1, 100.0), observation(1, 200.0)],
        "reloaded": [observation(1, 90.0), observation(1, 220.0)],
    }
    assert paired_line(runs, "tps") == (
        "paired: median +0.0 % (min -10.0, max +10.0); reloaded lower in 1 of 2 pairs"
    )
