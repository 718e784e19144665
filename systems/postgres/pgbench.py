"""pgbench on the harness's PostgreSQL: TPC-B-like read-write (``mode: tpcb``) or select-only
(``mode: select``, pgbench -S).

pgbench prints throughput and average latency; p95/p99 come from its per-transaction log
(``-l`` with ``--sampling-rate``), parsed by :func:`log_latencies_ms`.

``-P 1`` makes it report once per second on stderr while it runs (``progress: 3.0 s, 1186.9
tps, lat 1.681 ms stddev 0.617, 0 failed``), read by the pure :func:`parse_progress_line` into
the workload's ``intervals`` recorder (see :mod:`harness.intervals`); the final metrics still
come from the summary alone.
"""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, WorkloadError
from harness.executor import tail
from harness.hosts.process import run_step
from harness.intervals import IntervalRecorder, IntervalSample, finite_number
from harness.system import MetricSpec, System, Workload, whole_number
from systems.postgres.system import DATABASE, PostgresSystem

__all__ = [
    "PgBench",
    "log_latencies_ms",
    "parse_pgbench",
    "parse_progress_line",
    "pgbench_command",
]

#: Seconds between two progress lines (``-P``).
PROGRESS_INTERVAL_S = 1
#: One ``-P`` line (pgbench 15+ adds ``, N failed``; older versions end after stddev).
_PROGRESS = re.compile(
    r"^progress: (\S+) s, (\S+) tps, lat (\S+) ms stddev (\S+)(?:, (\S+) failed)?\s*$"
)

log = logging.getLogger(__name__)


def parse_pgbench(output: str) -> dict[str, float]:
    """tps, latency_avg_ms and errors (failed transactions) from pgbench's summary."""
    tps = re.search(r"^tps = ([0-9.]+) \(without initial connection time\)", output, re.M)
    latency = re.search(r"^latency average = ([0-9.]+) ms", output, re.M)
    failed = re.search(r"^number of failed transactions: (\d+)", output, re.M)
    if not tps or not latency:
        raise WorkloadError("pgbench output lacks the tps/latency summary", tail(output))
    return {
        "tps": float(tps.group(1)),
        "latency_avg_ms": float(latency.group(1)),
        "errors": float(failed.group(1)) if failed else 0.0,
    }


def parse_progress_line(line: str) -> list[IntervalSample]:
    """The samples of one ``-P`` progress line: tps, latency_avg_ms and (pgbench 15+)
    errors_per_s (the interval's failed transactions over :data:`PROGRESS_INTERVAL_S`, the
    interval :func:`pgbench_command` asks for); ``[]`` for any other or damaged line."""
    match = _PROGRESS.match(line.strip())
    if match is None:
        return []
    offset_text, tps_text, latency_text, _stddev, failed_text = match.groups()
    offset, tps, latency = (finite_number(text) for text in (offset_text, tps_text, latency_text))
    failed = finite_number(failed_text) if failed_text is not None else 0.0
    if offset is None or tps is None or latency is None or failed is None:
        return []
    if min(offset, tps, latency, failed) < 0:
        return []
    samples = [
        IntervalSample(offset, "tps", tps, "txn/s"),
        IntervalSample(offset, "latency_avg_ms", latency, "ms"),
    ]
    if failed_text is not None:  # the failed transactions of this interval
        rate = failed / PROGRESS_INTERVAL_S
        samples.append(IntervalSample(offset, "errors_per_s", rate, "1/s"))
    return samples


def log_latencies_ms(log_text: str) -> list[float]:
    """Latencies (ms) of the successful transactions in pgbench ``-l`` log lines.

    Line format: ``client_id transaction_no time_us script_no time_epoch time_us_frac``; the
    third field reads ``failed``/``skipped`` for unsuccessful transactions.
    """
    values = []
    for line in log_text.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2].isdigit():
            values.append(int(fields[2]) / 1000.0)
    return values


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def pgbench_command(
    binary: str,
    connection: list[str],
    *,
    mode: str,
    clients: int,
    duration_s: float,
    sampling_rate: float,
    log_prefix: str,
) -> list[str]:
    """The pgbench run command (no vacuum: the snapshot was vacuumed once at setup)."""
    command = [
        binary,
        *connection,
        "-n",
        "-c",
        str(clients),
        "-j",
        str(clients),
        "-T",
        str(max(1, round(duration_s))),
        "-P",
        str(PROGRESS_INTERVAL_S),
        "-l",
        f"--log-prefix={log_prefix}",
        f"--sampling-rate={sampling_rate:g}",
    ]
    if mode == "select":
        command.append("-S")
    return [*command, DATABASE]


