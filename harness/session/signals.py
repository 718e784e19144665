"""Signals during a session: SIGINT, SIGTERM and SIGHUP become one orderly stop at any phase,
and the processes a session starts are marked through their environment.

SIGHUP is what a closed terminal or a dropped SSH connection sends. Left at its default it
killed the harness at once: no status recorded, and the running test's worker (started in a
session of its own, so that a timeout kills its whole group) left running under PID 1. It is
handled like SIGTERM; only the exit code differs (129, as a shell reports a hang-up).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "STOP_SIGNALS",
    "SignalGuard",
    "child_pids",
    "exported",
    "installable",
    "interrupt_exit_code",
    "note_stop",
    "stopped_by",
]

log = logging.getLogger("harness.session.session")
#: The signals that stop a session in order (the running test and the system stopped, the
#: status recorded as INTERRUPTED).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_STOPPED_BY: list[int] = []  # the first stop signal this process received


def note_stop(signum: int) -> None:
    """Remember the first stop signal (its exit code is reported at the end)."""
    if not _STOPPED_BY:
        _STOPPED_BY.append(signum)


def stopped_by() -> int | None:
    """The first stop signal this process received, or None."""
    return _STOPPED_BY[0] if _STOPPED_BY else None


def interrupt_exit_code() -> int:
    """129 after a hang-up (SIGHUP: 128 + 1, as a shell reports it), else 130: Ctrl-C and
    SIGTERM keep the exit code scripts already test for."""
    return 129 if stopped_by() == signal.SIGHUP else 130


def installable(signum: int) -> bool:
    """Whether a stop handler may replace this signal's disposition: always, except a SIGHUP
    that ``nohup`` (or a caller) set to be ignored."""
    return signum != signal.SIGHUP or signal.getsignal(signum) is not signal.SIG_IGN


class SignalGuard:
    """While armed, SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt once, at any phase (setup
    included), so the system is stopped and the store closed cleanly; later signals, and
    signals once disarmed (the session is only writing its summary), only log.

    SIGINT is installed explicitly because a process started in the background of a script
    inherits it as *ignored*, and Ctrl-C (or ``kill -INT``) would then do nothing. SIGHUP
    inherited as ignored stays ignored: that is ``nohup``, a user's wish to outlive the
    terminal (:func:`installable`).
    """

    def __init__(self) -> None:
        self.armed = True
        self._raised = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            self._previous = {
                sig: signal.signal(sig, self._handle) for sig in STOP_SIGNALS if installable(sig)
            }
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._previous.items():
            signal.signal(sig, old)

    def _handle(self, signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        note_stop(signum)
        if not self.armed or self._raised:
            log.warning("%s received: the session is already stopping", name)
            return
        self._raised = True
        raise KeyboardInterrupt


@contextmanager
def exported(name: str, value: str) -> Iterator[None]:
    """Set an environment variable for the processes started inside the block."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def child_pids(parent: int) -> list[int]:
    """PIDs whose parent is ``parent`` (read from /proc; a sweep forwards Ctrl-C to them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == parent:
                found.append(int(entry.name))
    return found
