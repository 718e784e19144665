"""Hadoop's own benchmark jobs as workloads: TestDFSIO and TeraSort, on YARN over HDFS.

Both come with Hadoop (TestDFSIO in the tests jar of ``hadoop-mapreduce-client-jobclient``,
TeraGen/TeraSort in ``hadoop-mapreduce-examples``), so they run on the Maven install and on a
cluster's tarball alike, without HiBench. They are started by class name
(``hadoop org.apache.hadoop.fs.TestDFSIO ...``) on the load host with its client configuration:
the tests jar's own driver needs test classes that Central publishes elsewhere. Input is made
once per session (TeraGen; the files a DFSIO read needs); each test runs the job once, then
checks that no daemon died meanwhile (a run on a crippled cluster is no measurement).

While a job runs, its elapsed wall time is emitted once a second into the workload's
``intervals`` recorder (see :mod:`harness.intervals`): a running lower bound on the client's
wall time, which the recorder's target metric is (TeraSort's ``duration_s``, ``client_s``) or
approaches from below by the client's start-up (TestDFSIO's ``exec_time_s``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, WorkloadError
from harness.executor import tail
from harness.hosts.process import run_step
from harness.intervals import IntervalRecorder, elapsed_bound
from harness.system import MetricSpec, System, Workload, whole_number
from systems.hadoop.parse import job_failure, parse_dfsio_results
from systems.hadoop.system import HadoopSystem

__all__ = ["TeraSortWorkload", "TestDFSIOWorkload"]

log = logging.getLogger(__name__)

DFSIO_CLASS = "org.apache.hadoop.fs.TestDFSIO"
TERAGEN_CLASS = "org.apache.hadoop.examples.terasort.TeraGen"
TERASORT_CLASS = "org.apache.hadoop.examples.terasort.TeraSort"


def _hadoop(system: System) -> HadoopSystem:
    if not isinstance(system, HadoopSystem):
        raise ConfigError(f"Hadoop jobs need system=hdfs or system=hive, not {system.name!r}")
    return system


class HadoopJob(Workload):
    """A Hadoop job started with ``bin/hadoop <class> <args>`` on the load host; each job's
    elapsed time goes into :attr:`intervals` while it runs."""

    #: The final metric a job's elapsed time bounds (see the module docstring).
    elapsed_target = "duration_s"

    @cached_property
    def intervals(self) -> IntervalRecorder:
        """The running elapsed-time bound of the current (or last) job."""
        return IntervalRecorder("elapsed", target=self.elapsed_target)

    def _job(
        self,
        hadoop: HadoopSystem,
        args: Sequence[str],
        what: str,
        timeout_s: float | None,
        command: Sequence[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> tuple[str, float]:
        """Run one job (``bin/hadoop <args>``, or ``command``); its output and wall time. A
        failed job is a WorkloadError with the failure line and the output's tail."""
        node = hadoop.load
        # INFO on the console: the line that says why a job failed is logged at INFO.
        env = {"HADOOP_ROOT_LOGGER": "INFO,console", **(env or hadoop.client_env())}
        began = time.monotonic()
        with elapsed_bound(self.intervals):
            result = run_step(
                node,
                list(command or [f"{hadoop.hadoop_home}/bin/hadoop", *args]),
                what=what,
                timeout_s=timeout_s,
                check=False,
                env=env,
                on_line=self.intervals.checkpoint,  # an early stop lands at a log line
            )
        seconds = time.monotonic() - began
        output = f"{result.stdout}\n{result.stderr}"
        failure = job_failure(output)
        if not result.ok or failure:
            hadoop.check_daemons()  # a daemon that died is the cause: say that one
            raise WorkloadError(
                f"{what} failed on {node.host} ({failure or f'exit {result.exit_code}'})",
                tail(output, 40),
            )
        return output, seconds

    def _dfs(self, hadoop: HadoopSystem, *args: str, check: bool = False) -> None:
        result = hadoop.load.run(
            [f"{hadoop.hadoop_home}/bin/hdfs", "dfs", *args],
            env=hadoop.client_env(),
            timeout_s=600,
            check=False,
        )
        if check and not result.ok:
            raise WorkloadError(f"hdfs dfs {args[0]} failed: {result.describe()}")

    def _upload(self, hadoop: HadoopSystem, text: str, name: str, hdfs_dir: str) -> None:
        """Generated input to HDFS: written on the load host (in the node's folder), then put
        into ``hdfs_dir`` (made afresh)."""
        local = f"{hadoop.root_of(hadoop.load)}/input/{name}"
        hadoop.load.run(["mkdir", "-p", local.rsplit("/", 1)[0]], timeout_s=60)
        hadoop.load.write_text(local, text)
        self._dfs(hadoop, "-rm", "-r", "-f", "-skipTrash", hdfs_dir)
        self._dfs(hadoop, "-mkdir", "-p", hdfs_dir, check=True)
        self._dfs(hadoop, "-put", "-f", local, f"{hdfs_dir}/", check=True)


