"""HiBench-like Spark workloads: pagerank, terasort, kmeans, wordcount, join.

``prepare`` generates the job's input once per session (deterministic for a given scale and
seed, with Spark's default configuration); ``run`` runs the job in a fresh JVM with the
configuration under test. The metric is the job's duration (minimised); the JVM + session start
time and the whole process wall time are reported too. While the job process runs, its
elapsed wall time is emitted once a second into the workload's ``intervals`` recorder (see
:mod:`harness.intervals`): a running lower bound on ``total_wall_s``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from harness.errors import ConfigError
from harness.intervals import IntervalRecorder, elapsed_bound
from harness.system import MetricSpec, System, Workload
from systems.spark import conf, jobs_index

__all__ = ["SparkJob"]

log = logging.getLogger(__name__)


class SparkJob(Workload):
    """One HiBench-like job at ``scale`` (1.0 ~ 10-20 s with defaults on 2 cores)."""

    metrics = (
        MetricSpec("job_duration_s", "min", "s"),
        MetricSpec("total_wall_s", "min", "s"),
        MetricSpec("startup_s", "min", "s"),
    )

    def __init__(
        self,
        job: str = "pagerank",
        scale: float = 1.0,
        seed: int = 42,
        duration_s: float = 20.0,
        generate_timeout_s: float = 600.0,
    ) -> None:
        if job not in jobs_index.JOB_NAMES:
            raise ConfigError(
                f"unknown Spark job {job!r}; choose one of {', '.join(jobs_index.JOB_NAMES)}"
            )
        self.job = job
        self.name = job
        self.scale = float(scale)
        self.seed = int(seed)
        self.duration_s = float(duration_s)  # nominal, for progress estimates
        self.generate_timeout_s = generate_timeout_s
        self.data: Path | None = None
        self.intervals = IntervalRecorder("elapsed", target="total_wall_s")

    def prepare(self, system: System, workdir: Path) -> None:
        from systems.spark.system import SparkSystem

        if not isinstance(system, SparkSystem):
            raise ConfigError(f"the {self.job} workload runs only on the spark system")
        root = system.executor.session_dir(Path(workdir)) / "spark"
        self.data = root / "data" / f"{self.job}-s{self.scale:g}-{self.seed}"
        marker = self.data / "_GENERATED"
        if system.executor.exists(marker):
            return
        system.executor.run(["rm", "-rf", str(self.data)])
        system.executor.run(["mkdir", "-p", str(self.data)])
        # Generated with the default configuration and a larger heap, whatever is under test.
        _master, props = conf.spark_properties(
            conf.full_catalogue().complete({"spark.driver.memory": 2048}), root
        )
        result = system.run_request(
            "generate",
            self.job,
            self.data,
            self.generate_timeout_s,
            scale=self.scale,
            seed=self.seed,
            properties=props,
        )
        system.executor.write_text(marker, f"{result['job_s']:.1f}s\n")
        log.info("generated %s data (scale %g) in %.1fs", self.job, self.scale, result["job_s"])

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        from systems.spark.system import SparkSystem

        assert isinstance(system, SparkSystem) and self.data is not None
        with elapsed_bound(self.intervals):
            result = system.run_request(
                "run", self.job, self.data, timeout_s, on_line=self.intervals.checkpoint
            )
        log.info(
            "%s: job %.2fs (start %.1fs, wall %.1fs) %s",
            self.job,
            result["job_s"],
            result["started_s"],
            result["wall_s"],
            result["summary"],
        )
        return {
            "job_duration_s": result["job_s"],
            "total_wall_s": result["wall_s"],
            "startup_s": result["started_s"],
        }

    def params(self) -> dict[str, object]:
        return {**super().params(), "job": self.job, "scale": self.scale, "seed": self.seed}
