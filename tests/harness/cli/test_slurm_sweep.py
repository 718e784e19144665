"""A multirun sweep on a real (single-node) Slurm through hydra-submitit-launcher, every job
landing in one MLflow store, and jobs that die there (scancel, SIGKILL, the node going down)
ending as recorded statuses that a rerun of the sweep completes (issue #20 item 5). The
cluster, with job accounting, is started and stopped here (:mod:`tests.helpers.slurm`); the tests
skip where slurm-wlm and munge are not installed (the dying-job tests also need slurmdbd)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import slurm
from tests.helpers.sweeps import harness_sweep

pytestmark = pytest.mark.integration

#: Sessions slow enough (1 s a test) to be stopped in the middle.
SLOW = ("tuner=random", "system.adapter.delay_s=1")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[slurm.SlurmCluster]:
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    if not slurm.available():
        pytest.skip("slurm-wlm and munge are not installed (scripts/setup.sh --full), or not root")
    made = slurm.start(tmp_path_factory.mktemp("slurm"))
    try:
        yield made
    finally:
        made.stop()
        deadline = time.monotonic() + 15  # a job step may still be exiting
        while True:
            left = subprocess.run(
                ["pgrep", "-af", made.folder], capture_output=True, text=True
            ).stdout.strip()
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert not left, f"Slurm processes left running: {left}"


def test_a_sweep_of_four_sessions_runs_as_slurm_jobs_into_one_store(
    cluster: slurm.SlurmCluster, tmp_path: Path
) -> None:
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"

    def sweep(number: int) -> subprocess.CompletedProcess[str]:
        done = _sweep(
            cluster,
            tmp_path,
            "tuner=random,lhs",
            "seed=0,1",
            "budget=10",
            sweep_dir=f"multirun{number}",
        )
        assert isinstance(done, subprocess.CompletedProcess)
        return done

    done = sweep(1)
    assert done.returncode == 0, done.stderr[-3000:]
    # The jobs ran on Slurm: the controller completed four of them, each with exit status 0
    # (it logs a completion just after the job wrote the result the launcher waits for).
    log_file = Path(cluster.folder) / "log" / "slurmctld.log"
    deadline = time.monotonic() + 60
    while log_file.read_text().count("WEXITSTATUS 0") < 4 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert log_file.read_text().count("WEXITSTATUS 0") == 4, log_file.read_text()[-3000:]
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs(
        [e.experiment_id for e in client.search_experiments()],
        filter_string="tags.`harness.kind` = 'session'",
    )
    assert len(runs) == 4 and all(r.info.status == "FINISHED" for r in runs)
    # A rerun of the sweep skips the four finished sessions: no new session run.
    again = sweep(2)
    assert again.returncode == 0, again.stderr[-3000:]
    logs = "".join(p.read_text() for p in (tmp_path / "multirun2").rglob("*_log.out"))
    assert logs.count("finished before") == 4, logs[-3000:]
    rerun = client.search_runs(
        [e.experiment_id for e in client.search_experiments()],
        filter_string="tags.`harness.kind` = 'session'",
    )
    assert len(rerun) == 4
    assert sorted((r.data.tags["harness.tuner"], r.data.tags["harness.seed"]) for r in runs) == [
        ("lhs", "0"),
        ("lhs", "1"),
        ("random", "0"),
        ("random", "1"),
    ]


def _sweep(
    cluster: slurm.SlurmCluster,
    tmp_path: Path,
    *args: str,
    sweep_dir: str = "sweep",
    wait: bool = True,
) -> subprocess.Popen[str] | subprocess.CompletedProcess[str]:
    """``python -m harness -m`` on the cluster: named sessions that a rerun continues."""
    return harness_sweep(
        [
            "hydra/launcher=submitit_slurm",
            "hydra.launcher.timeout_min=10",
            "hydra.launcher.cpus_per_task=1",
            "hydra.launcher.mem_gb=1",
            f"hydra.sweep.dir={tmp_path / sweep_dir}",
            "system=synthetic10",
            f"results_dir={tmp_path}",
            "session.progress=false",
            "session.name=${hydra:runtime.choices.tuner}-s${seed}",
            "session.existing=resume",
            f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}",
            *args,
        ],
        env=cluster.env(),
        wait=wait,
        timeout_s=600,
    )


def _running(tmp_path: Path, job: int, tests: int, timeout_s: float = 180.0) -> dict[str, object]:
    """Job ``job``'s start outcome, once its session has stored ``tests`` tests."""
    outcome = tmp_path / "sweep" / str(job) / "harness_outcome.json"
    deadline = time.monotonic() + timeout_s
    while True:
        if outcome.exists():
            started = dict(json.loads(outcome.read_text()))
            log = tmp_path / "sessions" / str(started["session"]) / "observations.jsonl"
            if log.exists() and len(log.read_text().splitlines()) >= tests:
                return started
        assert time.monotonic() < deadline, f"job {job} did not get going"
        time.sleep(0.2)


def _stored(tmp_path: Path, session: str) -> tuple[str | None, int]:
    folder = tmp_path / "sessions" / session
    meta = json.loads((folder / "session.json").read_text())
    return meta.get("status"), len((folder / "observations.jsonl").read_text().splitlines())


