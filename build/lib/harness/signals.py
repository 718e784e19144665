"""Signals during a session: SIGINT and SIGTERM become one orderly stop at any phase, and the
processes a session starts are marked through their environment."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["SignalGuard", "child_pids", "exported"]

log = logging.getLogger("harness.session")


class SignalGuard:
    """While armed, SIGINT and SIGTERM raise KeyboardInterrupt once, at any phase (setup
    included), so the system is stopped and the store closed cleanly; later signals, and
    signals once disarmed (the session is only writing its summary), only log.

    SIGINT is installed explicitly because a process started in the background of a script
    inherits it as *ignored*, and Ctrl-C (or ``kill -INT``) would then do nothing.
    """

    def __init__(self) -> None:
        self.armed = True
        self._raised = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            self._previous = {
                sig: signal.signal(sig, self._handle) for sig in (signal.SIGINT, signal.SIGTERM)
            }
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._previous.items():
            signal.signal(sig, old)

    def _handle(self, signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
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
