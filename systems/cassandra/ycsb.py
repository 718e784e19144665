"""Pure YCSB helpers: the ``bin/ycsb.sh`` command, the CQL schema, and the output parser.

YCSB's text exporter prints one ``[SECTION], Measurement, value`` line per result, e.g.
``[OVERALL], Throughput(ops/sec), 1234.5``, ``[READ], 99thPercentileLatency(us), 3071``,
``[UPDATE], Return=OK, 29871``; failed operations are timed under ``[READ-FAILED]`` and counted
as ``[READ], Return=ERROR``. YCSB exits 0 even when its database binding cannot connect, so
failure is read from the output: no ``[OVERALL]`` section, or no successful operation of a kind
the workload issues.

With ``-s`` YCSB's status thread prints a line every ``status.interval`` seconds on stderr,
``<date> <time> 3 sec: 11536 operations; 3845.33 current ops/sec; [READ: Count=5770, Max=...,
Min=..., Avg=1003.4, 90=..., 99=..., 99.9=..., 99.99=...] [UPDATE: ...]``: the rate and each
operation's average latency (µs) over that interval, read by :func:`parse_status_line`. Until
the first operation completes YCSB leaves the rate out (``2 sec: 0 operations; est
completion ...``): those seconds are read as a rate of 0, since the client is still starting.
YCSB rounds the offset down to whole seconds, so the last, partial interval (printed when the
run stops) repeats the offset before it.

``bin/ycsb.sh`` re-splits its arguments on blanks (``$(echo "$@" | cut ...)``, unquoted), so a
value with a blank or a glob character would be torn apart or expanded even though we pass an
argument list: every value is validated and refused otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from harness.errors import ConfigError, WorkloadError
from harness.executor import tail
from harness.intervals import IntervalSample, finite_number
from systems.java_text import jvm_options

__all__ = [
    "ERROR_HINTS",
    "consistency",
    "create_schema_cql",
    "parse_status_line",
    "parse_ycsb",
    "ycsb_arg",
    "ycsb_command",
    "ycsb_metrics",
]

_SAFE = re.compile(r"[A-Za-z0-9_.,:/=+@%-]+")
_LINE = re.compile(r"^\[([^\]]+)\],\s*([^,]+?),\s*(\S+)\s*$")
#: A status line: seconds since the run began, the interval's rate, then per-operation blocks.
_STATUS = re.compile(r"(?:^|\s)(\S+) sec: (\d{1,18}) operations; (?:(\S+) current ops/sec;)?(.*)$")
_STATUS_BLOCK = re.compile(r"\[([A-Z][A-Z_-]*): ([^\]]*)\]")
_IDENT = re.compile(r"[a-z][a-z0-9_]{0,47}")
_CONSISTENCY = (
    "ANY",
    "ONE",
    "TWO",
    "THREE",
    "QUORUM",
    "ALL",
    "LOCAL_QUORUM",
    "EACH_QUORUM",
    "LOCAL_ONE",
)
#: Output lines that explain a failed run (the first one found goes into the error message).
ERROR_HINTS = (
    "Error initializing datastore bindings",
    "NoHostAvailableException",
    "Cannot connect",
    "DBException",
    "Unable to open the properties file",
    "[ERROR]",
    "Exception",
)


def ycsb_arg(value: object, what: str) -> str:
    """``value`` as a ycsb.sh argument, refused if ycsb.sh's word splitting could change it."""
    text = str(value)
    if not _SAFE.fullmatch(text):
        raise ConfigError(
            f"{what}={text!r}: YCSB's ycsb.sh re-splits its arguments, so use "
            "only letters, digits and _ . , : / = + @ % - (no blanks)"
        )
    return text


