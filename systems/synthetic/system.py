"""The synthetic system adapter: the response surface of :mod:`systems.synthetic.function`
behind the same System/Workload contract as a real server, including a crash region, optional
measurement noise and an optional per-test delay (to exercise interruption and progress)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from harness.errors import SystemStartError
from harness.space import Config, load_catalogue
from harness.system import MetricSpec, System, Workload
from systems.synthetic import function

__all__ = ["CATALOGUE", "SyntheticSystem", "SyntheticWorkload"]

CATALOGUE = Path(__file__).with_name("knobs.yaml")
PEAK_THROUGHPUT = 10_000.0


class SyntheticSystem(System):
    """A simulated server with 10 or 30 knobs whose throughput is a known function."""

    kind = "synthetic"

    def __init__(
        self, knob_set: str = "10", noise: float = 0.0, delay_s: float = 0.0, noise_seed: int = 0
    ) -> None:
        super().__init__(load_catalogue(CATALOGUE, str(knob_set)))
        self.name = f"synthetic{self.space.dim}"
        self.noise = float(noise)
        self.delay_s = float(delay_s)
        self._rng = np.random.default_rng(noise_seed)
        self._point: np.ndarray | None = None
        self.running = False

    def apply(self, config: Config) -> None:
        self._point = self.space.encode(self.space.validate(config))

    def start(self, timeout_s: float) -> None:
        if self._point is None:
            raise SystemStartError("no configuration applied before start")
        if function.crashes(self._point)[0]:
            raise SystemStartError(
                "synthetic server refused to start: buffer_pool_mb exceeds available memory",
                log_tail="FATAL: cannot allocate buffer pool",
            )
        self.running = True

    def stop(self) -> None:
        self.running = False

    def measure(self) -> dict[str, float]:
        """Throughput and p99 latency of the applied configuration (with optional noise)."""
        assert self._point is not None and self.running
        relative = float(function.response(self._point)[0])
        if self.noise > 0:
            relative *= float(np.exp(self._rng.normal(0.0, self.noise)))
        # Latency rises with worker threads and falls with throughput: a realistic conflict
        # for constrained objectives (more workers can add throughput but hurt p99).
        workers = self._point[6]
        p99 = 2.0 + 60.0 * workers**2 + 4000.0 / (relative * PEAK_THROUGHPUT / 10.0)
        return {"throughput": relative * PEAK_THROUGHPUT, "latency_p99_ms": float(p99)}

    def noise_free_metrics(self, config: Config) -> dict[str, float]:
        """The throughput of ``config`` without measurement noise (to score noisy sessions)."""
        point = self.space.encode(self.space.validate(config))
        return {"throughput": float(function.response(point)[0]) * PEAK_THROUGHPUT}

    def known_optimum(self) -> tuple[Config, float]:
        """The analytic argmax snapped to representable values, and its noise-free throughput."""
        point = self.space.snap(function.optimum_point(self.space.dim)[None])[0]
        return self.space.decode(point), float(function.response(point)[0]) * PEAK_THROUGHPUT

    def describe(self) -> dict[str, str]:
        return {**super().describe(), "noise": str(self.noise)}


class SyntheticWorkload(Workload):
    """Reads a synthetic system's metrics (a fixed one or a family instance: any system of
    kind ``synthetic`` with ``measure()``); ``delay_s`` of the system simulates run time."""

    name = "synthetic"
    metrics = (MetricSpec("throughput", "max", "ops/s"), MetricSpec("latency_p99_ms", "min", "ms"))

    def prepare(self, system: System, workdir: Path) -> None:
        if system.kind != "synthetic" or not callable(getattr(system, "measure", None)):
            raise TypeError("the synthetic workload runs only on a synthetic system")

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        delay = float(getattr(system, "delay_s", 0.0))
        if delay:
            time.sleep(delay)
        return system.measure()  # type: ignore[attr-defined, no-any-return]
