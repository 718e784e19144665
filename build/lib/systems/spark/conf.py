"""Pure translation of a Spark configuration (knob values) into a master URL and Spark properties.

Knob values carry units in the catalogue (MiB, KiB, seconds); Spark wants size and time
strings. Fixed settings keep every test on 127.0.0.1, without the web UI or progress bars, and
with shuffle/spill files under the session workdir.

The properties reach the JVM as ``--conf key=value`` arguments of spark-submit (pyspark passes
an argument list, and Spark's launcher scripts keep each argument whole), and Spark writes them
into properties files of its own in cluster modes; so every value from a knob must be one line
of printable text (:func:`~systems.java_text.knob_text`), and mapped values come from the fixed
tables below. No value is interpreted by a shell.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.space import Space, Value, load_catalogue
from systems.java_text import knob_text, mapped

__all__ = ["CATALOGUE", "FIXED", "full_catalogue", "spark_properties"]

CATALOGUE = Path(__file__).with_name("knobs.yaml")
SERIALIZERS = {
    "java": "org.apache.spark.serializer.JavaSerializer",
    "kryo": "org.apache.spark.serializer.KryoSerializer",
}
MIB = 2**20
FIXED = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.warehouse.dir": "",  # filled in by spark_properties (under the workdir)
}
# knob -> formatter of its value as a Spark property string
_FORMAT = {
    "spark.driver.memory": lambda v: f"{int(v)}m",
    "spark.executor.memory": lambda v: f"{int(v)}m",
    "spark.serializer": lambda v: mapped(SERIALIZERS, "spark.serializer", v),
    "spark.sql.autoBroadcastJoinThreshold": lambda v: str(int(v) * MIB if int(v) > 0 else -1),
    "spark.locality.wait": lambda v: f"{round(float(v) * 1000)}ms",
    "spark.reducer.maxSizeInFlight": lambda v: f"{int(v)}m",
    "spark.shuffle.file.buffer": lambda v: f"{int(v)}k",
    "spark.io.compression.lz4.blockSize": lambda v: f"{int(v)}k",
    "spark.kryoserializer.buffer.max": lambda v: f"{int(v)}m",
    "spark.sql.files.maxPartitionBytes": lambda v: str(int(v) * MIB),
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": lambda v: str(int(v) * MIB),
    "spark.memory.offHeap.size": lambda v: f"{int(v)}m" if int(v) > 0 else "0",
}


def full_catalogue() -> Space:
    """Every knob of the Spark catalogue."""
    return load_catalogue(CATALOGUE)


def spark_properties(config: Mapping[str, Value], workdir: Path) -> tuple[str, dict[str, str]]:
    """The master URL and the Spark properties of a complete configuration."""
    master = f"local[{int(config['local_threads'])}]"  # type: ignore[call-overload]
    props = dict(FIXED)
    props["spark.sql.warehouse.dir"] = str(workdir / "warehouse")
    props["spark.local.dir"] = str(workdir / "local")
    for name, value in config.items():
        if name == "local_threads":
            continue
        props[name] = _FORMAT[name](value) if name in _FORMAT else knob_text(name, value)
    return master, props
