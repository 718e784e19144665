"""How to add an optional extra to *this* installation.

The rule: a message that asks for an extra names a command that works where it is read. An
editable install (a checkout with its own venv, as ``scripts/setup.sh`` makes) is extended
with that venv's pip on the checkout (``.venv/bin/pip install -e '.[peers]'``); an installed
wheel with pip on the published name (``pip install 'classytune-harness[peers]'``).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["DISTRIBUTION", "editable_root", "install_command"]

#: The name this project is installed under.
DISTRIBUTION = "classytune-harness"


def editable_root() -> Path | None:
    """The checkout this project is installed from in editable mode, or None (a wheel)."""
    # Every record of the distribution: a checkout's own ``*.egg-info`` (found first when
    # run from the checkout) has no direct_url.json; the venv's record says where from.
    for dist in metadata.distributions(name=DISTRIBUTION):
        text = dist.read_text("direct_url.json")
        direct = json.loads(text) if text else {}
        if direct.get("dir_info", {}).get("editable"):
            return Path(unquote(urlparse(direct.get("url", "")).path))
    return None


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to the checkout when the command runs in it, else absolute."""
    resolved = path.resolve() if path.exists() else path.absolute()
    if Path.cwd().resolve() != root.resolve():
        return str(resolved)
    return "." if resolved == root.resolve() else os.path.relpath(resolved, root.resolve())


def install_command(extra: str) -> str:
    """The command that adds ``extra`` to this installation: the venv's own pip on the
    checkout for an editable install, else pip on the published package."""
    root = editable_root()
    if root is None:
        return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}]')}"
    pip = Path(sys.executable).parent / ("pip.exe" if os.name == "nt" else "pip")
    shown_pip = _shown(pip, root)
    if os.sep not in shown_pip:  # pip in the current folder: run it as a path, not a command
        shown_pip = f".{os.sep}{shown_pip}"
    return f"{shlex.quote(shown_pip)} install -e {shlex.quote(f'{_shown(root, root)}[{extra}]')}"
