"""The style gate of CI: ruff (lint and format) and mypy must be clean on the whole tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name if (BIN / name).exists() else shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return str(path)


@pytest.mark.parametrize(
    "command", [["check", "."], ["format", "--check", "."]], ids=["ruff-check", "ruff-format"]
)
def test_ruff_is_clean(command: list[str]) -> None:
    done = subprocess.run(
        [_tool("ruff"), *command], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    done = subprocess.run(
        [_tool("mypy")], cwd=ROOT, capture_output=True, text=True, check=False, timeout=900
    )
    assert done.returncode == 0, done.stdout[-4000:]
