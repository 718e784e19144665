"""Pure parsers of what Hadoop and HiBench print, tested on text in their real formats.

* HiBench's report (``report/hibench.report``): a header ``Type Date Time Input_data_size
  Duration(s) Throughput(bytes/s) Throughput/node`` and one line per run, written by
  ``gen_report`` with ``printf "%-12s %-10s %-8s %-20s %-20s %-20s %-20s\\n"``; long type names
  (``HadoopDfsioe-write``) push the columns right, so lines are split on whitespace.
* DFSIOe's result file (``report/dfsioe/hadoop/result_<mode>.txt``), appended per run: the
  classic ``----- TestDFSIO ----- : write`` block and DFSIOe's extended metrics.
* ``hdfs dfsadmin -report`` (Hadoop 3: ``Live datanodes (N):`` sections) and
  ``yarn node -list -all`` (``Total Nodes:N``, then ``Node-Id Node-State Node-Http-Address
  Number-of-Running-Containers`` rows).
* Job failures HiBench does not turn into an exit status (its Hive and Mahout workloads run
  the query without checking it): Hive's ``FAILED:`` lines, MapReduce's ``Job ... failed with
  state``, HiBench's own ``ERROR: Hadoop job ... failed``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DFSIOResult",
    "DFSReport",
    "ReportRow",
    "YarnNode",
    "job_failure",
    "new_report_rows",
    "parse_dfsadmin_report",
    "parse_dfsio_results",
    "parse_hibench_report",
    "parse_yarn_nodes",
    "safemode_off",
    "strip_ansi",
]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    """Text without terminal colour codes (HiBench colours its messages)."""
    return _ANSI.sub("", text)


# -- HiBench report ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReportRow:
    """One run in hibench.report."""

    type: str  # e.g. HadoopJoin, HadoopDfsioe-write
    date: str
    time: str
    input_bytes: int
    duration_s: float
    throughput_bytes_s: float
    throughput_node_bytes_s: float


def parse_hibench_report(text: str) -> list[ReportRow]:
    """Every well-formed run line (the header, comments and malformed lines are skipped)."""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 7 or fields[0] == "Type" or fields[0].startswith("#"):
            continue
        try:
            rows.append(
                ReportRow(
                    fields[0],
                    fields[1],
                    fields[2],
                    int(fields[3]),
                    float(fields[4]),
                    float(fields[5]),
                    float(fields[6]),
                )
            )
        except ValueError:
            continue
    return rows


def new_report_rows(before: str, after: str, report_type: str) -> list[ReportRow]:
    """The rows of ``report_type`` that a run appended: ``after`` minus the ``before`` text
    (all of ``after`` if the file was replaced meanwhile)."""
    fresh = after[len(before) :] if after.startswith(before) else after
    return [row for row in parse_hibench_report(fresh) if row.type == report_type]


# -- DFSIOe ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DFSIOResult:
    """One ``----- TestDFSIO -----`` block of a DFSIOe result file."""

    mode: str  # read or write
    files: int
    total_mb: float
    task_throughput_mb_s: float  # "Throughput mb/sec": bytes over the summed task times
    avg_io_rate_mb_s: float
    io_rate_std: float
    exec_time_s: float
    aggregated_mb_s: float | None  # DFSIOe's "Average of Aggregated Throughput", if computed

    @property
    def throughput_mb_s(self) -> float:
        """Cluster throughput: all MB moved over the job's run time."""
        return self.total_mb / self.exec_time_s if self.exec_time_s > 0 else 0.0


_DFSIO_HEAD = re.compile(r"^-+ TestDFSIO -+ : (\w+)\s*$", re.M)
_DFSIO_FIELDS = {
    "files": "Number of files",
    "total_mb": "Total MBytes processed",
    "task_throughput_mb_s": "Throughput mb/sec",
    "avg_io_rate_mb_s": "Average IO rate mb/sec",
    "io_rate_std": "IO rate std deviation",
    "exec_time_s": "Test exec time sec",
}
_AGGREGATED = re.compile(r"Average of Aggregated Throughput : ([-+0-9.eE]+) (\w*)/sec")
_TO_MB = {"b": 2.0**-20, "kb": 2.0**-10, "mb": 1.0, "gb": 1024.0}


