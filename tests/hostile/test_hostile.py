"""Hostile and careless input, as the safety review probed it (issue 15): paths posing as
names, a kill in the middle of a store repair, two processes on one session, signals at every
phase, a full disk, and every setting that used to give a traceback or be silently accepted.

The probes against real servers (injection into my.cnf/postgresql.conf, unauthenticated
logins, a SIGSTOPped server, SIGTERM during setup) are in ``test_hostile_servers.py``; those
against renderers and Tomcat in ``test_hostile_render.py``; the tracking store's in
``test_tracking_hostile.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from harness.errors import StoreError
from harness.records import Observation, Status
from harness.session.signals import child_pids
from harness.store.samples import SampleStore
from tests.helpers.hostile import ROOT, run_harness, start_harness, stored_lines, wait_for
from tests.helpers.sshd import PrivateSSHD

SLOW_SYNTHETIC = ("system=synthetic10", "tuner=lhs", "system.adapter.delay_s=0.2")


def _one_line_error(done: subprocess.CompletedProcess[str], text: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and text in errors[0], done.stderr


# -- names are names ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["{victim}", "../sessions/x", "a/b", ".hidden", "..", "x y"])
def test_a_session_name_that_is_a_path_is_refused_and_nothing_is_deleted(
    tmp_path: Path, name: str
) -> None:
    victim = tmp_path / "precious"
    victim.mkdir()
    (victim / "thesis.tex").write_text("years of work")
    done = run_harness(
        tmp_path / "results",
        "system=synthetic10",
        "budget=3",
        f"session.name={name.format(victim=victim)}",
    )
    _one_line_error(done, "is not a plain name")
    assert (victim / "thesis.tex").read_text() == "years of work"
    assert not (tmp_path / "results" / "sessions").exists()


def test_a_finished_session_removes_only_the_work_folder_it_created(tmp_path: Path) -> None:
    results = tmp_path / "results"
    foreign = results / "work" / "mine"
    foreign.mkdir(parents=True)
    (foreign / "keep.txt").write_text("not the harness's")
    done = run_harness(results, "system=synthetic10", "budget=3", "session.name=mine")
    assert done.returncode == 1, done.stderr  # aborted: the folder is not ours
    assert "was not created by session mine" in done.stdout
    assert (foreign / "keep.txt").exists()

    done = run_harness(results, "system=synthetic10", "budget=3", "session.name=ours")
    assert done.returncode == 0, done.stderr
    assert not (results / "work" / "ours").exists()  # ours, finished: removed
    assert (results / "sessions" / "ours" / "samples.csv").exists()


def test_session_and_store_files_are_private(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = run_harness(
        results, "system=synthetic10", "budget=3", "session.name=p", "session.keep_workdir=true"
    )
    assert done.returncode == 0, done.stderr
    session = results / "sessions" / "p"
    assert session.stat().st_mode & 0o077 == 0
    for path in session.iterdir():
        assert path.stat().st_mode & 0o077 == 0, path
    assert (results / "work" / "p").stat().st_mode & 0o777 == 0o711  # traversable only


# -- the store ------------------------------------------------------------------------------
def _store_with_torn_tail(folder: Path, tests: int = 5) -> Path:
    store = SampleStore(folder)
    store.create({"session_id": "s"})
    store.unlock()
    for trial in range(tests):
        store.append(Observation(trial, {"x": trial}, Status.SUCCEEDED, float(trial)))
    path = folder / "observations.jsonl"
    with open(path, "a") as handle:
        handle.write('{"trial": 5, "config": {"x"')  # a kill -9 in the middle of a write
    return path


_KILL_AT = textwrap.dedent("""
    import os, signal, sys
    from harness.store.samples import SampleStore
    target, count = sys.argv[2], int(sys.argv[3])
    real = getattr(os, target)
    calls = 0
    def fault(*args, **kwargs):
        global calls
        calls += 1
        if calls == count:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    setattr(os, target, fault)
    SampleStore(sys.argv[1]).load()
