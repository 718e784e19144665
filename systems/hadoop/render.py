"""Pure rendering of Hadoop/Hive site files from knob values and the cluster's layout.

Every property is written exactly once, into the site file whose ``*-default.xml`` defines it
(:func:`site_of`). Base settings (where the NameNode and ResourceManager are, the data folders,
what MapReduce needs on YARN) come from :class:`Layout`; knob values override nothing of them
(a knob that collided with a base setting would be a catalogue bug, see :func:`render_sites`).

Resource knobs are made consistent before rendering (:func:`reconcile`): a container request
larger than the largest container YARN grants makes the job fail at submission, and a sort
buffer larger than the map task's heap makes every map task fail. The default policy *clamps*
such values (and says so in the log); ``reject`` raises instead, which the session records as a
CRASHED test.

Names and values are XML-escaped (``&`` ``<`` ``>``, so ``]]>`` and ``<!--`` stay text) and
refused if they hold a newline or control character: Hadoop keeps a value's newlines, XML 1.0
cannot carry most control characters at all, and several values end up in YARN's container
launch script. Knob values are refused by knob (:func:`~systems.java_text.knob_text`),
``site_properties`` by their config key. A ``site_properties`` entry holding JVM options
(``mapreduce.map.java.opts``, ``yarn.app.mapreduce.am.admin-opts``, ...) must also be plain
options of shell-inert characters: YARN pastes them into the ``bash -c`` line of each
container's launch script, where ``$(...)`` would run.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from xml.sax.saxutils import escape

import yaml

from harness.errors import ConfigError, KnobError
from harness.space import Config, Space, Value, load_catalogue
from systems.java_text import java_text, jvm_options, knob_text

__all__ = [
    "CATALOGUE",
    "HADOOP_SITES",
    "SITES",
    "Layout",
    "MemoryPolicy",
    "check_host",
    "check_path",
    "full_catalogue",
    "hadoop_env_sh",
    "property_values",
    "reconcile",
    "render_sites",
    "site_of",
    "site_xml",
    "workers_file",
]

CATALOGUE = Path(__file__).with_name("knobs.yaml")
SITES = ("core-site", "hdfs-site", "yarn-site", "mapred-site", "hive-site")
HADOOP_SITES = SITES[:4]
MIB = 2**20
MemoryPolicy = Literal["clamp", "reject"]

#: Knobs whose catalogue unit differs from what Hadoop reads (catalogue MiB, Hadoop bytes).
_BYTES_FROM_MIB = frozenset({"dfs.blocksize"})
#: MapReduce's default heap share of a task container (mapreduce.job.heap.memory-mb.ratio).
HEAP_RATIO = 0.8
#: The largest sort buffer MapTask accepts (it checks ``sortmb & 0x7FF``).
MAX_SORT_MB = 2047
_NM_MEM, _MAX_MB = "yarn.nodemanager.resource.memory-mb", "yarn.scheduler.maximum-allocation-mb"
_NM_VC = "yarn.nodemanager.resource.cpu-vcores"
_MAX_VC = "yarn.scheduler.maximum-allocation-vcores"
_CONTAINER_MB = (
    "mapreduce.map.memory.mb",
    "mapreduce.reduce.memory.mb",
    "yarn.app.mapreduce.am.resource.mb",
)
_CONTAINER_VC = (
    "mapreduce.map.cpu.vcores",
    "mapreduce.reduce.cpu.vcores",
    "yarn.app.mapreduce.am.resource.cpu-vcores",
)
#: Properties whose value YARN puts into a container's shell command line as JVM options.
_SHELL_OPTIONS = re.compile(r".*(?:java\.opts|admin-opts|command-opts)")
_ENV_WHITELIST = (
    "JAVA_HOME,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,HADOOP_CONF_DIR,"
    "CLASSPATH_PREPEND_DISTCACHE,HADOOP_YARN_HOME,HADOOP_HOME,PATH,LANG,TZ,"
    "HADOOP_MAPRED_HOME"
)


@functools.lru_cache(maxsize=1)
def full_catalogue() -> Space:
    """Every knob of the Hadoop/Hive catalogue (a Space is immutable, so one is shared)."""
    return load_catalogue(CATALOGUE)


@dataclass(frozen=True)
class FileRules:
    """Knob name → site file: explicit entries first, then the longest matching prefix."""

    prefixes: Mapping[str, str]
    knobs: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = CATALOGUE) -> FileRules:
        data = yaml.safe_load(path.read_text()).get("files", {})
        rules = cls(dict(data.get("prefixes") or {}), dict(data.get("knobs") or {}))
        bad = sorted((set(rules.prefixes.values()) | set(rules.knobs.values())) - set(SITES))
        if bad:
            raise ConfigError(f"{path.name}: unknown site file(s) {bad}; use one of {SITES}")
        return rules

    def site_of(self, name: str) -> str:
        if name in self.knobs:
            return self.knobs[name]
        matches = [p for p in self.prefixes if name.startswith(p)]
        if not matches:
            raise KnobError(
                f"knob {name!r} belongs to no site file: add it under `files:` in {CATALOGUE.name}"
            )
        return self.prefixes[max(matches, key=len)]


_RULES: FileRules | None = None


def site_of(name: str) -> str:
    """The site file (``core-site`` … ``hive-site``) a knob is written to."""
    global _RULES
    if _RULES is None:
        _RULES = FileRules.load()
    return _RULES.site_of(name)


# -- validation of what enters files and command lines ------------------------------------------
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")
_PATH = re.compile(r"^/[A-Za-z0-9._+@=~/-]*$")


def check_host(value: str, what: str) -> str:
    """A host name or IPv4 address, or ConfigError (no spaces, newlines, ports or IPv6)."""
    if not isinstance(value, str) or not _HOST.match(value):
        raise ConfigError(
            f"{what}: {value!r} is not a host name or IPv4 address (letters, "
            "digits, '.' and '-' only)"
        )
    return value


def check_path(value: str, what: str) -> str:
    """An absolute path without whitespace, commas, colons or shell/XML metacharacters: such
    a path would be split or misread in Hadoop's comma-separated dir lists and URIs."""
    if not isinstance(value, str) or not _PATH.match(value) or "/../" in f"{value}/":
        raise ConfigError(
            f"{what}: {value!r} must be an absolute path of letters, digits and "
            "._+@=~/- (no spaces, commas, colons or '..')"
        )
    return value.rstrip("/") or "/"


