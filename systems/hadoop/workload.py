"""HiBench workloads on a Hadoop cluster: a run, and the metrics of a run.

The workloads run on any :class:`~systems.hadoop.hibench.HiBenchHost` (the Hadoop adapters),
whose HiBench configuration is written per run (``hibench.py``). A run is HiBench's own
``hadoop/run.sh``; its result is the line it appends to ``<report dir>/hibench.report``.
HiBench's Hive and Mahout runs exit 0 even when the query failed (and still append a report
line), so the output is also searched for failure lines.

While a run goes, its elapsed wall time is emitted once a second into the workload's
``intervals`` recorder (see :mod:`harness.intervals`): a running bound that the report's
``duration_s`` approaches from below by the scripts' start-up.
"""

from __future__ import annotations

import logging
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, WorkloadError, WorkloadTimeout
from harness.executor import tail
from harness.hosts.process import run_step
from harness.intervals import IntervalRecorder, elapsed_bound
from harness.system import MetricSpec, System, Workload
from systems.hadoop import commands
from systems.hadoop.hibench import HiBenchHost
from systems.hadoop.parse import (
    DFSIOResult,
    ReportRow,
    job_failure,
    new_report_rows,
    parse_dfsio_results,
)

__all__ = ["DFSIOeWorkload", "HiBenchWorkload"]

log = logging.getLogger(__name__)


def _hadoop(system: System) -> HiBenchHost:
    if not isinstance(system, HiBenchHost):
        raise ConfigError(
            f"HiBench workloads need system=hive or system=hdfs, not {system.name!r}"
        )
    return system


class HiBenchWorkload(Workload):
    """One HiBench workload run through its Hadoop scripts (``prepare.sh`` once per session,
    ``hadoop/run.sh`` per test); metrics from the report line the run appended."""

    metrics: tuple[MetricSpec, ...] = (
        MetricSpec("duration_s", "min", "s"),
        MetricSpec("throughput_bytes_s", "max", "bytes/s"),
        MetricSpec("throughput_node_bytes_s", "max", "bytes/s"),
    )

    def __init__(
        self,
        category: str,
        name: str,
        scale_profile: str = "small",
        duration_s: float = 120.0,
        report_type: str | None = None,
        run_script: str = "run.sh",
        prepare_timeout_s: float = 3600.0,
        benchmark: str | None = None,
    ) -> None:
        # `name` is HiBench's workload, unless the harness's name differs (`hibench_join`).
        name = benchmark or name
        commands.hibench_run("/hibench", category, name, run_script)  # validates the names
        if scale_profile not in commands.SCALE_PROFILES:
            raise ConfigError(
                f"scale_profile {scale_profile!r}: use one of {', '.join(commands.SCALE_PROFILES)}"
            )
        self.category, self.benchmark, self.scale_profile = category, name, scale_profile
        self.duration_s = float(duration_s)
        self.report_type = report_type or f"Hadoop{name.capitalize()}"
        self.run_script = run_script
        self.prepare_timeout_s = float(prepare_timeout_s)

    @property
    def label(self) -> str:
        return f"HiBench {self.category}/{self.benchmark}"

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "hibench": f"{self.category}/{self.benchmark}",
            "scale_profile": self.scale_profile,
            "report_type": self.report_type,
        }

    def result_dir(self, hadoop: HiBenchHost) -> str:
        """HiBench's WORKLOAD_RESULT_FOLDER: ``<report dir>/<name>/hadoop``."""
        return f"{hadoop.report_dir}/{self.benchmark}/hadoop"

    def prepare(self, system: System, workdir: Path) -> None:
        hadoop = _hadoop(system)
        hadoop.check_hibench()
        hadoop.write_hibench_conf(self.scale_profile)
        command = commands.hibench_prepare(hadoop.hibench_home, self.category, self.benchmark)
        log.info("%s: generating %s input (prepare.sh)", self.label, self.scale_profile)
        try:
            result = run_step(
                hadoop.load,
                command,
                what=f"{self.label} prepare.sh",
                timeout_s=self.prepare_timeout_s,
                check=False,  # judged below: HiBench's scripts may exit 0 on a failed job
                env=hadoop.hibench_env(),
            )
        except WorkloadTimeout as exc:
            raise WorkloadTimeout(
                f"{exc}; use a smaller scale_profile or a larger prepare_timeout_s",
                exc.output_tail,
            ) from None
        output = f"{result.stdout}\n{result.stderr}"
        failure = job_failure(output)
        if not result.ok or failure:
            logs = self._log_tail(hadoop, output)
            raise WorkloadError(
                f"{self.label} prepare.sh failed on {hadoop.load.host} "
                f"({failure or f'exit {result.exit_code}'}); last lines:\n"
                f"{tail(logs, 5)}",
                logs,
            )

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        hadoop = _hadoop(system)
        hadoop.write_hibench_conf(self.scale_profile)
        before = self._snapshot(hadoop)
        command = commands.hibench_run(
            hadoop.hibench_home, self.category, self.benchmark, self.run_script
        )
        with elapsed_bound(self.intervals):
            result = run_step(
                hadoop.load,
                command,
                what=self.label,
                timeout_s=timeout_s,
                check=False,  # judged below, with bench.log's tail
                env=hadoop.hibench_env(),
                on_line=self.intervals.checkpoint,  # an early stop lands at a log line
            )
        output = f"{result.stdout}\n{result.stderr}"
        if not result.ok:
            raise WorkloadError(
                f"{self.label} ({command[0]}) exited {result.exit_code} on {hadoop.load.host}",
                self._log_tail(hadoop, output),
            )
        failure = job_failure(output)
        if failure:
            raise WorkloadError(
                f"{self.label} failed on {hadoop.load.host}: {failure}",
                self._log_tail(hadoop, output),
            )
        report = self._read(hadoop, f"{hadoop.report_dir}/hibench.report")
        rows = new_report_rows(before["report"], report, self.report_type)
        if not rows:
            raise WorkloadError(
                f"{self.label} wrote no new {self.report_type} line to "
                f"{hadoop.report_dir}/hibench.report on {hadoop.load.host}",
                self._log_tail(hadoop, output),
            )
        return self._metrics(rows[-1], hadoop, before)

    @cached_property
    def intervals(self) -> IntervalRecorder:
        """The running elapsed-time bound of the current (or last) run."""
        return IntervalRecorder("elapsed", target="duration_s")

    # -- hooks ---------------------------------------------------------------------------------
    def _snapshot(self, hadoop: HiBenchHost) -> dict[str, str]:
        """The files a run appends to, before it runs."""
        return {"report": self._read(hadoop, f"{hadoop.report_dir}/hibench.report")}

    def _metrics(
        self, row: ReportRow, hadoop: HiBenchHost, before: dict[str, str]
    ) -> dict[str, float]:
        return {
            "duration_s": row.duration_s,
            "throughput_bytes_s": row.throughput_bytes_s,
            "throughput_node_bytes_s": row.throughput_node_bytes_s,
        }

    @staticmethod
    def _read(hadoop: HiBenchHost, path: str) -> str:
        return hadoop.load.read_text(path) if hadoop.load.exists(path) else ""

    def _log_tail(self, hadoop: HiBenchHost, output: str) -> str:
        """bench.log's tail (HiBench writes it only when run from a terminal), else the
        output's."""
        bench_log = self._read(hadoop, f"{self.result_dir(hadoop)}/bench.log")
        return tail(bench_log if bench_log.strip() else output, 30)


