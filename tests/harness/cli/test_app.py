"""End-to-end runs of ``python -m harness`` as a user types it."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Literal, overload

import pytest

from harness.store.samples import SampleStore

ROOT = Path(__file__).resolve().parents[3]


@overload
def _harness(
    tmp_path: Path, *args: str, tracking: bool = False, wait: Literal[True] = True
) -> subprocess.CompletedProcess[str]: ...


@overload
def _harness(
    tmp_path: Path, *args: str, tracking: bool = False, wait: Literal[False]
) -> subprocess.Popen[str]: ...


def _harness(
    tmp_path: Path, *args: str, tracking: bool = False, wait: bool = True
) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    track = [f"tracking.uri=sqlite:///{tmp_path}/mlflow.db"] if tracking else ["tracking=none"]
    if any(a.startswith("tracking") for a in args):
        track = []
    flags = [a for a in args if a.startswith("-")]  # e.g. -m must precede the overrides
    argv = [
        sys.executable,
        "-m",
        "harness",
        *flags,
        f"results_dir={tmp_path}/results",
        "session.progress=false",
        *track,
        *(a for a in args if a not in flags),
    ]
    if wait:
        return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    return subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _sessions(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "results" / "sessions").glob("*"))


def test_session_is_logged_to_mlflow_with_one_child_per_test(tmp_path: Path) -> None:
    done = _harness(tmp_path, "system=synthetic10", "tuner=lhs", "budget=12", tracking=True)
    assert done.returncode == 0, done.stderr
    assert "improvement over default: +" in done.stdout
    import mlflow

    client = mlflow.tracking.MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")
    experiment = client.get_experiment_by_name("synthetic10/synthetic")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    sessions = [r for r in runs if r.data.tags.get("harness.kind") == "session"]
    tests = [r for r in runs if r.data.tags.get("harness.kind") == "test"]
    assert len(sessions) == 1 and len(tests) == 12
    parent = sessions[0]
    assert {t.data.tags["mlflow.parentRunId"] for t in tests} == {parent.info.run_id}
    assert parent.data.tags["harness.tuner"] == "lhs"
    assert parent.data.tags["harness.lib.numpy"]  # versions of result-changing libraries
    assert parent.data.params["resolved.tuner.name"] == "lhs"  # Tuner.params(), as resolved
    assert parent.data.params["resolved.tuner.budget"] == "12"
    assert parent.data.params["resolved.workload.name"] == "synthetic"
    assert parent.data.metrics["tests"] == 12
    history = client.get_metric_history(parent.info.run_id, "best_so_far")
    assert len(history) == 12
    assert client.list_artifacts(parent.info.run_id, "samples")


def test_sigkill_midway_then_resume_runs_exactly_budget_tests(tmp_path: Path) -> None:
    proc = _harness(
        tmp_path,
        "system=synthetic10",
        "tuner=classytune",
        "budget=30",
        "system.adapter.delay_s=0.15",
        "session.name=killed",
        wait=False,
    )
    assert isinstance(proc, subprocess.Popen)
    log = tmp_path / "results" / "sessions" / "killed" / "observations.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= 12:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = len(SampleStore(log.parent).load())
    assert 12 <= stored < 30
    done = _harness(tmp_path, f"resume={log.parent}")
    assert done.returncode == 0, done.stderr
    trials = [o.trial for o in SampleStore(log.parent).load()]
    assert trials == list(range(30))  # exactly the budget, none twice


def test_multirun_sweep_runs_every_combination(tmp_path: Path) -> None:
    done = _harness(
        tmp_path, "-m", "tuner=random,lhs", "system=synthetic10", "seed=0,1,2", "budget=5"
    )
    assert done.returncode == 0, done.stderr
    assert len(_sessions(tmp_path)) == 6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tuner=nonesuch",), "Could not find 'tuner/nonesuch'"),
        (("budget=0",), "error: budget must be at least 1"),
        (
            ("system=synthetic10", "+system.fixed.io_threads=1000"),
            "error: knob 'io_threads': value 1000 is invalid; allowed: int in [1, 64]",
        ),
        (
            ("system=synthetic10", "budget=3", "tracking.uri=sqlite:////proc/nope/mlflow.db"),
            "error: cannot create /proc/nope",
        ),
        (("system=synthetic10", "bugdet=3"), "Could not override 'bugdet'"),
    ],
)
def test_bad_input_gets_one_clear_line(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    done = _harness(tmp_path, *args)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not _sessions(tmp_path)


def test_sigint_stops_the_session_and_says_how_to_resume(tmp_path: Path) -> None:
    proc = _harness(
        tmp_path,
        "system=synthetic10",
        "tuner=lhs",
        "budget=200",
        "system.adapter.delay_s=0.2",
        "session.name=ctrlc",
        wait=False,
    )
    assert isinstance(proc, subprocess.Popen)
    log = tmp_path / "results" / "sessions" / "ctrlc" / "observations.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (log.exists() and log.read_text().count("\n") >= 3):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert "INTERRUPTED" in out
    # The resume command runs as printed: this interpreter (the venv's), not a bare `python`.
    printed = [line for line in out.splitlines() if "resume with: " in line][-1]  # the summary's
    command = shlex.split(printed.split("resume with: ", 1)[1])
    assert command[1:3] == ["-m", "harness"] and command[3] == f"resume={log.parent}"
    assert command[0] == ".venv/bin/python" or Path(command[0]) == Path(sys.executable)
    has_hydra = subprocess.run([command[0], "-c", "import hydra"], cwd=ROOT, check=False)
    assert has_hydra.returncode == 0
    assert 3 <= len(SampleStore(log.parent).load()) < 200


def test_log_lines_land_above_the_progress_bar_not_inside_it(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "harness", "system=synthetic10", "budget=8", "tracking=none"]
    # One stream for both, as on a terminal: the bar (stderr) and the log lines (stdout).
    done = subprocess.run(
        [*argv, f"results_dir={tmp_path}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.replace("\r", "\n").splitlines()
    assert any("round 1 (ranked)" in line for line in lines)  # the log lines are still shown
    for line in lines:
        assert not ("test/s" in line and "[INFO]" in line), line
