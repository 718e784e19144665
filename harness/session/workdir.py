"""A session's work folder: created by the session, marked as its own, removed only if so.

The marker file (:data:`MARKER`) holds the session id. A folder that exists without the marker
naming the session was not made by it — a typo'd ``session.name`` pointing at someone's data,
a folder of another session — and is never reused or deleted.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from harness.errors import SessionAborted, StoreError

__all__ = ["MARKER", "owned_by", "prepare", "remove"]

log = logging.getLogger(__name__)

#: The file that marks a work folder as created by the session named inside it.
MARKER = ".harness-session"


def prepare(folder: Path, session_id: str) -> None:
    """Create the work folder and mark it as the session's (reuse it only if marked)."""
    if folder.exists():
        if not owned_by(folder, session_id):
            raise SessionAborted(
                f"work folder {folder} exists but was not created by session "
                f"{session_id}; move it away or pick another session.name"
            )
        return
    try:
        if not folder.parent.exists():
            folder.parent.mkdir(parents=True)
            os.chmod(folder.parent, 0o711)
        folder.mkdir()
        # 0711: server users (postgres, mysql) must traverse it to reach their instance
        # folder; nobody else may list it.
        os.chmod(folder, 0o711)
        (folder / MARKER).write_text(session_id + "\n")
    except OSError as exc:
        raise StoreError(
            f"cannot create the work folder {folder}: {exc.strerror}; "
            "set results_dir=<a writable folder>"
        ) from None


def owned_by(folder: Path, session_id: str) -> bool:
    """Whether ``folder`` carries the marker of session ``session_id``."""
    try:
        text = (folder / MARKER).read_text().strip()
    except OSError:
        return False
    return text == session_id


def remove(folder: Path, session_id: str) -> None:
    """Delete ``folder`` if session ``session_id`` created it; leave (and say so) otherwise."""
    if not folder.exists():
        return
    if not owned_by(folder, session_id):
        log.warning("leaving %s in place: it was not created by session %s", folder, session_id)
        return
    shutil.rmtree(folder, ignore_errors=True)
