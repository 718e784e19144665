"""YCSB workload A (50% reads, 50% updates, zipfian keys) against Cassandra, from the load host.

YCSB 0.17.0's real client and CoreWorkload, with our own Cassandra binding (YCSB's
``cassandra-binding`` is not on Maven Central; ours is ``systems/cassandra/java/ycsb``, built by
``scripts/setup.sh --full``), run on ``cluster.load`` through the install's ``bin/ycsb.sh``.
``prepare`` creates the keyspace and ``usertable`` with the install's ``bin/cqlexec.sh`` (cqlsh
is not on Maven Central either) and loads ``recordcount`` records once (consistency ALL, so
every replica holds the data before the system snapshots it). Each test runs ``ycsb.sh run``
for ``duration_s`` seconds (``maxexecutiontime``; ``operationcount`` is set high enough never
to end a run first), after an optional warm-up run whose results are discarded (it warms the
nodes; every phase is a fresh client JVM). The measured run's status lines (one per second)
go into the workload's ``intervals`` recorder (see :mod:`harness.intervals`); the warm-up's do
not.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, WorkloadError
from harness.executor import tail
from harness.hosts.machine import install_dir
from harness.hosts.process import run_step
from harness.intervals import IntervalRecorder
from harness.system import MetricSpec, System, Workload
from systems.cassandra import ycsb
from systems.java_text import jvm_options

__all__ = ["YCSBWorkload"]

log = logging.getLogger(__name__)

#: YCSB parses operationcount as a Java int; maxexecutiontime ends the run long before.
OPERATION_COUNT = 2_000_000_000


class YCSBWorkload(Workload):
    """YCSB (our cassandra-cql binding) with ``threads`` client threads for ``duration_s``."""

    name = "ycsb_a"
    metrics = (
        MetricSpec("throughput_ops", "max", "ops/s"),
        MetricSpec("read_latency_avg_ms", "min", "ms"),
        MetricSpec("update_latency_avg_ms", "min", "ms"),
        MetricSpec("latency_p95_ms", "min", "ms"),
        MetricSpec("latency_p99_ms", "min", "ms"),
        MetricSpec("read_latency_p95_ms", "min", "ms"),
        MetricSpec("read_latency_p99_ms", "min", "ms"),
        MetricSpec("update_latency_p95_ms", "min", "ms"),
        MetricSpec("update_latency_p99_ms", "min", "ms"),
        MetricSpec("errors", "min", "count"),
    )

    def __init__(
        self,
        ycsb_dir: str | None = None,
        workload_file: str = "workloads/workloada",
        duration_s: float = 60.0,
        warmup_s: float = 10.0,
        threads: int = 32,
        recordcount: int = 100_000,
        fieldcount: int = 10,
        load_threads: int = 32,
        replication_factor: int | None = None,
        read_consistency: str = "ONE",
        write_consistency: str = "ONE",
        load_consistency: str = "ALL",
        keyspace: str = "ycsb",
        java_home: str | None = None,
        client_jvm_opts: str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        properties: Mapping[str, Any] | None = None,
        load_timeout_s: float = 7200.0,
        startup_slack_s: float = 120.0,
    ) -> None:
        # None: what `scripts/setup.sh --full` built (.installs/ycsb or $HARNESS_INSTALLS)
        self.ycsb_dir = ycsb.ycsb_arg(ycsb_dir or install_dir("ycsb"), "ycsb_dir").rstrip("/")
        self.workload_file = ycsb.ycsb_arg(workload_file, "workload_file")
        self.duration_s = float(duration_s)
        self.warmup_s = float(warmup_s)
        self.threads = int(threads)
        self.recordcount = int(recordcount)
        self.fieldcount = int(fieldcount)
        self.load_threads = int(load_threads)
        self.replication_factor = replication_factor
        self.read_consistency = ycsb.consistency(read_consistency, "read_consistency")
        self.write_consistency = ycsb.consistency(write_consistency, "write_consistency")
        self.load_consistency = ycsb.consistency(load_consistency, "load_consistency")
        self.keyspace = keyspace
        ycsb.create_schema_cql(keyspace, 1, fieldcount)  # validates the names early
        self.java_home = ycsb.ycsb_arg(java_home, "java_home") if java_home else None
        # Every YCSB phase is a fresh client JVM, so a run's first seconds are the client's JIT
        # compiling, not Cassandra: C1 only and a serial GC reach steady speed at once (10 s
        # runs here: 755-1835 ops/s with the JVM's defaults, 3.8-4.1k ops/s with these).
        self.client_jvm_opts = " ".join(
            ycsb.ycsb_arg(option, "workload.client_jvm_opts")
            for option in jvm_options(
                str(client_jvm_opts), "workload.client_jvm_opts", shell_inert=True
            )
        )
        self.properties = {str(k): ycsb.ycsb_arg(v, str(k)) for k, v in (properties or {}).items()}
        self.load_timeout_s = float(load_timeout_s)
        self.startup_slack_s = float(startup_slack_s)
        if self.duration_s <= 0 or self.threads < 1 or self.recordcount < 1:
            raise ConfigError("ycsb: duration_s, threads and recordcount must be positive")
        self.intervals = IntervalRecorder("rate", target="throughput_ops")

    @staticmethod
    def _system(system: System) -> Any:
        from systems.cassandra.system import CassandraSystem

        if not isinstance(system, CassandraSystem):
            raise ConfigError("the YCSB workload runs only on the cassandra system")
        return system

    def _properties(self, system: Any, phase: str, seconds: float = 0.0) -> dict[str, object]:
        props: dict[str, object] = {
            "hosts": system.client_hosts,
            "port": system.native_port,
            "cassandra.keyspace": self.keyspace,
            "recordcount": self.recordcount,
            "fieldcount": self.fieldcount,
            "cassandra.readconsistencylevel": self.read_consistency,
            "cassandra.writeconsistencylevel": self.load_consistency
            if phase == "load"
            else self.write_consistency,
        }
        if phase == "run":
            props["operationcount"] = OPERATION_COUNT
            props["maxexecutiontime"] = max(1, math.ceil(seconds))
            props["status.interval"] = 1  # one status line per second (stderr, with -s)
        return {**props, **self.properties}

    def command(self, system: System, phase: str, seconds: float = 0.0) -> list[str]:
        """The ycsb.sh command line of a load or run phase (pure, for tests and logs)."""
        cassandra = self._system(system)
        threads = self.load_threads if phase == "load" else self.threads
        return ycsb.ycsb_command(
            self.ycsb_dir,
            phase,
            "cassandra-cql",
            self.workload_file,
            self._properties(cassandra, phase, seconds),
            threads,
            java_home=self.java_home,
            java_opts=self.client_jvm_opts,
        )

    def prepare(self, system: System, workdir: Path) -> None:
        cassandra = self._system(system)
        load = cassandra.cluster.load
        for relative in ("bin/ycsb.sh", "bin/cqlexec.sh", "cassandra-binding", self.workload_file):
            path = relative if relative.startswith("/") else f"{self.ycsb_dir}/{relative}"
            if not load.exists(path):
                raise ConfigError(
                    f"YCSB not found on load host {load.host}: {path} is missing; run "
                    "`bash scripts/setup.sh --full` (it builds YCSB 0.17.0 with our Cassandra "
                    "binding into .installs/ycsb), or set workload.ycsb_dir=<such an install>"
                )
        factor = self.replication_factor or min(3, len(cassandra.nodes))
        self._cql(cassandra, ycsb.create_schema_cql(self.keyspace, factor, self.fieldcount))
        log.info(
            "YCSB: loading %d records (replication factor %d) from %s",
            self.recordcount,
            factor,
            load.host,
        )
        output, errors = self._ycsb(cassandra, "load", 0.0, self.load_timeout_s)
        metrics = ycsb.ycsb_metrics(output, ("INSERT",), errors)
        if metrics["errors"] > 0:
            raise WorkloadError(
                f"YCSB load: {metrics['errors']:g} of {self.recordcount} inserts failed",
                tail(output),
            )

    def _cql(self, cassandra: Any, statements: str, timeout_s: float = 120.0) -> None:
        """Run schema statements through the install's ``bin/cqlexec.sh`` from the load host
        (the statements are one argument, never part of a shell script)."""
        command = [
            f"{self.ycsb_dir}/bin/cqlexec.sh",
            cassandra.nodes[0].address,
            str(cassandra.native_port),
            str(int(timeout_s)),
            statements,
        ]
        if self.java_home:
            command = ["env", f"JAVA_HOME={self.java_home}", *command]
        run_step(
            cassandra.cluster.load,
            command,
            what="creating the YCSB schema (cqlexec)",
            timeout_s=timeout_s + 30,
            output_tail=lambda out, err: tail(out + err),
        )

    def _ycsb(
        self, cassandra: Any, phase: str, seconds: float, limit: float, measured: bool = False
    ) -> tuple[str, str]:
        """One YCSB client run; a ``measured`` one feeds its status lines to the intervals."""
        command = self.command(cassandra, phase, seconds)
        load = cassandra.cluster.load
        result = run_step(
            load,
            command,
            what=f"YCSB {phase}",
            timeout_s=limit,
            output_tail=lambda out, err: tail(out + err),
            on_line=self.intervals.line_feeder(ycsb.parse_status_line) if measured else None,
        )
        return result.stdout, result.stderr

    def _limit(self, seconds: float, timeout_s: float | None) -> float:
        limit = seconds + self.startup_slack_s
        return min(limit, timeout_s) if timeout_s is not None else limit

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        cassandra = self._system(system)
        self.intervals.begin()
        if self.warmup_s > 0:
            self._ycsb(cassandra, "run", self.warmup_s, self._limit(self.warmup_s, timeout_s))
        output, errors = self._ycsb(
            cassandra, "run", self.duration_s, self._limit(self.duration_s, timeout_s), True
        )
        cassandra.check_nodes()  # a node that died mid-test voids the measurement
        metrics = ycsb.ycsb_metrics(output, ("READ", "UPDATE"), errors)
        log.info(
            "YCSB: %.0f ops/s, p99 %.1f ms, %g errors",
            metrics["throughput_ops"],
            metrics["latency_p99_ms"],
            metrics["errors"],
        )
        return metrics

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "warmup_s": self.warmup_s,
            "threads": self.threads,
            "recordcount": self.recordcount,
            "workload_file": self.workload_file,
            "client_jvm_opts": self.client_jvm_opts,
            "read_consistency": self.read_consistency,
            "write_consistency": self.write_consistency,
        }
