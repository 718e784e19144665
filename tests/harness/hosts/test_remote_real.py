"""The SSH executor and a whole tuning session against a real, private sshd on 127.0.0.1."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.errors import ConfigError, ExecutorError, HostUnreachable
from harness.executor import CommandTimeout
from harness.hosts.connect import connect_inventory
from harness.hosts.inventory import Host, Inventory
from harness.hosts.ssh import SSHExecutor
from tests.helpers.sshd import PrivateSSHD

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


def _executor(sshd: PrivateSSHD, name: str = "sut1", **overrides: object) -> SSHExecutor:
    return SSHExecutor(Host.from_mapping(sshd.host(name, **overrides), {}))


def test_run_quotes_hostile_values_and_passes_env_cwd_input(
    private_sshd: PrivateSSHD, tmp_path: Path
) -> None:
    ssh = _executor(private_sshd)
    hostile = ["; touch /tmp/pwned-by-test", "$(id)", "a b", "it's", "*"]
    result = ssh.run(["python3", "-c", "import sys; print(repr(sys.argv[1:]))", *hostile])
    assert result.stdout.strip() == repr(hostile)
    assert not Path("/tmp/pwned-by-test").exists()
    out = ssh.run(
        ["sh", "-c", 'printf "%s|%s|" "$PWD" "$V"; cat'],
        env={"V": "x y"},
        cwd=tmp_path,
        input_text="from stdin",
    ).stdout
    assert out == f"{tmp_path}|x y|from stdin"
    failed = ssh.run(["sh", "-c", "echo boom >&2; exit 3"], check=False)
    assert failed.exit_code == 3 and "boom" in failed.stderr
    with pytest.raises(ExecutorError, match=r"(?s)on sut1: .*exited 3.*boom"):
        ssh.run(["sh", "-c", "echo boom >&2; exit 3"])
    ssh.close()


def test_timeout_kills_the_remote_process_group(private_sshd: PrivateSSHD) -> None:
    ssh = _executor(private_sshd)
    marker = f"harness-timeout-probe-{os.getpid()}"
    started = time.perf_counter()
    with pytest.raises(CommandTimeout, match="exceeded 1s"):
        ssh.run(["sh", "-c", f"sleep 300 & sleep 301; echo {marker}"], timeout_s=1)
    assert time.perf_counter() - started < 15
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", "sleep 30[01]"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "the timed-out command's children are still running"
    ssh.close()


def test_files_round_trip_and_exists(private_sshd: PrivateSSHD, tmp_path: Path) -> None:
    ssh = _executor(private_sshd)
    target = tmp_path / "remote.conf"
    text = "max_connections = 100\nweird = 'it''s' $(x)\n" + "x" * 100_000
    ssh.write_text(target, text, mode=0o600)
    assert target.read_text() == text and (target.stat().st_mode & 0o777) == 0o600
    assert ssh.read_text(target) == text
    assert ssh.exists(target) and not ssh.exists(tmp_path / "missing")
    with pytest.raises(ExecutorError, match="cannot read"):
        ssh.read_text(tmp_path / "missing")
    assert 1024 <= ssh.free_port() < 65536
    ssh.close()


def test_unknown_host_key_is_refused_unless_opted_out(
    private_sshd: PrivateSSHD, tmp_path: Path
) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    strict = _executor(private_sshd, known_hosts=str(empty))
    if Path("~/.ssh/known_hosts").expanduser().exists():
        pytest.skip("~/.ssh/known_hosts exists and may already hold the test key")
    with pytest.raises(HostUnreachable, match="host key is unknown: add it with `ssh-keyscan"):
        strict.run(["true"])
    relaxed = _executor(private_sshd, known_hosts=str(empty), strict_host_key_checking=False)
    assert relaxed.run(["echo", "ok"]).stdout.strip() == "ok"
    relaxed.close()


def test_wrong_key_and_dead_port_give_one_clear_line(
    private_sshd: PrivateSSHD, tmp_path: Path
) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "stranger")],
        check=True,
    )
    with pytest.raises(HostUnreachable, match="authentication failed"):
        _executor(private_sshd, key_file=str(tmp_path / "stranger")).run(["true"])
    dead = Inventory.from_config("dead", [private_sshd.host(port=1, connect_timeout_s=3)])
    started = time.perf_counter()
    with pytest.raises(
        ConfigError,
        match=r"inventory 'dead': cannot connect to host sut1 "
        r"\(root@127.0.0.1:1\)",
    ):
        connect_inventory(dead)
    assert time.perf_counter() - started < 10


def _cli(
    args: list[str], sshd: PrivateSSHD, cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **sshd.env()}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_local_only_system_is_refused_with_hosts(
    private_sshd: PrivateSSHD, tmp_path: Path
) -> None:
    done = _cli(
        ["system=synthetic10", "hosts=loopback", "tracking=none", f"results_dir={tmp_path}"],
        private_sshd,
        ROOT,
        timeout=120,
    )
    assert done.returncode == 2
    assert "declares placement 'local'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_postgres_tuning_session_over_ssh(private_sshd: PrivateSSHD, tmp_path: Path) -> None:
    if not Path("/usr/lib/postgresql").exists():
        pytest.skip("postgresql is not installed")
    done = _cli(
        [
            "system=postgres",
            "workload=pgbench",
            "workload.duration_s=3",
            "tuner=lhs",
            "budget=3",
            "hosts=loopback",
            "session.progress=false",
            "tracking=none",
            "session.name=remote-pg",
            f"results_dir={tmp_path}",
        ],
        private_sshd,
        ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    with open(tmp_path / "sessions" / "remote-pg" / "samples.csv") as samples:
        rows = list(csv.DictReader(samples))
    assert [r["status"] for r in rows] == ["SUCCEEDED"] * 3, rows
    assert all(float(r["result.tps"]) > 0 for r in rows)
    meta = (tmp_path / "sessions" / "remote-pg" / "session.json").read_text()
    assert '"harness.system.host": "sut1"' in meta
    # the finished session's folder on the host (conf/hosts/loopback.yaml workdir) is removed
    assert not Path("/tmp/harness-remote/remote-pg").exists()
