"""The one helper every adapter uses for readiness polling, process kill and the mapping of a
failed command to a test status.

Three things every real-system adapter needs, written once:

- **Readiness** (:func:`wait_ready`): call a probe until the system answers or a
  :class:`Deadline` passes. The probe returns ``None`` when ready, otherwise what is still
  missing (the timeout message names it), and raises :class:`StartFailed` to give up at once (the
  process died, the log has a fatal line). Both ends become a
  :class:`~harness.errors.SystemStartError` (status CRASHED) with the log tail, after the
  half-started system has been cleaned up.
- **Stopping** (:func:`stop_process`, :func:`kill_process_group`, :func:`process_state`): SIGTERM,
  a grace period, then SIGKILL of the process *and its process group*, so no server or worker
  outlives its test; a process is alive while ``ps`` shows it and it is not a zombie.
  :func:`die_with_parent` covers the processes we start with no handle to stop them by: a
  pool's workers, which would otherwise outlive a killed parent.
- **Command failure → status** (:func:`run_step`): a command killed at its time limit, a command
  that cannot be run and a non-zero exit become the error the session turns into the test's
  status (see :mod:`harness.system`), with the host, the limit and the output tail named.

Everything goes through an :class:`~harness.executor.Executor` with argument lists, so the same
code drives this machine and SSH hosts.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NoReturn

from harness.errors import ExecutorError, SystemStartError, WorkloadError, WorkloadTimeout
from harness.executor import (
    CommandResult,
    CommandTimeout,
    Executor,
    LineCallback,
    LocalExecutor,
    tail,
)

__all__ = [
    "Deadline",
    "Phase",
    "ProcessState",
    "StartFailed",
    "die_with_parent",
    "kill_process_group",
    "process_alive",
    "process_state",
    "run_step",
    "signal_process",
    "stop_process",
    "wait_exit",
    "wait_ready",
]

log = logging.getLogger(__name__)

#: What a command is part of: bringing the system up (``start``: every failure is a crash) or a
#: workload step (``run``: a failure, a timeout, or a crash when the process never came up).
Phase = Literal["start", "run"]


# -- readiness -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Deadline:
    """A point in monotonic time and the budget it was made from (for messages); one deadline
    can be shared by several steps, e.g. start scripts then health checks, or node by node."""

    at: float
    budget_s: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + float(seconds), float(seconds))

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(self.at - time.monotonic(), 0.0)

    def expired(self) -> bool:
        return time.monotonic() >= self.at


class StartFailed(Exception):
    """Raised by a readiness probe to stop waiting at once: the system cannot come up (its
    process exited, its log has a fatal line). :func:`wait_ready` turns it into a
    SystemStartError; it never leaves that function."""


def wait_ready(
    probe: Callable[[], str | None],
    *,
    what: str,
    deadline: Deadline,
    poll_s: float,
    log_tail: Callable[[], str] = lambda: "",
    cleanup: Callable[[], None] | None = None,
) -> float:
    """Poll ``probe`` until it returns ``None`` (ready); return the seconds waited.

    ``probe`` returns what is still missing while not ready, and raises :class:`StartFailed`
    to give up. It runs at least once, also when the deadline has already passed, so that a
    failure says what is missing. On giving up or at the deadline, ``log_tail`` is read, then
    ``cleanup`` runs (e.g. stop the half-started server, so nothing holds its port), then a
    :class:`~harness.errors.SystemStartError` is raised: "``what`` did not start: <reason>" or
    "``what`` not ready within <budget>s: <what is missing>".
    """
    started = time.monotonic()
    while True:
        try:
            problem = probe()
        except StartFailed as exc:
            _give_up(f"{what} did not start: {exc}", log_tail, cleanup)
        if problem is None:
            return time.monotonic() - started
        if deadline.expired():
            _give_up(
                f"{what} not ready within {deadline.budget_s:g}s: {problem}", log_tail, cleanup
            )
        time.sleep(min(poll_s, deadline.remaining()))


def _give_up(
    message: str, log_tail: Callable[[], str], cleanup: Callable[[], None] | None
) -> NoReturn:
    text = log_tail()
    if cleanup is not None:
        cleanup()
    raise SystemStartError(message, text)


# -- processes -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProcessState:
    """What ``ps`` says about a PID: alive (running, not a zombie) and its command line."""

    alive: bool
    args: str = ""


def process_state(executor: Executor, pid: int) -> ProcessState:
    """The state of ``pid`` on the executor's host. ``ps``, not ``kill -0``: an exited process
    nobody reaped yet is a zombie, and ``kill -0`` would call it alive."""
    state = executor.run(["ps", "-ww", "-o", "stat=,args=", "-p", str(int(pid))], check=False)
    stat, _, args = state.stdout.strip().partition(" ")
    return ProcessState(state.ok and bool(stat) and not stat.startswith("Z"), args.strip())


def process_alive(executor: Executor, pid: int) -> bool:
    """Whether ``pid`` runs on the executor's host and is not a zombie."""
    return process_state(executor, pid).alive


def signal_process(
    executor: Executor, pid: int, signal: str = "TERM", user: str | None = None
) -> None:
    """Send ``signal`` (a name: TERM, KILL, ...) to ``pid``; a process already gone is fine."""
    executor.run(["kill", f"-{signal}", str(int(pid))], check=False, user=user, timeout_s=10)


def wait_exit(executor: Executor, pid: int, timeout_s: float, poll_s: float = 0.05) -> bool:
    """Wait up to ``timeout_s`` for ``pid`` to exit; whether it did."""
    deadline = time.monotonic() + timeout_s
    while process_alive(executor, pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)
    return True


