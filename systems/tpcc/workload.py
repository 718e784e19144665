"""The TPC-C workload adapter: loads the database once per session and runs the driver
(:mod:`systems.tpcc.driver`) as a separate process for every test.

It works with any system that offers ``dbapi_target() -> dict`` (see
:func:`systems.tpcc.schema.connect` for the keys): the PostgreSQL and MySQL adapters do, and
an embedded SQLite system can return ``{"dialect": "sqlite", "path": ..., "init_sql": [...]}``.

The driver's per-second ``TPCC-INTERVAL`` lines go into the workload's ``intervals`` recorder
(see :mod:`harness.intervals`); the final metrics come from its summary line alone.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, WorkloadError
from harness.executor import Executor, LocalExecutor, tail
from harness.hosts.process import run_step
from harness.intervals import IntervalRecorder
from harness.system import MetricSpec, System, Workload, whole_number
from systems.tpcc.driver import PASSWORD_ENV, parse_interval_line, parse_summary
from systems.tpcc.schema import Scale

__all__ = ["TPCCWorkload", "driver_command", "driver_env", "metrics_from_output"]

log = logging.getLogger(__name__)


def driver_command(
    python: str,
    action: str,
    target: dict[str, Any],
    scale: Scale,
    *,
    clients: int = 2,
    duration_s: float = 10.0,
    seed: int = 0,
) -> list[str]:
    """The driver's argument list (the target travels as one JSON argument, without its
    password: a command line is visible to every user of the host in ``ps``; the password
    goes in the environment, :func:`driver_env`)."""
    public = {key: value for key, value in target.items() if key != "password"}
    command = [
        python,
        "-m",
        "systems.tpcc.driver",
        action,
        "--target",
        json.dumps(public),
        f"--warehouses={scale.warehouses}",
        f"--items={scale.items}",
        f"--customers={scale.customers}",
        f"--seed={seed}",
    ]
    if action == "run":
        command += [f"--clients={clients}", f"--duration={duration_s:g}"]
    return command


def driver_env(target: dict[str, Any]) -> dict[str, str]:
    """The driver's environment: the database password, if the target has one."""
    password = target.get("password")
    return {PASSWORD_ENV: str(password)} if password else {}


def metrics_from_output(output: str) -> dict[str, float]:
    """The metrics of one driver run; a run without one completed transaction is an error."""
    try:
        summary = parse_summary(output)
    except ValueError as exc:
        raise WorkloadError(f"TPC-C driver: {exc}", tail(output)) from None
    metrics = {k: float(v) for k, v in summary["metrics"].items()}
    if sum(summary["counts"].values()) == 0:
        samples = "; ".join(summary.get("error_samples", [])) or "no transaction finished"
        raise WorkloadError(f"TPC-C: no transaction completed ({samples})", tail(output))
    return metrics


class TPCCWorkload(Workload):
    """TPC-C (our own driver) with the standard mix; objective ``tpmC`` by default.

    ``items`` and ``customers`` (per district) reduce the specification's 100000 / 3000 so a
    session loads in seconds; ``warehouses`` scales the database as in the specification.
    """

    name = "tpcc"
    metrics = (
        MetricSpec("tpmC", "max", "New-Order/min"),
        MetricSpec("tps", "max", "txn/s"),
        MetricSpec("latency_avg_ms", "min", "ms"),
        MetricSpec("latency_p95_ms", "min", "ms"),
        MetricSpec("latency_p99_ms", "min", "ms"),
        MetricSpec("errors", "min", "count"),
        MetricSpec("rollbacks", "min", "count"),
    )

    def __init__(
        self,
        duration_s: float = 10.0,
        clients: int = 2,
        warehouses: int = 1,
        items: int = 20_000,
        customers: int = 1_000,
        seed: int = 0,
        python: str | None = None,
    ) -> None:
        self.duration_s = float(duration_s)
        self.clients = whole_number(clients, "clients")
        self.scale = Scale(
            whole_number(warehouses, "warehouses"),
            whole_number(items, "items"),
            whole_number(customers, "customers"),
        )
        self.seed = int(seed)
        self.python = python or sys.executable
        self.intervals = IntervalRecorder("rate", target="tpmC")

    @staticmethod
    def _target(system: System) -> dict[str, Any]:
        target = getattr(system, "dbapi_target", None)
        if target is None:
            raise ConfigError(
                f"system {system.name!r} offers no DB-API target; the tpcc "
                "workload runs on postgres, mysql or a system with dbapi_target()"
            )
        return dict(target())

    @staticmethod
    def _executor(system: System) -> Executor:
        """Where the driver runs: the system's load host (the inventory's ``load`` host, else
        its SUT host), or this machine for an embedded system."""
        for attribute in ("load", "executor"):
            executor = getattr(system, attribute, None)
            if isinstance(executor, Executor):
                return executor
        return LocalExecutor()

    def prepare(self, system: System, workdir: Path) -> None:
        target = self._target(system)
        command = driver_command(self.python, "load", target, self.scale, seed=self.seed)
        result = run_step(
            self._executor(system),
            command,
            what="the TPC-C load",
            timeout_s=1800,
            env=driver_env(target),
        )
        log.info("TPC-C loaded %s", result.stdout.strip())

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        limit = timeout_s if timeout_s is not None else self.duration_s * 3 + 60
        target = self._target(system)
        command = driver_command(
            self.python,
            "run",
            target,
            self.scale,
            clients=self.clients,
            duration_s=self.duration_s,
            seed=self.seed,
        )
        self.intervals.begin()
        result = run_step(
            self._executor(system),
            command,
            what="the TPC-C driver",
            timeout_s=limit,
            env=driver_env(target),
            output_tail=lambda out, err: tail(out + err),
            on_line=self.intervals.line_feeder(parse_interval_line),
        )
        return metrics_from_output(result.stdout)

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "clients": self.clients,
            "warehouses": self.scale.warehouses,
            "items": self.scale.items,
            "customers": self.scale.customers,
            "seed": self.seed,
        }
