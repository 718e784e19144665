"""CPU time that other work took from the machine during a test, to flag disturbed tests.

A test's load average (``loadavg_1m``) rises by about one for one more busy process, which is
lost in the 7 or so that Tomcat and its clients keep runnable on 2 cores: a niced pytest beside
a Tomcat session took a third of its throughput while the load average went from ~7 to ~9
(results/real/README.md). CPU time is the direct measure. When a session runs in a control
group of its own (cgroup v2), every process it starts is counted in that group, servers that
daemonize included, so the machine's busy time less the group's is the time of the other work.

The group is named by the ``HARNESS_CGROUP`` environment variable; :func:`own_cgroup` makes one
and starts a command in it (the real-figure queue runs each session so). Without it nothing is
recorded: the harness cannot tell its own processes from the others'. The hypervisor's steal
time (from /proc/stat) is recorded beside it, since a neighbouring VM takes CPU too.

Kernel threads are in no process's group, so ``other_cpu`` counts them as other work, though
much of what they do is the session's own: a SQLite session, with nothing of ours beside it,
recorded 1-2 % of other work in 8 of its tests, likely the ext4 journal and the writeback
workers that carry out its fsyncs. Their share is recorded apart as ``kernel_cpu`` from each
kernel thread's CPU time in /proc, so that a job beside the session can be told from the
kernel's work. It is meant as the kernel's part of ``other_cpu`` but is read on another clock:
in SQLite sessions it was at least the whole of ``other_cpu`` in 438 of 460 measurements (a
thread's own times likely include softirq work that /proc/stat files apart from ``busy``),
so ``other_cpu - kernel_cpu`` is often below 0, which reads as "no other work".

Both are shares of the machine's CPU time over the span (all cores; 0.5 = one of 2 cores), on
the harness's machine only (with ``hosts=`` the servers run elsewhere and are not counted).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CGROUP_ENV",
    "CpuTimes",
    "OtherWork",
    "cgroup2_root",
    "join",
    "kernel_thread_seconds",
    "kill_all",
    "make_cgroup",
    "own_cgroup",
    "parse_cgroup_usage",
    "parse_proc_stat",
    "parse_task_stat",
    "processes_in",
]

log = logging.getLogger(__name__)

#: The environment variable that names the session's own cgroup (a v2 directory).
CGROUP_ENV = "HARNESS_CGROUP"
#: The per-task flag (include/linux/sched.h) that marks a kernel thread in /proc/<pid>/stat.
PF_KTHREAD = 0x00200000


@dataclass(frozen=True)
class CpuTimes:
    """CPU seconds summed over all cores, since boot: the machine's and the session's group."""

    total_s: float  # every state, idle included: the machine's capacity
    busy_s: float  # user + nice + system (interrupts are not charged to any process)
    steal_s: float  # taken by the hypervisor for other VMs
    own_s: float  # the session's control group
    # each kernel thread's CPU seconds by pid: a thread that exits between two samples takes
    # its seconds with it, so the share is summed per thread, not from two totals
    kernel_s: Mapping[int, float] = field(default_factory=dict)


def parse_proc_stat(text: str, ticks_per_s: float) -> tuple[float, float, float]:
    """(total, busy, steal) seconds from /proc/stat's aggregate ``cpu`` line."""
    first = text.split("\n", 1)[0].split()
    if not first or first[0] != "cpu":
        raise ValueError("/proc/stat does not start with the aggregate cpu line")
    ticks = [int(x) for x in first[1:]]
    # user nice system idle iowait irq softirq steal [guest guest_nice: already in user, nice]
    total = sum(ticks[:8])
    busy = ticks[0] + ticks[1] + ticks[2]
    steal = ticks[7] if len(ticks) > 7 else 0
    return total / ticks_per_s, busy / ticks_per_s, steal / ticks_per_s


def parse_task_stat(text: str, ticks_per_s: float) -> tuple[bool, float]:
    """(is a kernel thread, user + system CPU seconds) from a /proc/<pid>/stat line."""
    # the command name is in parentheses and may itself hold spaces and parentheses
    fields = text[text.rindex(")") + 2 :].split()
    # fields[0] is the state (the line's 3rd field): flags is the 9th, utime and stime 14th-15th
    flags, utime, stime = int(fields[6]), int(fields[11]), int(fields[12])
    return bool(flags & PF_KTHREAD), (utime + stime) / ticks_per_s


def kernel_thread_seconds(ticks_per_s: float, proc: Path = Path("/proc")) -> dict[int, float]:
    """Each kernel thread's CPU seconds since it started, by pid."""
    seconds = {}
    for stat in proc.glob("[0-9]*/stat"):
        try:
            kernel, cpu_s = parse_task_stat(stat.read_text(), ticks_per_s)
        except (OSError, ValueError, IndexError):  # the task exited while we looked
            continue
        if kernel:
            seconds[int(stat.parent.name)] = cpu_s
    return seconds


