"""Pure rendering of a Cassandra 5.0 configuration: cassandra.yaml and the JVM options files.

cassandra.yaml is built as a tree, not as text: the base template is loaded with PyYAML, the
per-node keys (addresses, seeds, ports, directories), the user's fixed overrides and every knob's
key are *set* in the tree (a key can never appear twice, and the old-style alias of a knob's key
is removed, since Cassandra refuses a setting given under both names), and the tree is dumped
and loaded back to check it survives the round trip. Knob values get the unit suffixes of 4.1
and later (``2000ms``, ``32MiB``). The commitlog period and group window are written only in the
sync mode that reads them: Cassandra refuses ``commitlog_sync_period`` in batch or group mode.

The JVM options files are the install's own (``conf/jvm-server.options`` for the heap,
``conf/jvm17-server.options``/``jvm11-server.options`` for the collector): lines the harness
manages are commented out and the harness's flags are appended after a marker line, so rendering
is idempotent and every other option Cassandra ships (JPMS exports, etc.) is kept.

No value is pasted into YAML text: PyYAML's dumper quotes and escapes every string (``: ``,
``{``, ``#``, quotes, newlines), and the round-trip check proves it. Knob values must still be
one line of printable text, and the JVM options files only ever get numbers and fixed flags
(one option per line, which is how Cassandra reads them).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.errors import ConfigError
from harness.space import Space, Value, load_catalogue
from systems.java_text import knob_text

__all__ = [
    "CATALOGUE",
    "GC_FLAGS",
    "JVM_MARKER",
    "TEMPLATE",
    "NodeLayout",
    "YamlTarget",
    "full_catalogue",
    "gc_flags",
    "heap_flags",
    "native_files",
    "plain",
    "render_cassandra_yaml",
    "render_jvm_gc_options",
    "render_jvm_server_options",
    "render_tree",
    "yaml_targets",
    "yaml_value",
]

HERE = Path(__file__).parent
CATALOGUE = HERE / "knobs.yaml"
TEMPLATE = HERE / "cassandra-5.0.base.yaml"

#: Keys the renderer sets per node; fixed overrides may not touch them.
NODE_KEYS = (
    "cluster_name",
    "listen_address",
    "rpc_address",
    "seed_provider",
    "data_file_directories",
    "commitlog_directory",
    "saved_caches_directory",
    "hints_directory",
    "native_transport_port",
    "storage_port",
)
#: Set one of address/interface, never both (Cassandra refuses both).
INTERFACE_KEYS = ("listen_interface", "rpc_interface")
SYNC_KEYS = {
    "periodic": "commitlog_sync_period_in_ms",
    "group": "commitlog_sync_group_window_in_ms",
}
#: Settings Cassandra accepts only in periodic mode.
PERIODIC_ONLY = (
    "periodic_commitlog_sync_lag_block",
    "periodic_commitlog_sync_lag_block_in_ms",
    "commitlog_sync_batch_window_in_ms",
)

JVM_MARKER = "### Managed by the ClassyTune harness (systems/cassandra/render.py):"
OFF = "#harness-off# "
HEAP_LINE = re.compile(r"^-Xm[sxn]")
GC_LINE = re.compile(
    r"^-XX:(?:[+-]Use\w*GC\b|[+-]?CMS\w*|[+-]UseCMS\w*|G1\w*|MaxGCPauseMillis"
    r"|InitiatingHeapOccupancyPercent|SurvivorRatio|MaxTenuringThreshold"
    r"|[+-]ParallelRefProcEnabled)"
)
# The collectors of Cassandra 5.0 on Java 17, each with the flags 5.0 ships for it (CMS is gone
# from Java 17; G1 is 5.0's default, ZGC its low-pause alternative).
GC_FLAGS: dict[str, tuple[str, ...]] = {
    "G1": (
        "-XX:+UseG1GC",
        "-XX:+ParallelRefProcEnabled",
        "-XX:MaxTenuringThreshold=2",
        "-XX:G1HeapRegionSize=16m",
        "-XX:MaxGCPauseMillis=300",
        "-XX:InitiatingHeapOccupancyPercent=70",
    ),
    "ZGC": ("-XX:+UseZGC",),
}


@dataclass(frozen=True)
class YamlTarget:
    """Where a knob goes in cassandra.yaml: the 5.0 key, the value's unit suffix, a factor from
    the knob's unit to the suffix's, and old names of the key to remove."""

    key: str
    unit: str = ""
    factor: float = 1.0
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeLayout:
    """The per-node part of cassandra.yaml (knob values are the same on every node)."""

    cluster_name: str
    listen_address: str
    seeds: tuple[str, ...]
    data_dir: str
    commitlog_dir: str
    saved_caches_dir: str
    hints_dir: str
    native_transport_port: int = 9042
    storage_port: int = 7000


@functools.cache
def _catalogue_data() -> dict[str, Any]:
    data = yaml.safe_load(CATALOGUE.read_text())
    assert isinstance(data, dict)
    return data


def full_catalogue() -> Space:
    """Every knob of the catalogue (rendering needs defaults for knobs outside the set)."""
    return load_catalogue(CATALOGUE)


def yaml_targets() -> dict[str, YamlTarget]:
    """knob name -> its cassandra.yaml target (JVM knobs have none)."""
    targets = {}
    for name, entry in _catalogue_data()["cassandra_yaml"].items():
        targets[name] = YamlTarget(
            key=entry["key"],
            unit=entry.get("unit", ""),
            factor=float(entry.get("factor", 1.0)),
            aliases=tuple(entry.get("aliases", ())),
        )
    return targets


def yaml_value(value: Value, target: YamlTarget) -> Any:
    """A knob value as cassandra.yaml (4.1 and later) wants it: unit-suffixed where the key
    has a unit."""
    if isinstance(value, str):
        return knob_text(target.key, value)
    if isinstance(value, bool):
        return value
    if target.unit:
        return f"{round(float(value) * target.factor)}{target.unit}"
    return value


def _set(tree: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` in nested mappings, creating the intermediate ones."""
    *parents, leaf = dotted.split(".")
    node = tree
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[leaf] = value


