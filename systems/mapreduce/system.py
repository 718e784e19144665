"""Hadoop MapReduce run by the LocalJobRunner, as a system under tune.

Honest naming: this is the *local* side of the paper's Hive-Hadoop system. The hadoop-client
3.5 jars inside pyspark contain the LocalJobRunner, which runs real MapReduce jobs (map, sort,
spill, merge, shuffle, reduce, commit) as threads of one JVM over the local file system. There
is no HDFS, no YARN and no Hive here (those daemons' classes are not in any available jar).

Our jobs (``java/HarnessMR.java``) are compiled with javac once per session. Each test runs one
JVM with the configuration as ``-D`` options and JVM flags; it prints ``MR_STARTED`` once the JVM
and Hadoop configuration are up. A process that dies before that could not start (CRASHED, with
the log tail); a job that fails afterwards is FAILED. All commands go through an Executor.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
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
from systems.java_text import jvm_options
from systems.mapreduce import render

__all__ = ["MROutput", "MapReduceSystem", "first_error", "parse_mr"]

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("java") / "HarnessMR.java"
MAIN_CLASS = "harness.HarnessMR"
_ERROR = re.compile(
    r"((?:[a-z]\w*\.)+[A-Z]\w*(?:Exception|Error)\b.*|Error: .*|"
    r"Unrecognized VM option.*|Invalid maximum heap size.*)$"
)


@dataclass(frozen=True)
class MROutput:
    """What the job JVM printed: whether it started, and its result line."""

    started: bool
    result: dict[str, Any] | None


def parse_mr(stdout: str) -> MROutput:
    """Parse the ``MR_STARTED`` and ``MR_RESULT {json}`` lines."""
    started, result = False, None
    for line in stdout.splitlines():
        if line.strip() == "MR_STARTED":
            started = True
        elif line.startswith("MR_RESULT "):
            result = json.loads(line[len("MR_RESULT ") :])
    return MROutput(started, result)


def first_error(stderr: str) -> str | None:
    """The first exception or JVM error line in ``stderr``, or None."""
    for line in stderr.splitlines():
        match = _ERROR.search(line.strip())
        if match:
            return match.group(1)[:300]
    return None


class MapReduceSystem(System):
    """Hadoop MapReduce 3.5 LocalJobRunner; one JVM per test, knobs as -D and JVM flags."""

    placement = "host"

    name = "mapreduce"
    kind = "real"

    def __init__(
        self,
        knob_set: str = "10",
        hadoop_jars: str | None = None,
        python: str | None = None,
        extra_java_opts: str = "",
        executor: Executor | None = None,
    ) -> None:
        super().__init__(load_catalogue(render.CATALOGUE, str(knob_set)))
        self.knob_set = str(knob_set)
        self.catalogue = render.full_catalogue()
        self.hadoop_jars = hadoop_jars
        self.python = python or sys.executable
        # Checked here, so a bad option is a one-line ConfigError before any test runs.
        self.extra_java_opts = jvm_options(extra_java_opts, "system.adapter.extra_java_opts")
        self.executor = executor or LocalExecutor()
        self.root: Path | None = None
        self.options: dict[str, str] = {}
        self.jvm: list[str] = []

    def _root(self) -> Path:
        if self.root is None:
            raise ConfigError("MapReduce is not set up: call setup(workdir, workload) first")
        return self.root

    def _find_jars(self) -> str:
        if self.hadoop_jars:
            return self.hadoop_jars
        probe = self.executor.run(
            [
                self.python,
                "-c",
                "import os, pyspark; print(os.path.join("
                "os.path.dirname(pyspark.__file__), 'jars'))",
            ],
            check=False,
            timeout_s=60,
        )
        if not probe.ok:
            raise ConfigError(
                "the Hadoop jars come from pyspark, which is not importable by "
                f"{self.python}: `pip install pyspark` or set "
                "system.adapter.hadoop_jars to a folder with hadoop-client-*.jar"
            )
        return probe.stdout.strip()

    def preflight(self) -> None:
        for program in ("java", "javac"):
            if self.executor.which(program) is None:
                raise ConfigError(
                    f"{program} not found: install a JDK 17 (apt-get install default-jdk-headless)"
                )

    def setup(self, workdir: Path, workload: Workload) -> None:
        self.preflight()
        jars = self._find_jars()
        listing = self.executor.run(["ls", jars], check=False).stdout.split()
        api = sorted(n for n in listing if n.startswith("hadoop-client-api-"))
        runtime = sorted(n for n in listing if n.startswith("hadoop-client-runtime-"))
        if not api or not runtime:
            raise ConfigError(f"no hadoop-client-api/runtime jars in {jars}")
        self.hadoop_jars = jars
        self.version = api[-1].removeprefix("hadoop-client-api-").removesuffix(".jar")
        self.root = self.executor.session_dir(Path(workdir)) / "mapreduce"  # remote: host workdir
        classes = self.root / "classes"
        self.executor.run(
            ["mkdir", "-p", str(classes), str(self.root / "data"), str(self.root / "tmp")]
        )
        self.executor.write_text(self.root / "HarnessMR.java", SOURCE.read_text())
        compiled = self.executor.run(
            [
                "javac",
                "-nowarn",
                "-encoding",
                "UTF-8",
                "-d",
                str(classes),
                "-cp",
                f"{jars}/{api[-1]}:{jars}/{runtime[-1]}",
                str(self.root / "HarnessMR.java"),
            ],
            check=False,
            timeout_s=180,
        )
        if not compiled.ok:
            raise ConfigError(f"cannot compile the MapReduce jobs: {compiled.describe()}")
        log.info(
            "compiled MapReduce jobs against Hadoop %s in %.1fs", self.version, compiled.duration_s
        )
        self.apply(self.space.default())
        super().setup(workdir, workload)

    def apply(self, config: Config) -> None:
        values = self.catalogue.complete(config)
        self.options = render.hadoop_options(values, self._root())
        self.jvm = render.java_opts(values) + self.extra_java_opts

    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """``mapred-site.xml`` (the tuned properties; every Hadoop job reads it) and
        ``hadoop-env.sh`` (the JVM flags as HADOOP_CLIENT_OPTS), rendered as for a test."""
        values = self.catalogue.complete(config)
        options = render.hadoop_options(values, Path("."))
        tuned = {name: options[name] for name in config if name in options}
        xml = native_header(self.space, config, note, start="<!-- ", end=" -->")
        opts = shlex.quote(" ".join(render.java_opts(values)))
        env = [*native_header(self.space, config, note), f"export HADOOP_CLIENT_OPTS={opts}"]
        return {
            "mapred-site.xml": render.site_xml(tuned, xml),
            "hadoop-env.sh": "\n".join(env) + "\n",
        }

    def reset(self) -> None:
        """Remove the previous test's output and Hadoop scratch space."""
        if self.root is not None:
            self.executor.run(["rm", "-rf", str(self.root / "out"), str(self.root / "tmp")])

    def run_request(
        self,
        mode: str,
        job: str,
        data: Path,
        timeout_s: float | None,
        scale: float = 1.0,
        seed: int = 0,
        on_line: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """Run one JVM; return ``{"job_s", "jobs", "wall_s"}`` or raise by status.
        ``on_line`` hears its output lines as they come (an early stop lands at one)."""
        root = self._root()
        defines = [arg for key, value in self.options.items() for arg in ("-D", f"{key}={value}")]
        command = [
            "java",
            *self.jvm,
            "-cp",
            f"{root / 'classes'}:{self.hadoop_jars}/*",
            MAIN_CLASS,
            *defines,
            mode,
            job,
            str(data),
            str(root / "out"),
            f"{scale:g}",
            str(seed),
        ]
        result = run_step(
            self.executor,
            command,
            what=f"MapReduce {job} JVM",
            timeout_s=timeout_s,
            started=lambda stdout: parse_mr(stdout).started,
            check=False,  # judged below, from the markers it printed
            output_tail=lambda _out, err: tail(err, 30),
            cwd=str(root),
            on_line=on_line,
        )
        parsed = parse_mr(result.stdout)
        cause = first_error(result.stderr) or f"exit {result.exit_code}"
        if not parsed.started:
            raise SystemStartError(
                f"MapReduce JVM would not start: {cause}", tail(result.stderr, 30)
            )
        if parsed.result is None or not result.ok:
            raise WorkloadError(f"MapReduce {job} failed: {cause}", tail(result.stderr, 30))
        return {
            "job_s": float(parsed.result["job_s"]),
            "jobs": int(parsed.result["jobs"]),
            "wall_s": result.duration_s,
        }

    def describe(self) -> dict[str, str]:
        return {
            **super().describe(),
            "hadoop_version": getattr(self, "version", "unknown"),
            "knob_set": self.knob_set,
            "backend": "Hadoop MapReduce LocalJobRunner (one JVM, local FS; no HDFS/YARN/Hive)",
        }
