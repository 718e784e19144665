"""Optional extras: what a config's components need that this installation lacks.

A tuner, system or workload may import a package that only one of the project's extras
installs (Optuna and SMAC in ``peers``, PySpark in ``spark``). The rule: such a package is
looked for before anything is created, and a missing one is one ConfigError line naming the
install command that fits *this* installation (an editable checkout's own venv, or a wheel).

What a component imports is read from its source (every ``import``, also inside functions,
following the modules of its own package) without importing it, so the check costs no
import time and cannot fail half-way; which packages belong to an extra is read from the
installed distribution's metadata, so pyproject.toml stays the one place that says so.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shlex
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from harness.errors import ConfigError

__all__ = ["DISTRIBUTION", "check_extras", "install_command", "missing_extra"]

#: The name this project is installed under.
DISTRIBUTION = "classytune-harness"
#: Extras that only bundle others for development; never the one to suggest.
_BUNDLES = frozenset({"dev"})
#: A requirement's distribution name, and the extra its marker names.
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
#: Distributions whose import name differs from their normalised name.
_MODULE_OF = {"mlflow-skinny": "mlflow", "psycopg-binary": "psycopg", "pyyaml": "yaml"}


@cache
def extra_of_module() -> dict[str, str]:
    """Top-level module → the extra that installs it, from the distribution's metadata."""
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, str] = {}
    for requirement in requirements:
        name, extra = _NAME.match(requirement), _EXTRA.search(requirement)
        if name is None or extra is None or extra.group(1) in _BUNDLES:
            continue
        dist = name.group(1).lower().replace("_", "-")
        found.setdefault(_MODULE_OF.get(dist, dist.replace("-", "_")), extra.group(1))
    return found


def _source_of(module: str) -> Path | None:
    """The source file of ``module``, found without importing anything (``find_spec`` of a
    dotted name would import its parents); None for a class name or a compiled module."""
    top, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    path = Path(spec.origin)
    for part in rest:
        folder = path.parent / part
        path = folder / "__init__.py" if folder.is_dir() else path.parent / f"{part}.py"
        if not path.is_file():
            return None
    return path


def _imports_in(source: Path, module: str) -> set[str]:
    """Absolute names every ``import`` of ``source`` (the file of ``module``) names."""
    names: set[str] = set()
    package = module if source.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def imported_packages(target: str) -> set[str]:
    """Top-level packages the code behind ``target`` (a ``_target_``) may import: its module
    and, transitively, the modules of its own top-level package that it imports."""
    home = target.split(".")[0]
    pending, seen, packages = [target], set(), set()
    while pending:
        name = pending.pop()
        if name in seen or name.split(".")[0] != home:
            continue
        seen.add(name)
        if "." in name:  # ``pkg.Class`` or ``pkg.module``: the package's __init__ too
            pending.append(name.rpartition(".")[0])
        source = _source_of(name)
        if source is None:
            continue
        for imported in _imports_in(source, name):
            packages.add(imported.split(".")[0])
            pending.append(imported)
    return packages - {home}


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def missing_extra(target: str) -> tuple[str, str] | None:
    """``(package, extra)`` for the first package an extra installs that ``target`` imports
    and this installation lacks, or None."""
    extras = extra_of_module()
    for package in sorted(imported_packages(target)):
        if package in extras and not _installed(package):
            return package, extras[package]
    return None


def _editable_root() -> Path | None:
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
    root = _editable_root()
    if root is None:
        return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}]')}"
    pip = Path(sys.executable).parent / ("pip.exe" if os.name == "nt" else "pip")
    shown_pip = _shown(pip, root)
    if os.sep not in shown_pip:  # pip in the current folder: run it as a path, not a command
        shown_pip = f".{os.sep}{shown_pip}"
    return f"{shlex.quote(shown_pip)} install -e {shlex.quote(f'{_shown(root, root)}[{extra}]')}"


def check_extras(components: dict[str, str]) -> None:
    """Each ``what → _target_`` of ``components`` has its extras installed, or one line."""
    for what, target in components.items():
        missing = missing_extra(target)
        if missing is not None:
            package, extra = missing
            raise ConfigError(
                f"{what} needs the optional extra '{extra}' ({package} is not installed): "
                f"{install_command(extra)}"
            )