def parse_cgroup_usage(text: str) -> float:
    """A v2 group's CPU seconds from its ``cpu.stat`` (``usage_usec``)."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            return int(value) / 1e6
    raise ValueError("cpu.stat has no usage_usec line")


class OtherWork:
    """Samples the machine's and a control group's CPU time; the shares others took between."""

    def __init__(self, cgroup: Path) -> None:
        self.cgroup = cgroup
        self._ticks_per_s = float(os.sysconf("SC_CLK_TCK"))

    @classmethod
    def from_env(cls) -> OtherWork | None:
        """The session's group named by ``HARNESS_CGROUP``; None when unset or unreadable."""
        return _watch(os.environ.get(CGROUP_ENV, ""))

    def sample(self) -> CpuTimes:
        total, busy, steal = parse_proc_stat(Path("/proc/stat").read_text(), self._ticks_per_s)
        own = parse_cgroup_usage((self.cgroup / "cpu.stat").read_text())
        kernel = kernel_thread_seconds(self._ticks_per_s)
        return CpuTimes(total_s=total, busy_s=busy, steal_s=steal, own_s=own, kernel_s=kernel)

    def begin(self) -> CpuTimes | None:
        """A sample to measure from, or None (with a warning) when it cannot be read."""
        try:
            return self.sample()
        except (OSError, ValueError) as exc:
            log.warning("CPU times cannot be read: %s", exc)
            return None

    def since(self, start: CpuTimes) -> dict[str, float]:
        """``other_cpu``, ``kernel_cpu`` (the kernel threads' part of it) and ``steal`` shares of
        the machine since ``start`` ({} if unreadable)."""
        end = self.begin()
        if end is None:
            return {}
        span = end.total_s - start.total_s
        if span <= 0:
            return {}
        other = (end.busy_s - start.busy_s) - (end.own_s - start.own_s)
        # a thread started since (or a pid reused by a new one) counts from zero
        kernel = sum(
            s - before if s >= (before := start.kernel_s.get(pid, 0.0)) else s
            for pid, s in end.kernel_s.items()
        )
        # Ticks and microseconds are sampled a moment apart: a small negative is a rounding.
        return {
            "other_cpu": round(max(other, 0.0) / span, 3),
            "kernel_cpu": round(kernel / span, 3),
            "steal": round((end.steal_s - start.steal_s) / span, 3),
        }


@functools.cache
def _watch(name: str) -> OtherWork | None:
    """One watch per group name, so an unreadable group is reported once, not every test."""
    if not name:
        return None
    watch = OtherWork(Path(name))
    try:
        watch.sample()
    except (OSError, ValueError) as exc:
        log.warning("%s=%s is unreadable (%s): other work is not measured", CGROUP_ENV, name, exc)
        return None
    return watch


def cgroup2_root(mountinfo: str | None = None) -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (``/sys/fs/cgroup``, or ``.../unified`` on a
    hybrid v1/v2 machine); None when it is not."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return None
    for line in mountinfo.splitlines():
        # "<id> <parent> <dev> <root> <mount point> <options> [optional...] - <fs type> ..."
        left, _, right = line.partition(" - ")
        fields = left.split()
        if right.split()[:1] == ["cgroup2"] and len(fields) > 4:
            return Path(fields[4])
    return None


def make_cgroup(name: str, parent: str = "harness") -> Path | None:
    """A fresh v2 control group ``<root>/<parent>/<name>``, or None (with a warning) where
    groups cannot be made (not root, no cgroup v2)."""
    root = cgroup2_root()
    try:
        if root is None:
            raise OSError("no cgroup v2 hierarchy is mounted")
        group = root / parent / name
        group.mkdir(parents=True, exist_ok=True)
        (group / "cpu.stat").read_text()
    except OSError as exc:
        log.warning("no control group for %s (%s): other work is not measured", name, exc)
        return None
    return group


@contextlib.contextmanager
def own_cgroup(name: str, parent: str = "harness") -> Iterator[Path | None]:
    """A fresh control group for one session while the block runs (:func:`make_cgroup`).
    Start the session in it with :func:`join` as ``preexec_fn`` and ``HARNESS_CGROUP`` in its
    environment. On leaving, any process still in the group (a server the session failed to
    stop) is killed and logged, and the group removed."""
    group = make_cgroup(name, parent)
    try:
        yield group
    finally:
        if group is not None:
            leftovers = processes_in(group)
            if leftovers:
                log.warning("%s left processes running: %s; killing them", name, leftovers)
                kill_all(group)
            with contextlib.suppress(OSError):
                group.rmdir()
                group.parent.rmdir()  # when no other session's group is left in it


def join(group: Path) -> None:
    """Move the calling process into ``group`` (for ``subprocess.Popen(preexec_fn=...)``: the
    child joins before it execs, so everything it starts is counted)."""
    (group / "cgroup.procs").write_text("0")


def processes_in(group: Path) -> list[int]:
    """The process ids in a group (none when it is gone)."""
    try:
        return [int(x) for x in (group / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def kill_all(group: Path, wait_s: float = 10.0) -> None:
    """SIGKILL every process in ``group`` and wait until it is empty."""
    kill = group / "cgroup.kill"
    deadline = time.monotonic() + wait_s
    while (pids := processes_in(group)) and time.monotonic() < deadline:
        if kill.exists():  # Linux >= 5.14: the kernel kills them all, forks included
            kill.write_text("1")
        else:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
