"""Live output: the executor hands a running command's lines to a callback, and a callback
that raises stops the command with its whole process group (real local processes)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from harness.errors import WorkloadTimeout
from harness.executor import CommandTimeout, LocalExecutor
from harness.hosts.inventory import Host
from harness.hosts.process import process_alive, run_step
from harness.hosts.ssh import SSHExecutor
from harness.intervals import IntervalRecorder, IntervalSample, StoppedEarly
from tests.helpers.sshd import PrivateSSHD

#: Prints a numbered line every 0.2 s for ~20 s, after starting a child that sleeps as long
#: (the child is in the same process group and must die with it); the child's pid comes first.
TICKER = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
    "print('child', child.pid, flush=True)\n"
    "for i in range(100):\n"
    "    print('tick', i, flush=True)\n"
    "    time.sleep(0.2)\n"
)


def _tick(line: str) -> list[IntervalSample]:
    kind, _, number = line.partition(" ")
    return [IntervalSample(float(number), "tps", 10.0, "tx/s")] if kind == "tick" else []


def test_lines_arrive_while_the_command_runs_and_the_output_is_kept() -> None:
    seen: list[tuple[str, bool]] = []
    marker = "/tmp/harness-live-" + str(os.getpid())
    script = f"import time\nprint('a', flush=True)\ntime.sleep(0.5)\nopen({marker!r}, 'w')\n"
    script += "print('b')\nimport sys\nprint('c', file=sys.stderr)\n"

    def on_line(line: str) -> None:
        seen.append((line, os.path.exists(marker)))

    try:
        result = LocalExecutor().run([sys.executable, "-c", script], on_line=on_line)
    finally:
        if os.path.exists(marker):
            os.remove(marker)
    assert seen[0] == ("a", False)  # heard before the command went on
    assert sorted(line for line, _ in seen) == ["a", "b", "c"]
    assert result.stdout == "a\nb\n" and result.stderr == "c\n"


def test_a_stop_requested_by_a_listener_kills_the_client_and_its_group() -> None:
    recorder = IntervalRecorder("rate", target="tps")
    recorder.begin()

    def judge(sample: IntervalSample) -> None:
        if sample.offset_s >= 2:
            recorder.request_stop("hopeless", {"bound": 1.0})

    recorder.subscribe(judge)
    child: list[int] = []

    def feed(line: str) -> None:
        if line.startswith("child "):
            child.append(int(line.split()[1]))
        recorder.feed(line, _tick)

    executor = LocalExecutor()
    with pytest.raises(StoppedEarly) as stopped:
        run_step(
            executor, [sys.executable, "-c", TICKER], what="ticker", timeout_s=60, on_line=feed
        )
    assert stopped.value.censored == {"bound": 1.0}
    assert [s.offset_s for s in recorder.samples] == [0.0, 1.0, 2.0]  # stopped at once
    deadline = time.monotonic() + 10
    while process_alive(executor, child[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(executor, child[0])


def test_a_streamed_command_past_its_limit_is_killed_with_its_output() -> None:
    with pytest.raises(CommandTimeout) as timed_out:
        LocalExecutor().run([sys.executable, "-c", TICKER], timeout_s=1.0, on_line=lambda _: None)
    assert "tick 0" in timed_out.value.stdout
    with pytest.raises(WorkloadTimeout):
        run_step(
            LocalExecutor(),
            [sys.executable, "-c", TICKER],
            what="ticker",
            timeout_s=0.5,
            on_line=lambda _: None,
        )


def test_a_new_run_forgets_a_stop_request() -> None:
    recorder = IntervalRecorder()
    recorder.request_stop("old", {})
    recorder.begin()
    recorder.checkpoint("any line")  # no stop left over from the previous run
    recorder.request_stop("first", {"n": 1})
    recorder.request_stop("second", {"n": 2})
    with pytest.raises(StoppedEarly, match="first"):
        recorder.checkpoint()


@pytest.mark.integration
def test_over_ssh_lines_arrive_live_and_a_stop_kills_the_remote_session(
    private_sshd: PrivateSSHD,
) -> None:
    ssh = SSHExecutor(Host.from_mapping(private_sshd.host("sut1"), {}))
    recorder = IntervalRecorder("rate", target="tps")
    recorder.begin()
    child: list[int] = []

    def feed(line: str) -> None:
        if line.startswith("child "):
            child.append(int(line.split()[1]))
        if line == "tick 3":
            recorder.request_stop("hopeless", {"bound": 2.0})
        recorder.feed(line, _tick)

    try:
        with pytest.raises(StoppedEarly):
            run_step(ssh, ["python3", "-c", TICKER], what="ticker", timeout_s=60, on_line=feed)
        assert [s.offset_s for s in recorder.samples] == [0.0, 1.0, 2.0, 3.0]
        local = LocalExecutor()  # the private sshd runs on this machine
        deadline = time.monotonic() + 10
        while process_alive(local, child[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process_alive(local, child[0]), "the stopped command's child still runs"
        whole = ssh.run(["sh", "-c", "echo out; echo err >&2"], on_line=lambda _: None)
        assert (whole.stdout, whole.stderr) == ("out\n", "err\n")  # no session-id line kept
    finally:
        ssh.close()
