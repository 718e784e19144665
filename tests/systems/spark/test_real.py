"""Spark local mode for real: a small job, a configuration that cannot start, budget-3 LHS."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from harness.api import run_objects
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from systems.spark import SparkJob, SparkSystem

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("pyspark") is None,
        reason="pyspark not installed (pip install pyspark)",
    ),
    pytest.mark.skipif(shutil.which("java") is None, reason="no java on PATH (Spark needs 17+)"),
]

OBJECTIVE = Objective("job_duration_s", "min")


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    system = SparkSystem(knob_set="30")
    workload = SparkJob(job="wordcount", scale=0.05)
    system.setup(tmp_path_factory.mktemp("spark"), workload)
    yield system, workload
    system.teardown()


def test_job_runs_and_reports_every_metric(spark) -> None:  # type: ignore[no-untyped-def]
    system, workload = spark
    config = dict(
        system.space.default(), **{"spark.sql.shuffle.partitions": 4, "spark.serializer": "kryo"}
    )
    obs = run_test(system, workload, OBJECTIVE, config, 0)
    assert obs.status is Status.SUCCEEDED, (obs.message, obs.extra)
    assert set(obs.metrics) == {"job_duration_s", "total_wall_s", "startup_s"}
    assert 0 < obs.metrics["job_duration_s"] < obs.metrics["total_wall_s"]


def test_driver_memory_below_minimum_is_a_crash_with_cause(spark) -> None:  # type: ignore[no-untyped-def]
    system, workload = spark
    config = dict(system.space.default(), **{"spark.driver.memory": 256})
    obs = run_test(system, workload, OBJECTIVE, config, 1)
    assert obs.status is Status.CRASHED
    assert "Insufficient driver memory" in obs.message
    assert "INVALID_DRIVER_MEMORY" in obs.extra["log_tail"]


def test_budget_3_lhs_session(tmp_path: Path) -> None:
    from baselines.sampling import LHSTuner

    system = SparkSystem(knob_set="30")  # run_objects sets it up and tears it down
    workload = SparkJob(job="wordcount", scale=0.05)
    result = run_objects(
        LHSTuner, system, workload, budget=3, seed=3, results_dir=tmp_path, objective=OBJECTIVE
    )
    observations = result.observations
    assert result.status == "FINISHED", result.message
    assert system.root == tmp_path / "work" / result.session_id / "spark"
    assert len(observations) == 3 and observations[0].status is Status.SUCCEEDED
    assert all(o.status in (Status.SUCCEEDED, Status.CRASHED) for o in observations)
