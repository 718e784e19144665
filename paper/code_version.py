"""A digest of the code and configs that determine a benchmark session's numbers.

:mod:`paper.bench` caches finished sessions; its cache key includes :func:`code_digest`, so a
fix in a tuner, a system or the core recomputes the sessions it touches instead of reading
stale numbers back. The digest covers:

* the tuner's and the system's config files (``harness/conf/tuner/<t>.yaml``,
  ``harness/conf/system/<s>.yaml``) and the main ``config.yaml``;
* the source of every ``_target_`` they name: its whole package when it lives in a package of
  its own (``classytune/``, ``systems/dataset/`` with its data), else its module file;
  plus, transitively, every module of ``baselines``, ``classytune``, ``systems`` and ``paper``
  those files import;
* every ``.py`` file of the core ``harness/`` package.

Files are read as bytes, so the digest is the same on every machine for the same checkout.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from harness.conf import CONFIG_DIR

__all__ = ["ROOT", "code_digest", "source_files"]

#: The folder that holds the top-level packages (harness/, baselines/, systems/, paper/).
ROOT = Path(__file__).resolve().parents[1]
#: Top-level packages whose imports are followed (harness/ is digested whole).
FOLLOWED = ("baselines", "classytune", "systems", "paper")
#: Packages whose direct subpackages are digested whole (code, knob catalogues, data).
PACKAGE_ROOTS = ("baselines", "systems")
#: Top-level packages digested whole (a tuner package of its own).
WHOLE_PACKAGES = ("classytune",)


def _targets(node: Any) -> Iterator[str]:
    """Every ``_target_`` string in a loaded YAML tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "_target_" and isinstance(value, str):
                yield value
            else:
                yield from _targets(value)
    elif isinstance(node, list):
        for value in node:
            yield from _targets(value)


def _module_file(dotted: str) -> Path | None:
    """The file of the longest importable prefix of ``dotted`` under :data:`ROOT`."""
    parts = dotted.split(".")
    while parts:
        base = ROOT.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        parts.pop()
    return None


def _unit(module: Path) -> set[Path]:
    """What a module brings: its whole package if it is in classytune/ or (in) a subpackage
    of baselines/ or systems/, else the file itself; plus the ``__init__.py`` files above it."""
    rel = module.relative_to(ROOT)
    files = {module}
    for depth in range(1, len(rel.parts)):
        init = ROOT.joinpath(*rel.parts[:depth], "__init__.py")
        if init.is_file():
            files.add(init)
    package: Path | None = None
    if rel.parts[0] in WHOLE_PACKAGES:
        package = ROOT / rel.parts[0]
    elif rel.parts[0] in PACKAGE_ROOTS and len(rel.parts) >= 3:
        package = ROOT / rel.parts[0] / rel.parts[1]
    if package is not None:
        files |= {p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    return files


def _imports(path: Path) -> Iterator[str]:
    """Dotted names of the followed modules that ``path`` imports (absolute and relative)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError):
        return
    package = path.relative_to(ROOT).parts[:-1]  # a/b/c.py and a/b/__init__.py: a.b
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names = [f"{module}.{alias.name}" for alias in node.names] + [module]
        else:
            continue
        yield from (n for n in names if n.split(".")[0] in FOLLOWED)


def source_files(targets: list[str]) -> set[Path]:
    """The source closure of ``targets`` (see the module docstring), without harness/."""
    files: set[Path] = set()
    pending = [m for m in map(_module_file, targets) if m is not None]
    while pending:
        module = pending.pop()
        if module in files:
            continue
        unit = _unit(module)
        files |= unit
        for path in unit:
            if path.suffix == ".py":
                pending += [m for m in map(_module_file, _imports(path)) if m and m not in files]
    return files


def _core_files() -> set[Path]:
    return {p for p in (ROOT / "harness").rglob("*.py") if "__pycache__" not in p.parts}


@functools.cache
def code_digest(tuner: str, system: str) -> str:
    """12 hex digits over the configs and code a (tuner, system) session depends on."""
    configs = [
        CONFIG_DIR / "config.yaml",
        CONFIG_DIR / "tuner" / f"{tuner}.yaml",
        CONFIG_DIR / "system" / f"{system}.yaml",
    ]
    targets: list[str] = []
    for path in configs[1:]:
        if path.is_file():
            targets += _targets(yaml.safe_load(path.read_text()))
    digest = hashlib.sha256()
    for path in sorted({*configs, *source_files(targets), *_core_files()}):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"(missing)")
        digest.update(b"\0")
    return digest.hexdigest()[:12]
