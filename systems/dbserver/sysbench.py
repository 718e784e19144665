"""sysbench ``oltp_read_only`` / ``oltp_read_write`` against any :class:`ServerSystem`
(pgsql or mysql driver, chosen by the system's ``sysbench_args``).

``--histogram`` makes sysbench print its latency histogram, from which :func:`parse_sysbench`
computes p95 and p99 (sysbench itself reports only one percentile).

``--report-interval=1`` makes it print one line per second while it runs (``[ 3s ] thds: 2 tps:
345.87 qps: 6937.46 (r/w/o: ...) lat (ms,95%): 8.28 err/s: 0.00 reconn/s: 0.00``), read by the
pure :func:`parse_interval_line` into the workload's :attr:`SysbenchOLTP.intervals` (see
:mod:`harness.intervals`); the final metrics still come from the summary alone.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, WorkloadError
from harness.executor import tail
from harness.hosts.process import run_step
from harness.intervals import IntervalRecorder, IntervalSample, finite_number
from harness.system import MetricSpec, System, Workload, whole_number
from systems.dbserver.base import ServerSystem
from systems.dbserver.host import find_binary

__all__ = [
    "SysbenchOLTP",
    "histogram_percentile",
    "parse_interval_line",
    "parse_sysbench",
    "sysbench_command",
]

log = logging.getLogger(__name__)

_SCRIPTS = {"readonly": "oltp_read_only", "readwrite": "oltp_read_write"}
_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
#: One ``--report-interval`` line; values are taken as tokens and judged by finite_number.
_INTERVAL = re.compile(
    r"^\[ *(\S+?)s *\] thds: \d+ tps: (\S+) qps: (\S+) \(r/w/o: \S+\) "
    r"lat \(ms,(\d{1,3})%\): (\S+) err/s: (\S+) reconn/s: (\S+)\s*$"
)


def histogram_percentile(buckets: list[tuple[float, int]], q: float) -> float:
    """The smallest bucket value with at least ``q`` (0..1) of all events at or below it."""
    total = sum(count for _, count in buckets)
    if total == 0:
        return float("nan")
    running = 0
    for value, count in sorted(buckets):
        running += count
        if running >= q * total:
            return value
    return sorted(buckets)[-1][0]


def parse_sysbench(output: str) -> dict[str, float]:
    """Metrics of one ``sysbench ... run --histogram=on`` output.

    Returns tps, qps, latency_avg_ms, latency_p95_ms, latency_p99_ms (from the histogram),
    latency_max_ms, errors (ignored errors, count) and reconnects.
    """

    def grab(pattern: str) -> float:
        match = re.search(pattern, output)
        if not match:
            raise WorkloadError(f"sysbench output lacks {pattern!r}", tail(output))
        return float(match.group(1))

    buckets = [
        (float(v), int(c))
        for v, c in re.findall(r"^\s*" + _NUMBER + r"\s*\|[\s*]*?(\d+)\s*$", output, re.M)
    ]
    if not buckets:
        raise WorkloadError(
            "sysbench printed no latency histogram (run with --histogram=on)", tail(output)
        )
    return {
        "tps": grab(r"transactions:\s+\d+\s+\(" + _NUMBER + r" per sec"),
        "qps": grab(r"queries:\s+\d+\s+\(" + _NUMBER + r" per sec"),
        "latency_avg_ms": grab(r"avg:\s+" + _NUMBER),
        "latency_p95_ms": histogram_percentile(buckets, 0.95),
        "latency_p99_ms": histogram_percentile(buckets, 0.99),
        "latency_max_ms": grab(r"max:\s+" + _NUMBER),
        "errors": grab(r"ignored errors:\s+(\d+)"),
        "reconnects": grab(r"reconnects:\s+(\d+)"),
    }


def parse_interval_line(line: str) -> list[IntervalSample]:
    """The samples of one ``--report-interval`` line: tps, qps, the latency percentile sysbench
    prints (``latency_p95_ms`` by default), errors/s and reconnects/s; ``[]`` for any other or
    damaged line."""
    match = _INTERVAL.match(line.strip())
    if match is None:
        return []
    offset_text, tps, qps, percent, latency, errors, reconnects = match.groups()
    values = [finite_number(text) for text in (offset_text, tps, qps, latency, errors, reconnects)]
    if any(value is None or value < 0 for value in values):
        return []
    offset, *rest = (float(value or 0.0) for value in values)
    names = (
        ("tps", "txn/s"),
        ("qps", "queries/s"),
        (f"latency_p{int(percent)}_ms", "ms"),
        ("errors_per_s", "1/s"),
        ("reconnects_per_s", "1/s"),
    )
    return [
        IntervalSample(offset, name, value, unit)
        for (name, unit), value in zip(names, rest, strict=True)
    ]


def sysbench_command(
    binary: str,
    connection: list[str],
    script: str,
    action: str,
    *,
    tables: int,
    table_size: int,
    threads: int,
    duration_s: float,
) -> list[str]:
    """The sysbench argument list for ``action`` (prepare or run)."""
    command = [
        binary,
        *connection,
        f"--tables={tables}",
        f"--table-size={table_size}",
        f"--threads={threads}",
    ]
    if action == "run":
        command += [
            f"--time={max(1, round(duration_s))}",
            "--histogram=on",
            "--report-interval=1",
            "--db-ps-mode=auto",
        ]
    return [*command, script, action]


class SysbenchOLTP(Workload):
    """sysbench OLTP (``mix``: readonly or readwrite) on PostgreSQL or MySQL/MariaDB.

    Each run also emits sysbench's one-second reports into :attr:`intervals` (a
    :class:`~harness.intervals.IntervalRecorder` of ``tps`` and friends).
    """

    metrics = (
        MetricSpec("tps", "max", "txn/s"),
        MetricSpec("qps", "max", "queries/s"),
        MetricSpec("latency_avg_ms", "min", "ms"),
        MetricSpec("latency_p95_ms", "min", "ms"),
        MetricSpec("latency_p99_ms", "min", "ms"),
        MetricSpec("latency_max_ms", "min", "ms"),
        MetricSpec("errors", "min", "count"),
        MetricSpec("reconnects", "min", "count"),
    )

    def __init__(
        self,
        mix: str = "readwrite",
        duration_s: float = 10.0,
        threads: int = 2,
        tables: int = 4,
        table_size: int = 50_000,
    ) -> None:
        if mix not in _SCRIPTS:
            raise ConfigError(f"sysbench mix {mix!r} is unknown; use readonly or readwrite")
        self.mix = mix
        #: oltp_read_only only reads: the server may skip the data restore after it.
        self.read_only = mix == "readonly"
        self.name = mix
        self.duration_s = float(duration_s)
        self.threads = whole_number(threads, "threads")
        self.tables = whole_number(tables, "tables")
        self.table_size = whole_number(table_size, "table_size")
        self.binary = ""
        self.intervals = IntervalRecorder("rate", target="tps")

    def _command(self, system: ServerSystem, action: str) -> list[str]:
        return sysbench_command(
            self.binary,
            system.sysbench_args(),
            _SCRIPTS[self.mix],
            action,
            tables=self.tables,
            table_size=self.table_size,
            threads=self.threads,
            duration_s=self.duration_s,
        )

    def prepare(self, system: System, workdir: Path) -> None:
        if not isinstance(system, ServerSystem):
            raise ConfigError("the sysbench workload needs a database server system")
        # sysbench is the benchmark client: on the load host when there is one.
        self.binary = find_binary(system.load, ["sysbench"], ["/usr/bin"], "sysbench")
        run_step(
            system.load,
            self._command(system, "prepare"),
            what="sysbench prepare",
            timeout_s=600,
            env=system.client_env(),
        )

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        assert isinstance(system, ServerSystem) and self.binary, "prepare() must run first"
        limit = timeout_s if timeout_s is not None else self.duration_s * 3 + 60
        self.intervals.begin()
        result = run_step(
            system.load,
            self._command(system, "run"),
            what=f"sysbench {self.mix}",
            timeout_s=limit,
            env=system.client_env(),
            output_tail=lambda out, err: tail(out + err),
            on_line=self.intervals.line_feeder(parse_interval_line),
        )
        return parse_sysbench(result.stdout)

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "mix": self.mix,
            "threads": self.threads,
            "tables": self.tables,
            "table_size": self.table_size,
        }