def _needs_accounting(cluster: slurm.SlurmCluster) -> None:
    if not cluster.accounting:
        pytest.skip("slurmdbd and MariaDB are not installed: submitit cannot see a dead job")


@pytest.mark.deep
def test_a_cancelled_job_and_a_killed_one_end_as_statuses_and_a_rerun_finishes_both(
    cluster: slurm.SlurmCluster, tmp_path: Path
) -> None:
    """scancel → the session stops INTERRUPTED (MLflow: KILLED); SIGKILL of the other job (a
    node that dies) → Slurm FAILED and the sweep names it DIED; exit 1; the same command
    again finishes both with nothing lost or rerun."""
    from mlflow.tracking import MlflowClient

    _needs_accounting(cluster)
    proc = _sweep(cluster, tmp_path, *SLOW, "seed=0,1", "budget=20", wait=False)
    assert isinstance(proc, subprocess.Popen)
    try:
        cancelled, killed = _running(tmp_path, 0, 3), _running(tmp_path, 1, 3)
        assert cluster.run("scancel", str(cancelled["slurm_job"])).returncode == 0
        os.kill(int(str(killed["pid"])), signal.SIGKILL)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err[-3000:]
    report = out.split("sweep ", 1)[1]
    assert "0 of 2 job(s) finished" in report
    assert f"job 0 (random-s0, Slurm job {cancelled['slurm_job']}): INTERRUPTED" in report
    assert f"job 1 (random-s1, Slurm job {killed['slurm_job']}): DIED" in report
    states = cluster.run("sacct", "-X", "-n", "-P", "-o", "JobID,State").stdout
    assert (
        f"{cancelled['slurm_job']}|CANCELLED" in states
        and f"{killed['slurm_job']}|FAILED" in states
    )
    status, kept = _stored(tmp_path, "random-s0")
    assert status == "INTERRUPTED" and 3 <= kept < 20
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs(
        [e.experiment_id for e in client.search_experiments()],
        filter_string="tags.`harness.kind` = 'session'",
    )
    assert {r.info.run_name: r.info.status for r in runs}.get("random-s0") in ("KILLED", None)
    assert any(r.info.status == "KILLED" for r in runs)

    again = _sweep(cluster, tmp_path, *SLOW, "seed=0,1", "budget=20")
    assert isinstance(again, subprocess.CompletedProcess)
    assert again.returncode == 0, again.stdout[-3000:]
    assert "2 of 2 job(s) finished" in again.stdout
    assert _stored(tmp_path, "random-s0") == ("FINISHED", 20)
    assert _stored(tmp_path, "random-s1") == ("FINISHED", 20)


@pytest.mark.deep
def test_a_job_whose_node_goes_down_is_interrupted_then_requeued_by_slurm_and_finished(
    cluster: slurm.SlurmCluster, tmp_path: Path
) -> None:
    """The node is set DOWN mid-session: Slurm signals the job (its session stops
    INTERRUPTED; the sweep exits 130 and says so) and requeues it; the requeued job continues
    the same session to the end on its own, and a rerun of the sweep then skips it."""
    _needs_accounting(cluster)
    proc = _sweep(cluster, tmp_path, *SLOW, "seed=7", "budget=15", wait=False)
    assert isinstance(proc, subprocess.Popen)
    try:
        started = _running(tmp_path, 0, 3)
        down = cluster.run(
            "scontrol", "update", f"NodeName={cluster.node}", "State=DOWN", "Reason=test"
        )
        assert down.returncode == 0, down.stderr
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-3000:]
    assert "job 0 (random-s7, Slurm job" in out and "INTERRUPTED" in out.split("sweep ", 1)[1]
    status, kept = _stored(tmp_path, "random-s7")
    assert status == "INTERRUPTED" and kept < 15
    cluster.wait_idle()  # ReturnToService=2: the node is back once slurmd registers
    job = str(started["slurm_job"])
    deadline = time.monotonic() + 240
    while True:
        queued = cluster.run("squeue", "-h", "-j", job, "-o", "%T %r").stdout.strip()
        if not queued:
            break
        assert time.monotonic() < deadline, f"the requeued job did not finish: {queued}"
        if queued == "PENDING BeginTime":  # Slurm holds a requeued job back a while: not here
            cluster.run("scontrol", "update", f"JobId={job}", "StartTime=now")
        elif "held" in queued:  # a launch tried while the node was still down: held
            cluster.run("scontrol", "release", job)
        elif "DOWN" in queued:  # the admin brings the node back
            cluster.run("scontrol", "update", f"NodeName={cluster.node}", "State=RESUME")
        time.sleep(1)
    assert _stored(tmp_path, "random-s7") == ("FINISHED", 15)
    again = _sweep(cluster, tmp_path, *SLOW, "seed=7", "budget=15")
    assert isinstance(again, subprocess.CompletedProcess)
    assert again.returncode == 0 and "1 of 1 job(s) finished" in again.stdout, again.stdout[-3000:]
    logs = "".join(p.read_text() for p in (tmp_path / "sweep").rglob("*_log.out"))
    assert "finished before" in logs  # the job saw the session finished: skipped
