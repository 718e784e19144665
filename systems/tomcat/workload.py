"""The web-exploration workload: wrk drives visitors through the test site on Tomcat.

wrk runs ``explore.lua`` (every connection walks the site like a visitor) for a short warm-up
(JIT compilation, thread-pool growth), then for ``duration_s``; the Lua ``done`` hook prints one
``HARNESS_RESULT`` line that :func:`parse_wrk` turns into metrics. Requests/s counts only
successful (non-error) responses, so a configuration that answers fast with errors does not win.

Intervals: wrk itself reports nothing until it exits, so ``explore.lua`` counts the requests each
thread issues per wall-clock second (``HARNESS_INTERVAL thread=1 second=<epoch> requests=N``).
:func:`wrk_intervals` sums the threads into one ``requests_per_s`` sample per whole second of the
measured run (the first and last seconds are partial and left out) for the workload's
``intervals`` recorder (see :mod:`harness.intervals`). Each connection issues its next request
when the last one is answered, so issued requests track answered ones within the number of
connections per second; unlike the final ``requests_per_s`` they include error responses.
Consecutive short wrk runs were the alternative: every slice would reconnect and restart wrk's
threads, and a p99 over slices cannot be rebuilt from the slices' p99s, so the final metrics
would change.

wrk runs on the system's load host (the inventory's ``load`` host, else the SUT host itself),
against the address Tomcat listens on (the SUT host's ``executor.address``).
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from pathlib import Path

from harness.errors import ConfigError, WorkloadError
from harness.executor import tail
from harness.hosts.process import run_step
from harness.intervals import IntervalRecorder, IntervalSample
from harness.system import MetricSpec, System, Workload, whole_number

__all__ = ["WebExploration", "parse_interval_line", "parse_wrk", "wrk_intervals"]

log = logging.getLogger(__name__)

SCRIPT = Path(__file__).with_name("explore.lua")
MARKER = "HARNESS_RESULT"
#: One thread's count of one wall-clock second (digits bounded: output is untrusted).
_INTERVAL = re.compile(
    r"^HARNESS_INTERVAL thread=(\d{1,6}) second=(\d{1,12}) requests=(\d{1,12})$"
)


def parse_interval_line(line: str) -> tuple[int, int] | None:
    """``(epoch second, requests issued)`` of one thread's ``HARNESS_INTERVAL`` line, or None
    for any other or damaged line."""
    match = _INTERVAL.match(line.strip())
    if match is None:
        return None
    return int(match.group(2)), int(match.group(3))


def wrk_intervals(output: str) -> list[IntervalSample]:
    """One ``requests_per_s`` sample per whole wall-clock second of a wrk run with explore.lua,
    the threads' counts summed; a second in which no thread issued a request counts 0.

    The first and last seconds are partial and left out, and ``offset_s`` counts from the start
    of the first whole second (the end of that second is 1.0), so each sample covers the second
    since the previous one. A run that spans fewer than three seconds has no sample.
    """
    issued: Counter[int] = Counter()
    for line in output.splitlines():
        parsed = parse_interval_line(line)
        if parsed is not None:
            issued[parsed[0]] += parsed[1]
    if not issued:
        return []
    first, last = min(issued), max(issued)
    if last - first > 86_400:  # a clock jump or a forged line: no day-long wrk run here
        return []
    return [
        IntervalSample(float(second - first), "requests_per_s", float(issued[second]), "req/s")
        for second in range(first + 1, last)
    ]


def parse_wrk(output: str) -> dict[str, float]:
    """Metrics from wrk's output with explore.lua's summary line.

    Raises WorkloadError if the line is missing or no request succeeded.
    """
    line = next((ln for ln in output.splitlines() if ln.startswith(MARKER)), None)
    if line is None:
        raise WorkloadError(
            "wrk printed no HARNESS_RESULT line (did the Lua script load?)", tail(output)
        )
    fields = {}
    for item in line.split()[1:]:
        key, _, value = item.partition("=")
        fields[key] = float(value)
    seconds = fields["duration_us"] / 1e6
    errors = sum(fields[k] for k in fields if k.startswith("err_"))
    # wrk counts non-2xx/3xx responses among the requests (err_status); socket errors are extra.
    good = fields["requests"] - fields["err_status"]
    if good <= 0 or seconds <= 0:
        raise WorkloadError(
            f"no successful request in {seconds:.1f}s ({errors:g} errors)", tail(output)
        )
    return {
        "requests_per_s": good / seconds,
        "latency_avg_ms": fields["lat_mean_us"] / 1000.0,
        "latency_p99_ms": fields["lat_p99_us"] / 1000.0,
        "errors": errors,
        "transfer_mib_per_s": fields["bytes"] / seconds / 2**20,
    }


class WebExploration(Workload):
    """wrk with ``threads`` threads and ``connections`` visitor connections for ``duration_s``."""

    name = "explore"
    metrics = (
        MetricSpec("requests_per_s", "max", "req/s"),
        MetricSpec("latency_avg_ms", "min", "ms"),
        MetricSpec("latency_p99_ms", "min", "ms"),
        MetricSpec("errors", "min", "count"),
        MetricSpec("transfer_mib_per_s", "max", "MiB/s"),
    )

    def __init__(
        self,
        duration_s: float = 10.0,
        warmup_s: float = 10.0,
        threads: int = 2,
        connections: int = 32,
        request_timeout_s: float = 5.0,
    ) -> None:
        self.duration_s = float(duration_s)
        self.warmup_s = float(warmup_s)
        self.threads = whole_number(threads, "threads")
        self.connections = whole_number(connections, "connections")
        self.request_timeout_s = float(request_timeout_s)
        if not self.request_timeout_s > 0:  # wrk's --timeout rounds it up to whole seconds
            raise ConfigError(
                f"workload.request_timeout_s={request_timeout_s}: use a positive number of seconds"
            )
        self.script: Path | None = None
        self.intervals = IntervalRecorder("rate", target="requests_per_s")

    def prepare(self, system: System, workdir: Path) -> None:
        from systems.tomcat.system import TomcatSystem

        if not isinstance(system, TomcatSystem):
            raise ConfigError("the explore workload runs only on the tomcat system")
        if system.load.which("wrk") is None:
            raise ConfigError(
                f"on {system.load.host}: wrk not found: install it with `apt-get install wrk`"
            )
        # In wrk's folder on the host where it runs (``workdir`` is local).
        assert system.client_folder is not None, "the system's setup comes first"
        self.script = system.client_folder / "explore.lua"
        system.load.write_text(self.script, SCRIPT.read_text())

    def _wrk(self, system: System, seconds: float, timeout_s: float | None) -> str:
        from systems.tomcat.system import TomcatSystem

        assert isinstance(system, TomcatSystem) and self.script is not None
        command = [
            "wrk",
            f"-t{self.threads}",
            f"-c{max(self.connections, self.threads)}",
            f"-d{max(1, math.ceil(seconds))}s",
            f"--timeout={max(1, math.ceil(self.request_timeout_s))}s",
            "-s",
            str(self.script),
            system.url + "/",
        ]
        limit = seconds + self.request_timeout_s + 20.0
        if timeout_s is not None:
            limit = min(limit, timeout_s)
        result = run_step(
            system.load,
            command,
            what="wrk",
            timeout_s=limit,
            output_tail=lambda out, err: tail(out + err),
        )
        return result.stdout

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        self.intervals.begin()
        if self.warmup_s > 0:
            self._wrk(system, self.warmup_s, timeout_s)
        output = self._wrk(system, self.duration_s, timeout_s)
        for sample in wrk_intervals(output):
            self.intervals.emit(sample)
        metrics = parse_wrk(output)
        log.info(
            "explore: %.0f req/s, p99 %.1f ms, %g errors",
            metrics["requests_per_s"],
            metrics["latency_p99_ms"],
            metrics["errors"],
        )
        return metrics

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "warmup_s": self.warmup_s,
            "threads": self.threads,
            "connections": self.connections,
        }
