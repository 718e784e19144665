"""Starting, stopping and watching the Hadoop daemons, node by node.

Each daemon is started on its own host with Hadoop 3's ``bin/hdfs --daemon start namenode``
(``bin/yarn`` for YARN), which the tarball and our Maven install both provide: the harness
reaches every node through its executor, so the nodes need no ssh among themselves (Hadoop's
``sbin/start-dfs.sh`` needs that; ``start_mode=sbin`` still uses those scripts). Order: the
NameNode, the DataNodes, the ResourceManager, the NodeManagers; stop in reverse, and then end
whatever a NodeManager left behind (task JVMs outlive a NodeManager killed with ``kill -9``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from harness.errors import ExecutorError
from harness.executor import Executor, LocalExecutor
from harness.hosts.process import process_alive

__all__ = [
    "Daemon",
    "cluster_daemons",
    "daemon_command",
    "end_leftovers",
    "log_tail",
    "pid_file",
    "running_pid",
    "stop_daemon",
    "why_stopped",
]

log = logging.getLogger(__name__)

_TOOLS = {"namenode": "hdfs", "datanode": "hdfs", "resourcemanager": "yarn", "nodemanager": "yarn"}


@dataclass(frozen=True)
class Daemon:
    """One daemon of the cluster: which, on which node, with which node folder."""

    name: str  # namenode, datanode, resourcemanager, nodemanager
    node: Executor
    root: str  # the node's folder (conf/, logs/, pids/ below it)

    @property
    def tool(self) -> str:
        return _TOOLS[self.name]

    @property
    def conf_dir(self) -> str:
        return f"{self.root}/conf"

    def label(self) -> str:
        return f"{self.name} on {self.node.host}"


def cluster_daemons(
    master: tuple[Executor, str], workers: Sequence[tuple[Executor, str]]
) -> list[Daemon]:
    """Every daemon in start order; ``(executor, node folder)`` pairs."""
    node, root = master
    return [
        Daemon("namenode", node, root),
        *(Daemon("datanode", n, r) for n, r in workers),
        Daemon("resourcemanager", node, root),
        *(Daemon("nodemanager", n, r) for n, r in workers),
    ]


def daemon_command(hadoop_home: str, daemon: Daemon, action: str) -> list[str]:
    """``<home>/bin/<tool> --daemon <start|stop|status> <daemon>`` (paths checked by the
    caller's Layout)."""
    if action not in ("start", "stop", "status"):
        raise ValueError(f"not a daemon action: {action!r}")
    return [f"{hadoop_home}/bin/{daemon.tool}", "--daemon", action, daemon.name]


def pid_file(daemon: Daemon, ident: str) -> str:
    """Where Hadoop 3's scripts (and ours) record the daemon's pid."""
    return f"{daemon.root}/pids/hadoop-{ident}-{daemon.name}.pid"


def running_pid(daemon: Daemon, ident: str) -> int | None:
    """The daemon's pid if its pid file names a live process of ours, else None."""
    path = pid_file(daemon, ident)
    try:
        if not daemon.node.exists(path):
            return None
        text = daemon.node.read_text(path).strip()
    except ExecutorError:
        return None
    if not text.isdigit():
        return None
    # Not `kill -0`: a killed daemon stays a zombie until its parent (often init) reaps it.
    return int(text) if process_alive(daemon.node, int(text)) else None


def stop_daemon(
    hadoop_home: str, daemon: Daemon, env: Mapping[str, str], timeout_s: float = 120.0
) -> bool:
    """Stop one daemon (the script kills it with -9 after HADOOP_STOP_TIMEOUT); True if the
    command said so."""
    try:
        result = daemon.node.run(
            daemon_command(hadoop_home, daemon, "stop"), env=env, timeout_s=timeout_s, check=False
        )
    except ExecutorError as exc:
        log.warning("stopping the %s: %s", daemon.label(), exc)
        return False
    if not result.ok:
        log.warning("stopping the %s: %s", daemon.label(), result.describe())
    return result.ok


def stop_all(
    hadoop_home: str, daemons: Sequence[Daemon], env_of: Callable[[Daemon], Mapping[str, str]]
) -> bool:
    """Stop every daemon at once; True if every stop command said so. A restart needs no
    orderly shutdown, and each stop waits a second or two for its JVM (four in turn took ~9 s
    of every test here). Daemons of one remote host are stopped in turn, over its one SSH
    connection; local ones (subprocesses) all at once."""
    groups: dict[int, list[Daemon]] = {}
    for daemon in daemons:
        key = id(daemon) if isinstance(daemon.node, LocalExecutor) else id(daemon.node)
        groups.setdefault(key, []).append(daemon)

    def stop_group(group: list[Daemon]) -> bool:
        return all([stop_daemon(hadoop_home, d, env_of(d)) for d in group])

    with ThreadPoolExecutor(max_workers=max(len(groups), 1)) as pool:
        return all(list(pool.map(stop_group, groups.values())))


def end_leftovers(node: Executor, root: str) -> None:
    """Kill task JVMs and container scripts still running from the node's YARN folders: a
    NodeManager that died (or was killed) leaves its containers running."""
    # Every container's command line names its folders below <root>/yarn/ (tmpdir, log dir).
    node.run(["pkill", "-9", "-f", "--", leftover_pattern(root)], check=False, timeout_s=30)


def leftover_pattern(root: str) -> str:
    """pkill's extended regex for command lines naming ``<root>/yarn/``, which does not match
    itself: an executor's wrapper of the pkill (``timeout``, ``env``, the SSH session's
    shell) has the pattern in its own command line, and pkill would kill it."""
    literal = "".join(f"[{c}]" if c in ".+" else c for c in root)  # checked path characters
    return f"{literal}/yar[n]/"


def log_tail(daemon: Daemon, lines: int = 40) -> str:
    """The last lines of the daemon's log and of its stdout/stderr file (``.out``)."""
    folder = f"{daemon.root}/logs"
    listing = daemon.node.run(["ls", "-1", folder], check=False, timeout_s=30)
    parts = []
    for name in sorted(listing.stdout.split()):
        if f"-{daemon.name}-" in name and name.endswith((".log", ".out")):
            end = daemon.node.run(
                ["tail", "-n", str(lines), f"{folder}/{name}"], check=False, timeout_s=30
            )
            parts.append(f"== {daemon.node.host}:{folder}/{name} ==\n{end.stdout.rstrip()}")
    return "\n".join(parts) or f"(no {daemon.name} log in {folder})"


_WHY = re.compile(r"(Exception|Error|FATAL|ERROR)")


def why_stopped(text: str) -> str:
    """The log line that says why a daemon stopped: the last error line that is not the
    signal we sent it or a stack frame; empty when there is none."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if _WHY.search(line) and "RECEIVED SIGNAL" not in line and not line.startswith("at "):
            return line[:300]
    return ""
