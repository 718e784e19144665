"""From the ``hosts`` config to connected executors, checked before the session starts."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.utils import get_class

from harness.errors import ConfigError, ExecutorError, HostUnreachable
from harness.executor import Executor, LocalExecutor
from harness.hosts.cluster import Cluster
from harness.hosts.inventory import Inventory
from harness.hosts.ssh import SSHExecutor
from harness.system import (
    PLACEMENT_KEYWORD,
    PLACEMENTS,
    Placement,
    RunsOnCluster,
    RunsOnHost,
    System,
)

__all__ = [
    "adapter_kwargs",
    "check_placement",
    "close_connections",
    "connect_inventory",
    "remove_remote_workdirs",
]

log = logging.getLogger(__name__)


def connect_inventory(inventory: Inventory) -> Cluster:
    """An SSH executor per host, each reached once now so that a dead host, a refused key or
    an unknown host key stops the session before its first test (one line, host named); a
    ``connection: local`` host is this machine on its own loopback address."""
    executors: dict[str, Executor] = {
        host.name: LocalExecutor(host.name, host.address)
        if host.connection == "local"
        else SSHExecutor(host)
        for host in inventory.hosts
    }
    try:
        for name, executor in executors.items():
            if not isinstance(executor, SSHExecutor):
                continue
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


def check_placement(system_name: str, target: str, inventory: str = "hosts") -> Placement:
    """The declared ``placement`` of the adapter class ``target`` (never read from its
    signature), or a one-line ConfigError when it cannot run on an inventory: a ``local``
    adapter, or a class that is no System adapter. Needs no connection, so it can run first."""
    try:
        cls = get_class(target)
    except Exception as exc:
        raise ConfigError(f"system {system_name!r}: cannot load adapter {target}: {exc}") from None
    placement = getattr(cls, "placement", None)
    if not (isinstance(cls, type) and issubclass(cls, System)) or placement not in PLACEMENTS:
        raise ConfigError(
            f"system {system_name!r}: {target} is not a System adapter with a declared "
            f"placement ({' / '.join(PLACEMENTS)})"
        )
    if placement == "local":
        raise ConfigError(
            f"system {system_name!r} cannot run on inventory {inventory!r}: its adapter "
            f"{cls.__name__} declares placement 'local' (this machine only); drop hosts=, or "
            "choose a system whose adapter declares placement 'host' or 'cluster'"
        )
    return cls.placement


def adapter_kwargs(
    system_name: str, target: str, cluster: Cluster, inventory: str = "hosts", pool: int = 1
) -> dict[str, Any]:
    """How to hand the cluster to the adapter class ``target``, from its declared placement
    (:func:`check_placement`): ``cluster=`` for ``cluster`` adapters, ``executor=`` (the first
    SUT host) for ``host`` ones, plus ``load=`` (the inventory's load host) for ``host``
    adapters that declare :attr:`~harness.system.System.takes_load_host`."""
    placement = check_placement(system_name, target, inventory)
    if placement == "host" and len(cluster.sut) > pool:
        log.warning(
            "system %s is single-node (placement 'host'); inventory %s has %d SUT hosts, "
            "using the first %d (session.parallel=<n> runs tests on n of them at once)",
            system_name,
            inventory,
            len(cluster.sut),
            pool,
        )
    where: Executor | Cluster = cluster if placement == "cluster" else cluster.master
    kwargs: dict[str, Any] = {PLACEMENT_KEYWORD[placement]: where}
    if placement == "host" and cluster.load is not cluster.master:
        if getattr(get_class(target), "takes_load_host", False):
            kwargs["load"] = cluster.load  # the benchmark client runs there
        else:
            log.warning(
                "system %s runs its benchmark client on its SUT host %s; the load host %s of "
                "inventory %s is not used",
                system_name,
                cluster.master.host,
                cluster.load.host,
                inventory,
            )
    return kwargs


def _remote_executors(system: System) -> list[Executor]:
    """Every remote host's executor the system uses (each once)."""
    executors: list[Executor] = []
    if system.placement == "cluster" and isinstance(system, RunsOnCluster):
        executors = [*system.cluster.sut, system.cluster.load]
    elif system.placement == "host" and isinstance(system, RunsOnHost):
        executors = [system.executor, getattr(system, "load", system.executor)]
    return list({id(e): e for e in executors if not isinstance(e, LocalExecutor)}.values())


def close_connections(system: System) -> None:
    """Close the system's SSH connections (a session in a long-lived process, e.g. a
    benchmark running many, must not leave them open; they reopen if used again)."""
    for node in _remote_executors(system):
        node.close()


def remove_remote_workdirs(system: System, local_workdir: Path) -> None:
    """Delete a finished session's folder on every remote host the system used (the local
    one is removed by the caller); failures only warn: the results are already safe."""
    for node in _remote_executors(system):
        folder = node.session_dir(local_workdir)
        try:
            node.run(["rm", "-rf", str(folder)], timeout_s=300)
        except (ExecutorError, HostUnreachable) as exc:
            log.warning("could not remove %s on %s: %s", folder, node.host, exc)
