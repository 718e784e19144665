"""Pure translation of a MapReduce configuration into ``-D`` options and JVM flags.

Sizes in the catalogue are MiB/KiB; Hadoop wants bytes (split sizes, block size, buffers) or
MiB (sort buffer). Fixed options run the LocalJobRunner on the local file system and make the
client poll for completion every 50 ms (the default 5 s would quantise job times to 5 s steps).
Each option is one argument of the java command (no shell); values are still refused if they
hold a newline or control character (:func:`~systems.java_text.knob_text`), because Hadoop
writes them into the job's XML configuration and reads them back line-oriented in places.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from xml.sax.saxutils import escape

from harness.space import Space, Value, load_catalogue
from systems.java_text import knob_text, mapped

__all__ = ["CATALOGUE", "FIXED", "full_catalogue", "hadoop_options", "java_opts", "site_xml"]

CATALOGUE = Path(__file__).with_name("knobs.yaml")
MIB, KIB = 2**20, 2**10
CODECS = {
    "deflate": "org.apache.hadoop.io.compress.DefaultCodec",
    "lz4": "org.apache.hadoop.io.compress.Lz4Codec",
    "snappy": "org.apache.hadoop.io.compress.SnappyCodec",
    "bzip2": "org.apache.hadoop.io.compress.BZip2Codec",
}
GC_FLAGS = {"G1": "-XX:+UseG1GC", "Parallel": "-XX:+UseParallelGC", "Serial": "-XX:+UseSerialGC"}
FIXED = {
    "mapreduce.framework.name": "local",
    "fs.defaultFS": "file:///",
    "mapreduce.client.completion.pollinterval": "50",
    "mapreduce.client.progressmonitor.pollinterval": "200",
}
_BYTES_MIB = (
    "mapreduce.input.fileinputformat.split.maxsize",
    "mapreduce.input.fileinputformat.split.minsize",
    "fs.local.block.size",
)
_BYTES_KIB = ("io.file.buffer.size", "mapreduce.ifile.readahead.bytes")


def full_catalogue() -> Space:
    """Every knob of the MapReduce catalogue."""
    return load_catalogue(CATALOGUE)


def hadoop_options(config: Mapping[str, Value], workdir: Path) -> dict[str, str]:
    """Hadoop properties (for ``-D``) of a complete configuration; jvm.* knobs excluded."""
    options = dict(FIXED)
    options["hadoop.tmp.dir"] = str(workdir / "tmp")
    options["mapreduce.cluster.local.dir"] = str(workdir / "tmp" / "local")
    for name, value in config.items():
        if name.startswith("jvm."):
            continue
        if name in _BYTES_MIB:
            options[name] = str(int(value) * MIB)
        elif name in _BYTES_KIB:
            options[name] = str(int(value) * KIB)
        elif name.endswith(".codec"):
            options[name] = mapped(CODECS, name, value)
        else:
            options[name] = knob_text(name, value)
    return options


def java_opts(config: Mapping[str, Value]) -> list[str]:
    """JVM flags of a complete configuration."""
    opts = [
        f"-Xmx{int(config['jvm.heap_mb'])}m",  # type: ignore[call-overload]
        mapped(GC_FLAGS, "jvm.gc", config["jvm.gc"]),
    ]
    if config["jvm.gc"] != "Serial":
        opts.append(f"-XX:ParallelGCThreads={int(config['jvm.parallel_gc_threads'])}")  # type: ignore[call-overload]
    opts.append(
        "-XX:+TieredCompilation" if config["jvm.tiered_compilation"] else "-XX:-TieredCompilation"
    )
    return opts


def site_xml(properties: Mapping[str, str], header: list[str]) -> str:
    """A Hadoop ``<configuration>`` file of ``properties`` (values already one line, see
    :func:`~systems.java_text.knob_text`), names and values XML-escaped."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', *header, "<configuration>"]
    lines += [
        f"  <property><name>{escape(name)}</name><value>{escape(value)}</value></property>"
        for name, value in properties.items()
    ]
    return "\n".join([*lines, "</configuration>"]) + "\n"
