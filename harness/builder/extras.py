"""Optional extras: what a config's components need that this installation lacks.

A tuner, system or workload may import a package that only one of the project's extras
installs (Optuna and SMAC in ``peers``, PySpark in ``spark``). The rule: such a package is
looked for before anything is created, and a missing one is one ConfigError line naming the
install command that fits *this* installation (an editable checkout's own venv, or a wheel).

What a component imports is read from its source (every ``import``, also inside functions,
following the modules of its own package) without importing it, so the check costs no
import time and cannot fail half-way; which packages belong to an extra is read from
pyproject.toml (an editable checkout) or the installed metadata (a wheel), so pyproject.toml
stays the one place that says so.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

from harness.errors import ConfigError
from harness.install import DISTRIBUTION, editable_root, install_command

__all__ = ["DISTRIBUTION", "check_extras", "install_command", "missing_extra"]

#: Extras that only bundle others for development; never the one to suggest.
_BUNDLES = frozenset({"dev"})
#: A requirement's distribution name, and the extra its marker names.
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
#: Distributions whose import name differs from their normalised name.
_MODULE_OF = {"mlflow-skinny": "mlflow", "psycopg-binary": "psycopg", "pyyaml": "yaml"}


def _requirements() -> list[str]:
    """The project's requirements with their markers: an editable checkout's pyproject.toml
    (its installed metadata is only as new as the last install), else the metadata."""
    root = editable_root()
    if root is not None and (root / "pyproject.toml").is_file():
        project = tomllib.loads((root / "pyproject.toml").read_text()).get("project", {})
        extras = project.get("optional-dependencies", {})
        return [f'{r}; extra == "{extra}"' for extra, rs in extras.items() for r in rs]
    try:
        return metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []


@cache
def extra_of_module() -> dict[str, str]:
    """Top-level module → the extra that installs it (see :func:`_requirements`)."""
    found: dict[str, str] = {}
    for requirement in _requirements():
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
