"""HDFS/YARN of Hadoop 3.4 against the real thing: a session, faults, bad input.

The daemons are Hadoop 3.4.2 from Maven Central, installed by ``scripts/setup.sh --full`` into
``.installs/hadoop`` and started by our launcher: a NameNode, a DataNode, a ResourceManager and
a NodeManager on 127.0.0.1, each its own JVM; the workload is Hadoop's TestDFSIO on YARN. The
files are a few MB, so a test takes about a minute (mostly JVM starts: the daemons per test,
the MapReduce application master and tasks per job); the numbers are not the point here, the
statuses, the messages and the processes are.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import api
from harness.errors import ConfigError
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from systems.hadoop import HDFSYarnSystem, TestDFSIOWorkload
from systems.hadoop.daemons import running_pid
from tests.helpers.requirements import NEEDS_HADOOP

pytestmark = [pytest.mark.integration, pytest.mark.slow, NEEDS_HADOOP]

OBJECTIVE = Objective("throughput_mb_s", "max")
#: One map task writing 16 MB: the job is as short as a YARN job gets.
SMALL = ["workload.files=1", "workload.file_mb=16"]
IDENT = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()


def our_jvms(folder: Path) -> list[int]:
    """PIDs of Hadoop JVMs (daemons, MapReduce tasks) whose command line names ``folder``."""
    found = subprocess.run(
        ["pgrep", "-f", str(folder)], capture_output=True, text=True, check=False
    ).stdout.split()
    mine = []
    for pid in found:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "java" in cmdline and "org.apache.hadoop" in cmdline and str(folder) in cmdline:
            mine.append(int(pid))
    return mine


def test_pseudo_distributed_session_measures_real_hdfs(tmp_path: Path) -> None:
    cfg = api.compose(
        [
            "system=hdfs",
            "workload=dfsio",
            "tracking=none",
            "budget=2",
            "tuner=random",
            f"results_dir={tmp_path / 'results'}",
            *SMALL,
        ]
    )
    result = api.run(api.prepare(cfg))
    statuses = [o.status for o in result.observations]
    assert statuses == [Status.SUCCEEDED, Status.SUCCEEDED], [
        o.message for o in result.observations
    ]
    for obs in result.observations:
        assert obs.metrics["exec_time_s"] > 0
        assert 0 < obs.metrics["throughput_mb_s"] < obs.metrics["task_throughput_mb_s"] * 1.01
    assert result.observations[0].is_default
    assert our_jvms(tmp_path) == []  # every daemon and task JVM stopped after the session


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[HDFSYarnSystem, TestDFSIOWorkload]]:
    """A set-up pseudo-distributed cluster (the NameNode formatted, the daemons started)."""
    system = HDFSYarnSystem(poll_s=1.0)
    workload = TestDFSIOWorkload(files=1, file_mb=16)
    system.preflight()
    system.setup(tmp_path / "work", workload)
    try:
        yield system, workload
    finally:
        system.teardown()
        assert our_jvms(tmp_path) == []


class DataNodeKiller(threading.Thread):
    """Kills the DataNode with SIGKILL once a TestDFSIO job client has run for a moment."""

    def __init__(self, system: HDFSYarnSystem) -> None:
        super().__init__(daemon=True)
        self.system = system
        self.killed: int | None = None
        self.done = threading.Event()

    def run(self) -> None:
        datanode = next(d for d in self.system._daemons() if d.name == "datanode")
        while not self.done.is_set():
            jobs = subprocess.run(
                ["pgrep", "-f", "org.apache.hadoop.fs.TestDFSIO"], capture_output=True, text=True
            ).stdout.split()
            if jobs:
                time.sleep(3.0)
                pid = running_pid(datanode, IDENT)
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                    self.killed = pid
                return
            time.sleep(0.2)


@pytest.mark.deep
def test_faults_are_recorded_and_the_session_goes_on(
    cluster: tuple[HDFSYarnSystem, TestDFSIOWorkload],
) -> None:
    system, workload = cluster
    default = system.space.default()
    # A setting Hadoop refuses at start: the NameNode exits, the test is CRASHED with the
    # line of the NameNode's log that says why, and nothing of ours keeps running.
    system.site_properties = {"hdfs-site": {"dfs.heartbeat.interval": "often"}}
    began = time.monotonic()
    refused = run_test(system, workload, OBJECTIVE, default, 1)
    print(f"refused in {time.monotonic() - began:.0f}s: {refused.message}")
    assert refused.status is Status.CRASHED, refused.message
    assert "often" in refused.message + refused.extra.get("log_tail", "")
    system.site_properties = {}
    # A cluster that is not healthy in time: CRASHED at the start limit.
    slow = run_test(system, workload, OBJECTIVE, default, 2, start_timeout_s=3)
    assert slow.status is Status.CRASHED and "within" in slow.message, slow.message
    assert not [d.label() for d in system._daemons() if running_pid(d, IDENT)]
    # The DataNode killed with -9 while TestDFSIO writes: that test FAILED, not measured.
    killer = DataNodeKiller(system)
    killer.start()
    try:
        killed = run_test(system, workload, OBJECTIVE, default, 3)
    finally:
        killer.done.set()
        killer.join()
    assert killer.killed is not None
    assert killed.status is Status.FAILED, (killed.status, killed.message)
    assert "datanode" in killed.message.lower()
    # The session goes on: the next test restarts every daemon and measures.
    ok = run_test(system, workload, OBJECTIVE, default, 4)
    assert ok.status is Status.SUCCEEDED, ok.message
    assert ok.metrics["throughput_mb_s"] > 0


def test_a_taken_port_is_one_line_before_any_test(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        system = HDFSYarnSystem(namenode_port=port)
        with pytest.raises(
            ConfigError, match=rf"127\.0\.0\.1:{port} is already in use.*namenode_port"
        ):
            system.preflight()
    assert our_jvms(tmp_path) == []


def test_missing_install_names_the_setup_command(tmp_path: Path) -> None:
    system = HDFSYarnSystem(hadoop_home=str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match=r"scripts/setup\.sh --full"):
        system.preflight()
