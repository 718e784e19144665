"""The heap of a Cassandra node, and the knobs Cassandra sizes from the heap.

Cassandra picks its heap from the host's memory (``cassandra-env.sh``: max(min(RAM/2, 1 GiB),
min(RAM/4, 8 GiB))) and derives several sizes from the heap when they are left on "auto". The
knob catalogue holds those derived defaults, and the upper bounds of on-heap sizes, for a
reference heap of 8 GiB; :func:`heap_overrides` rescales them to the heap the nodes really get,
so a default test is Cassandra's own default on that host, and a 2 GiB node is never offered a
4 GiB memtable. Nodes that share a host (a local ring) share its memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.errors import ConfigError, ExecutorError
from harness.executor import Executor, LocalExecutor
from harness.hosts.machine import Machine
from harness.space import Space

__all__ = [
    "REFERENCE_HEAP_MB",
    "auto_heap_mb",
    "clamp_heap_mb",
    "heap_overrides",
    "host_heap_mb",
]

#: The heap the catalogue's heap-derived defaults and on-heap upper bounds are written for.
REFERENCE_HEAP_MB = 8192

#: knob -> Cassandra's "auto" value for a heap of ``h`` MiB (its cassandra.yaml comments).
_AUTO: dict[str, Callable[[int], int]] = {
    "memtable_heap_space_in_mb": lambda h: h // 4,
    "memtable_offheap_space_in_mb": lambda h: h // 4,
    "key_cache_size_in_mb": lambda h: min(h * 5 // 100, 100),
    "file_cache_size_in_mb": lambda h: min(h // 4, 512),
    "index_summary_capacity_in_mb": lambda h: h * 5 // 100,
}
#: On-heap sizes whose upper bound scales with the heap (off-heap ones do not).
_ON_HEAP = ("memtable_heap_space_in_mb", "key_cache_size_in_mb", "index_summary_capacity_in_mb")


def host_heap_mb(nodes: Sequence[Executor]) -> int:
    """Cassandra's own heap rule for the first SUT host, its memory shared by the nodes that
    run on it (every node of a local ring is this machine); ConfigError if unreadable.

    The host's memory is what :meth:`harness.hosts.machine.Machine.of` reads there: its control
    group's limit and the inventory's ``ram_mib`` share applied, as for every other system."""
    first = nodes[0]
    try:
        ram_mib = Machine.of(first).ram_mib
    except (ExecutorError, ValueError) as exc:
        raise ConfigError(
            f"cannot read the memory of SUT host {first.host} ({exc}); "
            "set system.adapter.heap_mb=<MiB per node>"
        ) from None
    if ram_mib <= 0:
        raise ConfigError(
            f"cannot read the memory of SUT host {first.host}; "
            "set system.adapter.heap_mb=<MiB per node>"
        )
    local = isinstance(first, LocalExecutor)
    sharing = sum(
        1 for n in nodes if (isinstance(n, LocalExecutor) if local else n.address == first.address)
    )
    return auto_heap_mb(ram_mib, sharing)


def auto_heap_mb(ram_mib: int, nodes_on_host: int = 1) -> int:
    """Cassandra's default heap for one of ``nodes_on_host`` nodes on a host with ``ram_mib``."""
    share = max(1, ram_mib // max(1, nodes_on_host))
    return max(min(share // 2, 1024), min(share // 4, 8192))


def clamp_heap_mb(space: Space, heap_mb: int) -> int:
    """``heap_mb`` within the ``jvm.heap_mb`` knob's range (1-31 GiB): Cassandra's rule gives
    less on a host below 2 GiB, and the derived defaults must match the heap really used."""
    knob = space["jvm.heap_mb"]
    return min(max(int(heap_mb), int(knob.low or heap_mb)), int(knob.high or heap_mb))


def heap_overrides(space: Space, heap_mb: int) -> dict[str, dict[str, Any]]:
    """``Space.with_overrides`` changes that fit the knobs of ``space`` to a ``heap_mb`` heap
    (within the ``jvm.heap_mb`` knob's range: see :func:`clamp_heap_mb`): the heap's own
    default, Cassandra's auto defaults, and on-heap maxima scaled from the reference heap
    (never below twice the knob's minimum)."""
    changes: dict[str, dict[str, Any]] = {}
    if "jvm.heap_mb" in space:
        knob = space["jvm.heap_mb"]
        changes["jvm.heap_mb"] = {"default": heap_mb}
    for name, auto in _AUTO.items():
        if name not in space:
            continue
        knob = space[name]
        low, high = int(knob.low or 0), int(knob.high or 0)
        if name in _ON_HEAP:
            high = max(2 * low, high * heap_mb // REFERENCE_HEAP_MB)
        changes[name] = {"max": high, "default": min(max(auto(heap_mb), low), high)}
    return changes