@dataclass(frozen=True)
class Layout:
    """Where the cluster lives: the base settings every rendering needs."""

    master: str  # NameNode and ResourceManager address
    workers: tuple[str, ...]  # DataNode/NodeManager addresses (the `workers` file)
    hadoop_home: str
    data_root: str  # one folder per node below it: <data_root>/<node address>
    namenode_port: int = 8020
    #: A Maven install (bin/hadoop-launch, every jar in lib/): YARN containers need its
    #: classpath spelled out (the tarball's defaults name share/hadoop/*).
    maven: bool = False

    def __post_init__(self) -> None:
        check_host(self.master, "master address")
        if not self.workers:
            raise ConfigError("a Hadoop cluster needs at least one worker node")
        for worker in self.workers:
            check_host(worker, "worker address")
        check_path(self.hadoop_home, "system.adapter.hadoop_home")
        check_path(self.data_root, "system.adapter.data_root")
        if not 1 <= int(self.namenode_port) <= 65535:
            raise ConfigError(f"system.adapter.namenode_port {self.namenode_port} is not a port")

    @property
    def default_fs(self) -> str:
        return f"hdfs://{self.master}:{self.namenode_port}"

    def node_root(self, address: str) -> str:
        """The node's own folder: conf, logs, pids, HDFS and YARN dirs (nodes may share a
        machine, as on loopback addresses, so every node has its own)."""
        return f"{self.data_root}/{check_host(address, 'node address')}"

    def conf_dir(self, address: str) -> str:
        return f"{self.node_root(address)}/conf"

    @property
    def name_dir(self) -> str:
        return f"{self.node_root(self.master)}/dfs/name"


