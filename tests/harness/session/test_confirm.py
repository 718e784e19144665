"""End-of-session confirmation (harness.session.confirm): alternating re-measurements of the
default and the best, resumable, reported with their spread."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.report import summary
from harness.errors import ConfigError
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.confirm import CONFIRM_KEY, confirmation, pending_roles
from harness.session.end import session_metrics
from harness.session.options import SessionOptions
from harness.session.session import Session
from harness.store.samples import SampleStore
from harness.tracking.tracker import NullTracker
from systems.synthetic import SyntheticSystem, SyntheticWorkload


def _ref(role: str, value: float, ok: bool = True) -> Observation:
    return Observation(
        trial=0,
        config={},
        status=Status.SUCCEEDED if ok else Status.FAILED,
        score=value if ok else None,
        metrics={"throughput": value} if ok else {},
        extra={CONFIRM_KEY: role},
    )


def test_pending_runs_alternate_and_resume_where_they_stopped() -> None:
    assert pending_roles(2, []) == ["default", "best", "default", "best"]
    assert pending_roles(2, [_ref("default", 1)]) == ["best", "default", "best"]
    done = [_ref(r, 1) for r in ("default", "best", "default", "best")]
    assert pending_roles(2, done) == []
    assert pending_roles(0, []) == []


def test_confirmed_improvement_is_of_medians_with_the_pairs_range() -> None:
    refs = [
        _ref("default", 100),
        _ref("best", 130),
        _ref("default", 110),
        _ref("best", 121),
        _ref("default", 90),
        _ref("best", 117),
        _ref("best", 0, ok=False),
    ]
    found = confirmation(Objective("throughput", "max"), refs)
    assert found is not None
    assert found.improvement == pytest.approx(121 / 100 - 1)
    assert found.low == pytest.approx(121 / 110 - 1) and found.high == pytest.approx(0.3)
    assert found.failed == 1
    line = found.line(lambda v: f"{v:g}")
    assert line.startswith("confirmed improvement: +21.0%") and "3 runs each" in line
    minimise = confirmation(Objective("throughput", "min"), refs)
    assert minimise is not None and minimise.improvement == pytest.approx(-0.21)
    assert confirmation(Objective("throughput", "max"), refs[:1]) is None


def _session(tmp_path: Path, budget: int, confirm: int | None) -> Session:
    from baselines.sampling import LHSTuner

    store = SampleStore(tmp_path / "s")
    if not store.exists:
        store.create({"session_id": "s", "experiment": "x"})
    return Session(
        session_id="s",
        store=store,
        tuner_factory=LHSTuner,
        system=SyntheticSystem("10", noise=0.05),
        workload=SyntheticWorkload(),
        objective=Objective("throughput", "max"),
        tracker=NullTracker(),
        options=SessionOptions(budget=budget, progress=False, confirm=confirm),
    )


def test_a_session_confirms_its_best_after_the_budget_and_a_resume_completes_it(
    tmp_path: Path,
) -> None:
    result = _session(tmp_path, 12, 2).run()
    runs = [r for r in result.references if CONFIRM_KEY in r.extra]
    assert [r.extra[CONFIRM_KEY] for r in runs] == ["default", "best", "default", "best"]
    best = result.best
    assert best is not None and best.trial > 0
    assert all(r.config == best.config for r in runs if r.extra[CONFIRM_KEY] == "best")
    assert all(r.is_default for r in runs if r.extra[CONFIRM_KEY] == "default")
    assert len(result.observations) == 12  # not counted in the budget
    assert all(o.extra["loadavg_1m"] >= 0 for o in result.observations if o.ok)
    assert "confirmed improvement:" in summary(result)
    assert "improvement_confirmed" in session_metrics(result)
    # The nearest default is a default measurement, never one of the best's re-runs.
    nearest = result.nearest_default()
    assert nearest is not None and nearest.is_default
    # Raising the confirmation on resume runs only the missing ones; no test is rerun.
    again = _session(tmp_path, 12, 3).run()
    runs = [r for r in again.references if CONFIRM_KEY in r.extra]
    assert len(runs) == 6 and [r.trial for r in again.observations] == list(range(12))


def test_simulated_systems_do_not_confirm_by_default_real_ones_do(tmp_path: Path) -> None:
    session = _session(tmp_path, 5, None)
    assert session.reference_tests.confirm_rounds == 0
    session.system.kind = "real"  # type: ignore[misc]
    assert session.reference_tests.confirm_rounds == 0  # a 5-test smoke session
    session.options.budget = 20
    assert session.reference_tests.confirm_rounds == 3
    with pytest.raises(ConfigError, match=r"session\.confirm"):
        SessionOptions(confirm=-1)
