"""The SQLite tracking store on disk: private to its owner, and created so that a kill -9 at any
moment leaves either no store or a complete one.

The rules, and why:

* **Owner only.** The store file, its folder (and every folder down to it from the results
  folder), and the artifact folder ``mlartifacts/`` must belong to this user. The store file
  and the artifact folder give group and others no access at all, and a folder that holds the
  store is not writable by them. Otherwise a user who pre-seeded a shared results folder (a
  world-readable ``mlflow.db``, a folder of theirs) would read every param and run, or swap the
  store under us. They are refused with one line naming the fix, before anything is created.
  The store's folder may stay listable (a git checkout makes ``results/`` 0755): that shows
  names only, and the store file itself is 0600.
* **Built aside.** MLflow's first schema migration is a few hundred SQLite statements that are
  not one transaction; a kill in the middle leaves a store that no later session can open
  ("table ... already exists", an ``_alembic_tmp_*`` table). A new store is therefore migrated
  in a private file beside it (0600) and renamed into place only once complete. A kill leaves
  at worst that file behind, which the next opening removes.
* **Repaired only when empty.** A store found cut short in a migration (by an older harness or
  another tool) that holds no run and no experiment of its own is rebuilt the same way; one
  that holds runs is refused with the fix, never deleted.

Creating, repairing and opening a store happen under one lock file beside it, so parallel sweep
jobs never race on one fresh file.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import pwd
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from harness.errors import TrackingError

__all__ = [
    "ARTIFACTS_FOLDER",
    "check_artifact_folder",
    "check_store",
    "make_artifact_folder",
    "ready_store",
    "store_lock",
    "store_ready",
]

log = logging.getLogger(__name__)

ARTIFACTS_FOLDER = "mlartifacts"  # under results_dir: where sessions' artifacts go
_BUILDING = ".building-"  # infix of the file a new store is migrated in
_TMP_TABLE = "_alembic_tmp_"  # what alembic's table rebuilds leave when cut short
# (table, condition) pairs: a row in any of them is data that a rebuild would lose
_DATA = (
    ("runs", "1"),
    (f"{_TMP_TABLE}runs", "1"),
    ("experiments", "experiment_id <> 0"),
    (f"{_TMP_TABLE}experiments", "experiment_id <> 0"),
)


# -- who may read it -------------------------------------------------------------------------
def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _refuse_foreign(path: Path, what: str, info: os.stat_result, fix: str) -> None:
    """Refuse ``path`` unless it belongs to this user: its owner can read it, replace it or
    change its mode whatever the mode is now."""
    if info.st_uid != os.geteuid():
        raise TrackingError(
            f"{what} {path} belongs to {_user(info.st_uid)}, not to you "
            f"({_user(os.geteuid())}), who could read or replace every run in it; {fix}"
        )


def _refuse_open(path: Path, what: str, info: os.stat_result, bits: int, chmod: str) -> None:
    """Refuse ``path`` when its mode gives group/others any of ``bits``, naming the chmod."""
    if info.st_mode & bits:
        mode = stat.S_IMODE(info.st_mode)
        access = "readable or writable" if bits & 0o044 else "writable"
        fix = (  # a shared folder by design (/tmp) is not to be closed
            "use a results_dir of your own"
            if info.st_mode & stat.S_ISVTX
            else f"run `chmod {chmod} {path}` or use another results_dir"
        )
        raise TrackingError(
            f"{what} {path} is {access} by group/others (mode {mode:04o}), so they could read "
            f"or replace every run in it; {fix}"
        )


def _check_file(path: Path) -> None:
    try:
        info = path.stat()  # a symlink is judged by what it points to
    except FileNotFoundError:
        return
    fix = "use a results_dir (or tracking.uri) of your own"
    _refuse_foreign(path, "MLflow store", info, fix)
    _refuse_open(path, "MLflow store", info, 0o077, "600")


def _check_folder(folder: Path, what: str, bits: int, chmod: str) -> None:
    try:
        info = folder.stat()
    except FileNotFoundError:
        return
    _refuse_foreign(folder, what, info, "use a results_dir of your own")
    _refuse_open(folder, what, info, bits, chmod)


def check_artifact_folder(folder: Path) -> None:
    """Refuse an artifact folder of another user's, or one group/others can enter: MLflow
    writes artifacts under the process umask, so this folder is what keeps them private."""
    _check_folder(folder, "MLflow artifact folder", 0o077, "700")


def make_artifact_folder(folder: Path) -> None:
    """Check ``folder``, then create it 0700 when missing (its parent must exist), before MLflow
    creates it with the process umask."""
    check_artifact_folder(folder)
    if folder.parent.is_dir():
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)


def check_store(path: Path, results_dir: Path) -> None:
    """Refuse a store that is not private (see the module docstring), then create its folder
    (0700, and only inside ``results_dir``: the harness often runs as root, where any path can
    be created). Nothing is created before every check passed."""
    folder = path.parent
    inside = folder.resolve().is_relative_to(results_dir.resolve())
    if inside:
        for level in _levels(results_dir.resolve(), folder.resolve()):
            _check_folder(level, "MLflow store folder", 0o022, "go-w")
    _check_file(path)
    if not folder.is_dir():
        if not inside:
            raise TrackingError(
                f"cannot create {folder} for the MLflow store {path}: it "
                f"is outside the results folder {results_dir}; create it "
                "yourself, put the store inside the results folder, or "
                "set tracking=none"
            )
        _make_folders(results_dir.resolve(), folder.resolve())
    if not os.access(folder, os.W_OK):
        raise TrackingError(
            f"MLflow store folder {folder} is not writable; fix tracking.uri or set tracking=none"
        )


def _levels(top: Path, folder: Path) -> list[Path]:
    """``top`` and every folder under it down to ``folder`` (``folder`` is inside ``top``)."""
    levels = [top]
    for part in folder.relative_to(top).parts:
        levels.append(levels[-1] / part)
    return levels


def _make_folders(top: Path, folder: Path) -> None:
    """Create ``folder`` and the missing levels above it down from ``top``, 0700; ``top`` itself,
    when missing, as :func:`harness.builder.validate.ensure_results_dir` makes it (0711: server
    users reach their instance folders under ``work/``)."""
    try:
        if not top.is_dir():
            top.mkdir(parents=True)
            os.chmod(top, 0o711)
        for level in _levels(top, folder)[1:]:
            with contextlib.suppress(FileExistsError):
                level.mkdir(mode=0o700)
    except OSError as exc:
        raise TrackingError(
            f"cannot create {folder} for the MLflow store: {exc.strerror}; "
            "fix tracking.uri or set tracking=none"
        ) from None


# -- creating it -----------------------------------------------------------------------------
@contextlib.contextmanager
def store_lock(path: Path) -> Iterator[None]:
    """An exclusive lock file beside the store (never through a symlink planted there)."""
    fd = os.open(path.with_suffix(".init-lock"), os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextlib.contextmanager
def store_ready(path: Path | None) -> Iterator[None]:
    """The store at ``path`` made complete (:func:`ready_store`), then held under its lock while
    the caller opens it: parallel sweep jobs (joblib launcher) racing on one fresh file would
    break it. ``None`` (a store that is not a SQLite file): nothing to do."""
    if path is None:
        yield
        return
    with store_lock(path):
        ready_store(path)
        yield


def ready_store(path: Path) -> None:
    """Make the store at ``path`` complete, under :func:`store_lock`: build a missing or empty
    one aside, rebuild one cut short in a migration that holds nothing, refuse one cut short
    that holds runs. A store at this MLflow's schema revision, one at another revision without
    a table left behind (MLflow's own error names ``mlflow db upgrade``), and a file that is
    not an SQLite database (MLflow's error says so) are left as they are."""
    _remove_leftovers(path)
    if not path.exists() or path.stat().st_size == 0:
        _build_aside(path)
        return
    found = _inspect(path)
    if found is None:
        return
    tables, revision = found
    left = sorted(t for t in tables if t.startswith(_TMP_TABLE))
    at_head = revision == _head_revision()
    if at_head and not left:
        return
    if not _holds_data(path, tables):
        why = f"table {left[0]} left behind" if left else f"schema revision {revision or 'none'}"
        log.warning("MLflow: store %s was cut short in its creation (%s); rebuilt", path, why)
        _build_aside(path)
    elif left and not at_head:
        raise TrackingError(
            f"MLflow store {path} was cut short in a schema migration (table {left[0]} left "
            f"behind) and holds runs; restore it from a backup, or move it away "
            f"(mv {path} {path}.broken) to start a new store"
        )


def _remove_leftovers(path: Path) -> None:
    """Files of a build that a kill interrupted (with their journals): nobody else builds
    while we hold the lock."""
    for leftover in path.parent.glob(f".{path.name}{_BUILDING}*"):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def _build_aside(path: Path) -> None:
    """Migrate a new store in a private file beside ``path``, then rename it into place.

    The file gets a new random name each time, so that no journal of an interrupted build can
    be rolled back into it."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}{_BUILDING}", dir=path.parent)  # 0600
    os.close(fd)
    building = Path(name)
    try:
        _migrate(building)
        _fsync(building, os.O_RDONLY)
        os.replace(building, path)
        _fsync(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    finally:
        for leftover in (building, Path(f"{building}-journal")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def _migrate(path: Path) -> None:
    """Let MLflow create its schema in ``path``, then close its connections to that file
    (MLflow keeps one engine per URI for the life of the process)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{path}"
    try:
        MlflowClient(tracking_uri=uri).search_experiments(max_results=1)
    finally:
        engine = getattr(SqlAlchemyStore, "_engine_map", {}).pop(uri, None)
        if engine is not None:
            engine.dispose()


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- judging one found on disk ---------------------------------------------------------------
def _inspect(path: Path) -> tuple[set[str], str] | None:
    """The tables of the store at ``path`` and its schema revision ("" when it has none), or
    None when it is not an SQLite database. (Opening it also rolls back the journal of a
    transaction a kill interrupted, as SQLite does for every reader.)"""
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            rows = (
                db.execute("SELECT version_num FROM alembic_version").fetchall()
                if "alembic_version" in tables
                else []
            )
    except sqlite3.DatabaseError:
        return None
    return tables, ",".join(str(row[0]) for row in rows)


def _head_revision() -> str:
    """The schema revision this MLflow creates and expects."""
    from mlflow.store.db.utils import _get_latest_schema_revision

    return str(_get_latest_schema_revision())


def _holds_data(path: Path, tables: set[str]) -> bool:
    """Whether the store holds a run or an experiment of its own (counting the copies that an
    interrupted table rebuild left behind)."""
    with contextlib.closing(sqlite3.connect(path, timeout=30)) as db:
        return any(
            db.execute(f"SELECT 1 FROM {table} WHERE {condition} LIMIT 1").fetchone()
            for table, condition in _DATA
            if table in tables
        )
