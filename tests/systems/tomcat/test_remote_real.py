"""Tomcat on a "remote" host: whole CLI sessions over the private sshd on 127.0.0.1.

The SUT host is this machine reached through SSH (``hosts=loopback``), so every command, file
and the wrk load go through the SSH executor, and the Tomcat base lives under the inventory's
workdir (here a folder of the test), not under the local results folder.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.requirements import NEEDS_TOMCAT
from tests.helpers.sshd import PrivateSSHD

pytestmark = [
    pytest.mark.integration,
    *NEEDS_TOMCAT,
]

ROOT = Path(__file__).resolve().parents[3]


def _session(
    sshd: PrivateSSHD, tmp_path: Path, name: str, *extra: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, str]]]:
    """Run ``python -m harness system=tomcat hosts=loopback ...``; return it and its samples."""
    args = [
        "system=tomcat",
        "hosts=loopback",
        f"hosts.common.workdir={tmp_path / 'remote'}",
        "tuner=lhs",
        "workload.duration_s=3",
        "workload.warmup_s=1",
        "session.progress=false",
        "tracking=none",
        f"session.name={name}",
        f"results_dir={tmp_path / 'results'}",
        *extra,
    ]
    done = subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=ROOT,
        env={**os.environ, **sshd.env()},
        capture_output=True,
        text=True,
        timeout=600,
    )
    samples = tmp_path / "results" / "sessions" / name / "samples.csv"
    rows = list(csv.DictReader(samples.open())) if samples.exists() else []
    return done, rows


def _jvms_of(base: Path) -> str:
    """Command lines of processes still running with this Tomcat base (read only)."""
    found = subprocess.run(
        ["pgrep", "-af", f"catalina.base={base}"], capture_output=True, text=True
    )
    return found.stdout.strip()


@pytest.mark.slow
def test_tomcat_session_over_ssh(private_sshd: PrivateSSHD, tmp_path: Path) -> None:
    # keep_workdir: the session folder on the host is otherwise removed after a finished run
    done, rows = _session(
        private_sshd, tmp_path, "remote-tomcat", "budget=2", "session.keep_workdir=true"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert [r["status"] for r in rows] == ["SUCCEEDED"] * 2, rows
    assert all(float(r["result.requests_per_s"]) > 0 for r in rows), rows
    # The base was built where the inventory says (not under the local results folder) ...
    base = tmp_path / "remote" / "remote-tomcat" / "tomcat" / "base"
    assert list((base / "webapps" / "ROOT" / "WEB-INF" / "classes").rglob("CpuServlet.class"))
    assert 'address="127.0.0.1"' in (base / "conf" / "server.xml").read_text()
    assert (base.parent / "explore.lua").exists()
    # ... the session knows which host ran it, and nothing was left running.
    meta = (tmp_path / "results" / "sessions" / "remote-tomcat" / "session.json").read_text()
    assert '"harness.system.host": "sut1"' in meta
    assert _jvms_of(base) == ""


@pytest.mark.deep
@pytest.mark.slow
def test_jvm_crash_over_ssh_is_recorded_with_log_tail(
    private_sshd: PrivateSSHD, tmp_path: Path
) -> None:
    done, rows = _session(
        private_sshd,
        tmp_path,
        "remote-tomcat-crash",
        "budget=2",
        "system.adapter.extra_java_opts='-XX:+NoSuchOption'",
    )
    # The default configuration itself cannot start, so the session stops after trial 0.
    assert done.returncode == 1, done.stderr[-3000:]
    assert "the default configuration did not start" in done.stdout + done.stderr
    assert [r["status"] for r in rows] == ["CRASHED"], rows
    logs = tmp_path / "results" / "sessions" / "remote-tomcat-crash" / "crash_logs.txt"
    text = logs.read_text()
    assert "== trial 0" in text and "NoSuchOption" in text
    assert _jvms_of(tmp_path / "remote" / "remote-tomcat-crash" / "tomcat" / "base") == ""
