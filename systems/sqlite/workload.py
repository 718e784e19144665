"""sysbench-OLTP-like workloads on SQLite: ``readonly`` and ``readwrite``.

One transaction (BEGIN … COMMIT, as sysbench) is 10 point selects and 4 range selects of 100
rows (plain, SUM, ORDER BY, DISTINCT); ``readwrite`` adds an index update, a non-index update
and a delete + insert of the same id (so the table keeps its size). One connection, since SQLite
has a single writer. Row ids are uniform over the table; the operation stream is seeded, so
every test replays the same requests.

Each run is a fresh worker process (:mod:`systems.sqlite.worker`) started through
:class:`~harness.executor.LocalExecutor` with the session's timeout; its one JSON line is turned
into metrics by the pure :func:`parse_output`, and its per-second ``INTERVAL`` lines, live, into
the workload's ``intervals`` recorder by the pure :func:`parse_interval_line` (see
:mod:`harness.intervals`).
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any, Literal

from harness.errors import WorkloadError
from harness.executor import Executor, LocalExecutor, tail
from harness.hosts.process import run_step
from harness.intervals import IntervalRecorder, IntervalSample, parse_json_line
from harness.system import MetricSpec, System, Workload
from systems.sqlite.system import SQLiteSystem
from systems.sqlite.worker import INTERVAL_PREFIX

__all__ = ["METRICS", "SQLiteOLTP", "parse_interval_line", "parse_output"]

log = logging.getLogger(__name__)

METRICS = (
    MetricSpec("tps", "max", "tx/s"),
    MetricSpec("qps", "max", "queries/s"),
    MetricSpec("latency_avg_ms", "min", "ms"),
    MetricSpec("latency_p95_ms", "min", "ms"),
    MetricSpec("latency_p99_ms", "min", "ms"),
    MetricSpec("errors", "min", "transactions"),
    MetricSpec("transactions", "max", "transactions"),
    MetricSpec("setup_s", "min", "s"),
)

#: Worker fields that become metrics (setup_s comes from the adapter, not the worker).
_FIELDS = (
    "tps",
    "qps",
    "latency_avg_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "errors",
    "transactions",
)


#: The metrics of a worker's interval line and their units.
INTERVAL_UNITS = {
    "tps": "tx/s",
    "qps": "queries/s",
    "latency_avg_ms": "ms",
    "errors_per_s": "1/s",
}


def parse_interval_line(line: str) -> list[IntervalSample]:
    """The samples of one worker ``INTERVAL`` line (``[]`` for any other or damaged line)."""
    return parse_json_line(line, INTERVAL_PREFIX, INTERVAL_UNITS)


def parse_output(stdout: str, max_error_rate: float = 0.01) -> dict[str, float]:
    """Metrics from the worker's stdout (its last JSON line).

    Raises :class:`WorkloadError` with the output tail when there is no JSON record, a field
    is missing or not a finite number, no transaction committed, or more than
    ``max_error_rate`` of the transactions failed: with one connection SQLite has no lock
    conflicts, so failed transactions mean corruption or I/O errors, not contention.
    """
    record: dict[str, Any] | None = None
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                parsed = json.loads(line)
            except json.JSONDecodeError:
                break
            if isinstance(parsed, dict):
                record = parsed
            break
    if record is None:
        raise WorkloadError("the SQLite worker printed no JSON result", tail(stdout))
    metrics: dict[str, float] = {}
    for field in _FIELDS:
        value = record.get(field)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise WorkloadError(
                f"the SQLite worker's result lacks a numeric {field!r}", tail(stdout)
            )
        metrics[field] = float(value)
    attempted = metrics["transactions"] + metrics["errors"]
    if metrics["transactions"] <= 0 or metrics["errors"] > max_error_rate * attempted:
        first = record.get("first_error") or "no error reported"
        raise WorkloadError(
            f"{int(metrics['errors'])} of {int(attempted)} transactions failed (first: {first})",
            tail(stdout),
        )
    return metrics


class SQLiteOLTP(Workload):
    """The sysbench-like mix on the :class:`~systems.sqlite.system.SQLiteSystem`.

    ``mix`` is ``readonly`` or ``readwrite``; ``rows`` sizes the table (100k rows ≈ 21 MB);
    ``seed`` fixes both the data and the request stream.
    """

    metrics = METRICS

    def __init__(
        self,
        mix: Literal["readonly", "readwrite"] = "readwrite",
        duration_s: float = 4.5,
        rows: int = 100_000,
        seed: int = 0,
        executor: Executor | None = None,
    ) -> None:
        if mix not in ("readonly", "readwrite"):
            raise ValueError(f"unknown SQLite mix {mix!r}; use readonly or readwrite")
        if duration_s <= 0 or rows < 200:
            raise ValueError(f"need duration_s > 0 and rows >= 200, got {duration_s}, {rows}")
        self.mix = mix
        self.name = mix
        self.duration_s = float(duration_s)
        self.rows = int(rows)
        self.seed = int(seed)
        self.executor = executor or LocalExecutor()
        self.intervals = IntervalRecorder("rate", target="tps")

    def prepare(self, system: System, workdir: Path) -> None:
        if not isinstance(system, SQLiteSystem):
            raise TypeError(
                f"the SQLite {self.mix} workload runs only on the sqlite system, "
                f"not {system.name!r}"
            )
        system.use_data(self.rows, self.seed)

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        assert isinstance(system, SQLiteSystem)
        command = system.worker_command(self.mix, self.duration_s, self.seed)
        self.intervals.begin()
        result = run_step(
            self.executor,
            command,
            what=f"the SQLite worker ({self.mix})",
            timeout_s=timeout_s,
            output_tail=lambda out, err: tail(err or out),
            on_line=self.intervals.line_feeder(parse_interval_line),
        )
        metrics = parse_output(result.stdout)
        metrics["setup_s"] = system.last_setup_s
        return metrics

    def params(self) -> dict[str, Any]:
        return {**super().params(), "mix": self.mix, "rows": self.rows, "seed": self.seed}
