"""Expert settings for Spark in local mode: hand advice and a rule-based script.

``manual`` follows the tuning advice most often given for Spark (Kryo serializer, a moderate
number of shuffle partitions instead of 200, a larger driver heap, keep AQE on). ``script``
computes values from the machine as tuning guides do: 2-3 partitions per core, one task thread
per core, driver heap a quarter of RAM (capped), broadcast threshold raised for small tables.
Both return partial configurations restricted to the knobs of ``space``, clipped into range.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.machine import Machine
from harness.space import Config, Space, Value

__all__ = ["manual", "script"]


def _fit(space: Space, settings: Mapping[str, Value]) -> Config:
    """The settings whose knobs are in ``space``, numbers clipped into the knob's range."""
    fitted: Config = {}
    for name, value in settings.items():
        if name not in space:
            continue
        knob = space[name]
        if knob.type in ("int", "float") and not isinstance(value, bool):
            number = min(max(float(value), float(knob.low)), float(knob.high))  # type: ignore[arg-type]
            value = round(number) if knob.type == "int" else number
        fitted[name] = knob.check(value)
    return fitted


def manual(space: Space, machine: Machine) -> Config:
    """Hand settings from widely given Spark advice (independent of the job)."""
    return _fit(space, {
        "spark.serializer": "kryo", "spark.sql.shuffle.partitions": 64,
        "spark.default.parallelism": 8, "spark.driver.memory": 4096,
        "spark.sql.adaptive.enabled": True, "spark.io.compression.codec": "lz4",
        "spark.memory.fraction": 0.6, "spark.shuffle.compress": True,
        "spark.kryoserializer.buffer.max": 128,
    })


def script(space: Space, machine: Machine) -> Config:
    """Rules of thumb computed from the machine (cores, RAM)."""
    cores = max(1, machine.cores)
    return _fit(space, {
        "local_threads": cores,
        "spark.default.parallelism": 3 * cores,
        "spark.sql.shuffle.partitions": 3 * cores,
        "spark.driver.memory": max(1024, min(machine.ram_mib // 4, 8192)),
        "spark.memory.fraction": 0.7, "spark.memory.storageFraction": 0.3,
        "spark.serializer": "kryo", "spark.io.compression.codec": "lz4",
        "spark.sql.autoBroadcastJoinThreshold": 64, "spark.locality.wait": 0.0,
        "spark.shuffle.file.buffer": 64, "spark.reducer.maxSizeInFlight": 96,
        "spark.sql.adaptive.enabled": True,
    })
