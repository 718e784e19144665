"""Which ports a host already listens on, checked before a server of ours starts.

A daemon that finds its port taken fails with a bind error deep in its log, after a JVM
start; the session should instead stop before its first test with a line that names the
host, the address and the config key to change.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import ConfigError
from harness.executor import Executor

__all__ = ["busy_ports", "check_free"]


def busy_ports(node: Executor, address: str, ports: Sequence[int]) -> list[int]:
    """Which of ``ports`` something already listens on at ``address`` (or on every address)
    of the node's host, from ``ss -ltn`` (iproute2, on every Linux we target)."""
    result = node.run(["ss", "-Hltn"], check=False, timeout_s=30)
    if not result.ok:
        return []  # no ss: the node's own bind error will say it at start
    wildcard = {"0.0.0.0", "*", "[::]", "::"}
    busy = set()
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        host, _, port = fields[3].rpartition(":")
        host = host.strip("[]").removeprefix("::ffff:")  # IPv4-mapped, as Java binds
        if port.isdigit() and int(port) in ports and (host in wildcard or host == address):
            busy.add(int(port))
    return sorted(busy)


def check_free(node: Executor, wanted: Sequence[tuple[str, int, str]]) -> None:
    """ConfigError naming the host, the address and the config key of the first of ``wanted``
    (address, port, key) that something already listens on."""
    for address, port, key in wanted:
        if busy_ports(node, address, [port]):
            raise ConfigError(
                f"host {node.host}: {address}:{port} is already in use; stop what "
                f"listens there (`ss -ltnp`) or set {key} to a free port"
            )
