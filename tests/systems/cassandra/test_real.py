"""Cassandra 5.0 and YCSB against the real thing: one node, a three-node local ring, faults.

The servers are Cassandra 5.0.9 from Maven Central and YCSB 0.17.0's client with our binding,
both installed by ``scripts/setup.sh --full`` into ``.installs/``. Data sets are small (a few
thousand records) and runs a few seconds long, so the whole file takes a few minutes; the
measured numbers are not the point here, the statuses, the files and the processes are.
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
from omegaconf import DictConfig

from harness import api
from harness.errors import ConfigError
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from systems.cassandra import CassandraSystem, YCSBWorkload
from tests.helpers.requirements import LONG, NEEDS_CASSANDRA

pytestmark = [pytest.mark.integration, pytest.mark.slow, NEEDS_CASSANDRA]

OBJECTIVE = Objective("throughput_ops", "max")
RAM_MIB = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
#: A few thousand records and short runs: a test here takes ~20 s on one node.
SMALL = [
    "workload.recordcount=3000",
    "workload.load_threads=8",
    "workload.threads=8",
    "workload.duration_s=5",
    "workload.warmup_s=0",
]
#: Cassandra's own startup waits, shortened for a ring that lives a few minutes (30 s ring
#: delay and the gossip-settle wait per node otherwise); the configuration under test is not
#: touched.
FAST_RING = (
    "system.adapter.extra_jvm_opts='-Dcassandra.ring_delay_ms=5000 "
    "-Dcassandra.skip_wait_for_gossip_to_settle=0'"
)


def our_jvms(folder: Path) -> list[int]:
    """PIDs of Cassandra JVMs whose command line names ``folder`` (ours, not anyone else's)."""
    found = subprocess.run(
        ["pgrep", "-f", f"CassandraDaemon|{folder}"], capture_output=True, text=True, check=False
    ).stdout.split()
    mine = []
    for pid in found:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "CassandraDaemon" in cmdline and str(folder) in cmdline:
            mine.append(int(pid))
    return mine


def compose(tmp_path: Path, *overrides: str) -> DictConfig:
    return api.compose(
        [
            "system=cassandra",
            "workload=ycsb_a",
            "tracking=none",
            f"results_dir={tmp_path / 'results'}",
            *SMALL,
            *overrides,
        ]
    )


def test_single_node_session_measures_real_cassandra(tmp_path: Path) -> None:
    cfg = compose(tmp_path, "budget=2", "tuner=random")
    session = api.prepare(cfg)
    heap = int(session.system.describe()["heap_mb"])
    result = api.run(session)
    statuses = [o.status for o in result.observations]
    assert statuses == [Status.SUCCEEDED, Status.SUCCEEDED], [
        o.message for o in result.observations
    ]
    for obs in result.observations:
        assert obs.metrics["throughput_ops"] > 20
        assert obs.metrics["errors"] == 0
        assert obs.metrics["latency_p99_ms"] > 0
    assert result.observations[0].is_default
    # Cassandra's own heap rule for this machine: one node, the whole RAM.
    assert heap == max(min(RAM_MIB // 2, 1024), min(RAM_MIB // 4, 8192))
    assert our_jvms(tmp_path) == []  # every node stopped after the session


@pytest.fixture
def one_node(tmp_path: Path) -> Iterator[tuple[CassandraSystem, YCSBWorkload]]:
    """A set-up single node with the heap among its knobs (set "30")."""
    system = CassandraSystem(knob_set="30", heap_mb=1024, poll_s=1.0)
    workload = YCSBWorkload(recordcount=2000, threads=4, load_threads=4, duration_s=4, warmup_s=0)
    system.setup(tmp_path / "work", workload)
    try:
        yield system, workload
    finally:
        system.teardown()
        assert our_jvms(tmp_path) == []


@pytest.mark.deep
@pytest.mark.skipif(RAM_MIB >= 31744, reason="this host could commit a 31 GiB heap")
def test_a_configuration_that_stops_the_node_is_crashed_and_the_next_test_runs(
    one_node: tuple[CassandraSystem, YCSBWorkload],
) -> None:
    system, workload = one_node
    default = system.space.default()
    # In the catalogue's range, but more heap than this machine has (-Xms = -Xmx): the JVM
    # cannot commit it and exits before Cassandra starts.
    crash = run_test(system, workload, OBJECTIVE, {**default, "jvm.heap_mb": 31744}, 1)
    assert crash.status is Status.CRASHED, crash.message
    assert "insufficient memory for the Java Runtime" in crash.message
    assert "system.log" in crash.extra["log_tail"] and "stdout.log" in crash.extra["log_tail"]
    assert system._pid(0) is None  # stopped, pid file removed
    # A key Cassandra 5 does not know: it refuses the yaml and says which key.
    system.yaml_overrides = {"no_such_setting_in_5_0": 1}
    rejected = run_test(system, workload, OBJECTIVE, default, 2)
    assert rejected.status is Status.CRASHED
    assert "no_such_setting_in_5_0" in rejected.message + rejected.extra["log_tail"]
    system.yaml_overrides = {}
    # A node that is not ready in time: CRASHED at the start limit, its JVM stopped.
    slow = run_test(system, workload, OBJECTIVE, default, 3, start_timeout_s=2)
    assert slow.status is Status.CRASHED and "within 2s" in slow.message
    assert system._pid(0) is None
    # The session goes on: the data set is restored and the default runs as before.
    ok = run_test(system, workload, OBJECTIVE, default, 4)
    assert ok.status is Status.SUCCEEDED, ok.message
    assert ok.metrics["throughput_ops"] > 20


def test_a_taken_port_is_one_line_before_any_test(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        system = CassandraSystem(native_transport_port=port)
        with pytest.raises(
            ConfigError,
            match=rf"127\.0\.0\.1:{port} is already in use.*"
            r"system\.adapter\.native_transport_port",
        ):
            system.setup(tmp_path / "work", YCSBWorkload())
    assert our_jvms(tmp_path) == []


def test_missing_install_names_the_setup_command(tmp_path: Path) -> None:
    system = CassandraSystem(install_dir=str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match=r"scripts/setup\.sh --full"):
        system.setup(tmp_path / "work", YCSBWorkload())


class NodeKiller(threading.Thread):
    """Kills one node with SIGKILL a moment after the ``nth`` YCSB run phase has started.

    It reads the node's pid file from this machine's disk, not through the session's executor:
    an SSH connection is not safe to share with the session's thread (a CI run lost the kill to
    exactly that), and the namespace hosts of tests/helpers/testbed.py share this machine's disk
    and PID space. Whatever stops it is kept in ``error`` for the test's message.
    """

    def __init__(self, system: CassandraSystem, node: int, nth: int) -> None:
        super().__init__(daemon=True)
        self.system, self.node, self.nth = system, node, nth
        self.killed: int | None = None
        self.error = ""
        self.done = threading.Event()

    def _ycsb_runs(self) -> set[int]:
        out = subprocess.run(
            ["pgrep", "-f", "site.ycsb.Client -t"], capture_output=True, text=True, check=False
        ).stdout
        return {int(p) for p in out.split()}

    def _node_pid(self) -> int | None:
        path = Path(self.system.paths[self.node].pid_file)
        text = path.read_text().strip() if path.exists() else ""
        return int(text) if text.isdigit() else None

    def run(self) -> None:
        try:
            self._watch()
        except Exception as error:  # the test asserts on killed and prints this
            self.error = f"{type(error).__name__}: {error}"

    def _watch(self) -> None:
        seen: set[int] = set()
        while not self.done.is_set():
            seen |= self._ycsb_runs()
            if len(seen) >= self.nth:
                time.sleep(1.5)
                pid = self._node_pid()
                if pid is None:
                    self.error = f"no pid file for node {self.node} during YCSB run {self.nth}"
                    return
                os.kill(pid, signal.SIGKILL)
                self.killed = pid
                return
            time.sleep(0.2)
        self.error = f"saw {len(seen)} YCSB run phase(s), waited for {self.nth}"


@pytest.mark.deep
@LONG  # the deep tier runs the same fault on the two-host ring of test_testbed_clusters.py
def test_three_node_ring_survives_a_node_killed_mid_test(tmp_path: Path) -> None:
    cfg = compose(
        tmp_path,
        "hosts=local_ring",
        "budget=3",
        "tuner=random",
        "workload.duration_s=8",
        # 2 GiB nodes: no configuration that could run out of memory for reasons of its own,
        # so the one FAILED test is the killed node's.
        "+system.fixed.commitlog_segment_size_in_mb=32",
        "+system.fixed.memtable_heap_space_in_mb=256",
        FAST_RING,
    )
    session = api.prepare(cfg)
    system = session.system
    assert isinstance(system, CassandraSystem)
    assert [n.address for n in system.nodes] == ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
    killer = NodeKiller(system, node=2, nth=2)  # node3, during the second test's run
    killer.start()
    try:
        result = api.run(session)
    finally:
        killer.done.set()
    assert killer.killed is not None, killer.error
    statuses = [o.status for o in result.observations]
    assert statuses == [Status.SUCCEEDED, Status.FAILED, Status.SUCCEEDED], [
        o.message for o in result.observations
    ]
    assert "node3 stopped during the test" in result.observations[1].message
    assert result.observations[2].metrics["throughput_ops"] > 5  # the ring came back whole
    assert our_jvms(tmp_path) == []
