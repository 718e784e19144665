"""Pure command builders and output parsers for Cassandra nodes (no I/O here).

Every command is an argument list. Values also pass through the install's shell launchers
(ours, ``systems/cassandra/java/server/layout/bin``, quote them; a tarball's ``bin/cassandra``
and ``cassandra-env.sh`` expand ``$CASSANDRA_CONF`` unquoted in places), so paths and host
names are *validated* as well: only characters that no shell treats specially are accepted,
and anything else is refused with a ConfigError naming the config key.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from harness.errors import ConfigError
from systems.java_text import jvm_options

__all__ = [
    "FAILURE_MARKERS",
    "NodePaths",
    "RingMember",
    "check_host",
    "check_path",
    "is_ip",
    "nodetool_command",
    "parse_nodetool_status",
    "parse_statusbinary",
    "reset_commands",
    "ring_problem",
    "snapshot_commands",
    "start_command",
    "start_failure",
]

_PATH = re.compile(r"/[A-Za-z0-9_./+@%:-]*")
_HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:%-]*")
_RING_ROW = re.compile(r"^([UD][NLJM])\s+(\S+)\s")
# Lines of system.log or of the launcher's output that mean the node will not come up.
FAILURE_MARKERS = (
    "Exception encountered during startup",
    "Fatal configuration error",
    "Invalid yaml",
    "Could not create the Java Virtual Machine",
    "Error occurred during initialization of VM",
    "Unrecognized VM option",
    "please set or unset",
    "Please set or unset",
    "It is not recommended to set -Xmn with the G1",
    "Cannot start node if snitch's",
    "There is insufficient memory for the Java Runtime Environment",  # heap not committable
    "Terminating due to java.lang.OutOfMemoryError",  # -XX:+ExitOnOutOfMemoryError's last word
    "OutOfMemory error letting the JVM handle the error",
)


def check_path(value: str, key: str) -> str:
    """``value`` if it is an absolute path of shell-inert characters, else a ConfigError."""
    text = str(value)
    if not _PATH.fullmatch(text) or "/../" in f"{text}/":
        raise ConfigError(
            f"{key}={text!r}: use an absolute path of letters, digits and "
            "_ . / + @ % : - only (it passes through Cassandra's shell scripts)"
        )
    return text


def check_host(value: str, key: str) -> str:
    """``value`` if it is a host name or IP address (no shell syntax), else a ConfigError."""
    text = str(value)
    if not _HOST.fullmatch(text):
        raise ConfigError(f"{key}={text!r} is not a host name or IP address")
    return text


@dataclass(frozen=True)
class NodePaths:
    """The folders and files of one node under its base folder (validated once here)."""

    base: str

    def __post_init__(self) -> None:
        check_path(self.base, "system.adapter.base_dir")

    @property
    def conf(self) -> str:
        return f"{self.base}/conf"

    @property
    def data(self) -> str:
        return f"{self.base}/data"

    @property
    def commitlog(self) -> str:
        return f"{self.base}/commitlog"

    @property
    def saved_caches(self) -> str:
        return f"{self.base}/saved_caches"

    @property
    def hints(self) -> str:
        return f"{self.base}/hints"

    @property
    def logs(self) -> str:
        return f"{self.base}/logs"

    @property
    def pristine(self) -> str:
        """The loaded data set, copied while the node was drained and stopped."""
        return f"{self.base}/pristine-data"

    @property
    def pid_file(self) -> str:
        return f"{self.base}/cassandra.pid"

    @property
    def system_log(self) -> str:
        return f"{self.logs}/system.log"

    @property
    def stdout_log(self) -> str:
        """What bin/cassandra and the JVM print before logging starts (heap errors etc.)."""
        return f"{self.logs}/stdout.log"

    def state_dirs(self) -> list[str]:
        return [self.data, self.commitlog, self.saved_caches, self.hints]


def _env(install_dir: str, paths: NodePaths, java_home: str | None) -> list[str]:
    env = [
        "env",
        f"CASSANDRA_HOME={install_dir}",
        f"CASSANDRA_CONF={paths.conf}",
        f"CASSANDRA_LOG_DIR={paths.logs}",
    ]
    if java_home:
        env.append(f"JAVA_HOME={java_home}")
    return env


def start_command(
    install_dir: str,
    paths: NodePaths,
    java_home: str | None = None,
    extra_jvm_opts: str = "",
    jmx_port: int = 7199,
    lock_memory: bool = False,
) -> list[str]:
    """``bin/cassandra -p <pidfile>`` with our conf and log folders and the node's JMX port.

    bin/cassandra forks the JVM and returns; the JVM inherits stdout, so the launcher's output
    goes to ``stdout.log`` (a constant ``sh -c`` script; the values are its arguments, never
    part of the script) and the command returns as soon as bin/cassandra does.
    """
    install = check_path(install_dir, "system.adapter.install_dir")
    env = _env(
        install, paths, check_path(java_home, "system.adapter.java_home") if java_home else None
    )
    # cassandra-env.sh appends $JVM_EXTRA_OPTS and bin/cassandra expands it unquoted (word
    # splitting and globbing on purpose), so each option is checked to be shell-inert.
    options = jvm_options(extra_jvm_opts, "system.adapter.extra_jvm_opts", shell_inert=True)
    if options:
        env.append(f"JVM_EXTRA_OPTS={' '.join(options)}")
    env.append(f"JMX_PORT={int(jmx_port)}")
    env.append(f"CASSANDRA_LOCK_MEMORY={'yes' if lock_memory else 'no'}")
    return [
        "sh",
        "-c",
        'exec "$@" > "$0" 2>&1 < /dev/null',
        paths.stdout_log,
        *env,
        f"{install}/bin/cassandra",
        "-p",
        paths.pid_file,
    ]


def nodetool_command(
    install_dir: str,
    paths: NodePaths,
    *args: str,
    jmx_host: str = "127.0.0.1",
    jmx_port: int = 7199,
    java_home: str | None = None,
) -> list[str]:
    """``nodetool -h <jmx_host> -p <port> <args>`` with CASSANDRA_CONF set (nodetool reads
    cassandra-env.sh from it). Cassandra binds local JMX to 127.0.0.1 only, so nodetool runs
    on the node itself and asks 127.0.0.1, each node on its own port."""
    install = check_path(install_dir, "system.adapter.install_dir")
    host = check_host(jmx_host, "system.adapter.jmx_host")
    return [
        *_env(install, paths, java_home),
        f"{install}/bin/nodetool",
        "-h",
        host,
        "-p",
        str(int(jmx_port)),
        *args,
    ]


def snapshot_commands(paths: NodePaths) -> list[list[str]]:
    """Copy the drained node's data folder aside (the node must be stopped)."""
    return [["rm", "-rf", paths.pristine], ["cp", "-a", paths.data, paths.pristine]]


