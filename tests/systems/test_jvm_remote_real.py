"""Spark and Hadoop MapReduce on a "remote" host: real sessions through the private sshd.

The adapters already send every command and file through their executor; with ``hosts=`` the
work folders move under the inventory's workdir and the jobs run on the host with the
interpreter named by ``system.adapter.python`` (here the same venv: loopback).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.requirements import NEEDS_JAVAC, NEEDS_PYSPARK
from tests.helpers.sshd import PrivateSSHD

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.deep,
    NEEDS_PYSPARK,
    NEEDS_JAVAC,
]

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("system", "workload", "metric"),
    [
        ("spark", "wordcount", "job_duration_s"),
        ("mapreduce", "join", "job_duration_s"),
    ],
)
def test_session_over_ssh(
    private_sshd: PrivateSSHD, tmp_path: Path, system: str, workload: str, metric: str
) -> None:
    remote = tmp_path / "remote"
    args = [
        f"system={system}",
        f"workload={workload}",
        "hosts=loopback",
        f"hosts.common.workdir={remote}",
        "workload.scale=0.05",
        "tuner=lhs",
        "budget=2",
        "session.progress=false",
        "tracking=none",
        "session.keep_workdir=true",
        f"session.name=remote-{system}",
        f"results_dir={tmp_path / 'results'}",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=ROOT,
        env={**os.environ, **private_sshd.env()},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    samples = tmp_path / "results" / "sessions" / f"remote-{system}" / "samples.csv"
    with samples.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["status"] for r in rows] == ["SUCCEEDED"] * 2, rows
    assert all(float(r[f"result.{metric}"]) > 0 for r in rows)
    # the job's files were made on the host, under the inventory's workdir
    assert (remote / f"remote-{system}" / system / "data").is_dir()
