"""Whether a Hadoop cluster is up, and the daemon logs that say why not (commands on the master).

The probes run Hadoop's own tools (``hdfs dfsadmin -safemode wait``, ``-report``, ``yarn node
-list``) through the adapter, which bounds each with the start deadline; the parsers are the
pure functions of :mod:`systems.hadoop.parse`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence

from harness.executor import CommandResult, Executor, tail
from systems.hadoop import commands
from systems.hadoop.parse import parse_dfsadmin_report, parse_yarn_nodes, safemode_off

__all__ = [
    "NodeUnhealthy",
    "cluster_problem",
    "daemon_logs",
    "disk_floor",
    "disk_use_percent",
    "unhealthy_notice",
]

#: The NodeManager log lines that say why it reports itself UNHEALTHY.
_WHY_UNHEALTHY = re.compile(r"(Most of the disks failed|Disk\(s\) failed|health script).*", re.I)


class NodeUnhealthy(Exception):
    """NodeManagers that YARN lists as UNHEALTHY: their disk (or script) health check failed,
    and it is not checked again for minutes (``yarn.nodemanager.disk-health-checker.interval-ms``),
    so waiting out the start limit would only waste the test's time."""

    def __init__(self, nodes: list[str], statuses: Sequence[str] = ()) -> None:
        super().__init__(", ".join(nodes))
        self.nodes = nodes
        self.statuses = list(statuses)  # `yarn node -status` of each


_HEALTH_REPORT = re.compile(r"^\s*Health-Report\s*:\s*(\S.*)$", re.MULTILINE)


def unhealthy_notice(exc: NodeUnhealthy, nodemanager_logs: Sequence[str]) -> str:
    """One line: which NodeManagers are UNHEALTHY and why, from YARN's health report (``yarn
    node -status``), else from the NodeManager's log (a NodeManager that starts with bad disks
    reports it but does not log it)."""
    why = None
    for text in exc.statuses:
        match = _HEALTH_REPORT.search(text)
        if match:
            why = match.group(1).strip()[:300]
            break
    for text in nodemanager_logs if why is None else ():
        for match in _WHY_UNHEALTHY.finditer(text):
            why = match.group(0)[:300]  # the last one: the newest check
    return f"NodeManager {exc} UNHEALTHY" + (f": {why}" if why else "")


def cluster_problem(
    run: Callable[[Sequence[str]], CommandResult], hadoop_home: str, conf_dir: str, expected: int
) -> str | None:
    """None when HDFS is out of safe mode with ``expected`` DataNodes live and as many
    NodeManagers RUNNING; otherwise what is missing (:class:`NodeUnhealthy` for a NodeManager
    that will not be healthy soon). ``run`` runs a command on the master."""
    wait = run(commands.safemode_wait(hadoop_home, conf_dir))
    if not wait.ok or not safemode_off(wait.stdout):
        return f"NameNode not out of safe mode ({tail(wait.stderr or wait.stdout, 1)})"
    report = parse_dfsadmin_report(run(commands.dfsadmin_report(hadoop_home, conf_dir)).stdout)
    if report.live < expected:
        return f"{report.live}/{expected} DataNodes live ({report.dead} dead)"
    nodes = parse_yarn_nodes(run(commands.yarn_node_list(hadoop_home, conf_dir)).stdout)
    unhealthy = [node.node_id for node in nodes if node.state == "UNHEALTHY"]
    if unhealthy:
        statuses = [
            run(commands.yarn_node_status(hadoop_home, conf_dir, n)).stdout for n in unhealthy
        ]
        raise NodeUnhealthy(unhealthy, statuses)
    running = sum(node.state == "RUNNING" for node in nodes)
    if running < expected:
        states = ", ".join(f"{n.node_id} {n.state}" for n in nodes) or "none registered"
        return f"{running}/{expected} NodeManagers RUNNING ({states})"
    return None


def daemon_logs(master: Executor, log_dir: str, lines: int = 20) -> str:
    """Tails of the NameNode's and ResourceManager's logs in ``log_dir`` on the master."""
    listing = master.run(["ls", "-1", log_dir], check=False, timeout_s=30)
    parts = []
    for daemon in ("namenode", "resourcemanager"):
        for name in sorted(fnmatch.filter(listing.stdout.split(), f"*-{daemon}-*.log")):
            # `tail` on the host: a session's daemon logs grow with every restart.
            end = master.run(
                ["tail", "-n", str(lines), f"{log_dir}/{name}"], check=False, timeout_s=30
            )
            parts.append(f"== {master.host}:{log_dir}/{name} ==\n{end.stdout.rstrip()}")
    return "\n".join(parts) or f"(no NameNode/ResourceManager log in {log_dir})"


def disk_use_percent(df_output: str) -> float:
    """The used share of a filesystem as YARN's disk check counts it, from ``df -Pk <dir>``:
    (size − available) / size (Java's total and usable space), so the blocks reserved for root
    count as used; that is why it is far above ``df``'s own Use% on a large disk."""
    fields = df_output.strip().splitlines()[-1].split()
    size, available = float(fields[1]), float(fields[3])
    return 100.0 * (size - available) / size if size > 0 else 0.0


def disk_floor(folders: Sequence[tuple[Executor, str]], headroom: float | None) -> float | None:
    """The lowest disk-health threshold that keeps every node healthy: the largest disk use of
    ``folders`` (node, folder) plus ``headroom`` points (the test's own data), at most 100.
    None when ``headroom`` is None (the knob keeps its whole range)."""
    if headroom is None:
        return None
    uses = [
        disk_use_percent(node.run(["df", "-Pk", folder], timeout_s=60).stdout)
        for node, folder in folders
    ]
    return min(100.0, max(uses, default=0.0) + float(headroom))
