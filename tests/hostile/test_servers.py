"""Hostile probes against the real private servers (issue 15): values that try to start a new
directive in postgresql.conf / my.cnf, local users who try to log in, a server that hangs
(SIGSTOP) instead of stopping, and a SIGTERM while the session is still setting up.

Every check runs against a real PostgreSQL 15 / MariaDB 10.11 started by the test; the
instance folders sit under paths full of quotes, ``#`` and spaces on purpose.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from harness.system import MetricSpec, System, Workload
from systems.dbserver.conftext import mycnf_value, pg_string
from tests.helpers.hostile import kill_all, processes_of, run_harness, start_harness, wait_for
from tests.helpers.requirements import NEEDS_MARIADB

HAVE_PG = shutil.which("pg_ctl") is not None or Path("/usr/lib/postgresql").exists()
NEEDS_PG = pytest.mark.skipif(not HAVE_PG, reason="postgresql not installed")
NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (runs clients as nobody)")
#: Quotes, a comment sign, spaces and a backslash: every one must survive my.cnf verbatim.
HOSTILE_DIR = 'it\'s a "dir" #not-a-comment \\ x'
#: What postgresql.conf must carry verbatim (pg_ctl's shell rules out ", $, ` and \\).
HOSTILE_PG_DIR = "it's a #not-a-comment dir"


class Probe(Workload):
    """A workload that only checks the server answers (and can SIGSTOP it afterwards)."""

    name = "probe"
    metrics = (MetricSpec("ok", "max"),)
    duration_s = 0.1

    def __init__(self, freeze: bool = False) -> None:
        self.freeze = freeze

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        from systems.mysql import MySQLSystem
        from systems.postgres import PostgresSystem

        if isinstance(system, PostgresSystem):
            answer = system.psql("SELECT 1")
        else:
            assert isinstance(system, MySQLSystem), system
            answer = system.sql("SELECT 1")
        if self.freeze:
            pid = system._postmaster_pid() if isinstance(system, PostgresSystem) else system._pid
            assert pid is not None, "the server is not running"
            os.kill(pid, signal.SIGSTOP)
        return {"ok": float(answer.strip() == "1")}


@pytest.fixture
def hostile_base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder the server users can reach, and a session marker so that leftover server
    processes are found (and fail the test)."""
    base = Path(tempfile.mkdtemp(prefix="harness-hostile-"))
    os.chmod(base, 0o711)
    marker = f"hostile-{os.getpid()}-{time.monotonic_ns()}"
    monkeypatch.setenv("HARNESS_SESSION", marker)
    yield base
    leftovers = processes_of(marker)
    kill_all(leftovers)
    shutil.rmtree(base, ignore_errors=True)
    assert not leftovers, f"processes left behind: {leftovers}"


def _folder(base: Path, name: str) -> Path:
    folder = base / name
    folder.mkdir()
    os.chmod(folder, 0o711)
    return folder


@pytest.fixture
def hostile_workdir(hostile_base: Path) -> Path:
    """A work folder under a name full of quoting hazards (for MariaDB)."""
    return _folder(hostile_base, HOSTILE_DIR)


@pytest.fixture
def pg_workdir(hostile_base: Path) -> Path:
    """A work folder under a name with the hazards postgresql.conf must quote."""
    return _folder(hostile_base, HOSTILE_PG_DIR)


def _as_nobody(
    *command: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["runuser", "-u", "nobody", "--", *command],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, **(env or {})},
    )


# -- the escaping, against the real parsers ---------------------------------------------------
@pytest.mark.parametrize("value", ["x\nlisten_addresses = '*'", "a\rb", "tab\there", "nul\0"])
def test_control_characters_are_refused_by_both_formats(value: str) -> None:
    with pytest.raises(ConfigError, match="control character"):
        pg_string(value, "knob 'x'")
    with pytest.raises(ConfigError, match="control character"):
        mycnf_value(value, "knob 'x'")


@pytest.mark.integration
@NEEDS_PG
def test_postgres_reads_hostile_values_back_verbatim(pg_workdir: Path) -> None:
    from systems.postgres import PostgresSystem

    system = PostgresSystem(stop_timeout_s=10)
    try:
        system.setup(pg_workdir, Probe())
        assert str(system.instance).startswith(str(pg_workdir))  # not a temp fallback
        # (cluster_name keeps at most 63 bytes)
        hostile = "a' ; listen_addresses='*' # \\' port=1 \\"
        system.executor.write_text(
            system.tuning_path, f"cluster_name = {pg_string(hostile, 'cluster_name')}\n"
        )
        system.start(60)
        assert system.psql("SHOW cluster_name") == hostile
        assert system.psql("SHOW listen_addresses") == "127.0.0.1"
        assert system.psql("SHOW archive_command") in ("(disabled)", "")
        assert system.psql("SHOW unix_socket_directories") == str(system.instance)
    finally:
        system.teardown()


