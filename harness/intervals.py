"""Interval samples: what a benchmark client says about a test while it runs.

A test's final metrics arrive when its client exits. Most clients can also report as they go
(sysbench ``--report-interval``, pgbench ``-P``, YCSB's status lines, our TPC-C driver and
SQLite worker, wrk through our Lua script), and a job's elapsed wall time is a running lower
bound on its wall time. These reports are what a session needs to judge a test before it ends,
so every workload exposes them the same way:

- :class:`IntervalSample`: one report, ``(offset_s, metric, value, unit)``. ``offset_s`` is the
  client's own clock (seconds since it began measuring), so a sample means the same thing
  whether it is read live or from the output after the run. A sample covers the time since the
  previous sample of the same metric (since 0 for the first): weigh a rate by that span, as the
  last interval of a run is often a sliver.
- A *line parser* per client, ``(line) -> list[IntervalSample]``: pure, for one line of the
  client's output; it returns ``[]`` for every line that is not a complete, finite report (a
  client's output is untrusted text: it never raises, and never yields NaN, infinity or a
  negative number: every reported quantity is a rate, a latency or a time).
  :func:`parse_intervals` applies one to a whole output, for tests and after-the-fact reading.
  (wrk's lines are per thread, so they are summed per second over the whole output first:
  ``systems.tomcat.workload.wrk_intervals``.)
- :class:`IntervalRecorder`, the seam a session reads: a workload that reports intervals has an
  ``intervals`` attribute holding one (see :class:`ReportsIntervals`). Each ``run`` clears it
  and then emits every sample into it as soon as the workload has it; a session subscribes a
  listener (called with each sample, in the thread that emits it) and can read
  :attr:`IntervalRecorder.samples` at any time, during the run or after it.

When samples arrive: a client's reports are fed line by line, live, through
:meth:`IntervalRecorder.feed` (the workloads pass :meth:`IntervalRecorder.line_feeder` as the
``on_line`` callback of :func:`harness.hosts.process.run_step`, which the executor calls with
each output line while the client runs); a job's elapsed bound is emitted once per period by
:func:`elapsed_bound` while the job runs.

Stopping a running test (early stop): a listener never stops anything itself; it asks
(:meth:`IntervalRecorder.request_stop`, with the reason and the censored value). The next line
fed (:meth:`IntervalRecorder.feed`, or :meth:`IntervalRecorder.checkpoint` for a job whose
lines carry no samples) raises :class:`StoppedEarly` inside the executor's line callback, and
the executor kills the client's process group and lets the exception through: the stop happens
in the thread that runs the client, between two lines, never in the listener's thread.

Two kinds of recorder (:attr:`IntervalRecorder.kind`): ``rate`` samples are per-interval
averages, named like the final metric they estimate where there is one (``tps`` samples
estimate the final ``tps``; :attr:`IntervalRecorder.target` names the objective's), else by what
they are (``errors_per_s``); ``elapsed`` samples (``elapsed_s``) bound the final metric named by
:attr:`IntervalRecorder.target` from below, as it is at least the time already spent (each job
workload's docstring says where start-up makes it approximate).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from harness.errors import HarnessError

__all__ = [
    "ELAPSED",
    "IntervalKind",
    "IntervalListener",
    "IntervalRecorder",
    "IntervalSample",
    "LineParser",
    "ReportsIntervals",
    "StoppedEarly",
    "elapsed_bound",
    "finite_number",
    "parse_intervals",
    "parse_json_line",
]

log = logging.getLogger(__name__)

#: The metric name of a job's running elapsed-time bound.
ELAPSED = "elapsed_s"

IntervalKind = Literal["rate", "elapsed"]


@dataclass(frozen=True)
class IntervalSample:
    """One report of a running client: ``metric`` was ``value`` (in ``unit``) over the interval
    that ended ``offset_s`` seconds after the client began measuring."""

    offset_s: float
    metric: str
    value: float
    unit: str


#: One line of a client's output → the samples it reports (pure; ``[]`` for any other line).
LineParser = Callable[[str], list[IntervalSample]]
#: Called with each sample as the workload emits it.
IntervalListener = Callable[[IntervalSample], None]


def finite_number(text: str) -> float | None:
    """``text`` as a finite float, or None (not a number, NaN, infinite, or absurdly long:
    output is untrusted, and a 10,000-digit "number" is garbage, not a measurement)."""
    if len(text) > 64:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_json_line(line: str, prefix: str, units: Mapping[str, str]) -> list[IntervalSample]:
    """The samples of one ``<prefix>{"t": offset, "<metric>": value, ...}`` line, the format
    our own clients (the TPC-C driver, the SQLite worker) print once per interval: one sample
    per metric named in ``units`` (others are ignored); ``[]`` unless the line is whole JSON
    with a finite, non-negative ``t`` and finite, non-negative values."""
    if not line.startswith(prefix) or len(line) > 4096:
        return []
    try:
        record = json.loads(line[len(prefix) :])
    except (ValueError, RecursionError):
        return []
    if not isinstance(record, dict):
        return []
    offset = _finite(record.get("t"))
    values = {name: _finite(record.get(name)) for name in units if name in record}
    if offset is None or offset < 0 or any(v is None or v < 0 for v in values.values()):
        return []
    return [
        IntervalSample(offset, name, float(value or 0.0), units[name])
        for name, value in values.items()
    ]


def _finite(value: object) -> float | None:
    """A JSON number that is finite (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # a JSON integer beyond any float
        return None
    return number if math.isfinite(number) else None


def parse_intervals(output: str, parse_line: LineParser) -> list[IntervalSample]:
    """Every sample ``parse_line`` finds in ``output``, in output order."""
    return [sample for line in output.splitlines() for sample in parse_line(line)]


class StoppedEarly(HarnessError):
    """A running test was stopped because its intervals showed it cannot compete (status
    STOPPED_EARLY). ``censored`` is what is known instead of a measurement: the metric, the
    bound on its final value and which side it bounds (see
    :mod:`harness.session.early_stop`)."""

    def __init__(self, message: str, censored: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.censored = dict(censored)


class IntervalRecorder:
    """The interval samples of a workload's current (or last) run, and who listens to them.

    Rule: a sample is stored before listeners hear it, and a listener that raises is logged and
    dropped for the rest of the run, so an observer can never fail or alter a measurement.
    Thread-safe: a job's elapsed ticker emits from its own thread. A copy (pickle, deepcopy: a
    workload sent to another process) keeps the samples and drops the listeners, which belong
    to the process that subscribed them.
    """

    def __init__(self, kind: IntervalKind = "rate", target: str = "") -> None:
        self.kind: IntervalKind = kind
        #: The final metric the samples estimate (rate) or bound from below (elapsed).
        self.target = target
        self._samples: list[IntervalSample] = []
        self._listeners: list[IntervalListener] = []
        self._lock = threading.Lock()
        self._stop: StoppedEarly | None = None

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {"kind": self.kind, "target": self.target, "samples": list(self._samples)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.kind = state["kind"]
        self.target = state["target"]
        self._samples = list(state["samples"])
        self._listeners = []
        self._lock = threading.Lock()
        self._stop = None

    @property
    def samples(self) -> tuple[IntervalSample, ...]:
        """The samples emitted since the run began, oldest first."""
        with self._lock:
            return tuple(self._samples)

    def subscribe(self, listener: IntervalListener) -> None:
        """Call ``listener`` with every sample emitted from now on (until unsubscribed)."""
        with self._lock:
            self._listeners.append(listener)

    def unsubscribe(self, listener: IntervalListener) -> None:
        """Stop calling ``listener`` (no error if it was not subscribed)."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def begin(self) -> None:
        """A new run starts: forget the previous run's samples (listeners stay)."""
        with self._lock:
            self._samples.clear()
            self._stop = None

    def request_stop(self, reason: str, censored: Mapping[str, Any]) -> None:
        """Ask the running client to stop at its next line (the first request wins)."""
        with self._lock:
            if self._stop is None:
                self._stop = StoppedEarly(reason, censored)

    def checkpoint(self, line: str = "") -> None:
        """Raise :class:`StoppedEarly` if a stop was requested during this run (a line callback
        for clients whose lines carry no samples: any output line is a chance to stop)."""
        with self._lock:
            stop = self._stop
        if stop is not None:
            raise stop

    def emit(self, sample: IntervalSample) -> None:
        """Store ``sample`` and hand it to every listener."""
        with self._lock:
            self._samples.append(sample)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(sample)
            except Exception:
                log.exception("interval listener %r failed; dropping it", listener)
                self.unsubscribe(listener)

    def feed(self, line: str, parse_line: LineParser) -> None:
        """Emit the samples of one output line, then stop if asked (:meth:`checkpoint`)."""
        for sample in parse_line(line):
            self.emit(sample)
        self.checkpoint()

    def line_feeder(self, parse_line: LineParser) -> Callable[[str], None]:
        """The ``on_line`` callback that feeds each line of a running client's output."""
        return lambda line: self.feed(line, parse_line)

    def feed_output(self, output: str, parse_line: LineParser) -> None:
        """Emit the samples of a whole output, line by line (after the fact: no stop)."""
        for line in output.splitlines():
            for sample in parse_line(line):
                self.emit(sample)


@runtime_checkable
class ReportsIntervals(Protocol):
    """A workload whose ``run`` emits interval samples into :attr:`intervals` (cleared at the
    start of each run). A session checks the capability and listens, e.g.
    ``if isinstance(workload, ReportsIntervals): workload.intervals.subscribe(on_sample)``; a
    workload without it (recorded-data and synthetic systems) has nothing to report."""

    @property
    def intervals(self) -> IntervalRecorder:
        """The recorder the workload emits into."""


@contextmanager
def elapsed_bound(recorder: IntervalRecorder, period_s: float = 1.0) -> Iterator[None]:
    """Emit the elapsed wall time (``elapsed_s``) every ``period_s`` while the block runs, and
    once more when it ends (also when it raises): the running lower bound of a job's time.

    The ticker is a daemon thread that waits on an event, so it ends with the block at once.
    """
    if not period_s > 0:
        raise ValueError(f"period_s must be positive, got {period_s}")
    began = time.monotonic()
    finished = threading.Event()

    def tick() -> None:
        while not finished.wait(period_s):
            recorder.emit(_elapsed(time.monotonic() - began))

    recorder.begin()
    ticker = threading.Thread(target=tick, name="elapsed-bound", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        finished.set()
        ticker.join()
        recorder.emit(_elapsed(time.monotonic() - began))


def _elapsed(seconds: float) -> IntervalSample:
    return IntervalSample(seconds, ELAPSED, seconds, "s")
