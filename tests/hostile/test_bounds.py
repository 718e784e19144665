"""Bounds and signals (issue 54, Build item 5; findings 8 and 9 and the weak items with them).

Every input that sizes the work is capped with one line and exit 2 before anything is created:
budget, repeats, session.confirm, a sweep's job count, a warm-start source; a results folder
that is a system folder is refused. SIGHUP (a closed terminal or SSH link) stops a session as
SIGTERM does, stopping its running test's worker, and a stop sent to a joblib sweep's process
prints no traceback. Each finding's test here failed on the code before this work; the
others guard what the fixes must keep (a source of this system, a rerun of a stopped sweep).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from classytune import ClassyTuneRanked
from classytune.warm_start import (
    KEEP_BEST,
    MAX_SOURCE_BYTES,
    MAX_SOURCE_TESTS,
    load_priors,
    source_list,
)
from harness.builder.session import build_session
from harness.builder.validate import ensure_results_dir
from harness.errors import ConfigError, HarnessError
from harness.records import Observation, Status
from harness.session.signals import child_pids
from harness.space import Config
from harness.store.samples import SampleStore
from systems.synthetic import SyntheticSystem
from tests.helpers.hostile import (
    kill_all,
    processes_of,
    run_harness,
    start_harness,
    stored_lines,
    wait_for,
)

SLOW_SYNTHETIC = ("system=synthetic10", "tuner=lhs", "system.adapter.delay_s=0.2")


def _one_line_error(done: subprocess.CompletedProcess[str], text: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and text in errors[0], done.stderr[-3000:]


def _status(session: Path) -> str:
    return str(json.loads((session / "session.json").read_text()).get("status"))


# -- counts that size the work ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("budget=2e9",), "budget=2e9 is not a whole number up to 100000"),
        (("budget=2000000000",), "budget=2000000000 is not a whole number up to 100000"),
        (("budget=1e20",), "budget=1e20 is not a whole number up to 100000"),
        (("repeats=1000000000",), "repeats=1000000000 is not a whole number up to 100"),
        (("session.confirm=1000000",), "session.confirm=1000000 is not a whole number up to 100"),
        (("-m", "seed=range(0,1000000000)"), "this sweep has 1000000000 jobs, more than"),
        (
            (
                "-m",
                "seed=range(0,1000)",
                "tuner=lhs,random,bestconfig,gpbo,classytune,smac,x,y,z,w,v",
            ),
            "this sweep has 11000 jobs",
        ),
    ],
)
def test_huge_counts_get_one_line_and_nothing_is_created(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    results = tmp_path / "results"
    done = run_harness(results, "system=synthetic10", *args, timeout_s=120)
    _one_line_error(done, message)
    assert not (results / "sessions").exists() and not (results / "multirun").exists()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("budget=100001", "budget must be at least 1 test and at most 100000"),
        ("repeats=101", "repeats must be at least 1 and at most 100"),
        ("session.confirm=101", "session.confirm must be 0 (off) or a number of runs up to 100"),
    ],
)
def test_a_recipe_cannot_pass_the_caps_either(
    compose_cfg: object, tmp_path: Path, override: str, message: str
) -> None:
    cfg = compose_cfg("system=synthetic10", override)  # type: ignore[operator]
    with pytest.raises(HarnessError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_session(cfg)
    assert not (tmp_path / "results" / "sessions").exists()


# -- the results folder ----------------------------------------------------------------------
# (below a system folder only where a missing check cannot create anything: /proc)
@pytest.mark.parametrize("folder", ["/", "/etc", "/proc/harness-results", "/tmp/..", "~", "/var"])
def test_a_system_folder_as_results_dir_is_refused(folder: str) -> None:
    with pytest.raises(ConfigError, match="is a system or home folder"):
        ensure_results_dir(Path(folder).expanduser() if folder == "~" else Path(folder))


def test_a_system_folder_as_results_dir_gets_one_line_from_the_cli() -> None:
    """``/sys/...`` rather than ``/``: on code without the check, a run as root would fill
    ``/`` with sessions/ and runs/; this one fails there harmlessly (not writable)."""
    done = run_harness(Path("/sys/harness-results"), "system=synthetic10", "budget=3")
    _one_line_error(done, "results_dir=/sys/harness-results is a system or home folder")


def test_a_folder_of_its_own_is_still_fine(tmp_path: Path) -> None:
    assert ensure_results_dir(tmp_path / "r") == tmp_path / "r"


# -- warm-start sources ----------------------------------------------------------------------
def _table(
    path: Path, rows: int, knobs: tuple[str, ...] = ("buffer_pool_mb", "io_threads")
) -> Path:
    """A samples.csv of ``rows`` tests whose score grows with the trial number."""
    rng = np.random.default_rng(0)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["trial", "status", "score", *(f"config.{k}" for k in knobs)])
        for trial in range(rows):
            values = [int(v) for v in rng.integers(1, 64, len(knobs))]
            writer.writerow([trial, "SUCCEEDED", float(trial), *values])
    return path


def _session_of(folder: Path, system: str, tests: int = 4) -> Path:
    """A session folder as the CLI leaves it, of ``system``."""
    store = SampleStore(folder)
    store.create({"session_id": folder.name, "config": {"system": {"name": system}}})
    for trial in range(tests):
        config: Config = {"buffer_pool_mb": 128 + trial, "io_threads": 4}
        store.append(Observation(trial, config, Status.SUCCEEDED, float(trial)))
    store.unlock()
    return folder


def test_a_large_warm_start_source_is_sampled_keeping_its_best(tmp_path: Path) -> None:
    space = SyntheticSystem("10").space
    table = _table(tmp_path / "samples.csv", 5000)
    (prior,) = load_priors([str(table)], space)
    assert len(prior.points) == MAX_SOURCE_TESTS  # 5000 before: 25 million pairs, 12 GB
    assert sorted(prior.scores)[-KEEP_BEST:] == [float(t) for t in range(5000 - KEEP_BEST, 5000)]
    (again,) = load_priors([str(table)], space)
    np.testing.assert_array_equal(prior.points, again.points)  # seeded: the same sample


def test_a_warm_start_source_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    table = _table(tmp_path / "samples.csv", 3)
    with table.open("r+b") as handle:  # sparse: no disk used
        handle.truncate(MAX_SOURCE_BYTES + 1)
    with pytest.raises(ConfigError, match="above the 16 MiB a source may have"):
        load_priors([str(table)], SyntheticSystem("10").space)


def test_a_warm_start_path_given_as_text_is_one_source(tmp_path: Path) -> None:
    table = _table(tmp_path / "samples.csv", 10)
    assert source_list(str(table)) == [str(table)]
    tuner = ClassyTuneRanked(SyntheticSystem("10").space, budget=20, warm_start=str(table))
    assert tuner.warm_start == [str(table)]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("missing", "warm_start: {source} does not exist"),
        ("missing-text", "warm_start: {source} does not exist"),
        ("other-system", "is a session of system 'mysql', not 'synthetic10'"),
        ("no-common-knob", "has no knob in common with system 'synthetic10'"),
        ("fifo", "warm_start: {source} is not a regular file"),  # reading it never ended
    ],
)
def test_a_bad_warm_start_source_exits_2_before_a_session_folder(
    tmp_path: Path, source: str, message: str
) -> None:
    path = tmp_path / source
    if source == "other-system":
        _session_of(path, "mysql")
    elif source == "no-common-knob":
        path = _table(tmp_path / "samples.csv", 5, knobs=("colour", "flavour"))
    elif source == "fifo":
        os.mkfifo(path)
    value = str(path) if source == "missing-text" else f"[{path}]"
    results = tmp_path / "results"
    done = run_harness(
        results, "system=synthetic10", "budget=6", f"tuner.warm_start={value}", timeout_s=120
    )
    _one_line_error(done, message.format(source=path))
    assert not (results / "sessions").exists()


def test_a_warm_start_source_of_the_same_system_still_runs(tmp_path: Path) -> None:
    source = _session_of(tmp_path / "earlier", "synthetic10", tests=6)
    done = run_harness(
        tmp_path / "results",
        "system=synthetic10",
        "budget=6",
        f"tuner.warm_start={source}",  # text, as users type it
        timeout_s=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]


# -- a finished session and a raised budget ---------------------------------------------------
def test_a_rerun_with_a_raised_budget_continues_a_finished_session(tmp_path: Path) -> None:
    results = tmp_path / "results"
    named = ("system=synthetic10", "tuner=lhs", "session.name=grow", "session.existing=resume")
    first = run_harness(results, *named, "budget=4", timeout_s=120)
    assert first.returncode == 0, first.stderr[-2000:]
    same = run_harness(results, *named, "budget=4", timeout_s=120)
    assert same.returncode == 0 and "skipped" in same.stdout
    raised = run_harness(results, *named, "budget=6", timeout_s=120)
    assert raised.returncode == 0, raised.stderr[-2000:]
    assert "skipped" not in raised.stdout
    assert len(SampleStore(results / "sessions" / "grow").load()) == 6


# -- the count an interruption reports ---------------------------------------------------------
def test_an_interrupt_after_a_test_is_stored_counts_it(compose_cfg: object) -> None:
    cfg = compose_cfg("system=synthetic10", "tuner=lhs", "budget=10")  # type: ignore[operator]
    session = build_session(cfg)
    append = session.store.append

    def append_then_signal(observation: Observation, reference: bool = False) -> None:
        append(observation, reference)
        if observation.trial == 2:  # the signal lands once the test is on disk
            raise KeyboardInterrupt

    session.store.append = append_then_signal  # type: ignore[method-assign]
    result = session.run()
    stored = SampleStore(session.store.directory).load()
    assert result.status == "INTERRUPTED"
    assert len(stored) == 3 and len(result.observations) == 3
    assert "interrupted after 3/10 tests" in result.message
    assert json.loads((session.store.directory / "session.json").read_text())["tests"] == 3


# -- SIGHUP ----------------------------------------------------------------------------------
def _hang_up_as_a_terminal_would() -> None:
    """The harness as a shell starts it without nohup: SIGHUP at its default. The test run
    itself may be under nohup (CI in the background), and a child inherits an ignored signal."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def test_sighup_is_an_interruption_with_exit_129(tmp_path: Path) -> None:
    results = tmp_path / "results"
    session = results / "sessions" / "hup"
    proc = start_harness(
        results,
        *SLOW_SYNTHETIC,
        "budget=300",
        "session.name=hup",
        preexec_fn=_hang_up_as_a_terminal_would,
    )
    wait_for(lambda: stored_lines(session) >= 3, what="three tests")
    proc.send_signal(signal.SIGHUP)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 129, (out[-2000:], err[-2000:])
    assert "Traceback" not in err
    assert _status(session) == "INTERRUPTED"
    assert "INTERRUPTED" in out and " -m harness resume=" in out