def parse_dfsio_results(text: str) -> list[DFSIOResult]:
    """Every complete block, oldest first (the file is appended to by each run)."""
    heads = list(_DFSIO_HEAD.finditer(text))
    results = []
    for i, head in enumerate(heads):
        block = text[head.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        values: dict[str, float] = {}
        for key, label in _DFSIO_FIELDS.items():
            match = re.search(
                rf"^\s*{re.escape(label)}:\s*([-+0-9.eE]+|NaN|Infinity)\s*$", block, re.M
            )
            if match:
                values[key] = float(match.group(1))
        if len(values) != len(_DFSIO_FIELDS):
            continue  # a run cut short: not a result
        aggregated = _AGGREGATED.search(block)
        agg = (
            float(aggregated.group(1)) * _TO_MB.get(aggregated.group(2).lower(), 1.0)
            if aggregated
            else None
        )
        results.append(
            DFSIOResult(
                mode=head.group(1),
                files=int(values["files"]),
                total_mb=values["total_mb"],
                task_throughput_mb_s=values["task_throughput_mb_s"],
                avg_io_rate_mb_s=values["avg_io_rate_mb_s"],
                io_rate_std=values["io_rate_std"],
                exec_time_s=values["exec_time_s"],
                aggregated_mb_s=agg,
            )
        )
    return results


# -- health ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DFSReport:
    """What ``hdfs dfsadmin -report`` says about the DataNodes."""

    live: int
    dead: int
    live_hosts: tuple[str, ...]
    safemode: bool
    valid: bool  # the capacity summary was there (not an error message)


_SECTION = re.compile(r"^(\w[\w ]*?) datanodes \((\d+)\):\s*$", re.M)


def parse_dfsadmin_report(text: str) -> DFSReport:
    """Live/dead counts and live host names; zeros for an error message."""
    counts: dict[str, int] = {}
    hosts: list[str] = []
    sections = list(_SECTION.finditer(text))
    for i, section in enumerate(sections):
        kind = section.group(1).strip().lower()
        counts[kind] = counts.get(kind, 0) + int(section.group(2))
        if kind == "live":
            body = text[
                section.end() : sections[i + 1].start() if i + 1 < len(sections) else len(text)
            ]
            hosts += re.findall(r"^Hostname: (\S+)\s*$", body, re.M)
    return DFSReport(
        counts.get("live", 0),
        counts.get("dead", 0),
        tuple(hosts),
        safemode=bool(re.search(r"^Safe mode is ON", text, re.M)),
        valid="Configured Capacity:" in text,
    )


def safemode_off(text: str) -> bool:
    """Whether ``hdfs dfsadmin -safemode wait/get`` reported safe mode off."""
    return bool(re.search(r"Safe mode is OFF", text))


@dataclass(frozen=True)
class YarnNode:
    """One row of ``yarn node -list``."""

    node_id: str
    state: str
    http_address: str
    containers: int


def parse_yarn_nodes(text: str) -> list[YarnNode]:
    """The node rows after the ``Node-Id`` header (client log lines are ignored)."""
    nodes: list[YarnNode] = []
    in_table = False
    for line in text.splitlines():
        fields = line.split()
        if fields[:2] == ["Node-Id", "Node-State"]:
            in_table = True
            continue
        if in_table and len(fields) == 4 and fields[3].isdigit():
            nodes.append(YarnNode(fields[0], fields[1], fields[2], int(fields[3])))
    return nodes


# -- job failures ---------------------------------------------------------------------------------
_FAILURES = (
    re.compile(r"^FAILED: .+"),  # Hive CLI
    re.compile(r"Job job_\d+_\d+ failed with state \w+.*"),  # MapReduce client
    re.compile(r"ERROR: Hadoop job .+ failed to run successfully.*"),  # HiBench run_hadoop_job
    re.compile(r"^Exception in thread \"main\" .+"),  # Mahout / any Java main
)


def job_failure(output: str) -> str | None:
    """The first line of ``output`` that says the benchmark's job failed, or None."""
    for line in strip_ansi(output).splitlines():
        for pattern in _FAILURES:
            match = pattern.search(line.strip())
            if match:
                return match.group(0)[:300]
    return None


_HIVEQL = re.compile(r"^HIVEQL (\d+) (\d+(?:\.\d+)?) ")


def hiveql_timings(output: str) -> dict[int, float]:
    """Seconds per statement number, from the ``HIVEQL <n> <seconds> ...`` lines of our runner
    (``systems/hadoop/java/hive``); empty for a Hive that does not print them."""
    timings = {}
    for line in strip_ansi(output).splitlines():
        match = _HIVEQL.match(line.strip() + " ")
        if match:
            timings[int(match.group(1))] = float(match.group(2))
    return timings
