"""The CPU that other work takes during a test (harness.hosts.other_work): parsing /proc/stat,
cpu.stat and mountinfo, and, with real control groups where this machine can make them, a busy
process beside a group counted as other work and the same process inside it not."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from harness.hosts.other_work import (
    CGROUP_ENV,
    CpuTimes,
    OtherWork,
    cgroup2_root,
    join,
    kernel_thread_seconds,
    make_cgroup,
    own_cgroup,
    parse_cgroup_usage,
    parse_proc_stat,
    parse_task_stat,
    processes_in,
)
from harness.objectives.objective import Objective
from harness.session.trial import run_test
from systems.synthetic import SyntheticSystem, SyntheticWorkload

PROC_STAT = (
    "cpu  1506287 17150 382145 646102 32187 0 93935 1535 0 0\n"
    "cpu0 753143 8575 191072 323051 16093 0 46967 767 0 0\n"
)
CPU_STAT = "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnice_usec 0\n"
HYBRID = (
    "35 25 0:30 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
    "36 35 0:31 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw\n"
    "37 35 0:32 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
)
BUSY = [sys.executable, "-c", "import time\nend = time.time() + 3\nwhile time.time() < end: pass"]


def test_proc_stat_gives_the_machines_total_busy_and_stolen_seconds():
    total, busy, steal = parse_proc_stat(PROC_STAT, ticks_per_s=100)
    assert total == pytest.approx(2679341 / 100)
    assert busy == pytest.approx((1506287 + 17150 + 382145) / 100)  # no interrupts, no idle
    assert steal == pytest.approx(15.35)
    with pytest.raises(ValueError):
        parse_proc_stat("intr 1 2 3\n", 100)


def test_a_groups_cpu_stat_gives_its_seconds():
    assert parse_cgroup_usage(CPU_STAT) == 2.5
    with pytest.raises(ValueError):
        parse_cgroup_usage("nr_periods 0\n")


def test_the_cgroup2_hierarchy_is_found_on_hybrid_and_pure_machines():
    assert cgroup2_root(HYBRID) == Path("/sys/fs/cgroup/unified")
    pure = "30 1 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
    assert cgroup2_root(pure) == Path("/sys/fs/cgroup")
    assert cgroup2_root(HYBRID.splitlines()[0] + "\n") is None


def test_other_work_is_the_machines_busy_time_less_the_groups(monkeypatch, tmp_path):
    watch = OtherWork(tmp_path)
    start = CpuTimes(total_s=100.0, busy_s=40.0, steal_s=1.0, own_s=30.0)
    # 20 s of capacity (10 s on 2 cores): 12 busy, 8 of them the group's, 1 stolen
    end = CpuTimes(total_s=120.0, busy_s=52.0, steal_s=2.0, own_s=38.0)
    monkeypatch.setattr(watch, "sample", lambda: end)
    assert watch.since(start) == {"other_cpu": 0.2, "kernel_cpu": 0.0, "steal": 0.05}
    # the two clocks are read a moment apart: the group may seem to outrun the machine
    monkeypatch.setattr(watch, "sample", lambda: CpuTimes(120.0, 47.0, 1.0, 38.0))
    assert watch.since(start)["other_cpu"] == 0.0


# /proc/<pid>/stat of kthreadd (flags 0x208040: a kernel thread) and of a process whose name
# holds the parentheses and spaces that make a naive split miscount the fields
KTHREADD = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 7 5 0 0 20 0 1 0 14 0 0 1844 0 0 0 0"
TRICKY = "4242 (a) (b c) R 1 4242 4242 0 -1 4194560 93 0 0 0 150 50 0 0 20 0 1 0 900 1 2 3"


def test_a_task_stat_line_says_whether_it_is_a_kernel_thread_and_its_cpu_seconds():
    assert parse_task_stat(KTHREADD, ticks_per_s=100) == (True, pytest.approx(0.12))
    assert parse_task_stat(TRICKY, ticks_per_s=100) == (False, pytest.approx(2.0))


def test_kernel_threads_are_read_from_proc_and_processes_left_out(tmp_path):
    for pid, line in (("2", KTHREADD), ("4242", TRICKY), ("77", "77 (gone")):
        (tmp_path / pid).mkdir()
        (tmp_path / pid / "stat").write_text(line)
    assert kernel_thread_seconds(100, proc=tmp_path) == {2: pytest.approx(0.12)}


def test_the_kernel_threads_share_counts_each_thread_that_ran_in_the_span(monkeypatch, tmp_path):
    watch = OtherWork(tmp_path)
    # thread 10 ran 1 s; 11 exited (its seconds must not count against the others); 12 is new
    # with 0.5 s; pid 13 was reused by a new thread whose 0.2 s are below the old one's 3 s
    start = CpuTimes(100.0, 40.0, 0.0, 30.0, kernel_s={10: 5.0, 11: 9.0, 13: 3.0})
    end = CpuTimes(120.0, 52.0, 0.0, 38.0, kernel_s={10: 6.0, 12: 0.5, 13: 0.2})
    monkeypatch.setattr(watch, "sample", lambda: end)
    assert watch.since(start)["kernel_cpu"] == pytest.approx((1.0 + 0.5 + 0.2) / 20)


def test_without_a_group_of_its_own_a_test_records_no_other_work(monkeypatch, tmp_path):
    monkeypatch.delenv(CGROUP_ENV, raising=False)
    assert OtherWork.from_env() is None
    monkeypatch.setenv(CGROUP_ENV, str(tmp_path / "no-such-group"))
    assert OtherWork.from_env() is None  # one warning, then the tests run unwatched
    obs = _one_test()
    assert obs.ok and "other_cpu" not in obs.extra and "loadavg_1m" in obs.extra


def _one_test():
    system = SyntheticSystem(delay_s=0.2)  # a run long enough to sample across
    return run_test(
        system, SyntheticWorkload(), Objective("throughput", "max"), system.space.default(), 0
    )


@pytest.fixture
def group(request):
    made = make_cgroup(f"test-{request.node.name}"[:60], parent="harness-tests")
    if made is None:
        pytest.skip("this machine cannot make a cgroup v2 group (not root, or no cgroup2)")
    yield made
    made.rmdir()
    with contextlib.suppress(OSError):  # the parent too, when no other test's group is in it
        made.parent.rmdir()


@pytest.mark.integration
@pytest.mark.slow
def test_a_busy_process_beside_the_group_is_other_work_and_inside_it_is_not(group):
    watch = OtherWork(group)

    def other_share(in_group: bool) -> float:
        start = watch.sample()
        hog = subprocess.Popen(BUSY, preexec_fn=partial(join, group) if in_group else None)
        assert hog.wait(timeout=30) == 0
        return watch.since(start)["other_cpu"]

    beside, inside = other_share(in_group=False), other_share(in_group=True)
    # The hog is counted beside the group only. Whatever else the machine runs (CI beside other
    # jobs) counts in both samples, so only the difference is the hog's: up to half the machine
    # (one of 2 cores for 3 s), less when the hog has to share its core.
    assert beside - inside > 0.1, (beside, inside)


@pytest.mark.integration
def test_a_test_in_its_group_records_the_other_work_and_steal(group, monkeypatch):
    monkeypatch.setenv(CGROUP_ENV, str(group))
    obs = _one_test()
    assert obs.ok
    assert 0.0 <= obs.extra["other_cpu"] <= 1.0 and 0.0 <= obs.extra["steal"] <= 1.0
    assert 0.0 <= obs.extra["kernel_cpu"] <= 1.0


@pytest.mark.integration
def test_this_machines_kernel_threads_are_found_in_proc():
    if not Path("/proc/2/stat").exists():  # a PID namespace hides the kernel's threads
        pytest.skip("no kernel threads are visible in this PID namespace")
    seconds = kernel_thread_seconds(100)
    assert 2 in seconds, "kthreadd is the parent of every kernel thread"
    assert all(s >= 0 for s in seconds.values())


@pytest.mark.integration
def test_a_process_left_in_a_sessions_group_is_killed_and_the_group_removed():
    with own_cgroup("test-leftover", parent="harness-tests") as made:
        if made is None:
            pytest.skip("this machine cannot make a cgroup v2 group (not root, or no cgroup2)")
        # as a server that daemonizes: its own session, and the starter gone
        subprocess.run(
            ["setsid", "-f", "sleep", "300"], preexec_fn=partial(join, made), check=True
        )
        deadline = time.monotonic() + 5
        while not processes_in(made) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_in(made), "the daemon should be in the group"
    assert not made.exists()
