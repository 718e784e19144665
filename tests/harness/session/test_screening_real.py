"""Screening rungs on a real SQLite worker: screening runs are real runs of a shorter window,
the promoted configurations run whole, and the answer is a full test."""

from __future__ import annotations

from pathlib import Path

import pytest

from baselines.sampling import RandomTuner
from harness import api
from harness.records import Status
from harness.session.screening import fidelity_of
from harness.system import System
from systems.sqlite import SQLiteOLTP, SQLiteSystem

pytestmark = pytest.mark.integration


class Windows(SQLiteOLTP):
    """The SQLite workload, noting the window of each run and what the worker committed."""

    def __init__(self) -> None:
        super().__init__(mix="readwrite", duration_s=3.0, rows=2000, seed=3)
        self.runs: list[tuple[float, float]] = []

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        metrics = super().run(system, timeout_s)
        self.runs.append((self.duration_s, metrics["transactions"] / metrics["tps"]))
        return metrics


def test_screening_runs_are_shorter_real_runs_and_the_answer_is_full(tmp_path: Path) -> None:
    workload = Windows()
    result = api.run_objects(
        RandomTuner,
        SQLiteSystem(knob_set="all"),
        workload,
        budget=8,
        results_dir=tmp_path,
        seed=5,
        progress=False,
        confirm=0,
        fidelity=[0.34, 1.0],
        fidelity_promote=0.34,
    )
    assert result.status == "FINISHED", result.message
    fidelities = [fidelity_of(o) for o in result.observations]
    assert fidelities[0] == 1.0 and 0.34 in fidelities and fidelities[1:].count(1.0) >= 1
    windows = sorted({window for window, _ in workload.runs})
    assert windows == [pytest.approx(1.02), 3.0]
    for window, measured_s in workload.runs:  # the worker measured the window it was given
        assert measured_s == pytest.approx(window, rel=0.35)
    assert all(o.status is Status.SUCCEEDED for o in result.observations)
    assert result.best is not None and fidelity_of(result.best) == 1.0
