"""The SQLite adapter: a real database file tuned through PRAGMAs, one fresh worker per test.

SQLite is embedded, so there is no server to start. What "start" means here: materialise the
test database for the applied configuration and prove that SQLite honours every PRAGMA.

Initial state. ``page_size`` and ``auto_vacuum`` are fixed when a file is created, so the adapter
keeps one *pristine* database per ``(page_size, auto_vacuum)``, built once (deterministically,
from the workload's ``rows`` and ``seed``) by :func:`systems.sqlite.worker.build`, and copies it
to ``test.db`` before every test (then fsyncs the copy, so no test inherits dirty pages). The
copy takes ~0.05 s for 100k rows (21 MB) against ~0.3 s for a rebuild and ~0.13 s for
copy + VACUUM to another page size (measured, see README.md), and gives byte-identical files.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

from harness.errors import SystemStartError
from harness.space import Config, load_catalogue
from harness.system import System, Workload, native_header
from systems.sqlite import pragmas, worker

__all__ = ["CATALOGUE", "WORKER", "SQLiteSystem"]

log = logging.getLogger(__name__)

CATALOGUE = Path(__file__).with_name("knobs.yaml")
WORKER = Path(__file__).with_name("worker.py")


class SQLiteSystem(System):
    """SQLite 3 (the Python standard library's build) with a sysbench-like table.

    ``knob_set`` picks the tuned knobs ("10" or "all"); knobs outside the set keep SQLite's
    defaults. ``python`` is the interpreter that runs the worker (default: this one).
    """

    name = "sqlite"
    kind = "real"

    def __init__(self, knob_set: str = "10", python: str | None = None) -> None:
        super().__init__(load_catalogue(CATALOGUE, str(knob_set)))
        self.knob_set = str(knob_set)
        self.defaults: Config = load_catalogue(CATALOGUE, "all").default()
        self.python = python or sys.executable
        self.folder: Path | None = None
        self.rows: int | None = None
        self.seed = 0
        self.last_setup_s = 0.0
        self._config: Config | None = None

    # -- paths -----------------------------------------------------------------------------
    @property
    def database(self) -> Path:
        """The database file the next test runs on."""
        if self.folder is None:
            raise SystemStartError("the SQLite system was not set up (call setup() first)")
        return self.folder / "test.db"

    def pristine(self, page_size: int, auto_vacuum: str) -> Path:
        """Path of the pristine database for a creation key (built on first use)."""
        assert self.folder is not None and self.rows is not None
        path = self.folder / f"pristine-{self.rows}-{self.seed}-{page_size}-{auto_vacuum}.db"
        if not path.exists():
            started = time.perf_counter()
            partial = path.with_name(path.name + ".partial")
            worker.build(str(partial), self.rows, self.seed, page_size, auto_vacuum.upper())
            os.replace(partial, path)  # a half-built file never looks pristine
            log.info("built %s in %.2fs", path.name, time.perf_counter() - started)
        return path

    # -- lifecycle -------------------------------------------------------------------------
    def setup(self, workdir: Path, workload: Workload) -> None:
        self.folder = workdir / "sqlite"
        self.folder.mkdir(parents=True, exist_ok=True)
        workload.prepare(self, workdir)

    def use_data(self, rows: int, seed: int) -> None:
        """Called by the workload's ``prepare``: the table size and seed of the initial data.
        Builds the default configuration's pristine database so the first test starts fast."""
        if rows < 1:
            raise ValueError(f"rows must be positive, got {rows}")
        if self.folder is None:
            raise SystemStartError("the SQLite system was not set up (call setup() first)")
        self.rows, self.seed = int(rows), int(seed)
        self.pristine(*pragmas.creation_key({}, self.space, self.defaults))

    def reset(self) -> None:
        """Remove the test database and its journals; ``start`` copies a pristine one."""
        if self.folder is not None:
            _remove_database(self.database)

    def apply(self, config: Config) -> None:
        """Validate ``config`` against the catalogue and keep it for ``start`` and the worker."""
        pragmas.render(config, self.space, self.defaults)  # raises KnobError on any bad value
        self._config = dict(config)

    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """``pragmas.sql``: the tuned knobs as PRAGMA statements, tokens as a test uses them."""
        lines = native_header(self.space, config, note, start="-- ")
        lines += pragmas.script(config, self.space, self.defaults)
        return {"pragmas.sql": "\n".join(lines) + "\n"}

    def connection_pragmas(self) -> list[tuple[str, str]]:
        """The applied configuration as per-connection ``(name, token)`` PRAGMA pairs."""
        return pragmas.render(self._config or {}, self.space, self.defaults)

    def start(self, timeout_s: float) -> None:
        """Copy the pristine database for the applied config and check SQLite honours it."""
        if self._config is None:
            raise SystemStartError("no configuration applied before start")
        if self.rows is None:
            raise SystemStartError("no data: the workload's prepare() did not run (setup first)")
        started = time.perf_counter()
        config = self._config
        key = pragmas.creation_key(config, self.space, self.defaults)
        target = self.database
        try:
            source = self.pristine(*key)
            _remove_database(target)
            shutil.copyfile(source, target)
            _fsync(target)
            actual = _effective(
                target,
                self.connection_pragmas(),
                list(pragmas.expected_readback(config, self.space, self.defaults)),
            )
        except (sqlite3.Error, OSError, ValueError) as exc:
            raise SystemStartError(
                f"SQLite rejected the configuration {config}: {type(exc).__name__}: {exc}",
                log_tail=str(exc),
            ) from None
        problems = pragmas.mismatches(
            pragmas.expected_readback(config, self.space, self.defaults), actual
        )
        if problems:
            raise SystemStartError(
                "SQLite does not honour this configuration: " + "; ".join(problems),
                log_tail="\n".join(problems),
            )
        self.last_setup_s = time.perf_counter() - started

    def stop(self) -> None:
        """Nothing runs between tests (each worker process exits by itself)."""

    def teardown(self) -> None:
        """Delete the test and pristine databases (they are rebuilt on the next setup)."""
        if self.folder is not None and self.folder.exists():
            shutil.rmtree(self.folder, ignore_errors=True)

    # -- the worker ------------------------------------------------------------------------
    def worker_command(self, mix: str, duration_s: float, seed: int) -> list[str]:
        """The argument list that runs one benchmark on the test database (no shell)."""
        if self.rows is None:
            raise SystemStartError("no data: the workload's prepare() did not run (setup first)")
        return [
            self.python,
            "-I",
            str(WORKER),
            "run",
            "--db",
            str(self.database),
            "--mix",
            mix,
            "--duration",
            f"{duration_s:g}",
            "--rows",
            str(self.rows),
            "--seed",
            str(seed),
            "--pragmas",
            json.dumps(self.connection_pragmas()),
        ]

    def describe(self) -> dict[str, str]:
        return {
            **super().describe(),
            "sqlite_version": sqlite3.sqlite_version,
            "knob_set": self.knob_set,
            "backend": "python stdlib sqlite3",
        }


def _remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _effective(path: Path, pairs: list[tuple[str, str]], names: list[str]) -> dict[str, object]:
    """Open ``path``, apply the PRAGMAs as the worker does, and read back ``names``."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for name, token in pairs:
            conn.execute(worker.pragma_sql(name, token)).fetchall()
        conn.execute(f"SELECT count(*) FROM {worker.TABLE} WHERE id=1").fetchall()
        values: dict[str, object] = {}
        for name in names:
            row = conn.execute(f"PRAGMA {name}").fetchone()  # names come from PRAGMAS' keys
            values[name] = row[0] if row else None
        return values
    finally:
        conn.close()
