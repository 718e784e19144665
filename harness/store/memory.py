"""A session store that keeps everything in memory, for benchmarks and tests.

:class:`MemoryStore` answers the same calls as :class:`~harness.store.samples.SampleStore`, so a
session runs exactly as it does on disk, but nothing is written: no ``session.json``, no
JSON-lines file, no CSV and no tuner artifacts. It cannot be resumed or shared between
processes; a benchmark that runs thousands of short sessions wants exactly that, and its own
cache of finished sessions keeps what it needs.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.errors import StoreError
from harness.records import Observation

__all__ = ["MemoryStore"]


class MemoryStore:
    """One session's metadata and observations, in this process only."""

    #: Session checks this before writing files next to the store (artifacts, CSV, logs).
    persistent = False

    def __init__(self, directory: str | Path) -> None:
        # Named like the disk store's folder so that messages can point at it; never created.
        self.directory = Path(directory)
        self._meta: dict[str, Any] | None = None
        self._observations: list[Observation] = []
        self._references: list[Observation] = []

    def lock(self) -> None:
        """Nothing to lock: no other process can see this store."""

    def unlock(self) -> None:
        """Nothing to unlock."""

    @property
    def exists(self) -> bool:
        return self._meta is not None

    def create(self, meta: dict[str, Any]) -> None:
        if self._meta is not None:
            raise StoreError(f"the in-memory session {self.directory.name} already exists")
        self._meta = copy.deepcopy(meta)

    def read_meta(self) -> dict[str, Any]:
        if self._meta is None:
            raise StoreError(f"the in-memory session {self.directory.name} was never created")
        return copy.deepcopy(self._meta)

    def write_meta(self, meta: dict[str, Any]) -> None:
        self._meta = copy.deepcopy(meta)

    def update_meta(self, **changes: Any) -> None:
        meta = self.read_meta()
        meta.update(changes)
        self._meta = meta

    def append(self, observation: Observation, reference: bool = False) -> None:
        (self._references if reference else self._observations).append(observation)

    def load(self, reference: bool = False) -> list[Observation]:
        return list(self._references if reference else self._observations)

    def export_csv(self, observations: Iterable[Observation] | None = None) -> None:
        """No file: an in-memory session's samples are in its result."""
        return None
