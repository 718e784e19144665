"""PageRank and KMeans as MapReduce jobs on YARN: the paper's non-SQL Hive-Hadoop workloads.

HiBench runs them with Pegasus and Mahout, which Central does not serve for Hadoop 3, so the
jobs are ours (``systems/hadoop/java/jobs``: one MapReduce job per iteration, as Pegasus and
Mahout do), installed by ``scripts/setup.sh --full`` into ``.installs/hadoop-jobs`` and started
with ``hadoop jar``. Input is generated once per session (``datagen.py``: a Zipf-linked web
graph; a Gaussian mixture of points) and put into HDFS; each test runs every iteration and
reports the iterations' summed job time, then checks that no daemon died meanwhile.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, WorkloadError
from harness.executor import tail
from harness.hosts.machine import install_dir
from harness.system import MetricSpec, System, whole_number
from systems.hadoop import datagen
from systems.hadoop.jobs import HadoopJob
from systems.hadoop.render import check_path
from systems.hadoop.system import HadoopSystem

__all__ = ["KMeansWorkload", "PageRankWorkload"]

log = logging.getLogger(__name__)

JAR = "lib/harness-jobs-own.jar"
_ITERATION = re.compile(r"^(PAGERANK|KMEANS) iteration (\d+) (\d+(?:\.\d+)?)", re.MULTILINE)


def _hadoop(system: System) -> HadoopSystem:
    if not isinstance(system, HadoopSystem):
        raise ConfigError(f"MapReduce jobs need system=hive or system=hdfs, not {system.name!r}")
    return system


def iteration_seconds(output: str) -> list[float]:
    """The per-iteration job times our jobs print (``PAGERANK iteration <i> <seconds>``)."""
    return [float(m.group(3)) for m in _ITERATION.finditer(output)]


class IterativeJob(HadoopJob):
    """One of our iterative jobs (a class of ``harness-jobs-own.jar``) over generated input."""

    metrics = (
        MetricSpec("duration_s", "min", "s"),
        MetricSpec("iteration_s", "min", "s"),
        MetricSpec("client_s", "min", "s"),
    )
    job_class = ""
    base = ""
    elapsed_target = "client_s"

    def __init__(self, iterations: int, duration_s: float, jobs_home: str | None) -> None:
        self.iterations = whole_number(iterations, "iterations", 1, 100)
        self.duration_s = float(duration_s)
        self.jobs_home = check_path(jobs_home or install_dir("hadoop-jobs"), "workload.jobs_home")

    def params(self) -> dict[str, Any]:
        return {**super().params(), "iterations": self.iterations, "job": self.job_class}

    def _arguments(self) -> list[str]:
        raise NotImplementedError

    def _input(self) -> str:
        raise NotImplementedError

    def prepare(self, system: System, workdir: Path) -> None:
        hadoop = _hadoop(system)
        jar = f"{self.jobs_home}/{JAR}"
        if not hadoop.load.exists(jar):
            raise ConfigError(
                f"{jar} not found on {hadoop.load.host}: set workload.jobs_home to the "
                "install of systems/hadoop/java/jobs (`bash scripts/setup.sh --full` builds "
                "it into .installs/hadoop-jobs)"
            )
        name = self.job_class.rsplit(".", 1)[-1].lower()
        self._upload(hadoop, self._input(), f"{name}.txt", f"{self.base}/in")

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        hadoop = _hadoop(system)
        command = [
            f"{hadoop.hadoop_home}/bin/hadoop",
            "jar",
            f"{self.jobs_home}/{JAR}",
            self.job_class,
            f"{self.base}/in",
            f"{self.base}/work",
            *self._arguments(),
        ]
        what = self.job_class.rsplit(".", 1)[-1]
        output, seconds = self._job(hadoop, [], what, timeout_s, command=command)
        times = iteration_seconds(output)
        if not times:
            raise WorkloadError(f"{what} reported no finished iteration", tail(output, 30))
        hadoop.check_daemons()
        return {
            "duration_s": sum(times),
            "iteration_s": sum(times) / len(times),
            "client_s": seconds,  # with the client's start and the input listing
        }


class PageRankWorkload(IterativeJob):
    """PageRank of a generated web graph of ``nodes`` pages, ``iterations`` power iterations
    (one MapReduce job each; HiBench's default is 3)."""

    job_class = "org.classytune.jobs.PageRank"
    base = "/harness/pagerank"

    def __init__(
        self,
        nodes: int = 50_000,
        iterations: int = 3,
        seed: int = 0,
        duration_s: float = 180.0,
        jobs_home: str | None = None,
    ) -> None:
        super().__init__(iterations, duration_s, jobs_home)
        self.nodes = whole_number(nodes, "nodes", 10, 10**9)
        self.seed = whole_number(seed, "seed", 0, 2**31 - 1)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "nodes": self.nodes, "seed": self.seed}

    def _input(self) -> str:
        log.info("PageRank: generating a web graph of %d pages", self.nodes)
        return datagen.graph(self.nodes, self.seed)

    def _arguments(self) -> list[str]:
        return [str(self.nodes), str(self.iterations)]


class KMeansWorkload(IterativeJob):
    """Lloyd's k-means of ``samples`` generated points in ``dimensions`` dimensions around
    ``clusters`` centres: at most ``iterations`` MapReduce jobs, fewer once no centre moves more
    than ``convergence_delta`` (HiBench: 5 iterations, delta 0.5)."""

    job_class = "org.classytune.jobs.KMeans"
    base = "/harness/kmeans"

    def __init__(
        self,
        samples: int = 100_000,
        dimensions: int = 20,
        clusters: int = 5,
        iterations: int = 5,
        convergence_delta: float = 0.5,
        seed: int = 0,
        duration_s: float = 180.0,
        jobs_home: str | None = None,
    ) -> None:
        super().__init__(iterations, duration_s, jobs_home)
        self.samples = whole_number(samples, "samples", 10, 10**9)
        self.dimensions = whole_number(dimensions, "dimensions", 1, 1000)
        self.clusters = whole_number(clusters, "clusters", 1, 1000)
        if self.clusters > self.samples:
            raise ConfigError(f"workload.clusters {clusters}: at most workload.samples")
        if isinstance(convergence_delta, bool) or not (
            isinstance(convergence_delta, int | float) and convergence_delta >= 0
        ):
            raise ConfigError(
                f"workload.convergence_delta {convergence_delta!r}: use a number >= 0"
            )
        self.convergence_delta = float(convergence_delta)
        self.seed = whole_number(seed, "seed", 0, 2**31 - 1)

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "samples": self.samples,
            "dimensions": self.dimensions,
            "clusters": self.clusters,
            "convergence_delta": self.convergence_delta,
            "seed": self.seed,
        }

    def _input(self) -> str:
        log.info("KMeans: generating %d points in %d dimensions", self.samples, self.dimensions)
        return datagen.points(self.samples, self.dimensions, self.clusters, self.seed)

    def _arguments(self) -> list[str]:
        return [str(self.clusters), str(self.iterations), repr(self.convergence_delta)]