def ycsb_command(
    ycsb_dir: str,
    phase: str,
    binding: str,
    workload_file: str,
    properties: Mapping[str, object],
    threads: int,
    status: bool = True,
    java_home: str | None = None,
    java_opts: str = "",
) -> list[str]:
    """``<ycsb>/bin/ycsb.sh load|run <binding> -P <workload> -p k=v ... -threads N [-s]``."""
    if phase not in ("load", "run"):
        raise ConfigError(f"YCSB phase {phase!r}: use load or run")
    if int(threads) < 1:
        raise ConfigError(f"YCSB threads must be >= 1, got {threads}")
    home = ycsb_arg(ycsb_dir, "ycsb_dir").rstrip("/")
    path = workload_file if workload_file.startswith("/") else f"{home}/{workload_file}"
    command = [
        f"{home}/bin/ycsb.sh",
        phase,
        ycsb_arg(binding, "binding"),
        "-P",
        ycsb_arg(path, "workload_file"),
    ]
    for key, value in properties.items():
        command += ["-p", f"{ycsb_arg(key, 'YCSB property')}={ycsb_arg(value, key)}"]
    command += ["-threads", str(int(threads))]
    if status:
        command.append("-s")
    env = [f"JAVA_HOME={ycsb_arg(java_home, 'java_home')}"] if java_home else []
    options = [
        ycsb_arg(option, "workload.client_jvm_opts")
        for option in jvm_options(java_opts, "workload.client_jvm_opts", shell_inert=True)
    ]
    if options:  # ycsb.sh splits JAVA_OPTS at blanks (never globs): each option is checked
        env.append(f"JAVA_OPTS={' '.join(options)}")
    return ["env", *env, *command] if env else command


def consistency(value: str, what: str) -> str:
    """A Cassandra consistency level name, checked."""
    level = str(value).upper()
    if level not in _CONSISTENCY:
        raise ConfigError(f"{what}={value!r}: use one of {', '.join(_CONSISTENCY)}")
    return level


def create_schema_cql(keyspace: str, replication_factor: int, fieldcount: int = 10) -> str:
    """The keyspace and ``usertable`` that YCSB's cassandra-cql binding expects."""
    if not _IDENT.fullmatch(keyspace):
        raise ConfigError(f"keyspace {keyspace!r}: use lower-case letters, digits and _")
    if int(replication_factor) < 1 or int(fieldcount) < 1:
        raise ConfigError("replication_factor and fieldcount must be >= 1")
    fields = ", ".join(f"field{i} varchar" for i in range(int(fieldcount)))
    return (
        f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
        f"{{'class': 'SimpleStrategy', 'replication_factor': {int(replication_factor)}}}; "
        f"CREATE TABLE IF NOT EXISTS {keyspace}.usertable "
        f"(y_id varchar PRIMARY KEY, {fields});"
    )


def parse_ycsb(text: str) -> dict[tuple[str, str], float]:
    """Every ``[SECTION], Measurement, value`` line of YCSB's output (other lines ignored)."""
    results: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if not match:
            continue
        try:
            results[(match.group(1), match.group(2).strip())] = float(match.group(3))
        except ValueError:
            continue  # e.g. a status line that happens to look alike
    return results


def parse_status_line(line: str) -> list[IntervalSample]:
    """The samples of one status line: ``throughput_ops`` (all operations of the interval, as
    YCSB counts them) and, per operation kind, ``<op>_latency_avg_ms``; ``[]`` for any other
    or damaged line (a damaged operation block alone is skipped)."""
    if len(line) > 8192:
        return []
    match = _STATUS.search(line.strip())
    if match is None:
        return []
    offset_text, operations, rate_text, blocks = match.groups()
    offset = finite_number(offset_text)
    rate = finite_number(rate_text) if rate_text is not None else _idle_rate(operations)
    if offset is None or rate is None or offset <= 0 or rate < 0:
        return []
    samples = [IntervalSample(offset, "throughput_ops", rate, "ops/s")]
    for op, fields in _STATUS_BLOCK.findall(blocks):
        average = _status_field(fields, "Avg")
        if average is not None and not op.endswith("-FAILED") and op != "CLEANUP":
            samples.append(
                IntervalSample(offset, f"{op.lower()}_latency_avg_ms", average / 1000.0, "ms")
            )
    return samples


