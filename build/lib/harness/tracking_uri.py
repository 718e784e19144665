"""Tracking URIs: credentials out of them, redaction of what is shown, and SQLite stores that
are created only inside the results folder and private from the first byte."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from harness.errors import TrackingError

__all__ = [
    "HTTP_DEFAULTS",
    "check_uri",
    "redact_uri",
    "sqlite_path",
    "store_lock",
    "take_credentials",
]

log = logging.getLogger(__name__)

# MLflow's defaults retry a dead server for about 4 minutes per call; here one attempt fails
# fast and the outbox does the retrying, off the tests' path. Set only where the user did not.
HTTP_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
}
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s@/]+(?:/[^\s@]*)?@")


def redact_uri(text: str) -> str:
    """``text`` with the user info of every URI in it masked: ``https://***@host/...``.

    Pure, and safe on any text (a URI, a message, a param value), so callers can pass anything
    they are about to store or show.
    """
    return _USERINFO.sub(r"\1***@", text)


def take_credentials(uri: str) -> str:
    """``uri`` without user info; its credentials go to MLflow's variables for this process.

    Idempotent (a bare URI comes back unchanged), so the CLI may call it on ``tracking.uri``
    before Hydra writes the overrides to disk, and the tracker calls it again.
    """
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or "@" not in parts.netloc:
        return uri
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    if not password:
        raise TrackingError(
            f"tracking.uri {redact_uri(uri)} carries a user but no password; "
            "pass credentials in MLFLOW_TRACKING_USERNAME and "
            "MLFLOW_TRACKING_PASSWORD (or MLFLOW_TRACKING_TOKEN) instead"
        )
    os.environ["MLFLOW_TRACKING_USERNAME"] = unquote(user)
    os.environ["MLFLOW_TRACKING_PASSWORD"] = unquote(password)
    log.warning(
        "MLflow: the credentials in tracking.uri are used through "
        "MLFLOW_TRACKING_USERNAME/MLFLOW_TRACKING_PASSWORD; set those variables "
        "instead of writing them into the URI"
    )
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def sqlite_path(uri: str) -> Path | None:
    if not uri.startswith("sqlite:///"):
        return None
    raw = uri[len("sqlite:///") :].split("?", 1)[0]
    return Path(raw) if raw and raw != ":memory:" else None


@contextlib.contextmanager
def store_lock(uri: str) -> Iterator[None]:
    """An exclusive lock file next to a SQLite store (no-op for other stores)."""
    path = sqlite_path(uri)
    if path is None:
        yield
        return
    fd = os.open(path.with_suffix(".init-lock"), os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with contextlib.suppress(FileExistsError):
            # An empty file is a valid new database; created here so that it is private
            # from the first byte (SQLite gives its journal files the same mode).
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        yield
    finally:
        os.close(fd)  # releases the lock


def check_uri(uri: str, results_dir: Path) -> None:
    """Fail early, in one line, on a store that cannot work; create nothing outside
    ``results_dir`` (the harness often runs as root, where any path can be created)."""
    path = sqlite_path(uri)
    if path is not None:
        folder = path.parent
        if not folder.is_dir():
            if not folder.resolve().is_relative_to(results_dir.resolve()):
                raise TrackingError(
                    f"cannot create {folder} for the MLflow store {uri}: it "
                    f"is outside the results folder {results_dir}; create it "
                    "yourself, put the store inside the results folder, or "
                    "set tracking=none"
                )
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise TrackingError(
                    f"cannot create {folder} for the MLflow store {uri}: "
                    f"{exc.strerror}; fix tracking.uri or set tracking=none"
                ) from None
        if not os.access(folder, os.W_OK):
            raise TrackingError(
                f"MLflow store folder {folder} is not writable; "
                "fix tracking.uri or set tracking=none"
            )
    elif uri.startswith(("file:", "/", ".")) and "MLFLOW_ALLOW_FILE_STORE" not in os.environ:
        raise TrackingError(
            f"tracking.uri {uri!r} is a file store, which current MLflow refuses; "
            "use sqlite:///results/mlflow.db or an http(s):// tracking server"
        )