class DFSIOeWorkload(HiBenchWorkload):
    """HiBench's enhanced DFSIO (``micro/dfsioe``): many map tasks write (or read) HDFS files at
    once. ``throughput_mb_s`` is all MB moved over the job's run time, from DFSIOe's result
    file; the report line's duration is kept too."""

    metrics = (
        MetricSpec("throughput_mb_s", "max", "MB/s"),
        MetricSpec("task_throughput_mb_s", "max", "MB/s"),
        MetricSpec("avg_io_rate_mb_s", "max", "MB/s"),
        MetricSpec("exec_time_s", "min", "s"),
        MetricSpec("duration_s", "min", "s"),
    )

    def __init__(
        self,
        mode: str = "write",
        scale_profile: str = "small",
        duration_s: float = 120.0,
        run_script: str | None = None,
        prepare_timeout_s: float = 3600.0,
    ) -> None:
        if mode not in ("read", "write"):
            raise ConfigError(f"DFSIO mode {mode!r}: use read or write")
        self.mode = mode
        super().__init__(
            "micro",
            "dfsioe",
            scale_profile,
            duration_s,
            report_type=f"HadoopDfsioe-{mode}",
            run_script=run_script or f"run_{mode}.sh",
            prepare_timeout_s=prepare_timeout_s,
        )
        self._script_given = run_script is not None

    def params(self) -> dict[str, Any]:
        return {**super().params(), "mode": self.mode}

    def prepare(self, system: System, workdir: Path) -> None:
        hadoop = _hadoop(system)
        if not self._script_given:  # HiBench releases name it run_write.sh or run-write.sh
            folder = commands.hibench_run(hadoop.hibench_home, "micro", "dfsioe")[0]
            folder = folder.rsplit("/", 1)[0]
            for candidate in (f"run_{self.mode}.sh", f"run-{self.mode}.sh"):
                if hadoop.load.exists(f"{folder}/{candidate}"):
                    self.run_script = candidate
                    break
        super().prepare(system, workdir)

    def _result_file(self, hadoop: HiBenchHost) -> str:
        return f"{self.result_dir(hadoop)}/result_{self.mode}.txt"

    def _snapshot(self, hadoop: HiBenchHost) -> dict[str, str]:
        return {
            **super()._snapshot(hadoop),
            "result": self._read(hadoop, self._result_file(hadoop)),
        }

    def _metrics(
        self, row: ReportRow, hadoop: HiBenchHost, before: dict[str, str]
    ) -> dict[str, float]:
        after = self._read(hadoop, self._result_file(hadoop))
        fresh = after[len(before["result"]) :] if after.startswith(before["result"]) else after
        blocks: list[DFSIOResult] = [r for r in parse_dfsio_results(fresh) if r.mode == self.mode]
        if not blocks:
            raise WorkloadError(
                f"{self.label} wrote no new {self.mode} result to "
                f"{self._result_file(hadoop)} on {hadoop.load.host}",
                tail(fresh or after, 20),
            )
        result = blocks[-1]
        if result.aggregated_mb_s is not None:
            log.info(
                "DFSIOe %s: aggregated throughput %.1f MB/s", self.mode, result.aggregated_mb_s
            )
        return {
            "throughput_mb_s": result.throughput_mb_s,
            "task_throughput_mb_s": result.task_throughput_mb_s,
            "avg_io_rate_mb_s": result.avg_io_rate_mb_s,
            "exec_time_s": result.exec_time_s,
            "duration_s": row.duration_s,
        }
