"""The MLflow UI of a store, rendered headless: what a user sees when they open a session.

:func:`serve_ui` starts a real ``mlflow server`` for a store on a free loopback port (and stops
it, whatever happens); :func:`render` loads a UI page in Debian's headless Chromium and returns
the DOM after the page's scripts ran, or writes a screenshot. The README's screenshot
(``python -m harness.tracking.ui_snapshot <store> --png docs/images/mlflow_runs.png``) and the UI
test use both. Chromium is ``apt-get install chromium`` (``scripts/setup.sh --full`` installs it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from harness.errors import HarnessError

__all__ = ["CHROMIUM", "render", "serve_ui"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or ""
_START_TIMEOUT_S = 180.0  # a cold server (schema check, workers) takes 20-60 s on 2 cores


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve_ui(store_uri: str, log: Path) -> Iterator[str]:
    """A running MLflow server for ``store_uri`` on loopback; yields its base URL."""
    port = _free_port()
    argv = [
        *(sys.executable, "-m", "mlflow", "server"),
        *("--backend-store-uri", store_uri, "--host", "127.0.0.1", "--port", str(port)),
        *("--workers", "1"),
    ]
    with log.open("w") as out:
        # its own process group: the server's workers are stopped with it
        server = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            if server.poll() is not None:
                raise HarnessError(f"mlflow server exited with {server.returncode}; see {log}")
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise HarnessError(f"mlflow server did not answer in {_START_TIMEOUT_S:.0f} s")
            time.sleep(1.0)
        yield base
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def render(url: str, *, png: Path | None = None, wait_ms: int = 25_000) -> str:
    """The page's DOM once its scripts ran (``wait_ms`` of virtual time); ``png``: a screenshot."""
    if not CHROMIUM:
        raise HarnessError("no chromium on PATH: apt-get install chromium")
    with tempfile.TemporaryDirectory(prefix="harness-chromium-") as profile:
        argv = [
            CHROMIUM,
            *("--headless", "--disable-gpu", "--no-first-run", "--hide-scrollbars"),
            f"--user-data-dir={profile}",  # a fresh profile: no state from earlier visits
            "--window-size=1920,1000",
            f"--virtual-time-budget={wait_ms}",
        ]
        if os.geteuid() == 0:
            argv.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        argv += [f"--screenshot={png}"] if png else ["--dump-dom"]
        # its own process group, so that a hung browser goes with all its helper processes
        browser = subprocess.Popen(
            [*argv, url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = browser.communicate(timeout=wait_ms / 1000 + 120)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(browser.pid, signal.SIGKILL)  # (also helpers it left behind)
            browser.wait()
    if browser.returncode != 0:
        raise HarnessError(f"chromium failed ({browser.returncode}): {err.strip()[-300:]}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", help="the tracking store, e.g. sqlite:///results/mlflow.db")
    parser.add_argument("--experiment", default="1", help="experiment id (default 1)")
    parser.add_argument("--png", type=Path, required=True, help="where the screenshot goes")
    args = parser.parse_args(argv)
    from harness.tracking.view import runs_page

    with tempfile.TemporaryDirectory() as tmp, serve_ui(args.store, Path(tmp) / "ui.log") as base:
        render(f"{base}/{runs_page(args.experiment)}", png=args.png)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