def test_sighup_stops_the_running_tests_worker(tmp_path: Path) -> None:
    """A real worker process per test (SQLite's, no server): it must not outlive the hang-up
    under PID 1, as it did when SIGHUP killed the harness outright."""
    name = f"hup-worker-{os.getpid()}"
    results = tmp_path / "results"
    proc = start_harness(
        results,
        "system=sqlite",
        "workload.rows=1000",
        "workload.duration_s=60",
        "budget=3",
        f"session.name={name}",
        preexec_fn=_hang_up_as_a_terminal_would,
    )
    try:
        wait_for(
            lambda: any("worker.py" in cmd for _, cmd in processes_of(name)),
            timeout_s=120,
            what="the SQLite worker of the first test",
        )
        proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 129, (out[-2000:], err[-2000:])
        assert _status(results / "sessions" / name) == "INTERRUPTED"
        wait_for(lambda: not processes_of(name), timeout_s=10, what="no process left")
    finally:
        kill_all(processes_of(name))
        if proc.poll() is None:
            proc.kill()


def test_sighup_under_nohup_is_left_ignored(tmp_path: Path) -> None:
    results = tmp_path / "results"
    session = results / "sessions" / "nohup"
    proc = start_harness(
        results,
        *SLOW_SYNTHETIC,
        "budget=300",
        "session.name=nohup",
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    wait_for(lambda: stored_lines(session) >= 2, what="two tests")
    proc.send_signal(signal.SIGHUP)
    before = stored_lines(session)
    wait_for(lambda: stored_lines(session) >= before + 3, what="tests after the hang-up")
    assert proc.poll() is None  # still running, as nohup asked
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out[-2000:], err[-2000:])