""")


@pytest.mark.parametrize(
    ("call", "count"), [("fsync", 1), ("replace", 1), ("fsync", 2), ("fchmod", 1)]
)
def test_a_kill_at_any_step_of_the_store_repair_loses_nothing(
    tmp_path: Path, call: str, count: int
) -> None:
    path = _store_with_torn_tail(tmp_path / "s")
    killed = subprocess.run(
        [sys.executable, "-c", _KILL_AT, str(path.parent), call, str(count)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    trials = [o.trial for o in SampleStore(path.parent).load()]
    assert trials == [0, 1, 2, 3, 4]
    assert not list(path.parent.glob(".observations.jsonl.*"))  # repaired, no litter


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace not installed")
@pytest.mark.parametrize("syscalls", ["fsync", "rename,renameat,renameat2"])
def test_a_kill_injected_by_strace_during_the_repair_loses_nothing(
    tmp_path: Path, syscalls: str
) -> None:
    path = _store_with_torn_tail(tmp_path / "s")
    code = (
        f"from harness.store.samples import SampleStore; SampleStore({str(path.parent)!r}).load()"
    )
    killed = subprocess.run(
        [
            "strace",
            "-f",
            "-o",
            "/dev/null",
            "-e",
            f"trace={syscalls}",
            "-e",
            f"inject={syscalls}:signal=KILL",
            sys.executable,
            "-c",
            code,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert killed.returncode != 0, "strace should have killed the repair"
    assert [o.trial for o in SampleStore(path.parent).load()] == [0, 1, 2, 3, 4]


def test_a_corrupt_middle_line_or_a_json_array_gets_one_line(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = run_harness(results, "system=synthetic10", "budget=3", "session.name=c")
    assert done.returncode == 0
    store = results / "sessions" / "c" / "observations.jsonl"
    lines = store.read_text().splitlines()
    store.write_text("\n".join([lines[0], "[1, 2, 3]", *lines[1:]]) + "\n")
    again = run_harness(results, f"resume={store.parent}", "budget=5")
    _one_line_error(again, "observations.jsonl:2 is corrupt (a JSON list, not an object)")


def test_two_concurrent_resumes_one_is_refused_naming_the_holder(tmp_path: Path) -> None:
    results = tmp_path / "results"
    session = results / "sessions" / "shared"
    first = start_harness(results, *SLOW_SYNTHETIC, "budget=4", "session.name=shared")
    assert first.wait(timeout=120) == 0
    running = start_harness(results, f"resume={session}", "budget=60")
    try:
        wait_for(lambda: stored_lines(session) >= 6, what="the first resume to run tests")
        second = run_harness(results, f"resume={session}", "budget=60")
        _one_line_error(second, f"is in use by PID {running.pid}")
        twin = run_harness(results, *SLOW_SYNTHETIC, "budget=3", "session.name=shared")
        _one_line_error(twin, "already holds a session")
    finally:
        _, err = running.communicate(timeout=120)
    assert running.returncode == 0, err
    assert [o.trial for o in SampleStore(session).load()] == list(range(60))


# -- signals and exit codes -----------------------------------------------------------------
def test_sigint_inherited_as_ignored_still_stops_the_session(tmp_path: Path) -> None:
    results = tmp_path / "results"
    session = results / "sessions" / "bg"
    # what `cmd &` in a script does to its children: SIGINT ignored
    proc = start_harness(
        results,
        *SLOW_SYNTHETIC,
        "budget=300",
        "session.name=bg",
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    wait_for(lambda: stored_lines(session) >= 3, what="three tests")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "INTERRUPTED" in out and " -m harness resume=" in out
    assert json.loads((session / "session.json").read_text())["status"] == "INTERRUPTED"
    assert 3 <= len(SampleStore(session).load()) < 300


def test_sigterm_is_an_interruption_and_a_second_one_does_not_skip_the_cleanup(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    session = results / "sessions" / "term"
    proc = start_harness(results, *SLOW_SYNTHETIC, "budget=300", "session.name=term")
    wait_for(lambda: stored_lines(session) >= 3, what="three tests")
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err
    assert json.loads((session / "session.json").read_text())["status"] == "INTERRUPTED"


def test_an_objective_that_fails_on_every_test_aborts_with_exit_1(tmp_path: Path) -> None:
    done = run_harness(
        tmp_path / "results",
        "system=synthetic10",
        "budget=50",
        'objective.utility="throughput / (throughput - throughput)"',
    )
    assert done.returncode == 1, done.stderr
    assert "the default configuration FAILED its workload" in done.stdout
    assert "tests: 1 " in done.stdout  # not the whole budget burnt


def test_ctrl_c_on_a_parallel_sweep_stops_every_session_without_a_traceback(
    tmp_path: Path,
) -> None:
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
    sessions = results / "sessions"
    wait_for(
        lambda: (
            sessions.exists()
            and len(list(sessions.iterdir())) == 2
            and all(stored_lines(s) >= 2 for s in sessions.iterdir())
        ),
        timeout_s=180,
        what="both sweep jobs to run tests",
    )
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err[-2000:])
    assert "Traceback" not in err, err[-3000:]
    for folder in sessions.iterdir():
        assert json.loads((folder / "session.json").read_text())["status"] == "INTERRUPTED"


# -- settings that used to give a traceback or pass silently ----------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("seed=-1",), "seed must be 0 or more"),
        (("+system.ranges.buffer_pool_mb.max=abc",), "max must be a finite number, got 'abc'"),
        (("+system.ranges.buffer_pool_mb.max=inf",), "max must be a finite number, got inf"),
        (("+misspelled=1",), "unknown setting(s) misspelled"),
        (("+session.defualt_every=5",), "unknown setting(s) session.defualt_every"),
        (("+tuner.foo=1",), "tuner 'lhs' has no option 'foo'"),
        (("session.min_timeout_s=0",), "session.min_timeout_s must be a positive number"),
        (("session.start_timeout_s=-5",), "session.start_timeout_s must be a positive number"),
        (("session.first_timeout_s=inf",), "session.first_timeout_s must be a positive number"),
        (("session.timeout_factor=inf",), "session.timeout_factor must exceed 1"),
    ],
)
def test_bad_settings_get_one_line_before_any_test(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    done = run_harness(tmp_path / "results", "system=synthetic10", "tuner=lhs", "budget=3", *args)
    _one_line_error(done, message)
    assert not (tmp_path / "results" / "sessions").exists()


def test_unwritable_results_folder_gets_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = run_harness(blocker / "results", "system=synthetic10", "budget=3")
    _one_line_error(done, "is not writable")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tuner=random",), "`tuner=random` cannot change on resume"),
        (("system=synthetic30",), "`system=synthetic30` cannot change on resume"),
        (("seed=3",), "`seed=3` cannot change on resume"),
        (("budget=3",), "budget=3 is below this session's budget 6"),
    ],
)
def test_resume_refuses_what_it_cannot_honour(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    results = tmp_path / "results"
    done = run_harness(results, "system=synthetic10", "tuner=lhs", "budget=6", "session.name=r")
    assert done.returncode == 0
    meta = (results / "sessions" / "r" / "session.json").read_text()
    again = run_harness(results, f"resume={results / 'sessions' / 'r'}", *args)
    _one_line_error(again, message)
    assert (results / "sessions" / "r" / "session.json").read_text() == meta
    raised = run_harness(results, f"resume={results / 'sessions' / 'r'}", "budget=8")
    assert raised.returncode == 0, raised.stderr
    assert len(SampleStore(results / "sessions" / "r").load()) == 8


# -- a full disk ----------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path: Path) -> object:
    """A 2 MiB tmpfs (root only; skipped where mounting is not allowed)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path, leave: int = 0) -> Path:
    """Fill the file system of ``folder`` (leaving ``leave`` bytes free, roughly)."""
    filler = folder / "filler"
    with open(filler, "wb") as handle:
        try:
            while True:
                free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
                if free <= leave:
                    break
                handle.write(b"\0" * min(65536, max(free - leave, 1)))
                handle.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_at_the_start_gets_one_line(small_disk: Path) -> None:
    _fill(small_disk)
    done = run_harness(small_disk / "results", "system=synthetic10", "budget=3")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "error: " in done.stderr


