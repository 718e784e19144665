"""A sweep ends by saying what became of each job, and its exit code tells (issue #20 item 5).

Real sweeps of the synthetic system: a bad job, a sweep stopped by Ctrl-C, and a job whose
worker process is killed with SIGKILL (as a dead node leaves it); each is then rerun with the
same command, which skips the finished sessions and continues the others.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from harness.cli.sweep_outcome import OUTCOME_FILE
from tests.helpers.sweeps import harness_sweep

NAMED = ["session.name=${hydra:runtime.choices.tuner}-s${seed}", "session.existing=resume"]


def _sweep(
    tmp_path: Path, *args: str, wait: bool = True
) -> subprocess.Popen[str] | subprocess.CompletedProcess[str]:
    return harness_sweep(
        [
            "system=synthetic10",
            f"results_dir={tmp_path}",
            f"hydra.sweep.dir={tmp_path / 'sweep'}",
            "session.progress=false",
            "tracking=none",
            *args,
        ],
        wait=wait,
    )


def _outcome(tmp_path: Path, job: int, timeout_s: float = 60.0) -> dict[str, object]:
    path = tmp_path / "sweep" / str(job) / OUTCOME_FILE
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"job {job} wrote no outcome"
        time.sleep(0.1)
    return dict(json.loads(path.read_text()))


def _tests(tmp_path: Path, session: str) -> int:
    log = tmp_path / "sessions" / session / "observations.jsonl"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_bad_job_is_named_and_the_sweep_exits_1(tmp_path: Path) -> None:
    done = _sweep(tmp_path, "tuner=random", "+system.fixed.io_threads=1000,2", "budget=4")
    assert isinstance(done, subprocess.CompletedProcess)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "1 of 2 job(s) finished" in done.stdout
    assert "job 0 (" in done.stdout and "ERROR: knob 'io_threads': value 1000" in done.stdout
    assert "rerun" not in done.stdout.split("job(s) finished")[1]  # bad input: fix, not rerun


def test_an_interrupted_sweep_lists_stopped_and_unstarted_jobs_and_a_rerun_ends_them(
    tmp_path: Path,
) -> None:
    args = ("tuner=random", "seed=0,1,2", "budget=30", "system.adapter.delay_s=0.2", *NAMED)
    proc = _sweep(tmp_path, *args, wait=False)
    assert isinstance(proc, subprocess.Popen)
    deadline = time.monotonic() + 120
    while _tests(tmp_path, "random-s0") < 4:
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()[1][-2000:]
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    report = out.split("sweep ", 1)[1]
    assert "0 of 3 job(s) finished" in report
    assert "job 0 (random-s0): INTERRUPTED: interrupted after" in report
    assert "job 1 (" in report and "not started (the sweep was interrupted)" in report
    assert "rerun the same command" in report

    again = _sweep(tmp_path, *args)
    assert isinstance(again, subprocess.CompletedProcess)
    assert again.returncode == 0, again.stdout[-2000:]
    assert "3 of 3 job(s) finished" in again.stdout
    assert [_tests(tmp_path, f"random-s{seed}") for seed in range(3)] == [30, 30, 30]


def test_a_job_killed_without_a_word_is_reported_as_died_and_rerun(tmp_path: Path) -> None:
    """SIGKILL of a worker (what a dead node does): the job records nothing itself; the
    sweep names it DIED from the outcome it wrote when it started, and exits 1."""
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    args = (
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "tuner=random",
        "seed=0,1",
        "budget=30",
        "system.adapter.delay_s=0.3",
        *NAMED,
    )
    proc = _sweep(tmp_path, *args, wait=False)
    assert isinstance(proc, subprocess.Popen)
    started = _outcome(tmp_path, 0)
    assert started["status"] == "RUNNING" and started["session"] == "random-s0"
    deadline = time.monotonic() + 120
    while _tests(tmp_path, "random-s0") < 3:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    os.kill(int(str(started["pid"])), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err[-2000:]
    assert "job 0 (random-s0): DIED (no end recorded" in out, out[-2000:]
    kept = _tests(tmp_path, "random-s0")
    assert 3 <= kept < 30

    again = _sweep(tmp_path, *args)
    assert isinstance(again, subprocess.CompletedProcess)
    assert again.returncode == 0, again.stdout[-2000:]
    assert "2 of 2 job(s) finished" in again.stdout
    assert _tests(tmp_path, "random-s0") == 30 and _tests(tmp_path, "random-s1") == 30


def test_an_earlier_sweeps_outcomes_in_the_same_folder_are_not_reported(tmp_path: Path) -> None:
    """A rerun into the same sweep folder: the last run's job 2 (this run has jobs 0 and 1)
    and its stale job 1 are ignored; job 1 of this run never started."""
    import io

    from harness.cli import sweep_outcome

    def write(job: int, status: str, age_s: float) -> None:
        folder = tmp_path / str(job)
        folder.mkdir(exist_ok=True)
        path = folder / OUTCOME_FILE
        path.write_text(json.dumps({"job": job, "status": status, "session": f"s{job}"}))
        os.utime(path, (time.time() - age_s, time.time() - age_s))

    write(1, "FINISHED", 3600)
    write(2, "INTERRUPTED", 3600)
    saved = sweep_outcome._SWEEP
    sweep_outcome._SWEEP = sweep_outcome._Sweep(tmp_path, expected=2, started=time.time() - 2)
    try:
        write(0, "FINISHED", 0)
        out = io.StringIO()
        code = sweep_outcome.report(out)
    finally:
        sweep_outcome._SWEEP = saved
    assert code == 1
    assert "1 of 2 job(s) finished" in out.getvalue()
    assert "job 1: no outcome: it never started" in out.getvalue()
    assert "job 2" not in out.getvalue()
