"""Expert settings for Spark in local mode: hand advice and a rule-based script.

``manual`` follows the tuning advice most often given for Spark (Kryo serializer, a moderate
number of shuffle partitions instead of 200, a larger driver heap, keep AQE on). ``script``
computes values from the machine as tuning guides do: 2-3 partitions per core, one task thread
per core, driver heap a quarter of RAM (capped), broadcast threshold raised for small tables.
Both return partial configurations restricted to the knobs of ``space``, clipped into range.
"""

from __future__ import annotations

from harness.hosts.machine import Machine
from harness.space import Config, Space

__all__ = ["manual", "script"]


def manual(space: Space, machine: Machine) -> Config:
    """Hand settings from widely given Spark advice (independent of the job)."""
    return space.fit(
        {
            "spark.serializer": "kryo",
            "spark.sql.shuffle.partitions": 64,
            "spark.default.parallelism": 8,
            "spark.driver.memory": 4096,
            "spark.sql.adaptive.enabled": True,
            "spark.io.compression.codec": "lz4",
            "spark.memory.fraction": 0.6,
            "spark.shuffle.compress": True,
            "spark.kryoserializer.buffer.max": 128,
        }
    )


def script(space: Space, machine: Machine) -> Config:
    """Rules of thumb computed from the machine (cores, RAM)."""
    cores = max(1, machine.cores)
    return space.fit(
        {
            "local_threads": cores,
            "spark.default.parallelism": 3 * cores,
            "spark.sql.shuffle.partitions": 3 * cores,
            "spark.driver.memory": max(1024, min(machine.ram_mib // 4, 8192)),
            "spark.memory.fraction": 0.7,
            "spark.memory.storageFraction": 0.3,
            "spark.serializer": "kryo",
            "spark.io.compression.codec": "lz4",
            "spark.sql.autoBroadcastJoinThreshold": 64,
            "spark.locality.wait": 0.0,
            "spark.shuffle.file.buffer": 64,
            "spark.reducer.maxSizeInFlight": 96,
            "spark.sql.adaptive.enabled": True,
        }
    )