def reset_commands(paths: NodePaths) -> list[list[str]]:
    """Restore the loaded data set exactly: empty commitlog, caches and hints (the snapshot was
    taken after ``nodetool drain``, so nothing is lost), then a fresh copy of the data."""
    return [
        ["rm", "-rf", *paths.state_dirs()],
        ["mkdir", "-p", paths.commitlog, paths.saved_caches, paths.hints],
        ["cp", "-a", paths.pristine, paths.data],
    ]


@dataclass(frozen=True)
class RingMember:
    """One row of ``nodetool status``: state (UN, DN, UJ, ...) and address."""

    state: str
    address: str


def parse_nodetool_status(text: str) -> list[RingMember]:
    """The node rows of ``nodetool status`` (every datacenter section)."""
    members = []
    for line in text.splitlines():
        match = _RING_ROW.match(line.strip())
        if match:
            members.append(RingMember(match.group(1), match.group(2)))
    return members


def ring_problem(
    members: list[RingMember], expected: int, addresses: tuple[str, ...] = ()
) -> str | None:
    """None when exactly ``expected`` nodes are all Up/Normal (and, if given, have exactly
    ``addresses``); otherwise what is wrong, for the error message."""
    if not members:
        return "nodetool status listed no node"
    bad = [f"{m.address} {m.state}" for m in members if m.state != "UN"]
    if bad:
        return "not Up/Normal: " + ", ".join(bad)
    if len(members) != expected:
        return f"{len(members)} node(s) in the ring, expected {expected}"
    seen = {m.address for m in members}
    if addresses and seen != set(addresses):
        return (
            f"ring addresses {', '.join(sorted(seen))} differ from the inventory's "
            f"{', '.join(sorted(addresses))}"
        )
    return None


def parse_statusbinary(text: str) -> bool:
    """Whether ``nodetool statusbinary`` says the CQL native transport is running."""
    return text.strip().lower() == "running"


def start_failure(log_text: str) -> str | None:
    """The first line of a node's log or launcher output that says startup failed, or None."""
    for line in log_text.splitlines():
        if any(marker in line for marker in FAILURE_MARKERS):
            return line.strip()
    return None


def is_ip(address: str) -> bool:
    """Whether ``address`` is an IP literal (nodetool shows IPs, not host names)."""
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return False
    return True