def _idle_rate(operations: str) -> float | None:
    """The rate of a status line without one: 0 before the first operation, else unknown."""
    return 0.0 if int(operations) == 0 else None


def _status_field(fields: str, name: str) -> float | None:
    """``name=value`` of one status block, finite and non-negative, else None."""
    for item in fields.split(","):
        key, _, value = item.strip().partition("=")
        if key == name:
            number = finite_number(value)
            return number if number is not None and number >= 0 else None
    return None


def _hint(text: str) -> str:
    for marker in ERROR_HINTS:
        for line in text.splitlines():
            if marker in line:
                return f" ({line.strip()[:300]})"
    return ""


def _counts(results: Mapping[tuple[str, str], float], op: str) -> tuple[float, float]:
    """(successful, failed) operations of ``op`` from its Return= lines."""
    ok = failed = 0.0
    returns = False
    for (section, measure), value in results.items():
        if section != op or not measure.startswith("Return="):
            continue
        returns = True
        if measure in ("Return=OK", "Return=0"):  # 0: the integer codes of YCSB <= 0.5
            ok += value
        else:
            failed += value
    if not returns:  # no status counts: every timed operation counts as successful
        ok = results.get((op, "Operations"), 0.0)
    failed = max(failed, results.get((f"{op}-FAILED", "Operations"), 0.0))
    return ok, failed


def _latency_ms(results: Mapping[tuple[str, str], float], op: str, measure: str) -> float:
    """A latency in ms: YCSB's hdrhistogram reports microseconds, the old histogram ms."""
    if (op, f"{measure}(us)") in results:
        return results[(op, f"{measure}(us)")] / 1000.0
    if (op, f"{measure}(ms)") in results:
        return results[(op, f"{measure}(ms)")]
    raise WorkloadError(
        f"YCSB printed no {measure} for {op} (use the default measurementtype=hdrhistogram)"
    )


def ycsb_metrics(
    text: str, operations: Sequence[str] = ("READ", "UPDATE"), diagnostics: str = ""
) -> dict[str, float]:
    """Metrics of one YCSB run: successful operations per second, per-operation average and
    p95/p99 latencies in ms, the worst p95/p99 across ``operations``, and the error count.

    Raises WorkloadError when the output has no results or some operation kind never
    succeeded; ``diagnostics`` (e.g. stderr) is searched for the cause.
    """
    results = parse_ycsb(text)
    runtime_ms = results.get(("OVERALL", "RunTime(ms)"))
    if not runtime_ms or runtime_ms <= 0:
        raise WorkloadError(
            "YCSB printed no [OVERALL] results" + _hint(text + diagnostics),
            tail(text + "\n" + diagnostics),
        )
    metrics: dict[str, float] = {}
    ok_total = errors = 0.0
    for op in operations:
        ok, failed = _counts(results, op)
        errors += failed
        if ok <= 0:
            raise WorkloadError(
                f"no successful YCSB {op} operation ({failed:g} failed)"
                + _hint(text + diagnostics),
                tail(text + "\n" + diagnostics),
            )
        ok_total += ok
        name = op.lower()
        metrics[f"{name}_latency_avg_ms"] = _latency_ms(results, op, "AverageLatency")
        for pct in ("95", "99"):
            metrics[f"{name}_latency_p{pct}_ms"] = _latency_ms(
                results, op, f"{pct}thPercentileLatency"
            )
    # Other operation kinds (e.g. an INSERT in a mixed file) count only as errors if they fail.
    for section in {s for s, _ in results} - set(operations):
        if (
            section not in ("OVERALL", "CLEANUP")
            and not section.endswith("-FAILED")
            and not section.startswith(("TOTAL_", "MAX_", "MIN_"))
        ):
            errors += _counts(results, section)[1]
    for pct in ("95", "99"):
        metrics[f"latency_p{pct}_ms"] = max(
            metrics[f"{op.lower()}_latency_p{pct}_ms"] for op in operations
        )
    metrics["throughput_ops"] = ok_total / (runtime_ms / 1000.0)
    metrics["errors"] = errors
    return metrics
