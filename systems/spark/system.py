"""Spark 4.x in local mode (pyspark) as a system under tune.

There is no server between tests: every test runs one job process (``runner.py``) that starts a
fresh JVM and SparkSession with the configuration, so every knob takes effect, and stops it. The
session's start is part of that process; if the configuration prevents it (driver memory below
Spark's minimum, off-heap enabled without a size, ...) the process dies before printing
``SPARK_STARTED`` and :meth:`SparkSystem.run_request` raises
:class:`~harness.errors.SystemStartError` with the log tail (status CRASHED). Every command goes
through an :class:`~harness.executor.Executor`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, SystemStartError, WorkloadError
from harness.executor import Executor, LocalExecutor, tail
from harness.hosts.process import run_step
from harness.space import Config, load_catalogue
from harness.system import System, Workload, native_header
from systems.spark import conf

__all__ = ["RunnerOutput", "SparkSystem", "java_error", "parse_runner"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunnerOutput:
    """What the job process printed: session start time and the result, when it got there."""

    started_s: float | None
    result: dict[str, Any] | None


def parse_runner(stdout: str) -> RunnerOutput:
    """Parse the ``SPARK_STARTED`` and ``SPARK_RESULT`` lines of the job process."""
    started: float | None = None
    result: dict[str, Any] | None = None
    for line in stdout.splitlines():
        if line.startswith("SPARK_STARTED "):
            started = float(line.split()[1])
        elif line.startswith("SPARK_RESULT "):
            result = json.loads(line[len("SPARK_RESULT ") :])
    return RunnerOutput(started, result)


_ERROR_LINE = re.compile(r"^(?::\s*)?((?:[a-z]\w*\.)+[A-Z]\w*(?:Exception|Error)\b.*)$")


def java_error(stderr: str) -> str | None:
    """The first Java exception line (``pkg.SomeException: message``) in ``stderr``, or None."""
    for line in stderr.splitlines():
        match = _ERROR_LINE.match(line.strip())
        if match:
            return match.group(1)[:300]
    return None


def _log_tail(stderr: str) -> str:
    first = java_error(stderr)
    rest = tail(stderr, 25)
    return f"{first}\n...\n{rest}" if first and first not in rest else rest


class SparkSystem(System):
    """pyspark local mode; one fresh JVM + SparkSession per test, configured from the knobs."""

    placement = "host"

    name = "spark"
    kind = "real"

    def __init__(
        self,
        knob_set: str = "10",
        python: str | None = None,
        start_timeout_s: float = 90.0,
        executor: Executor | None = None,
    ) -> None:
        super().__init__(load_catalogue(conf.CATALOGUE, str(knob_set)))
        self.knob_set = str(knob_set)
        self.catalogue = conf.full_catalogue()
        self.python = python or sys.executable
        self.start_timeout_s = start_timeout_s
        self.executor = executor or LocalExecutor()
        self.root: Path | None = None
        self.version = "unknown"
        self.master = "local[2]"
        self.properties: dict[str, str] = {}

    def _root(self) -> Path:
        if self.root is None:
            raise ConfigError("Spark is not set up: call setup(workdir, workload) first")
        return self.root

    def check_installed(self) -> None:
        """Raise ConfigError naming the fix if pyspark or Java is missing."""
        probe = self.executor.run(
            [self.python, "-c", "import pyspark; print(pyspark.__version__)"],
            check=False,
            timeout_s=60,
        )
        if not probe.ok:
            raise ConfigError(
                f"pyspark is not importable by {self.python}: install it with "
                "`pip install pyspark` (the project's 'spark' extra)"
            )
        self.version = probe.stdout.strip()
        if self.executor.which("java") is None:
            raise ConfigError(
                "java not found: Spark 4 needs Java 17+ (apt-get install default-jdk-headless)"
            )

    def preflight(self) -> None:
        if not getattr(self, "_installed", False):  # once per session: it starts a process
            self.check_installed()
            self._installed = True

    def setup(self, workdir: Path, workload: Workload) -> None:
        self.preflight()
        self.root = self.executor.session_dir(Path(workdir)) / "spark"  # remote: host workdir
        self.executor.run(
            [
                "mkdir",
                "-p",
                str(self.root / "local"),
                str(self.root / "out"),
                str(self.root / "data"),
            ]
        )
        self.apply(self.space.default())
        super().setup(workdir, workload)

    def apply(self, config: Config) -> None:
        values = self.catalogue.complete(config)
        self.master, self.properties = conf.spark_properties(values, self._root())

    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """``spark-defaults.conf``: ``key value`` of the tuned knobs, formatted as for a test
        (``local_threads`` as ``spark.master local[N]``)."""
        master, props = conf.spark_properties(self.catalogue.complete(config), Path("."))
        lines = native_header(self.space, config, note)
        if "local_threads" in config:
            lines.append(f"spark.master {master}")
        lines += [f"{name} {props[name]}" for name in config if name in props]
        return {"spark-defaults.conf": "\n".join(lines) + "\n"}

    def reset(self) -> None:
        """Empty the shuffle/spill directory and job outputs of the previous test."""
        if self.root is not None:
            self.executor.run(["sh", "-c", 'rm -rf "$0"/local/* "$0"/out/*', str(self.root)])

    def run_request(
        self,
        mode: str,
        job: str,
        data: Path,
        timeout_s: float | None,
        scale: float = 1.0,
        seed: int = 0,
        properties: dict[str, str] | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """Run the job process; return ``{"started_s", "job_s", "wall_s", "summary"}``.
        ``on_line`` hears its output lines as they come (an early stop lands at one)."""
        root = self._root()
        request: dict[str, Any] = {
            "mode": mode,
            "job": job,
            "data": str(data),
            "out": str(root / "out"),
            "scale": scale,
            "seed": seed,
            "master": self.master,
            "properties": properties if properties is not None else self.properties,
        }
        request_file = root / f"request-{mode}.json"
        self.executor.write_text(request_file, json.dumps(request, indent=1))
        props = request["properties"]
        env = {
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": self.python,
            "PYSPARK_DRIVER_PYTHON": self.python,
            "SPARK_LOCAL_DIRS": str(props.get("spark.local.dir", root / "local")),
        }
        limit = None if timeout_s is None else timeout_s + self.start_timeout_s
        result = run_step(
            self.executor,
            [self.python, "-m", "systems.spark.runner", str(request_file)],
            what=f"Spark {job} ({self.master})",
            timeout_s=limit,
            started=lambda stdout: parse_runner(stdout).started_s is not None,
            check=False,  # judged below, from the markers it printed
            output_tail=lambda _out, err: _log_tail(err),
            env=env,
            cwd=str(root),
            on_line=on_line,
        )
        parsed = parse_runner(result.stdout)
        if parsed.started_s is None:
            cause = java_error(result.stderr) or f"exit {result.exit_code}"
            raise SystemStartError(
                f"Spark would not start with this configuration: {cause}", _log_tail(result.stderr)
            )
        if parsed.result is None or not result.ok:
            cause = java_error(result.stderr) or f"exit {result.exit_code}"
            raise WorkloadError(f"Spark {job} failed: {cause}", _log_tail(result.stderr))
        return {
            "started_s": parsed.started_s,
            "job_s": float(parsed.result["job_s"]),
            "wall_s": result.duration_s,
            "summary": parsed.result.get("summary", {}),
        }

    def describe(self) -> dict[str, str]:
        return {
            **super().describe(),
            "spark_version": self.version,
            "knob_set": self.knob_set,
            "backend": "pyspark local mode (one driver JVM per test), no cluster",
        }