class PgBench(Workload):
    """pgbench TPC-B-like or select-only on :class:`PostgresSystem`."""

    metrics = (
        MetricSpec("tps", "max", "txn/s"),
        MetricSpec("latency_avg_ms", "min", "ms"),
        MetricSpec("latency_p95_ms", "min", "ms"),
        MetricSpec("latency_p99_ms", "min", "ms"),
        MetricSpec("errors", "min", "count"),
    )

    def __init__(
        self,
        mode: str = "tpcb",
        duration_s: float = 10.0,
        clients: int = 2,
        scale: int = 10,
        sampling_rate: float = 0.2,
    ) -> None:
        if mode not in ("tpcb", "select"):
            raise ConfigError(f"pgbench mode {mode!r} is unknown; use tpcb or select")
        self.mode = mode
        #: select-only (-S) only reads (its pre-run VACUUM, and TRUNCATE of the history table
        #: that only tpcb fills, change no row): the server may skip the data restore after it.
        self.read_only = mode == "select"
        self.name = "pgbench"
        self.duration_s = float(duration_s)
        self.clients = whole_number(clients, "clients")
        self.scale = whole_number(scale, "scale")
        self.sampling_rate = float(sampling_rate)
        self.intervals = IntervalRecorder("rate", target="tps")
        if not 0 < self.sampling_rate <= 1:
            raise ConfigError(f"workload.sampling_rate={sampling_rate}: use a fraction in (0, 1]")

    def prepare(self, system: System, workdir: Path) -> None:
        if not isinstance(system, PostgresSystem):
            raise ConfigError("the pgbench workload runs only on system=postgres")
        run_step(
            system.load,
            [
                system.bin["pgbench"],
                *system.pgbench_args(),
                "-i",
                "-q",
                "-s",
                str(self.scale),
                DATABASE,
            ],
            what="pgbench -i",
            timeout_s=1800,
            env=system.client_env(),
        )

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        assert isinstance(system, PostgresSystem)
        limit = timeout_s if timeout_s is not None else self.duration_s * 3 + 60
        assert system.client_folder is not None, "setup() must run first"
        logs = system.client_folder / "pgbench-logs"
        executor = system.load  # the client: the load host, or the SUT host
        executor.run(["rm", "-rf", str(logs)])
        executor.run(["mkdir", "-p", str(logs)])
        command = pgbench_command(
            system.bin["pgbench"],
            system.pgbench_args(),
            mode=self.mode,
            clients=self.clients,
            duration_s=self.duration_s,
            sampling_rate=self.sampling_rate,
            log_prefix=str(logs / "pgbench_log"),
        )
        self.intervals.begin()
        result = run_step(
            executor,
            command,
            what="pgbench",
            timeout_s=limit,
            cwd=str(logs),
            env=system.client_env(),
            output_tail=lambda out, err: tail(out + err),
            on_line=self.intervals.line_feeder(parse_progress_line),
        )
        metrics = parse_pgbench(result.stdout)
        logged = executor.run(
            ["find", str(logs), "-type", "f", "-name", "pgbench_log*", "-exec", "cat", "{}", "+"],
            timeout_s=120,
        ).stdout
        latencies = log_latencies_ms(logged)
        metrics["latency_p95_ms"] = _percentile(latencies, 0.95)
        metrics["latency_p99_ms"] = _percentile(latencies, 0.99)
        return metrics

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "mode": self.mode,
            "clients": self.clients,
            "scale": self.scale,
            "sampling_rate": self.sampling_rate,
        }