def _set_seeds(tree: dict[str, Any], seeds: Sequence[str]) -> None:
    """The SimpleSeedProvider's comma-separated seed list (a list of maps in the YAML)."""
    tree["seed_provider"] = [
        {
            "class_name": "org.apache.cassandra.locator.SimpleSeedProvider",
            "parameters": [{"seeds": ",".join(seeds)}],
        }
    ]


def _knob_entries(config: Mapping[str, Value]) -> tuple[dict[str, Any], set[str]]:
    """(key -> value to set, keys to remove) for a complete configuration."""
    targets = yaml_targets()
    mode = str(config["commitlog_sync"])
    if mode not in ("periodic", "batch", "group"):
        raise ConfigError(f"commitlog_sync {mode!r}: use periodic, batch or group")
    entries: dict[str, Any] = {}
    remove: set[str] = set()
    for name, value in config.items():
        target = targets.get(name)
        if target is None:
            continue  # JVM knobs
        remove |= {name, *target.aliases} - {target.key}
        if name in SYNC_KEYS.values() and SYNC_KEYS.get(mode) != name:
            remove.add(target.key)  # only the active sync mode's key may be present
            continue
        entries[target.key] = yaml_value(value, target)
    if mode != "periodic":
        remove |= set(PERIODIC_ONLY)
    return entries, remove - set(entries)