def test_a_disk_filling_up_mid_session_aborts_keeping_every_test(small_disk: Path) -> None:
    results = small_disk / "results"
    session = results / "sessions" / "full"
    proc = start_harness(results, *SLOW_SYNTHETIC, "budget=60", "session.name=full")
    wait_for(lambda: stored_lines(session) >= 4, what="four tests")
    filler = _fill(small_disk)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, (out, err)
    assert "Traceback" not in err
    assert "free some disk space" in out
    kept = SampleStore(session).load()
    assert len(kept) >= 4
    filler.unlink()
    done = run_harness(results, f"resume={session}")
    assert done.returncode == 0, done.stderr
    assert [o.trial for o in SampleStore(session).load()] == list(range(60))


def test_the_lock_is_released_and_reacquirable(tmp_path: Path) -> None:
    store = SampleStore(tmp_path / "s")
    store.create({"session_id": "s"})
    other = SampleStore(tmp_path / "s")
    with pytest.raises(StoreError, match=f"in use by PID {os.getpid()}"):
        other.lock()
    store.unlock()
    other.lock()
    other.unlock()


# -- a host lost in the middle of a command ---------------------------------------------------
@pytest.mark.integration
def test_a_connection_lost_mid_command_is_host_unreachable_not_a_crash(
    private_sshd: PrivateSSHD,
) -> None:
    from harness.errors import ExecutorError, HostUnreachable
    from harness.hosts.inventory import Inventory
    from harness.hosts.ssh import SSHExecutor

    inventory = Inventory.from_config("t", [private_sshd.host()])
    ssh = SSHExecutor(inventory.hosts[0])
    ssh.run(["true"])
    outcome: dict[str, BaseException] = {}
    marker = f"sleep {4000 + os.getpid() % 1000}"

    def long_command() -> None:
        try:
            ssh.run(marker.split(), timeout_s=120)
        except BaseException as exc:  # the test inspects it
            outcome["error"] = exc

    worker = threading.Thread(target=long_command)
    worker.start()
    wait_for(lambda: bool(_pids_running(marker)), what="the remote command to start")
    for child in child_pids(private_sshd.pid):  # the per-connection sshd: the link dies
        os.kill(child, signal.SIGKILL)
    worker.join(timeout=60)
    for pid in _pids_running(marker):
        os.kill(pid, signal.SIGKILL)
    error = outcome.get("error")
    assert isinstance(error, HostUnreachable), error
    assert not isinstance(error, ExecutorError)  # adapters must not read it as "command failed"
    assert "connection was lost while `sleep" in str(error) or "connection lost" in str(error)
    ssh.close()


