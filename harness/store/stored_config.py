"""A stored config is data: which ``_target_``s a resume or an export may build from it.

A session folder's ``session.json`` keeps the composed config the session ran with, and
``resume=`` and ``python -m harness.cli.export`` rebuild the system, the workload and the tuner
from it with Hydra's ``instantiate``, which calls whatever a ``_target_`` names. Whoever hands you
a session folder (a colleague's results, an archive, a shared disk) wrote that file, so a stored
``_target_`` is only built when it is one the code you trust names:

* a ``_target_`` of the project's own config tree (``harness/conf``), or of a ``--config-dir``
  (or ``hydra.searchpath`` folder) given on this command line; or
* a public sibling of the same kind in the same project module: a class beside a class the
  configs build (``systems.hadoop.HadoopSystem``), a function beside a factory function
  (``classytune.classifiers.random_forest`` beside ``xgboost``).

Anything else (``shutil.copyfile``, ``joblib.load``, a private helper, an interpolation) stops
the command with one line naming the target and where it sits, before anything is built.
Paths are data too: a resume works in the results folder that holds the session folder,
whatever results folder ``session.json`` names, and a session folder holding a symbolic link
is refused, so no later write of the session (its store, artifacts, export) lands elsewhere.
A stored tracking store is used only when it is a local SQLite file: a server, which would
receive every param of the resumed tests, must be given on the command line.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from harness.errors import ConfigError

__all__ = [
    "PROJECT_PACKAGES",
    "check_stored_targets",
    "command_line_config_dirs",
    "named_targets",
    "refuse_links",
    "results_dir_of",
]

#: The top-level packages of this project (pyproject.toml's import-linter root packages).
PROJECT_PACKAGES = frozenset({"harness", "systems", "baselines", "classytune", "paper"})

#: ``_target_: a.b.C`` in YAML, block or flow style, quoted or not.
_TARGET_LINE = re.compile(r"""_target_["']?\s*:\s*["']?([A-Za-z_][A-Za-z0-9_.]*)""")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")


def _targets_in(files: Iterable[Path]) -> set[str]:
    found: set[str] = set()
    for path in files:
        try:
            found.update(_TARGET_LINE.findall(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue  # an unreadable file names nothing
    return found


@cache
def _shipped_targets() -> frozenset[str]:
    root = Path(str(resources.files("harness.conf")))
    return frozenset(_targets_in(root.rglob("*.yaml")))


def named_targets(config_dirs: Iterable[str | Path] = ()) -> frozenset[str]:
    """Every ``_target_`` the shipped config tree and the given config folders name."""
    extra = _targets_in(p for d in config_dirs for p in Path(d).rglob("*.yaml"))
    return _shipped_targets() | extra


def command_line_config_dirs() -> list[str]:
    """The config folders this Hydra run was given (``--config-dir``, ``hydra.searchpath``);
    empty outside a Hydra app."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return []
    sources = HydraConfig.get().runtime.config_sources
    return [
        str(s.path)
        for s in sources
        if s.schema == "file" and "command-line" in str(s.provider) and s.path
    ]


def _kind(obj: Any) -> str | None:
    if inspect.isclass(obj):
        return "class"
    if inspect.isfunction(obj):
        return "function"
    return None


def _locate(target: str) -> Any:
    module_name, _, attr = target.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    return getattr(module, attr, None)


def _is_project_sibling(target: str, named: frozenset[str]) -> bool:
    """A public class or function of a project module the configs build from, of the same
    kind as what they build there."""
    module_name, _, attr = target.rpartition(".")
    neighbours = [t for t in named if t.rpartition(".")[0] == module_name]
    if not neighbours or attr.startswith("_") or module_name.split(".")[0] not in PROJECT_PACKAGES:
        return False
    module = importlib.import_module(module_name)  # a project module a config already builds
    if attr not in getattr(module, "__all__", ()):
        return False
    obj = getattr(module, attr, None)
    home = str(getattr(obj, "__module__", "")).split(".")[0]
    kinds = {_kind(_locate(t)) for t in neighbours}
    return home in PROJECT_PACKAGES and _kind(obj) in kinds


def _stored_targets(node: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every ``_target_`` in a stored config tree, and of every
    string using a resolver outside :data:`_RESOLVERS` (as a target no one may build)."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{where}.{key}" if where else str(key)
            if key == "_target_":
                yield here, value
            else:
                yield from _stored_targets(value, here)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _stored_targets(value, f"{where}[{index}]")
    elif isinstance(node, str) and not set(_RESOLVER.findall(node)) <= _RESOLVERS:
        yield where, node


#: The resolvers a stored config may use: the project's, Hydra's and OmegaConf's that return
#: a value. ``oc.create``/``oc.decode`` are not among them: they turn a string into a node,
#: which could hold a ``_target_`` no walk of the stored tree sees.
_RESOLVERS = frozenset(
    {"harness_install", "harness_options", "harness_workloads", "hydra", "now", "oc.env"}
)
_RESOLVER = re.compile(r"\$\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*:")


def check_stored_targets(
    cfg: DictConfig, origin: Path, config_dirs: Iterable[str | Path] = ()
) -> None:
    """Raise ConfigError (one line) unless every ``_target_`` in ``cfg`` may be built (see
    the module docstring); ``origin`` is the file the config was read from."""
    tree = OmegaConf.to_container(cfg, resolve=False)
    named = named_targets(config_dirs)
    for key, target in _stored_targets(tree):
        if isinstance(target, str) and (
            target in named or (_DOTTED.fullmatch(target) and _is_project_sibling(target, named))
        ):
            continue
        shown = repr(target)[:120]
        raise ConfigError(
            f"{origin}: {key} = {shown} is not a target this project builds; a stored config "
            "is data, and only targets named in harness/conf or in a --config-dir given on "
            "this command line are built (pass that --config-dir if you trust its code)"
        )


def results_dir_of(session_folder: Path) -> Path:
    """The results folder a resume of ``session_folder`` works in: the one that holds it as
    ``sessions/<id>``, whatever ``session.json`` names (a stored path may not send the work
    folder or the tracking store elsewhere, and a moved results folder still resumes)."""
    folder = session_folder.resolve()
    if folder.parent.name != "sessions":
        raise ConfigError(
            f"{session_folder} is not inside a results folder's sessions/; resume the folder "
            "the session printed (results_dir/sessions/<id>)"
        )
    return folder.parent.parent


def refuse_links(session_folder: Path) -> None:
    """Raise ConfigError if ``session_folder`` is or holds a symbolic link: the harness never
    makes one there, and writing the session's files through a planted one would write
    outside it."""
    for path in (session_folder, *session_folder.rglob("*")):
        if path.is_symlink():
            raise ConfigError(
                f"{path} is a symbolic link; a session folder holds only the files the harness "
                "wrote (remove the link, or copy the session without it)"
            )
