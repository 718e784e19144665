"""The hosts of one system under tune: SUT nodes in start order and a load generator.

Multi-node adapters (Cassandra, Hadoop) push the same files to every node and start or stop
nodes in order through a :class:`Cluster`; single-node adapters take ``cluster.sut[0]``. Files
are pushed to all nodes in parallel (one thread per node; each executor serialises its own
connection), while commands run node by node because start order matters (seeds, NameNode).
We keep our own executors rather than Fabric's ``ThreadingGroup`` so every node gets the same
quoting, time limits and error mapping as a single host.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.executor import CommandResult, Executor, LocalExecutor

__all__ = ["Cluster"]


@dataclass(frozen=True)
class Cluster:
    """SUT executors (``sut[0]`` is the master / seed node) and the load-generator executor."""

    sut: tuple[Executor, ...]
    load: Executor

    def __post_init__(self) -> None:
        if not self.sut:
            raise ConfigError("a cluster needs at least one SUT host")

    @classmethod
    def local(cls) -> Cluster:
        """This machine as the only SUT node and the load generator."""
        executor = LocalExecutor()
        return cls((executor,), executor)

    @property
    def master(self) -> Executor:
        return self.sut[0]

    @property
    def remote(self) -> bool:
        return not all(isinstance(e, LocalExecutor) for e in (*self.sut, self.load))

    def run_all(
        self, command: Sequence[str], *, reverse: bool = False, **run_kwargs: Any
    ) -> list[CommandResult]:
        """Run ``command`` on every SUT node, in order (``reverse`` for stopping)."""
        nodes = reversed(self.sut) if reverse else self.sut
        return [node.run(command, **run_kwargs) for node in nodes]

    def write_all(self, path: str | Path, text: str, mode: int = 0o644) -> None:
        """Write the same file on every SUT node (in parallel; the first error is raised)."""
        if len(self.sut) == 1:
            self.sut[0].write_text(path, text, mode)
            return
        with ThreadPoolExecutor(max_workers=min(8, len(self.sut))) as pool:
            for future in [pool.submit(n.write_text, path, text, mode) for n in self.sut]:
                future.result()

    def close(self) -> None:
        for node in {id(e): e for e in (*self.sut, self.load)}.values():
            node.close()
