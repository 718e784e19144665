"""Helpers of the hostile-input tests: running the CLI as a user would, and finding the
processes a session left behind (every process a session starts carries HARNESS_SESSION=<id>
in its environment, so a stray one is found whatever it renamed itself to)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def harness_argv(results: Path, *args: str, tracking: bool = False) -> list[str]:
    """``python -m harness`` with results under ``results`` (flags such as -m first)."""
    flags = [a for a in args if a.startswith("-")]
    rest = [a for a in args if a not in flags]
    track = (
        []
        if any(a.startswith("tracking") for a in rest)
        else ([f"tracking.uri=sqlite:///{results}/mlflow.db"] if tracking else ["tracking=none"])
    )
    return [
        sys.executable,
        "-m",
        "harness",
        *flags,
        f"results_dir={results}",
        "session.progress=false",
        *track,
        *rest,
    ]


def run_harness(
    results: Path, *args: str, timeout_s: float = 600, **popen: object
) -> subprocess.CompletedProcess[str]:
    """Run the CLI to completion and capture its output."""
    return subprocess.run(
        harness_argv(results, *args),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        **popen,
    )  # type: ignore[call-overload]


def start_harness(results: Path, *args: str, **popen: object) -> subprocess.Popen[str]:
    """Start the CLI in the background (stdout/stderr captured)."""
    return subprocess.Popen(
        harness_argv(results, *args),
        cwd=ROOT,
        text=True,  # type: ignore[call-overload]
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **popen,
    )


def wait_for(condition: Callable[[], bool], timeout_s: float = 120, what: str = "") -> None:
    """Poll ``condition`` until it holds (or fail the test naming ``what``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what or condition}")


def stored_lines(session: Path) -> int:
    """How many complete tests a session folder holds (0 when none yet)."""
    path = session / "observations.jsonl"
    return path.read_text().count("\n") if path.exists() else 0


def processes_of(session_id: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process started by session ``session_id``."""
    return processes_with("HARNESS_SESSION", session_id)


def processes_with(name: str, value: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live process whose environment has ``name=value``."""
    marker = f"{name}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if state != "Z" and marker in environ.split(b"\0"):
            found.append((int(entry.name), cmdline.strip()))
    return found


def kill_all(processes: Sequence[tuple[int, str]]) -> None:
    """Clean up after a failed assertion, so one failure does not poison later tests."""
    for pid, _ in processes:
        try:
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