def base_properties(layout: Layout) -> dict[str, dict[str, str]]:
    """The settings that make a working cluster, per site file (no knobs among them); the
    per-node ones (folders, bind addresses) are :func:`systems.hadoop.nodes.node_properties`."""
    home = layout.hadoop_home
    mapred_env = f"HADOOP_MAPRED_HOME={home}"
    files: dict[str, dict[str, str]] = {
        "core-site": {"fs.defaultFS": layout.default_fs},
        "hdfs-site": {
            "dfs.namenode.name.dir": f"file://{layout.name_dir}",
            # The web UIs have no authentication: keep them on the master's address.
            "dfs.namenode.http-address": f"{layout.master}:9870",
            "dfs.namenode.secondary.http-address": f"{layout.master}:9868",
            # Every test restarts the cluster: leave safe mode once the blocks are reported,
            # not 30 s later (the extension guards rolling restarts of big clusters).
            "dfs.namenode.safemode.extension": "1000",
        },
        "yarn-site": {
            "yarn.resourcemanager.hostname": layout.master,
            "yarn.nodemanager.aux-services": "mapreduce_shuffle",
            "yarn.nodemanager.env-whitelist": _ENV_WHITELIST,
            # JVMs reserve far more virtual than physical memory; the default 2.1
            # vmem ratio check kills healthy task containers on modern JDKs.
            "yarn.nodemanager.vmem-check-enabled": "false",
        },
        "mapred-site": {
            "mapreduce.framework.name": "yarn",
            "yarn.app.mapreduce.am.env": mapred_env,
            "mapreduce.map.env": mapred_env,
            "mapreduce.reduce.env": mapred_env,
        },
        "hive-site": {"hive.execution.engine": "mr"},
    }
    if layout.maven:
        files["yarn-site"]["yarn.application.classpath"] = f"$HADOOP_CONF_DIR,{home}/lib/*"
        files["mapred-site"]["mapreduce.application.classpath"] = f"{home}/lib/*"
    return files


#: YARN marks a NodeManager UNHEALTHY when its disk's use is above this threshold (percent).
DISK_KNOB = "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage"


def reconcile(
    values: Mapping[str, Value],
    datanodes: int,
    policy: MemoryPolicy = "clamp",
    disk_floor: float | None = None,
) -> tuple[Config, dict[str, tuple[Value, Value]]]:
    """Make resource knobs consistent: ``(values, {knob: (asked, used)})``.

    Largest container = min(maximum-allocation, NodeManager capacity), for memory and vcores;
    task and AM containers at most that; the sort buffer at most half the map heap (and 2047
    MiB). ``reject`` raises KnobError instead. Replication is always cut to the number of
    DataNodes: more replicas than nodes only leaves every block under-replicated. Likewise
    the disk-health threshold is raised to ``disk_floor`` (this disk's use plus headroom):
    below it every NodeManager is UNHEALTHY before the test starts, whatever else is tuned.
    """
    out: dict[str, Any] = dict(values)
    changes: dict[str, tuple[Value, Value]] = {}

    def cap(name: str, limit: float, why: str) -> None:
        if name in out and out[name] > limit:
            if policy == "reject":
                raise KnobError(
                    f"knob {name!r}: {out[name]} exceeds {int(limit)} ({why}); "
                    "system.adapter.memory_policy=clamp would clamp it"
                )
            changes[name] = (out[name], int(limit))
            out[name] = int(limit)

    for cap_name, node_name, tasks in (
        (_MAX_MB, _NM_MEM, _CONTAINER_MB),
        (_MAX_VC, _NM_VC, _CONTAINER_VC),
    ):
        if node_name in out:
            cap(cap_name, out[node_name], f"{node_name} = {out[node_name]}")
        limits = [out[n] for n in (cap_name, node_name) if n in out]
        if limits:
            for task in tasks:
                cap(task, min(limits), f"the largest container, {min(limits)}")
    if "mapreduce.map.memory.mb" in out:
        heap = out["mapreduce.map.memory.mb"] * HEAP_RATIO
        cap(
            "mapreduce.task.io.sort.mb",
            min(MAX_SORT_MB, heap // 2),
            f"half the map heap, {HEAP_RATIO:g} x mapreduce.map.memory.mb",
        )
    if "dfs.replication" in out and out["dfs.replication"] > max(1, datanodes):
        # Not a misconfiguration but a cluster-size fact: clamped under either policy.
        changes["dfs.replication"] = (out["dfs.replication"], max(1, datanodes))
        out["dfs.replication"] = max(1, datanodes)
    if disk_floor is not None and DISK_KNOB in out and out[DISK_KNOB] < disk_floor:
        changes[DISK_KNOB] = (out[DISK_KNOB], round(disk_floor, 2))
        out[DISK_KNOB] = round(disk_floor, 2)
    return out, changes


def property_values(values: Mapping[str, Value]) -> dict[str, str]:
    """Knob values as Hadoop reads them (booleans lower-case, unit conversions)."""
    rendered = {}
    for name, value in values.items():
        if name in _BYTES_FROM_MIB:
            rendered[name] = str(int(value) * MIB)
        else:
            rendered[name] = knob_text(name, value)
    return rendered


def _one_line(text: str, what: str) -> str:
    if not text.isprintable():
        raise ConfigError(
            f"{what}: {text!r} contains a newline or control character; a Hadoop "
            "property name or value is one line of printable text"
        )
    return text


def site_xml(properties: Mapping[str, str], title: str = "") -> str:
    """A Hadoop configuration file: one ``<property>`` per entry, names and values escaped."""
    head = f" {title}" if title else ""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<!-- Written by the ClassyTune harness{head}; edits are overwritten. -->",
        "<configuration>",
    ]
    for name in sorted(properties):
        value = _one_line(str(properties[name]), f"property {name!r}")
        lines.append(
            f"  <property><name>{escape(_one_line(name, 'property name'))}</name>"
            f"<value>{escape(value)}</value></property>"
        )
    lines.append("</configuration>")
    return "\n".join(lines) + "\n"


