"""What a Cassandra node says about itself: nodetool over local JMX, its pid file, its logs.

:class:`NodeProbes` is the read-only half of :class:`~systems.cassandra.system.CassandraSystem`
(which starts, configures and stops the nodes): is a node up, is its CQL transport running,
does the first node see the whole ring, did a node die during a test.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from harness.errors import WorkloadError
from harness.executor import CommandTimeout, Executor, tail
from harness.hosts.cluster import Cluster
from harness.hosts.process import Deadline, StartFailed, process_alive, wait_ready
from systems.cassandra import commands
from systems.cassandra.commands import NodePaths
from systems.cassandra.node import logs_tail, logs_text, read_pid

__all__ = ["NodeProbes"]


class NodeProbes:
    """nodetool, pid and log reads of the nodes of ``cluster`` (node ``i`` at ``paths[i]``)."""

    cluster: Cluster
    paths: list[NodePaths]
    install_dir: str
    java_home: str | None
    jmx_host: str
    ports: dict[str, int]
    poll_s: float
    setup_timeout_s: float

    @abstractmethod
    def stop(self) -> None:
        """Stop every node (the system's lifecycle; the probes call it when a start fails)."""

    @property
    def nodes(self) -> tuple[Executor, ...]:
        return self.cluster.sut

    def jmx_port(self, i: int) -> int:
        """Node ``i``'s local JMX port (one per node: nodes of a local ring share 127.0.0.1)."""
        return self.ports["jmx_port"] + i

    def _nodetool(self, i: int, *args: str, timeout_s: float = 60.0, check: bool = False) -> Any:
        command = commands.nodetool_command(
            self.install_dir,
            self.paths[i],
            *args,
            jmx_host=self.jmx_host,
            jmx_port=self.jmx_port(i),
            java_home=self.java_home,
        )
        return self.nodes[i].run(command, timeout_s=timeout_s, check=check)

    def _probe(self, i: int, *args: str) -> str | None:
        """nodetool's output, or None while the node does not answer (JMX not up yet)."""
        try:
            result = self._nodetool(i, *args, timeout_s=60.0)
        except CommandTimeout:
            return None
        return result.stdout if result.ok else None

    def _node_ready(self, i: int) -> str | None:
        """None once the node's CQL transport runs; StartFailed when it died or logged a
        failure."""
        pid = self._pid(i)
        failure = commands.start_failure(self._logs(i))
        if pid is None or not self._alive(i, pid):
            why = f": {failure}" if failure else ""
            raise StartFailed(f"the Cassandra process exited during startup{why}")
        if failure:
            raise StartFailed(failure)
        probe = self._probe(i, "statusbinary")
        if probe is not None and commands.parse_statusbinary(probe):
            return None
        return "CQL native transport not running"

    def _wait_ring(self, deadline: Deadline) -> None:
        """Until the first node sees every SUT node Up/Normal."""
        addresses = tuple(node.address for node in self.nodes)
        if not all(commands.is_ip(a) for a in addresses):
            addresses = ()  # inventory names: nodetool shows IPs, so compare the count only
        last = [""]

        def ring_ready() -> str | None:
            text = self._probe(0, "status")
            last[0] = text or "(nodetool status did not answer)"
            members = commands.parse_nodetool_status(text or "")
            return commands.ring_problem(members, len(self.nodes), addresses)

        wait_ready(
            ring_ready,
            what="Cassandra ring",
            deadline=deadline,
            poll_s=self.poll_s,
            log_tail=lambda: tail(last[0], 30),
            cleanup=self.stop,
        )

    def check_nodes(self) -> None:
        """WorkloadError naming every node whose process is gone (killed or crashed during the
        test): its measurement is not the configuration's, so the test is FAILED, and the next
        test's start brings the whole ring back."""
        dead = [
            self.nodes[i].host
            for i in range(len(self.paths))
            if (pid := self._pid(i)) is None or not self._alive(i, pid)
        ]
        if dead:
            raise WorkloadError(
                f"Cassandra node(s) {', '.join(dead)} stopped during the test",
                "\n".join(
                    self.log_tail(i, 20) for i, n in enumerate(self.nodes) if n.host in dead
                ),
            )

    def _logs(self, i: int) -> str:
        return logs_text(self.nodes[i], self.paths[i])

    def log_tail(self, i: int = 0, lines: int = 40) -> str:
        """The last lines of a node's launcher output and system.log."""
        return logs_tail(self.nodes[i], self.paths[i], lines)

    def _pid(self, i: int) -> int | None:
        return read_pid(self.nodes[i], self.paths[i])

    def _alive(self, i: int, pid: int) -> bool:
        return process_alive(self.nodes[i], pid)