@pytest.mark.integration
@NEEDS_MARIADB
def test_mariadb_reads_hostile_paths_back_verbatim(hostile_workdir: Path) -> None:
    from systems.mysql import MySQLSystem

    system = MySQLSystem(stop_timeout_s=10)
    try:
        system.setup(hostile_workdir, Probe())
        system.start(60)
        datadir = system.sql("SELECT @@datadir").replace("\\\\", "\\")  # -B escapes \\
        assert datadir.rstrip("/") == str(system.data_dir)
        assert system.sql("SELECT @@bind_address") == "127.0.0.1"
        assert system.sql("SELECT @@skip_networking") == "0"
    finally:
        system.teardown()


# -- only authenticated connections -------------------------------------------------------------
@pytest.mark.integration
@NEEDS_PG
@NEEDS_ROOT
def test_a_local_user_cannot_log_in_to_the_private_postgres(pg_workdir: Path) -> None:
    from systems.postgres import PostgresSystem

    system = PostgresSystem(stop_timeout_s=10)
    try:
        system.setup(pg_workdir, Probe())
        system.start(60)
        psql = [
            system.bin["psql"],
            "-X",
            "-w",
            "-p",
            str(system.port),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            "SELECT 1",
        ]
        no_password = _as_nobody(*psql, "-h", "127.0.0.1")
        assert no_password.returncode != 0 and "password" in no_password.stderr
        wrong = _as_nobody(*psql, "-h", "127.0.0.1", env={"PGPASSWORD": "postgres"})
        assert wrong.returncode != 0 and "password authentication failed" in wrong.stderr
        socket = _as_nobody(*psql, "-h", str(system.instance))
        assert socket.returncode != 0  # the socket's folder is 0700: not even reachable
        assert system.instance is not None
        right = _as_nobody(*psql, "-h", "127.0.0.1", env=system.client_env())
        assert right.returncode == 0, right.stderr  # the secret is what admits
        for name in ("initdb.pw",):
            assert not (system.instance / name).exists()
        secret_file = system.client_file("sysbench.options")
        assert secret_file.stat().st_mode & 0o077 == 0
    finally:
        system.teardown()


@pytest.mark.integration
@NEEDS_MARIADB
@NEEDS_ROOT
def test_the_private_mariadb_has_no_password_less_account(hostile_workdir: Path) -> None:
    from systems.mysql import MySQLSystem

    system = MySQLSystem(stop_timeout_s=10)
    try:
        system.setup(hostile_workdir, Probe())
        system.start(60)
        accounts = sorted(
            system.sql("SELECT CONCAT(user, '@', host) FROM mysql.user").splitlines()
        )
        assert accounts == ["bench@127.0.0.1", "mariadb.sys@localhost", "root@localhost"]
        client = [
            system.bin["client"],
            "--no-defaults",
            "-h",
            "127.0.0.1",
            "-P",
            str(system.port),
            "-N",
            "-e",
            "SELECT 1",
        ]
        for user in ("root", "bench", "mysql", ""):
            denied = _as_nobody(*client, f"-u{user}" if user else "-uanyone")
            assert denied.returncode != 0 and "Access denied" in denied.stderr, (user, denied)
        guessed = _as_nobody(*client, "-ubench", "-pbench")
        assert guessed.returncode != 0
        socket = _as_nobody(
            system.bin["client"],
            "--no-defaults",
            f"--socket={system.socket_path}",
            "-uroot",
            "-e",
            "SELECT 1",
        )
        assert socket.returncode != 0
        right = _as_nobody(*client, "-ubench", f"-p{system.secret}")
        assert right.returncode == 0, right.stderr
    finally:
        system.teardown()