class TestDFSIOWorkload(HadoopJob):
    """TestDFSIO: ``files`` map tasks each write (or read) one file of ``file_mb`` MB on HDFS.
    ``throughput_mb_s`` = all MB moved over the job's run time; TestDFSIO's own per-task
    "Throughput mb/sec" and "Average IO rate" are kept too."""

    __test__ = False  # not a pytest class, whatever its name
    elapsed_target = "exec_time_s"
    metrics = (
        MetricSpec("throughput_mb_s", "max", "MB/s"),
        MetricSpec("task_throughput_mb_s", "max", "MB/s"),
        MetricSpec("avg_io_rate_mb_s", "max", "MB/s"),
        MetricSpec("exec_time_s", "min", "s"),
    )

    def __init__(
        self,
        mode: str = "write",
        files: int = 4,
        file_mb: int = 128,
        duration_s: float = 60.0,
        base_dir: str = "/benchmarks/TestDFSIO",
    ) -> None:
        if mode not in ("read", "write"):
            raise ConfigError(f"workload.mode {mode!r}: use read or write")
        self.mode = mode
        self.files = whole_number(files, "files", 1, 10_000)
        self.file_mb = whole_number(file_mb, "file_mb", 1, 1_000_000)
        self.duration_s = float(duration_s)
        self.base_dir = self._hdfs_path(base_dir)
        self.name = "dfsio" if mode == "write" else "dfsio_read"

    @staticmethod
    def _hdfs_path(path: str) -> str:
        if (
            not isinstance(path, str)
            or not path.startswith("/")
            or not all(c.isalnum() or c in "/._-" for c in path)
        ):
            raise ConfigError(
                f"workload.base_dir {path!r}: use an absolute HDFS path of [A-Za-z0-9/._-]"
            )
        return path

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "mode": self.mode,
            "files": self.files,
            "file_mb": self.file_mb,
            "job": DFSIO_CLASS,
        }

    def _args(self, hadoop: HadoopSystem, mode: str) -> list[str]:
        return [
            DFSIO_CLASS,
            "-D",
            f"test.build.data={self.base_dir}",
            f"-{mode}",
            "-nrFiles",
            str(self.files),
            "-size",
            f"{self.file_mb}MB",
            "-resFile",
            self._result_file(hadoop),
        ]

    @staticmethod
    def _result_file(hadoop: HadoopSystem) -> str:
        return f"{hadoop.root_of(hadoop.load)}/dfsio_results.txt"

    def prepare(self, system: System, workdir: Path) -> None:
        hadoop = _hadoop(system)
        if self.mode == "read":  # a read test reads the files a write left
            log.info("TestDFSIO: writing %d x %d MB to read", self.files, self.file_mb)
            self._job(hadoop, self._args(hadoop, "write"), "TestDFSIO write (input)", None)

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        hadoop = _hadoop(system)
        path = self._result_file(hadoop)
        before = hadoop.load.read_text(path) if hadoop.load.exists(path) else ""
        output, _ = self._job(
            hadoop, self._args(hadoop, self.mode), f"TestDFSIO {self.mode}", timeout_s
        )
        after = hadoop.load.read_text(path) if hadoop.load.exists(path) else ""
        fresh = after[len(before) :] if after.startswith(before) else after
        results = [r for r in parse_dfsio_results(fresh) if r.mode == self.mode]
        if not results:
            raise WorkloadError(
                f"TestDFSIO {self.mode} wrote no result to {path} on {hadoop.load.host}",
                tail(output, 40),
            )
        hadoop.check_daemons()
        result = results[-1]
        return {
            "throughput_mb_s": result.throughput_mb_s,
            "task_throughput_mb_s": result.task_throughput_mb_s,
            "avg_io_rate_mb_s": result.avg_io_rate_mb_s,
            "exec_time_s": result.exec_time_s,
        }


class TeraSortWorkload(HadoopJob):
    """TeraSort of ``rows`` 100-byte rows that TeraGen wrote once per session;
    ``duration_s`` is the sort job's wall time (submission to completion)."""

    metrics = (
        MetricSpec("duration_s", "min", "s"),
        MetricSpec("rows_per_s", "max", "rows/s"),
    )

    def __init__(
        self, rows: int = 1_000_000, duration_s: float = 60.0, base_dir: str = "/harness/terasort"
    ) -> None:
        self.rows = whole_number(rows, "rows", 1000, 10**12)
        self.duration_s = float(duration_s)
        self.base_dir = TestDFSIOWorkload._hdfs_path(base_dir)
        self.name = "terasort"

    def params(self) -> dict[str, Any]:
        return {**super().params(), "rows": self.rows, "job": TERASORT_CLASS}

    def prepare(self, system: System, workdir: Path) -> None:
        hadoop = _hadoop(system)
        self._dfs(hadoop, "-rm", "-r", "-f", "-skipTrash", f"{self.base_dir}/in")
        log.info("TeraGen: %d rows to %s/in", self.rows, self.base_dir)
        self._job(hadoop, [TERAGEN_CLASS, str(self.rows), f"{self.base_dir}/in"], "TeraGen", None)

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        hadoop = _hadoop(system)
        out = f"{self.base_dir}/out"
        self._dfs(hadoop, "-rm", "-r", "-f", "-skipTrash", out)
        _, seconds = self._job(
            hadoop, [TERASORT_CLASS, f"{self.base_dir}/in", out], "TeraSort", timeout_s
        )
        hadoop.check_daemons()
        return {"duration_s": seconds, "rows_per_s": self.rows / seconds}
