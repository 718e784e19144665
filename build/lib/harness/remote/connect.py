"""From the ``hosts`` config to connected executors, checked before the session starts."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.utils import get_class

from harness.errors import ConfigError, ExecutorError, HostUnreachable
from harness.executor import LocalExecutor
from harness.remote.cluster import Cluster
from harness.remote.inventory import Inventory
from harness.remote.ssh import SSHExecutor

__all__ = ["adapter_kwargs", "connect_inventory", "remove_remote_workdirs"]

log = logging.getLogger(__name__)


def connect_inventory(inventory: Inventory) -> Cluster:
    """An SSH executor per host, each reached once now so that a dead host, a refused key or
    an unknown host key stops the session before its first test (one line, host named)."""
    executors = {host.name: SSHExecutor(host) for host in inventory.hosts}
    try:
        for name, executor in executors.items():
            round_trip = executor.check_reachable()
            log.info(
                "host %s (%s) reachable, round trip %.2fs", name, executor.spec.target, round_trip
            )
    except (ExecutorError, HostUnreachable) as exc:
        for executor in executors.values():
            executor.close()
        raise ConfigError(f"inventory {inventory.name!r}: {exc}") from None
    sut = tuple(executors[h.name] for h in inventory.sut)
    load = executors[inventory.load.name] if inventory.load else sut[0]
    return Cluster(sut, load)


def adapter_kwargs(system_name: str, target: str, cluster: Cluster) -> dict[str, Any]:
    """How to hand the cluster to an adapter class, from its declared ``placement``:
    ``cluster=`` (multi-node adapters) or ``executor=`` (single-node ones get the first SUT
    host); local-only adapters are refused."""
    try:
        placement = getattr(get_class(target), "placement", "local")
    except Exception as exc:
        raise ConfigError(f"system {system_name!r}: cannot load adapter {target}: {exc}") from None
    if placement == "cluster":
        return {"cluster": cluster}
    if placement == "host":
        if len(cluster.sut) > 1:
            log.warning(
                "system %s is single-node; using SUT host %s only",
                system_name,
                cluster.master.host,
            )
        return {"executor": cluster.master}
    raise ConfigError(
        f"system {system_name!r} runs only on this machine (its adapter takes no "
        "executor); drop hosts=, or use a remote-capable system (postgres, "
        "mysql, tomcat, spark, mapreduce, cassandra, hive, hdfs)"
    )


def remove_remote_workdirs(system: Any, local_workdir: Path) -> None:
    """Delete a finished session's folder on every remote host the system used (the local
    one is removed by the caller); failures only warn: the results are already safe."""
    cluster = getattr(system, "cluster", None)
    executors = [*cluster.sut, cluster.load] if isinstance(cluster, Cluster) else []
    executor = getattr(system, "executor", None)
    if executor is not None:
        executors.append(executor)
    for node in {id(e): e for e in executors if not isinstance(e, LocalExecutor)}.values():
        folder = node.session_dir(local_workdir)
        try:
            node.run(["rm", "-rf", str(folder)], timeout_s=300)
        except (ExecutorError, HostUnreachable) as exc:
            log.warning("could not remove %s on %s: %s", folder, node.host, exc)