def kill_process_group(
    executor: Executor, pid: int, *, user: str | None = None, wait_s: float = 30.0
) -> None:
    """SIGKILL ``pid`` and its whole process group (a server's workers, a launcher's children),
    then wait up to ``wait_s`` until it is gone. The harness's own group is never signalled."""
    group = executor.run(["ps", "-o", "pgid=", "-p", str(int(pid))], check=False)
    pgid = group.stdout.strip()
    own = isinstance(executor, LocalExecutor) and pgid == str(os.getpgrp())
    if pgid.isdigit() and int(pgid) > 1 and not own:
        executor.run(["kill", "-KILL", "--", f"-{pgid}"], check=False, user=user, timeout_s=10)
    signal_process(executor, pid, "KILL", user)
    wait_exit(executor, pid, wait_s)


def stop_process(
    executor: Executor,
    pid: int,
    *,
    grace_s: float,
    what: str,
    user: str | None = None,
    terminate: bool = True,
) -> bool:
    """Stop ``pid`` cleanly, or kill it with its process group; whether it stopped cleanly.

    ``terminate`` sends SIGTERM first (False when the caller already asked for a clean stop,
    e.g. ``pg_ctl stop``); a process still alive after ``grace_s`` (hung, SIGSTOPped) is
    killed with :func:`kill_process_group` and a warning naming ``what``.
    """
    if not process_alive(executor, pid):
        return True
    if terminate:
        signal_process(executor, pid, "TERM", user)
    if wait_exit(executor, pid, grace_s):
        return True
    log.warning(
        "%s (pid %d on %s) ignored a clean stop for %.0fs; killing it with its process group",
        what,
        pid,
        executor.host,
        grace_s,
    )
    kill_process_group(executor, pid, user=user)
    return False


def die_with_parent(parent_pid: int) -> None:
    """Make this (worker) process receive SIGTERM when ``parent_pid`` dies, however it dies.

    A pool's workers outlive a parent killed by SIGKILL (or by a SIGTERM it had no handler
    for) and keep computing for hours; Linux's parent-death signal ends them. Elsewhere this
    does nothing. Call it first thing in the worker, with the parent's pid read in the parent.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_PDEATHSIG): {os.strerror(errno)}")
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


# -- command failure → status ----------------------------------------------------------------
def _default_tail(stdout: str, stderr: str) -> str:
    return tail(f"{stdout}\n{stderr}", 30)


def run_step(
    executor: Executor,
    command: Sequence[str],
    *,
    what: str,
    timeout_s: float | None,
    phase: Phase = "run",
    started: Callable[[str], bool] | None = None,
    check: bool = True,
    output_tail: Callable[[str, str], str] = _default_tail,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    user: str | None = None,
    on_line: LineCallback | None = None,
) -> CommandResult:
    """Run one step of a test and raise the error whose status the session records.

    ============================  ==========================  ===============================
    the command ...               ``phase="run"``             ``phase="start"``
    ============================  ==========================  ===============================
    is killed at ``timeout_s``    WorkloadTimeout             SystemStartError
    cannot be run                 WorkloadError               SystemStartError
    exits non-zero (``check``)    WorkloadError               SystemStartError
    ============================  ==========================  ===============================

    ``started(stdout)`` (run phase) tells whether the process came up (e.g. it printed a
    marker): a timeout before that is a SystemStartError, as the configuration never let it
    start. With ``check=False`` the caller judges the exit code (and the output) itself.
    Messages name ``what``, the host and the limit; the errors carry ``output_tail(stdout,
    stderr)``. An unreachable host is not mapped: it stops the session.

    ``on_line`` hears each output line while the command runs (a workload's
    ``intervals.line_feeder(parser)``); an exception it raises, such as
    :class:`harness.intervals.StoppedEarly`, kills the command's process group in the executor
    and passes through unmapped.
    """
    host = executor.host
    limit = "no limit" if timeout_s is None else f"{timeout_s:g}s"
    try:
        result = (
            executor.run(command, timeout_s=timeout_s, env=env, cwd=cwd, user=user, check=False)
            if on_line is None  # (an executor written before ``on_line`` existed still works)
            else executor.run(
                command,
                timeout_s=timeout_s,
                env=env,
                cwd=cwd,
                user=user,
                check=False,
                on_line=on_line,
            )
        )
    except CommandTimeout as exc:
        text = output_tail(exc.stdout, exc.stderr)
        if phase == "start":
            raise SystemStartError(
                f"{what} did not finish within {limit} on {host}", text
            ) from None
        if started is not None and not started(exc.stdout):
            raise SystemStartError(
                f"{what} did not start within {limit} on {host}", text
            ) from None
        raise WorkloadTimeout(f"{what} exceeded {limit} on {host} and was killed", text) from None
    except ExecutorError as exc:
        if phase == "start":
            raise SystemStartError(f"cannot run {what}: {exc}") from None
        raise WorkloadError(f"cannot run {what}: {exc}") from None
    if check and not result.ok:
        text = output_tail(result.stdout, result.stderr)
        if phase == "start":
            raise SystemStartError(f"{what} exited {result.exit_code} on {host}", text)
        raise WorkloadError(f"{what} failed: {result.describe()}", text)
    return result


def this_python() -> str:
    """This very interpreter, as a command runnable from the working folder (relative when
    below it, e.g. ``.venv/bin/python``: a bare ``python`` outside the venv has no Hydra)."""
    interpreter = Path(sys.executable)
    try:
        return str(interpreter.relative_to(Path.cwd()))
    except ValueError:
        return str(interpreter)
