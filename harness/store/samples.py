"""The sample store: every finished test is on disk before the next one starts.

A session folder holds ``session.json`` (the resolved config and the session's identity),
``observations.jsonl`` (one finished test per line, appended and fsync'ed), ``references.jsonl``
(extra re-measurements of the default, which do not count against the budget) and, at the end,
``samples.csv``. The JSON-lines file is append-only, so a kill -9 can at worst leave a torn last
line, which :meth:`SampleStore.load` drops (that test is simply run again on resume). The
repair never edits the file in place: a new file is written, fsync'ed and renamed over the old
one, and the folder is fsync'ed, so a kill at any instant leaves either the old or the repaired
file, never an empty one.

A running session holds an exclusive ``flock`` on ``session.lock`` for its whole life
(:meth:`SampleStore.lock`): a second process that tries to run or resume the same session is
refused with one line naming the holder's PID, instead of running every test twice.

The CSV export has ``config.<knob>`` and ``result.<metric>`` columns: the paper's reusable
database of configuration → performance samples, and valid input to the dataset surrogate.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from harness.errors import StoreError
from harness.records import Observation

__all__ = ["SampleStore", "Store", "atomic_write", "export_csv", "spreadsheet_safe"]

log = logging.getLogger(__name__)

SESSION_FILE = "session.json"
OBSERVATIONS_FILE = "observations.jsonl"
REFERENCES_FILE = "references.jsonl"
SAMPLES_FILE = "samples.csv"
LOCK_FILE = "session.lock"


class Store(Protocol):
    """What a session needs from its store (:class:`SampleStore` on disk, or
    :class:`~harness.store.memory.MemoryStore`)."""

    directory: Path
    persistent: bool

    def lock(self) -> None: ...
    def unlock(self) -> None: ...
    @property
    def exists(self) -> bool: ...
    def create(self, meta: dict[str, Any]) -> None: ...
    def read_meta(self) -> dict[str, Any]: ...
    def update_meta(self, **changes: Any) -> None: ...
    def append(self, observation: Observation, reference: bool = False) -> None: ...
    def load(self, reference: bool = False) -> list[Observation]: ...
    def export_csv(self, observations: Iterable[Observation] | None = None) -> Path | None: ...


class SampleStore:
    """Durable, append-only storage of one session's observations."""

    #: Files may be written next to the observations (artifacts, CSV, crash logs).
    persistent = True

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._lock_handle: Any = None

    # -- the session lock -----------------------------------------------------------------
    def lock(self) -> None:
        """Take the session's exclusive lock (held until :meth:`unlock` or process exit).

        flock, not a PID file: the kernel drops it when the holder dies, even by kill -9, so a
        crashed session never blocks its own resume.
        """
        if self._lock_handle is not None:
            return
        path = self.directory / LOCK_FILE
        try:
            handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the session
        except OSError as exc:
            raise StoreError(
                f"cannot open {path}: {exc.strerror}; check the permissions of {self.directory}"
            ) from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StoreError(
                f"session {self.directory} is in use by PID {holder}; wait for "
                "it to finish (or stop it) before resuming"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock_handle = handle

    def unlock(self) -> None:
        """Release the session lock (idempotent)."""
        handle, self._lock_handle = self._lock_handle, None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.seek(0)
                handle.truncate()
                fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()

    # -- session metadata -----------------------------------------------------------------
    @property
    def exists(self) -> bool:
        return (self.directory / SESSION_FILE).exists()

    def create(self, meta: dict[str, Any]) -> None:
        """Create the session folder; refuses to overwrite an existing session."""
        if self.exists:
            raise StoreError(
                f"session folder {self.directory} already holds a session; "
                f"resume it with resume={self.directory} or pick another name"
            )
        try:
            self.directory.parent.mkdir(parents=True, exist_ok=True)
            if self.directory.is_dir() and not any(self.directory.iterdir()):
                os.chmod(self.directory, 0o700)  # an empty folder made for us (tests, scripts)
            else:
                # exist_ok=False: a folder holding other files is never adopted.
                self.directory.mkdir(mode=0o700)
        except FileExistsError:
            raise StoreError(
                f"{self.directory} already exists and holds no session; pick "
                "another session.name or remove that folder"
            ) from None
        except OSError as exc:
            raise StoreError(
                f"cannot create session folder {self.directory}: "
                f"{exc.strerror}; set results_dir=<a writable folder>"
            ) from None
        self.lock()
        self.write_meta(meta)

    def read_meta(self) -> dict[str, Any]:
        path = self.directory / SESSION_FILE
        try:
            meta = json.loads(path.read_text())
        except FileNotFoundError:
            raise StoreError(
                f"no session in {self.directory} (missing {SESSION_FILE}); "
                "pass the session folder printed when the session started"
            ) from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read {path}: {exc}") from None
        if not isinstance(meta, dict):
            raise StoreError(
                f"{path} holds a JSON {type(meta).__name__}, not a session record; pass a "
                "session folder the harness wrote"
            )
        return meta

    def write_meta(self, meta: dict[str, Any]) -> None:
        try:
            atomic_write(self.directory / SESSION_FILE, json.dumps(meta, indent=2, default=str))
        except OSError as exc:
            raise StoreError(
                f"cannot write {self.directory / SESSION_FILE}: {exc.strerror}; "
                "free some disk space (the finished tests are kept)"
            ) from None

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
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW  # never a planted link
            descriptor = os.open(path, flags, 0o600)
            with open(descriptor, "a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise StoreError(
                f"cannot append to {path}: {exc.strerror}; free some disk space "
                "and resume (every earlier test is kept)"
            ) from None

    def load(self, reference: bool = False) -> list[Observation]:
        """All stored observations in trial order; a torn last line (kill -9) is dropped."""
        path = self.directory / (REFERENCES_FILE if reference else OBSERVATIONS_FILE)
        if not path.exists():
            return []
        observations: list[Observation] = []
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"cannot read {path}: {exc}") from None
        lines = raw.split("\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError(f"a JSON {type(record).__name__}, not an object")
                observations.append(Observation.from_json(record))
            except (ValueError, KeyError, TypeError) as exc:
                if number >= len(lines) - 1 and not raw.endswith("\n"):
                    # the torn final write of a killed session (a complete line ends in \n)
                    log.warning("dropping an incomplete last record in %s", path)
                    _drop_torn_tail(path, raw[: raw.rfind(line)])
                    break
                raise StoreError(
                    f"{path}:{number} is corrupt ({exc}); fix or remove that line"
                ) from None
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
    header = [
        "trial",
        "status",
        "is_default",
        "score",
        "duration_s",
        *(f"config.{k}" for k in knobs),
        *(f"result.{m}" for m in metrics),
        "message",
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([spreadsheet_safe(name) for name in header])
    for obs in rows:
        writer.writerow(
            [
                obs.trial,
                obs.status.value,
                obs.is_default,
                "" if obs.score is None else obs.score,
                f"{obs.duration_s:.3f}",
                *(spreadsheet_safe(obs.config.get(k, "")) for k in knobs),
                *(obs.metrics.get(m, "") for m in metrics),
                spreadsheet_safe(obs.message),
            ]
        )
    try:
        atomic_write(Path(path), buffer.getvalue())
    except OSError as exc:
        raise StoreError(
            f"cannot write {path}: {exc.strerror}; free some disk space (the "
            "tests are kept in observations.jsonl)"
        ) from None


#: What a spreadsheet reads as the start of a formula (OWASP's CSV injection list).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: Any) -> Any:
    """``cell`` for a CSV a person may open in a spreadsheet: text that a spreadsheet would
    run as a formula (``=HYPERLINK(...)``, ``@SUM``, ``-2+3``) gets a leading ``'``; numbers,
    text that reads as one (``-3.5``), booleans and other text are written as they are."""
    if not isinstance(cell, str) or not cell.startswith(_FORMULA_START):
        return cell
    try:
        float(cell)
    except ValueError:
        return "'" + cell
    return cell


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` by ``text``: new file, fsync, rename, fsync of the folder.

    At every instant ``path`` holds either its old or its new content (never a prefix).
    """
    # One fixed name: a write killed half-way leaves a temporary file the next write removes.
    # Removed and created exclusively, never opened as found: a planted symlink there would
    # otherwise be written through (the rename below replaces a link at ``path`` itself).
    temporary = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        with open(os.open(temporary, flags, 0o600), "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX: the directory entry needs its own fsync)."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _drop_torn_tail(path: Path, keep: str) -> None:
    """Repair a store whose last line is torn, atomically (see :func:`_atomic_write`)."""
    try:
        atomic_write(path, keep)
    except OSError as exc:
        raise StoreError(
            f"cannot repair {path}: {exc.strerror}; free some disk space and resume again"
        ) from None
