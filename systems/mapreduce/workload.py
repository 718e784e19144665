"""HiBench-like MapReduce workloads: wordcount, join (join + aggregation), pagerank
(2 iterations) and kmeans (3 iterations), written in ``java/HarnessMR.java``.

``prepare`` generates the input once per session (java.util.Random with a fixed seed, so the
data are identical for a given scale); ``run`` runs the job chain in a fresh JVM with the
configuration under test. The metric is the summed duration of the job chain (minimised).
While the chain runs, its elapsed wall time is emitted once a second into the workload's
``intervals`` recorder (see :mod:`harness.intervals`): a running lower bound on
``total_wall_s``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from harness.errors import ConfigError
from harness.intervals import IntervalRecorder, elapsed_bound
from harness.system import MetricSpec, System, Workload

__all__ = ["JOB_NAMES", "MapReduceJob"]

log = logging.getLogger(__name__)

JOB_NAMES = ("wordcount", "join", "pagerank", "kmeans")


class MapReduceJob(Workload):
    """One job chain at ``scale`` (1.0 ~ 7-11 s with defaults on 2 cores)."""

    metrics = (MetricSpec("job_duration_s", "min", "s"), MetricSpec("total_wall_s", "min", "s"))

    def __init__(
        self, job: str = "wordcount", scale: float = 1.0, seed: int = 42, duration_s: float = 12.0
    ) -> None:
        if job not in JOB_NAMES:
            raise ConfigError(
                f"unknown MapReduce job {job!r}; choose one of {', '.join(JOB_NAMES)}"
            )
        self.job = job
        self.name = job
        self.scale = float(scale)
        self.seed = int(seed)
        self.duration_s = float(duration_s)
        self.data: Path | None = None
        self.intervals = IntervalRecorder("elapsed", target="total_wall_s")

    def prepare(self, system: System, workdir: Path) -> None:
        from systems.mapreduce.system import MapReduceSystem

        if not isinstance(system, MapReduceSystem):
            raise ConfigError(f"the {self.job} workload runs only on the mapreduce system")
        name = f"{self.job}-s{self.scale:g}-{self.seed}"
        self.data = system.executor.session_dir(Path(workdir)) / "mapreduce" / "data" / name
        marker = self.data / "_GENERATED"
        if system.executor.exists(marker):
            return
        system.executor.run(["rm", "-rf", str(self.data)])
        result = system.run_request("generate", self.job, self.data, 600.0, self.scale, self.seed)
        system.executor.write_text(marker, f"{result['job_s']:.1f}s\n")
        log.info("generated %s data (scale %g) in %.1fs", self.job, self.scale, result["job_s"])

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        from systems.mapreduce.system import MapReduceSystem

        assert isinstance(system, MapReduceSystem) and self.data is not None
        with elapsed_bound(self.intervals):
            result = system.run_request(
                "run",
                self.job,
                self.data,
                timeout_s,
                self.scale,
                self.seed,
                on_line=self.intervals.checkpoint,
            )
        log.info(
            "%s: %d job(s) in %.2fs (wall %.1fs)",
            self.job,
            result["jobs"],
            result["job_s"],
            result["wall_s"],
        )
        return {"job_duration_s": result["job_s"], "total_wall_s": result["wall_s"]}

    def params(self) -> dict[str, object]:
        return {**super().params(), "job": self.job, "scale": self.scale, "seed": self.seed}