# -- processes never outlive a test ------------------------------------------------------------
@pytest.mark.integration
@NEEDS_PG
def test_a_sigstopped_postgres_is_killed_and_the_next_test_is_not_blamed(pg_workdir: Path) -> None:
    from systems.postgres import PostgresSystem

    system = PostgresSystem(stop_timeout_s=3)
    objective = Objective.for_workload(Probe.metrics)
    try:
        system.setup(pg_workdir, Probe())
        frozen = run_test(system, Probe(freeze=True), objective, system.space.default(), 0)
        assert frozen.status is Status.SUCCEEDED, frozen.message
        # the stop inside run_test escalated: nothing of the frozen server is left
        assert not processes_of(os.environ["HARNESS_SESSION"])
        after = run_test(system, Probe(), objective, system.space.default(), 1)
        assert after.status is Status.SUCCEEDED, after.message  # not "Address already in use"
    finally:
        system.teardown()
    assert not processes_of(os.environ["HARNESS_SESSION"])


@pytest.mark.integration
@NEEDS_MARIADB
def test_a_sigstopped_mariadb_is_killed(hostile_workdir: Path) -> None:
    from systems.mysql import MySQLSystem

    system = MySQLSystem(stop_timeout_s=3)
    objective = Objective.for_workload(Probe.metrics)
    try:
        system.setup(hostile_workdir, Probe())
        frozen = run_test(system, Probe(freeze=True), objective, system.space.default(), 0)
        assert frozen.status is Status.SUCCEEDED, frozen.message
        assert not processes_of(os.environ["HARNESS_SESSION"])
        after = run_test(system, Probe(), objective, system.space.default(), 1)
        assert after.status is Status.SUCCEEDED, after.message
    finally:
        system.teardown()
    assert not processes_of(os.environ["HARNESS_SESSION"])


@pytest.mark.integration
@pytest.mark.slow
@NEEDS_PG
def test_sigterm_during_setup_stops_postgres_and_records_the_status(tmp_path: Path) -> None:
    results = tmp_path / "results"
    session = results / "sessions" / "setup-term"
    proc = start_harness(
        results,
        "system=postgres",
        "workload=pgbench",
        "tuner=lhs",
        "budget=3",
        "session.name=setup-term",
        "workload.duration_s=2",
    )
    try:
        # the server is up and the workload is loading its data: setup, no test yet
        wait_for(
            lambda: any("postgres" in cmd for _, cmd in processes_of("setup-term")),
            timeout_s=120,
            what="the private postgres to start",
        )
        assert not (session / "observations.jsonl").exists()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (out, err)
    assert "INTERRUPTED" in out and "Traceback" not in err
    assert json.loads((session / "session.json").read_text())["status"] == "INTERRUPTED"
    leftovers = processes_of("setup-term")
    kill_all(leftovers)
    assert not leftovers


@pytest.mark.integration
@NEEDS_PG
def test_a_finished_postgres_session_leaves_no_process(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = run_harness(
        results,
        "system=postgres",
        "workload=pgbench",
        "tuner=lhs",
        "budget=2",
        "session.name=pg-clean",
        "workload.duration_s=2",
        "workload.scale=1",
    )
    assert done.returncode == 0, done.stderr
    leftovers = processes_of("pg-clean")
    kill_all(leftovers)
    assert not leftovers


@pytest.mark.integration
@NEEDS_PG
def test_a_postgres_left_by_a_killed_run_is_stopped_when_the_session_resumes(
    pg_workdir: Path,
) -> None:
    from systems.postgres import PostgresSystem

    killed = PostgresSystem(stop_timeout_s=5)
    killed.setup(pg_workdir, Probe())
    killed.start(60)
    pid = killed._postmaster_pid()
    assert pid is not None and killed.pid_alive(pid)
    # the harness dies here (kill -9): nobody stops `killed`; a resume builds a new adapter
    resumed = PostgresSystem(stop_timeout_s=5)
    try:
        resumed.setup(pg_workdir, Probe())
        assert not resumed.pid_alive(pid)
        resumed.start(60)
        assert resumed.psql("SELECT 1") == "1"
    finally:
        resumed.teardown()


@pytest.mark.integration
@NEEDS_MARIADB
def test_a_mariadb_left_by_a_killed_run_is_stopped_when_the_session_resumes(
    hostile_workdir: Path,
) -> None:
    from systems.mysql import MySQLSystem

    killed = MySQLSystem(stop_timeout_s=5)
    killed.setup(hostile_workdir, Probe())
    killed.start(60)
    pid = killed._pid
    assert pid is not None and killed.pid_alive(pid)
    resumed = MySQLSystem(stop_timeout_s=5)
    try:
        resumed.setup(hostile_workdir, Probe())
        assert not resumed.pid_alive(pid)
        resumed.start(60)
        assert resumed.sql("SELECT 1") == "1"
    finally:
        resumed.teardown()
