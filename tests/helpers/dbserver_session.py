"""Helpers for the real tests of database systems: a short LHS session and a workload that
hangs on a lock held by another connection (used by tests/systems/postgres/ and mysql/)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from baselines.sampling import LHSTuner
from harness.api import run_objects
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.system import System, Workload


def short_session(
    system: System, workload: Workload, results_dir: Path, budget: int = 3
) -> list[Observation]:
    """An LHS session of ``budget`` tests in ``results_dir`` (the session sets the system up in
    ``results_dir/work/<session id>`` and always tears it down); return the observations."""
    result = run_objects(
        LHSTuner,
        system,
        workload,
        budget=budget,
        seed=0,
        results_dir=results_dir,
        objective=Objective.for_workload(workload.metrics),
        first_timeout_s=60.0,
        start_timeout_s=60.0,
    )
    assert result.status == "FINISHED", result.message
    return result.observations


def check_session(observations: list[Observation], workload: Workload) -> None:
    assert len(observations) == 3
    assert observations[0].is_default
    for obs in observations:
        assert obs.status is Status.SUCCEEDED, (obs.status, obs.message, obs.extra)
        assert set(obs.metrics) == {m.name for m in workload.metrics}
        assert obs.metrics[workload.metrics[0].name] > 0


class LockedWorkload(Workload):
    """Runs ``inner`` while another connection holds a lock it needs: a genuinely hung run."""

    def __init__(self, inner: Workload, take_lock: Callable[[], Any]) -> None:
        self.inner = inner
        self.take_lock = take_lock
        self.metrics = inner.metrics
        self.duration_s = inner.duration_s
        self.name = inner.name

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        holder = self.take_lock()
        try:
            return self.inner.run(system, timeout_s)
        finally:
            holder.close()
