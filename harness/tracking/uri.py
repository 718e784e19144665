"""Tracking URIs: credentials out of them, redaction of what is shown, and the fast checks of a
URI that cannot work. (The SQLite store on disk, its privacy and its creation:
:mod:`harness.tracking.store`.)"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from omegaconf import DictConfig, OmegaConf

from harness.errors import ConfigError, TrackingError
from harness.tracking.store import check_store

__all__ = [
    "HTTP_DEFAULTS",
    "check_uri",
    "redact_uri",
    "sqlite_path",
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
# A URI in free text: a scheme, then everything up to a space or a quote/bracket around it.
_URI = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s'\"<>()\[\]{}]*")
# One item of a query or fragment: ``name=value`` (the name is kept) or a bare value.
_ITEM = re.compile(r"[^&;#]+")
MASK = "***"


def redact_uri(text: str) -> str:
    """``text`` with the user info and every query (and fragment) value of every URI in it
    masked: ``https://***@host/path?token=***&x=***``.

    Every value, not only the ones named like secrets: ``?sig=``, ``?sv=``, ``?code=`` or a
    bare ``?abc123`` carry credentials too, and a name list always misses one. Names stay, so
    a reader still sees what the URI carried. Pure, idempotent and safe on any text (a URI, a
    message, a param value), so callers can pass anything they are about to store or show.
    """
    return _URI.sub(_redact_one, _USERINFO.sub(rf"\1{MASK}@", text))


def _redact_one(match: re.Match[str]) -> str:
    uri = match.group(0)
    cut = min((i for i in (uri.find("?"), uri.find("#")) if i >= 0), default=-1)
    if cut < 0:
        return uri
    return uri[: cut + 1] + _ITEM.sub(_mask_item, uri[cut + 1 :])


def _mask_item(item: re.Match[str]) -> str:
    name, eq, _ = item.group(0).partition("=")
    return f"{name}={MASK}" if eq else MASK


def take_credentials(uri: str) -> str:
    """``uri`` without user info; its credentials go to MLflow's variables for this process.

    Idempotent (a bare URI comes back unchanged), so the CLI may call it on ``tracking.uri``
    before Hydra writes the overrides to disk, and the tracker calls it again. An http(s) URI
    with a query or fragment (``?token=...``) is refused here, before anything is written: MLflow
    appends its API paths to the URI, so such a URI never works, and its token would otherwise
    reach the run folder's files. A value in Hydra's quotes (``tracking.uri='"http://..."'``,
    which an ``=`` in a query needs) is handled inside its quotes.
    """
    quote = uri[:1]
    if len(uri) >= 2 and quote in ("'", '"') and uri.endswith(quote):
        return f"{quote}{take_credentials(uri[1:-1])}{quote}"
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https"):
        return uri
    if parts.query or parts.fragment:
        raise TrackingError(
            f"tracking.uri {redact_uri(uri)} has a query string, which MLflow cannot send to a "
            "tracking server; remove it and pass a token in MLFLOW_TRACKING_TOKEN (or a user "
            "and password in MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD)"
        )
    if "@" not in parts.netloc:
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


def check_uri(uri: str, results_dir: Path) -> None:
    """Fail early, in one line, on a store that cannot work or is not private; a SQLite
    store's folder is created only inside ``results_dir`` (:func:`check_store`)."""
    path = sqlite_path(uri)
    if path is not None:
        check_store(path, results_dir)
    elif uri.startswith(("file:", "/", ".")) and "MLFLOW_ALLOW_FILE_STORE" not in os.environ:
        raise TrackingError(
            f"tracking.uri {uri!r} is a file store, which current MLflow refuses; "
            "use sqlite:///results/mlflow.db or an http(s):// tracking server"
        )


def check_stored_tracking(cfg: DictConfig) -> None:
    """Raise ConfigError unless the stored tracking store is off or a local SQLite file
    (which the tracker checks is this user's own and private); a server would receive every
    param of the resumed tests, so it must be given on the command line. Call it only when
    the command line gave no ``tracking`` override."""
    if not cfg.tracking.get("enabled", True):
        return
    try:
        uri = str(cfg.tracking.uri)  # resolves ${results_dir} and ${oc.env:...}
    except Exception:  # an interpolation that does not resolve names no store to trust
        uri = str(OmegaConf.to_container(cfg.tracking, resolve=False).get("uri"))  # type: ignore[union-attr]
    if sqlite_path(uri) is not None:
        return
    raise ConfigError(
        f"session.json names the tracking store {redact_uri(uri)[:120]!r}; a stored config is "
        "data, so give a tracking server on the command line to use it (tracking.uri=...), "
        "or resume with tracking=none"
    )