def _pids_running(command: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().replace(
                    b"\0", b" "
                ).strip() == command.encode():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.integration
@pytest.mark.slow
def test_a_resumed_remote_session_removes_its_folder_on_the_host(
    private_sshd: PrivateSSHD, tmp_path: Path
) -> None:
    if not Path("/usr/lib/postgresql").exists():
        pytest.skip("postgresql is not installed")
    results = tmp_path / "results"
    session = results / "sessions" / "remote-resume"
    remote = Path("/tmp/harness-remote/remote-resume")  # conf/hosts/loopback.yaml's workdir
    args = (
        "system=postgres",
        "workload=pgbench",
        "workload.duration_s=2",
        "tuner=lhs",
        "budget=3",
        "hosts=loopback",
        "session.name=remote-resume",
        "workload.scale=1",
    )
    env = {**os.environ, **private_sshd.env()}
    proc = start_harness(results, *args, env=env)
    wait_for(lambda: stored_lines(session) >= 1, timeout_s=300, what="the first remote test")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, (out, err[-2000:])
    assert remote.exists()  # kept: the session continues
    done = run_harness(results, f"resume={session}", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(SampleStore(session).load()) == 3
    assert not remote.exists()


def test_a_disk_full_at_the_end_keeps_every_test_and_says_so(
    small_disk: Path, compose_cfg: object
) -> None:
    from harness.builder.session import build_session

    cfg = compose_cfg(
        "system=synthetic10",
        "tuner=lhs",
        "budget=4",  # type: ignore[operator]
        f"results_dir={small_disk / 'results'}",
    )
    session = build_session(cfg)
    append = session.store.append

    def append_then_fill(observation: Observation, reference: bool = False) -> None:
        append(observation, reference)
        if observation.trial == 3:
            _fill(small_disk)  # the disk fills up after the last test

    session.store.append = append_then_fill  # type: ignore[method-assign]
    result = session.run()
    assert result.status == "FINISHED"
    assert "cannot write" in result.message and "free some disk space" in result.message
    assert [o.trial for o in SampleStore(session.store.directory).load()] == [0, 1, 2, 3]


def test_credentials_in_the_tracking_uri_are_never_written_or_printed(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on: the server is "down"
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    results = tmp_path / "results"
    done = run_harness(
        results,
        "system=synthetic10",
        "budget=3",
        f"tracking.uri=http://alice:s3cr3t-pw@127.0.0.1:{port}",
        timeout_s=120,
    )
    _one_line_error(done, "cannot open the MLflow tracking store http://127.0.0.1")
    assert "s3cr3t-pw" not in done.stdout + done.stderr
    for path in results.rglob("*"):
        if path.is_file():
            assert b"s3cr3t-pw" not in path.read_bytes(), path
