"""``python -m harness -m ...`` as the sweep tests start it: in the checkout, with pipes, either
waited for or left running (to be interrupted, cancelled or killed by the test)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def harness_sweep(
    args: list[str],
    *,
    env: Mapping[str, str] | None = None,
    wait: bool = True,
    timeout_s: float = 300,
) -> subprocess.Popen[str] | subprocess.CompletedProcess[str]:
    """A multirun of the harness with ``args``: finished (``wait``), or still running."""
    argv = [sys.executable, "-m", "harness", "-m", *args]
    if not wait:
        return subprocess.Popen(
            argv,
            cwd=ROOT,
            env=dict(env) if env is not None else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    return subprocess.run(
        argv,
        cwd=ROOT,
        env=dict(env) if env is not None else None,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
