"""The sample store: every finished test is on disk before the next one starts.

A session folder holds ``session.json`` (the resolved config and the session's identity),
``observations.jsonl`` (one finished test per line, appended and fsync'ed), ``references.jsonl``
(extra re-measurements of the default, which do not count against the budget) and, at the end,
``samples.csv``. The JSON-lines file is append-only, so a kill -9 can at worst leave a torn last
line, which :meth:`SampleStore.load` drops (that test is simply run again on resume).

The CSV export has ``config.<knob>`` and ``result.<metric>`` columns: the paper's reusable
database of configuration → performance samples, and valid input to the dataset surrogate.
"""

from __future__ import annotations

import csv
import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.errors import StoreError
from harness.records import Observation

__all__ = ["SampleStore", "export_csv"]

log = logging.getLogger(__name__)

SESSION_FILE = "session.json"
OBSERVATIONS_FILE = "observations.jsonl"
REFERENCES_FILE = "references.jsonl"
SAMPLES_FILE = "samples.csv"


class SampleStore:
    """Durable, append-only storage of one session's observations."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    # -- session metadata -----------------------------------------------------------------
    @property
    def exists(self) -> bool:
        return (self.directory / SESSION_FILE).exists()

    def create(self, meta: dict[str, Any]) -> None:
        """Create the session folder; refuses to overwrite an existing session."""
        if self.exists:
            raise StoreError(f"session folder {self.directory} already holds a session; "
                             f"resume it with resume={self.directory} or pick another name")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.write_meta(meta)
        except OSError as exc:
            raise StoreError(f"cannot create session folder {self.directory}: {exc}; "
                             "set results_dir=<a writable folder>") from None

    def read_meta(self) -> dict[str, Any]:
        path = self.directory / SESSION_FILE
        try:
            return dict(json.loads(path.read_text()))
        except FileNotFoundError:
            raise StoreError(f"no session in {self.directory} (missing {SESSION_FILE}); "
                             "pass the session folder printed when the session started") from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read {path}: {exc}") from None

    def write_meta(self, meta: dict[str, Any]) -> None:
        _atomic_write(self.directory / SESSION_FILE, json.dumps(meta, indent=2, default=str))

    def update_meta(self, **changes: Any) -> None:
        meta = self.read_meta()
        meta.update(changes)
        self.write_meta(meta)

    # -- observations ---------------------------------------------------------------------
    def append(self, observation: Observation, reference: bool = False) -> None:
        """Append one finished test and fsync it before returning."""
        path = self.directory / (REFERENCES_FILE if reference else OBSERVATIONS_FILE)
        line = json.dumps(observation.to_json(), default=_json_default) + "\n"
        try:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise StoreError(f"cannot append to {path}: {exc}") from None

    def load(self, reference: bool = False) -> list[Observation]:
        """All stored observations in trial order; a torn last line (kill -9) is dropped."""
        path = self.directory / (REFERENCES_FILE if reference else OBSERVATIONS_FILE)
        if not path.exists():
            return []
        observations: list[Observation] = []
        raw = path.read_text(encoding="utf-8")
        lines = raw.split("\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                observations.append(Observation.from_json(json.loads(line)))
            except (ValueError, KeyError) as exc:
                if number >= len(lines) - 1:  # the torn final write of a killed session
                    log.warning("dropping an incomplete last record in %s", path)
                    _truncate_last_line(path, raw, line)
                    break
                raise StoreError(f"{path}:{number} is corrupt ({exc}); "
                                 "fix or remove that line") from None
        if not reference:
            trials = [o.trial for o in observations]
            if trials != list(range(len(trials))):
                raise StoreError(f"{path} has trials {trials[:10]}...; expected 0, 1, 2, ...")
        return observations

    def export_csv(self, observations: Iterable[Observation] | None = None) -> Path:
        """Write ``samples.csv`` (all observations) and return its path."""
        path = self.directory / SAMPLES_FILE
        export_csv(self.load() if observations is None else observations, path)
        return path


def export_csv(observations: Iterable[Observation], path: str | Path) -> None:
    """Write observations as a table with ``config.<knob>`` and ``result.<metric>`` columns."""
    rows = list(observations)
    knobs: list[str] = []
    metrics: list[str] = []
    for obs in rows:
        knobs += [k for k in obs.config if k not in knobs]
        metrics += [m for m in obs.metrics if m not in metrics]
    header = ["trial", "status", "is_default", "score", "duration_s",
              *(f"config.{k}" for k in knobs), *(f"result.{m}" for m in metrics), "message"]
    _atomic_write(Path(path), "")
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for obs in rows:
            writer.writerow([obs.trial, obs.status.value, obs.is_default,
                             "" if obs.score is None else obs.score, f"{obs.duration_s:.3f}",
                             *(obs.config.get(k, "") for k in knobs),
                             *(obs.metrics.get(m, "") for m in metrics), obs.message])


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def _atomic_write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _truncate_last_line(path: Path, raw: str, line: str) -> None:
    keep = raw[: raw.rfind(line)]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(keep)
        handle.flush()
        os.fsync(handle.fileno())
