"""MapReduce LocalJobRunner for real: a small job, a JVM that cannot start, budget-3 LHS."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.api import run_objects
from harness.errors import SystemStartError
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from systems.mapreduce import MapReduceJob, MapReduceSystem
from tests.helpers.requirements import NEEDS_JAVAC, NEEDS_PYSPARK

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    NEEDS_PYSPARK,
    NEEDS_JAVAC,
]

OBJECTIVE = Objective("job_duration_s", "min")


@pytest.fixture(scope="module")
def mapreduce(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    system = MapReduceSystem(knob_set="10")
    workload = MapReduceJob(job="join", scale=0.1)
    system.setup(tmp_path_factory.mktemp("mr"), workload)
    yield system, workload
    system.teardown()


def test_job_chain_runs_with_tuned_knobs(mapreduce) -> None:  # type: ignore[no-untyped-def]
    system, workload = mapreduce
    config = dict(
        system.space.default(),
        **{
            "mapreduce.job.reduces": 2,
            "mapreduce.local.reduce.tasks.maximum": 2,
            "mapreduce.map.output.compress": True,
        },
    )
    obs = run_test(system, workload, OBJECTIVE, config, 0)
    assert obs.status is Status.SUCCEEDED, (obs.message, obs.extra)
    assert 0 < obs.metrics["job_duration_s"] < obs.metrics["total_wall_s"]
    parts = list((system.root / "out" / "revenue").glob("part-r-*"))
    assert len(parts) == 2 and any(p.stat().st_size > 0 for p in parts)


def test_jvm_that_cannot_start_is_a_crash(tmp_path: Path) -> None:
    system = MapReduceSystem(extra_java_opts="-XX:+NoSuchOption")
    # No full setup: the JVM refuses the flag before it reads any class or data.
    system.root = tmp_path / "mapreduce"
    system.root.mkdir()
    system.hadoop_jars = system._find_jars()
    system.apply(system.space.default())
    with pytest.raises(SystemStartError, match="NoSuchOption") as info:
        system.run_request("run", "wordcount", tmp_path / "data", 60)
    assert "Could not create the Java Virtual Machine" in info.value.log_tail


def test_budget_3_lhs_session(tmp_path: Path) -> None:
    from baselines.sampling import LHSTuner

    system = MapReduceSystem(knob_set="10")  # run_objects sets it up and tears it down
    workload = MapReduceJob(job="join", scale=0.1)
    result = run_objects(
        LHSTuner, system, workload, budget=3, seed=2, results_dir=tmp_path, objective=OBJECTIVE
    )
    observations = result.observations
    assert result.status == "FINISHED", result.message
    assert system.root == tmp_path / "work" / result.session_id / "mapreduce"
    assert len(observations) == 3 and observations[0].status is Status.SUCCEEDED
    assert all(o.status in (Status.SUCCEEDED, Status.FAILED, Status.CRASHED) for o in observations)