# -- a stop sent to a joblib sweep's process ---------------------------------------------------
def test_sigterm_to_a_starting_joblib_sweep_prints_no_traceback(tmp_path: Path) -> None:
    """SIGTERM lands while the launcher's workers are still starting: forwarded to them, it
    killed them before they had a handler, and joblib raised TerminatedWorkerError."""
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")
    results = tmp_path / "results"
    proc = start_harness(
        results,
        "-m",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        *SLOW_SYNTHETIC,
        "budget=300",
        "seed=0,1",
        start_new_session=True,
    )
    try:
        wait_for(
            lambda: any(_is_loky_worker(pid) for pid in child_pids(proc.pid)),
            timeout_s=120,
            what="the launcher's workers to start",
        )
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (out[-2000:], err[-3000:])
    assert "Traceback" not in err and "TerminatedWorkerError" not in err, err[-3000:]
    sessions = results / "sessions"
    for folder in sessions.iterdir() if sessions.exists() else []:
        assert _status(folder) == "INTERRUPTED", folder


def _is_loky_worker(pid: int) -> bool:
    try:
        return b"popen_loky" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def test_a_stopped_sweeps_marker_does_not_stop_its_rerun(tmp_path: Path) -> None:
    """The marker a stop leaves in the sweep folder is an earlier run's when the same
    command runs again there: the rerun's jobs start."""
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / ".harness_stop").write_text("1\n")
    done = run_harness(
        tmp_path / "results",
        "-m",
        "system=synthetic10",
        "tuner=lhs",
        "budget=3",
        "seed=0,1",
        f"hydra.sweep.dir={sweep}",
        timeout_s=180,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 of 2 job(s) finished" in done.stdout