def render_sites(
    values: Mapping[str, Value],
    layout: Layout,
    sites: Iterable[str] = SITES,
    extra: Mapping[str, Mapping[str, Any]] | None = None,
    node: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, str]:
    """``{"core-site.xml": text, ...}`` for a complete, reconciled configuration.

    ``extra`` (``system.adapter.site_properties``) adds or replaces base settings; it may not
    set a knob (the tuner owns those). Knobs of sites not rendered (hive-site for HDFS/YARN)
    are refused, so a tuned value can never be silently dropped.
    """
    sites = tuple(sites)
    files = {site: dict(props) for site, props in base_properties(layout).items() if site in sites}
    for site, props in (node or {}).items():  # this node's folders and addresses
        if site in files:
            files[site].update(props)
    for site, props in (extra or {}).items():
        if site not in sites:
            raise ConfigError(
                f"system.adapter.site_properties: unknown or unused site file "
                f"{site!r}; use one of {', '.join(sites)}"
            )
        for name, value in props.items():
            if name in values:
                raise ConfigError(
                    f"system.adapter.site_properties.{site}: {name!r} is a knob; "
                    f"pin it with +system.fixed.{name}=... instead"
                )
            key = f"system.adapter.site_properties.{site}.{name}"
            text = _one_line(java_text(value), key)
            if _SHELL_OPTIONS.fullmatch(str(name)):
                jvm_options(text, key, shell_inert=True)
            files[site][_one_line(str(name), key)] = text
    for name, text in property_values(values).items():
        site = site_of(name)
        if site not in files:
            raise KnobError(
                f"knob {name!r} belongs to {site}.xml, which this system does not write"
            )
        if name in files[site]:
            raise KnobError(f"knob {name!r} collides with a base setting of {site}.xml")
        files[site][name] = text
    return {
        f"{site}.xml": site_xml(props, f"for {layout.default_fs}") for site, props in files.items()
    }


def workers_file(workers: Iterable[str]) -> str:
    """Hadoop's ``workers`` file: one DataNode/NodeManager address per line."""
    return "".join(f"{check_host(w, 'worker address')}\n" for w in workers)


ENV_MARK = "# --- added by the ClassyTune harness ---"


def hadoop_env_sh(
    original: str, node_root: str, java_home: str | None = None, heap_mb: int | None = None
) -> str:
    """The install's ``hadoop-env.sh`` plus our block: the node's log and pid folders (Hadoop's
    scripts source this file on each node), JAVA_HOME and the daemons' heap if given.
    Idempotent: an earlier harness block is replaced, not repeated."""
    kept = original.split(ENV_MARK, 1)[0].rstrip("\n")
    lines = [
        ENV_MARK,
        f"export HADOOP_LOG_DIR={check_path(node_root, 'data_root')}/logs",
        f"export HADOOP_PID_DIR={node_root}/pids",
    ]
    if java_home:
        lines.append(f"export JAVA_HOME={check_path(java_home, 'system.adapter.java_home')}")
    if heap_mb:
        lines.append(f"export HADOOP_HEAPSIZE_MAX={int(heap_mb)}m")
    return (kept + "\n\n" if kept else "") + "\n".join(lines) + "\n"