def render_tree(
    base: Mapping[str, Any],
    config: Mapping[str, Value],
    node: NodeLayout,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The cassandra.yaml tree for one node: base, then fixed overrides, node keys, knobs."""
    tree: dict[str, Any] = yaml.safe_load(yaml.safe_dump(dict(base)))  # a deep copy
    entries, remove = _knob_entries(config)
    for dotted, value in (overrides or {}).items():
        top = dotted.split(".")[0]
        if top in NODE_KEYS or top in entries or top in remove:
            raise ConfigError(
                f"system.adapter.yaml_overrides: {dotted!r} is set by the harness "
                "(per node or by a knob); pin a knob with +system.fixed.<knob>=..."
            )
        _set(tree, dotted, value)
    for key in (*remove, *INTERFACE_KEYS):
        tree.pop(key, None)
    tree["cluster_name"] = node.cluster_name
    tree["listen_address"] = node.listen_address
    tree["rpc_address"] = node.listen_address
    _set_seeds(tree, node.seeds)
    tree["data_file_directories"] = [node.data_dir]
    tree["commitlog_directory"] = node.commitlog_dir
    tree["saved_caches_directory"] = node.saved_caches_dir
    tree["hints_directory"] = node.hints_dir
    tree["native_transport_port"] = int(node.native_transport_port)
    tree["storage_port"] = int(node.storage_port)
    tree.update(entries)
    return tree


def render_cassandra_yaml(
    base_text: str,
    config: Mapping[str, Value],
    node: NodeLayout,
    overrides: Mapping[str, Any] | None = None,
) -> str:
    """cassandra.yaml text for one node and a complete configuration, checked to load back."""
    try:
        base = yaml.safe_load(base_text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"the cassandra.yaml template is not valid YAML: {exc}") from None
    if not isinstance(base, dict):
        raise ConfigError("the cassandra.yaml template must be a YAML mapping")
    tree = render_tree(base, config, node, overrides)
    header = f"# Rendered by the ClassyTune harness for {node.listen_address}; do not edit.\n"
    text = header + yaml.safe_dump(tree, sort_keys=False, default_flow_style=False)
    if yaml.safe_load(text) != tree:  # e.g. a value PyYAML could not represent faithfully
        raise ConfigError(f"rendered cassandra.yaml for {node.listen_address} does not load back")
    return text


def heap_flags(config: Mapping[str, Value]) -> list[str]:
    """-Xms = -Xmx: the heap never resizes during a test (no -Xmn: G1 and ZGC size the young
    generation themselves, and Cassandra's scripts refuse -Xmn with G1)."""
    heap = int(config["jvm.heap_mb"])  # type: ignore[arg-type]
    return [f"-Xms{heap}M", f"-Xmx{heap}M"]


def gc_flags(config: Mapping[str, Value]) -> list[str]:
    """The collector's flags as Cassandra 5.0 ships them."""
    gc = str(config["jvm.gc"])
    if gc not in GC_FLAGS:
        raise ConfigError(f"jvm.gc {gc!r}: use one of {', '.join(GC_FLAGS)}")
    return list(GC_FLAGS[gc])


def _managed(original: str, managed: re.Pattern[str], title: str, flags: Sequence[str]) -> str:
    body = original.split(JVM_MARKER)[0].rstrip("\n")
    lines = [OFF + line if managed.match(line.strip()) else line for line in body.splitlines()]
    return "\n".join([*lines, "", f"{JVM_MARKER} {title}", *flags, ""])


def render_jvm_server_options(original: str, config: Mapping[str, Value]) -> str:
    """jvm-server.options with the install's heap lines disabled and the heap knobs appended."""
    return _managed(original, HEAP_LINE, "heap", heap_flags(config))


def render_jvm_gc_options(original: str, config: Mapping[str, Value]) -> str:
    """jvm17-/jvm11-server.options with the install's collector lines disabled and ours
    appended (every collector's tuning flags go, so no G1 flag lingers under ZGC)."""
    return _managed(original, GC_LINE, f"collector {config['jvm.gc']}", gc_flags(config))


def native_files(
    config: Mapping[str, Value], tuned: Sequence[str], header: Sequence[str]
) -> dict[str, str]:
    """The export of a complete configuration's ``tuned`` knobs: a cassandra.yaml fragment of
    their keys (as :func:`render_tree` sets them) and the heap / collector option lines."""
    entries, _ = _knob_entries(config)
    targets = yaml_targets()
    keys = {targets[name].key for name in tuned if name in targets}
    fragment = {key: plain(value) for key, value in entries.items() if key in keys}
    head = "".join(f"{line}\n" for line in header)
    files = {"cassandra.yaml": head + yaml.safe_dump(fragment, sort_keys=False)}
    if "jvm.heap_mb" in tuned:
        files["jvm-server.options"] = head + "".join(f"{f}\n" for f in heap_flags(config))
    if "jvm.gc" in tuned:
        files["jvm17-server.options"] = head + "".join(f"{f}\n" for f in gc_flags(config))
    return files


def plain(value: Any) -> Any:
    """Hydra hands nested config as DictConfig/ListConfig: make plain dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ListConfig":
        return [plain(v) for v in value]
    return value
