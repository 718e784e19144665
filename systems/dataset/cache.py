"""Cache folders and files that belong to the user who runs the harness.

Rule: a cache is read only from a folder and a regular file that this user owns and that no
one else can write (no group or other write bit), and it is written only into such a folder,
as a new 0600 file renamed into place; folders this module creates are 0700. Anything else is
refused with one warning line, and the caller refits or searches again: a refused cache costs
time, never correctness. Why: a cache folder is a config value and may lie where another
local user can write (a shared working directory, a recipe's path), and what such a user
plants there must never be read as this user's own result.

``cache_dir: user:`` stands for the user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``,
then ``classytune-harness/surrogates``).
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["USER_CACHE", "private_dir", "read_private", "resolve_cache_dir", "write_private"]

log = logging.getLogger(__name__)

USER_CACHE = "user:"
_OFF = ("", "none", "null", "false")
#: Paths already warned about (one line per path and process, not one per build).
_WARNED: set[str] = set()


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/classytune-harness/surrogates`` (``~/.cache`` when unset or relative,
    as the XDG spec says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "classytune-harness" / "surrogates"


def resolve_cache_dir(value: str | Path | None) -> Path | None:
    """The folder a ``cache_dir`` setting names; ``None`` when caching is off."""
    if value is None or str(value).strip().lower() in _OFF:
        return None
    if str(value) == USER_CACHE:
        return user_cache_dir()
    return Path(str(value)).expanduser()


def _warn(path: Path, why: str) -> None:
    if str(path) not in _WARNED:
        _WARNED.add(str(path))
        log.warning("not using the cache %s: %s; nothing is read from or cached there", path, why)


def _problem(info: os.stat_result, kind: str) -> str:
    """Why a folder or file with this status is not this user's own private one ('' if it is)."""
    if kind == "folder" and not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if kind == "file" and not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_uid != os.geteuid():
        return f"it is owned by uid {info.st_uid}, not by this user ({os.geteuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write it (mode {stat.S_IMODE(info.st_mode):o}; chmod go-w)"
    return ""


def _make_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents, each 0700."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)


def private_dir(path: Path) -> Path | None:
    """``path``, created 0700 if missing, when it is this user's own folder that only they
    can write; else ``None`` after one warning line."""
    try:
        _make_dirs(path)
        why = _problem(path.stat(), "folder")
    except OSError as exc:
        why = f"cannot create or inspect it ({exc.strerror or exc})"
    if why:
        _warn(path, why)
        return None
    return path


def read_private(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is this user's own regular file that only they can write
    (checked on the opened file, so no swap after the check counts); ``None`` if it does not
    exist or is refused (one warning line)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        _warn(path, f"cannot open it ({exc.strerror or exc}; a symbolic link is refused)")
        return None
    with os.fdopen(fd, "rb") as handle:
        why = _problem(os.fstat(fd), "file")
        if why:
            _warn(path, why)
            return None
        return handle.read()


def write_private(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` as a new 0600 file renamed into place (readers never see a
    half-written file); ``False`` after one warning line if that fails."""
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        _warn(path.parent, f"cannot write {path.name} there ({exc.strerror or exc})")
        return False
    return True
