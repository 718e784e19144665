"""The tracker's outbox: ordered tracking records sent by one background thread, retried
while the store does not answer, so that tracking never holds up a test and never loses one
silently (what stays unsent is reported, and the session's store on disk keeps every test)."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from harness.tracking.uri import redact_uri

__all__ = ["FLUSH_LIMIT_S", "Outbox", "reason", "summary"]

log = logging.getLogger("harness.tracking.mlflow_tracker")

# MLflow error codes that no retry can fix (a bad value, a run that is gone)
_PERMANENT_CODES = frozenset(
    {
        "INVALID_PARAMETER_VALUE",
        "RESOURCE_DOES_NOT_EXIST",
        "RESOURCE_ALREADY_EXISTS",
        "INVALID_STATE",
        "BAD_REQUEST",
        "MALFORMED_REQUEST",
        "NOT_FOUND",
        "ENDPOINT_NOT_FOUND",
    }
)
_PERMANENT_ERRORS = (
    FileNotFoundError,
    PermissionError,
    IsADirectoryError,
    NotADirectoryError,
    ValueError,
    TypeError,
)
_FIRST_RETRY_S = 2.0  # a blip is retried once soon before it counts as an outage
FLUSH_LIMIT_S = 300.0  # a store that answers, but slowly, must not hold the end forever


@dataclass
class _Op:
    what: str  # for the report of what was not sent, e.g. "trial 12"
    send: Callable[[int], None]  # gets the number of earlier failed attempts
    attempts: int = 0


class Outbox:
    """Ordered tracking records, sent by one background thread, retried while undeliverable."""

    def __init__(self, where: str, retry_every_s: float) -> None:
        self._where = where
        self._retry_every_s = retry_every_s
        self._queue: deque[_Op] = deque()
        self._cond = threading.Condition()
        self._running = False  # a drain thread exists (daemon: it never holds up the exit)
        self._stop = False
        self._failures = 0  # consecutive failed attempts; >= 2 is an outage
        self._next_try = 0.0
        self._failed_at = -math.inf  # when the last failed attempt started
        self._flush_from: float | None = None
        self._warned = 0
        self.lost: list[str] = []  # records dropped because no retry could fix them

    @property
    def down(self) -> bool:
        return self._failures >= 2

    def put(self, what: str, send: Callable[[int], None]) -> None:
        with self._cond:
            self._queue.append(_Op(what, send))
            self._wake()

    def _wake(self) -> None:
        """Have a running drain thread see the queue (called with the lock held)."""
        self._stop = False
        if not self._running:
            self._running = True  # cleared by the thread itself, under the lock
            threading.Thread(target=self._drain, name="mlflow-outbox", daemon=True).start()
        self._cond.notify_all()

    def flush(self, timeout_s: float) -> list[str]:
        """Try the backlog now; return what is unsent when it is empty, the store is down
        (an attempt made during this flush failed twice in a row) or the time is up."""
        with self._cond:
            start = time.monotonic()
            self._flush_from = start
            if self._queue:
                self._wake()
            while self._queue and time.monotonic() < start + timeout_s:
                if self.down and self._failed_at >= start:
                    break
                self._cond.wait(min(1.0, start + timeout_s - time.monotonic()))
            self._flush_from = None
            self._stop = True  # the thread ends; a later put() starts a new one
            self._cond.notify_all()
            return [op.what for op in self._queue]

    def _drain(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stop:
                        self._running = False
                        return
                    now = time.monotonic()
                    fresh = self._flush_from is not None and self._failed_at < self._flush_from
                    if self._queue and (fresh or now >= self._next_try):
                        break
                    self._cond.wait(max(self._next_try - now, 0.05) if self._queue else None)
                op = self._queue[0]
                started = time.monotonic()
            error = _attempt(op)
            with self._cond:
                if error is None or _permanent(error):
                    self._queue.popleft()
                    if error is not None:
                        self.lost.append(op.what)
                        self._warn_few(f"MLflow: could not log {op.what}: {reason(error)}")
                    elif self.down:
                        log.info(
                            "MLflow: %s answers again; sending the %d buffered records",
                            self._where,
                            len(self._queue) + 1,
                        )
                    if error is None:
                        self._failures = 0
                else:
                    op.attempts += 1
                    self._failures += 1
                    self._failed_at = started
                    self._next_try = time.monotonic() + (
                        _FIRST_RETRY_S if self._failures == 1 else self._retry_every_s
                    )
                    if self._failures == 1:
                        log.info(
                            "MLflow: a write to %s failed (%s); retrying in %.0f s",
                            self._where,
                            reason(error),
                            _FIRST_RETRY_S,
                        )
                    if self._failures == 2:  # once per outage, not once per record
                        log.warning(
                            "MLflow: %s is not answering (%s); tracking records wait "
                            "in memory and are retried every %.0f s; the tests go on "
                            "and the session store keeps every result",
                            self._where,
                            reason(error),
                            self._retry_every_s,
                        )
                self._cond.notify_all()

    def _warn_few(self, message: str) -> None:
        self._warned += 1
        if self._warned <= 3:
            log.warning("%s", message)
        elif self._warned == 4:
            log.warning("MLflow: further records that cannot be logged are not shown")


def _attempt(op: _Op) -> Exception | None:
    try:
        op.send(op.attempts)
    except Exception as exc:  # any failure is classified by the caller, never raised
        return exc
    return None


def _permanent(exc: Exception) -> bool:
    """Whether retrying ``exc`` is pointless (a bad value, a vanished file or run)."""
    code = getattr(exc, "error_code", None)
    if code is not None:
        return code in _PERMANENT_CODES
    try:
        from requests import RequestException

        if isinstance(exc, RequestException):  # an OSError, but a network one
            return False
    except ImportError:
        pass
    return isinstance(exc, _PERMANENT_ERRORS)


def reason(exc: BaseException) -> str:
    """One short, credential-free line on why a tracking call failed."""
    text = str(exc)
    for needle, reason in (
        ("Connection refused", "connection refused"),
        ("Connection aborted", "connection lost"),
        ("Connection reset", "connection lost"),
        ("timed out", "no answer in time"),
        ("Name or service not known", "unknown host"),
        ("Failed to resolve", "unknown host"),
        ("database is locked", "the SQLite database is locked"),
    ):
        if needle in text:
            return reason
    first = text.splitlines()[0] if text.strip() else type(exc).__name__
    return redact_uri(first)[:300]


def summary(whats: Iterable[str]) -> str:
    """``trials 3-7, 9 and 4 other records`` for the end-of-session report."""
    trials, others = [], 0
    for what in whats:
        if what.startswith("trial ") and what[6:].isdigit():
            trials.append(int(what[6:]))
        else:
            others += 1
    parts = []
    if trials:
        ranges: list[list[int]] = []
        for t in sorted(set(trials)):
            if ranges and t == ranges[-1][1] + 1:
                ranges[-1][1] = t
            else:
                ranges.append([t, t])
        parts.append("trials " + ", ".join(f"{a}-{b}" if a < b else f"{a}" for a, b in ranges))
    if others:
        parts.append(f"{others} other record(s)")
    return " and ".join(parts)
