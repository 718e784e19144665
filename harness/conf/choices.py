"""What a user may pick, read from the config folders instead of kept by hand.

A system's workloads are its files in ``workloads/<system>/`` of any config folder: the
package's, those its ``hydra.searchpath`` names (the paper's recipes) and a user's
``--config-dir``. ``workload=<name>`` picks one of them: the defaults list of ``config.yaml``
reads ``workloads/${system}/${workload}``, and Hydra accepts ``${workload}`` only as the choice
of a group ``workload``. So this module generates that group's options in Hydra's ConfigStore,
one empty node per workload name any system offers, rather than a comment-only file per name.
Likewise a system that offers exactly one workload gets a generated ``default`` that picks it,
rather than a one-line ``default.yaml``; a system with several names its default in
``workloads/<system>/default.yaml`` (without one, ``workload=<name>`` is needed, and its absence
is one line saying so).

The folders must be known before Hydra composes: :func:`register_choices` takes them from the
command line (``--config-dir``, ``hydra.searchpath=[...]``) and remembers them for the
listings (:func:`workloads_of`, :func:`options_of`) that ``--help`` and the one-line checks use.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from hydra.core.config_store import ConfigStore

from harness.conf import CONFIG_DIR
from harness.errors import ConfigError

__all__ = [
    "NoDefaultWorkload",
    "config_folders",
    "folder_of",
    "options_of",
    "register_choices",
    "user_folders",
    "workloads_of",
]

#: The generated group: one option per workload name (package ``_group_``: merges nothing).
CHOICE_GROUP = "workload"
#: Where each system's workloads live: ``<folder>/workloads/<system>/<workload>.yaml``.
WORKLOADS = "workloads"
#: Every config folder registered in this process (the package's first).
_KNOWN: list[Path] = []


def folder_of(entry: str) -> Path | None:
    """The folder a search-path entry names (``pkg://a.b``, ``file://dir`` or ``dir``); None
    when it names nothing on this machine (a package not installed)."""
    if entry.startswith("pkg://"):
        module = entry.removeprefix("pkg://").strip("/").replace("/", ".")
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            return None
        locations = list(spec.submodule_search_locations or []) if spec else []
        return Path(locations[0]) if locations else None
    folder = Path(entry.removeprefix("file://")).expanduser().resolve()
    return folder if folder.is_dir() else None


def _packaged_searchpath() -> list[str]:
    """The ``hydra.searchpath`` entries the package's own ``config.yaml`` declares."""
    top = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text()) or {}
    return list((top.get("hydra") or {}).get("searchpath") or [])


def user_folders(arguments: Sequence[str]) -> list[str]:
    """The config folders a command line adds: ``--config-dir DIR`` (``-cd DIR``,
    ``--config-dir=DIR``) and the entries of ``hydra.searchpath=[a,b]``."""
    found: list[str] = []
    for index, argument in enumerate(arguments):
        name, sep, value = argument.partition("=")
        if name in ("--config-dir", "-cd"):
            following = arguments[index + 1] if index + 1 < len(arguments) else ""
            found.append(value if sep else following)
        elif sep and name.lstrip("+") == "hydra.searchpath":
            found += [e.strip().strip("'\"") for e in value.strip("[]").split(",")]
    return [entry for entry in found if entry]


def config_folders(entries: Iterable[str] = ()) -> list[Path]:
    """The package's config folder, those its search path names, then ``entries``'s."""
    folders = [CONFIG_DIR]
    for entry in [*_packaged_searchpath(), *entries]:
        folder = folder_of(entry)
        if folder is not None and folder not in folders:
            folders.append(folder)
    return folders


def _known() -> list[Path]:
    return _KNOWN or config_folders()


def workloads_of(system: str, folders: Iterable[Path] | None = None) -> list[str]:
    """The workloads a system offers (its ``workloads/<system>/`` files but ``default``)."""
    names = {
        path.stem
        for folder in (_known() if folders is None else folders)
        for path in (folder / WORKLOADS / system).glob("*.yaml")
    }
    return sorted(names - {"default"})


def options_of(group: str, folders: Iterable[Path] | None = None) -> list[str]:
    """The options of a config group (``system``, ``tuner``, ``experiment``...) over every
    config folder."""
    chosen = _known() if folders is None else folders
    return sorted({path.stem for folder in chosen for path in (folder / group).glob("*.yaml")})


def _systems_with_workloads(folders: Iterable[Path]) -> dict[str, bool]:
    """Each system (a config or a workload folder), and whether a ``default.yaml`` names its
    default workload."""
    folders = list(folders)
    systems = dict.fromkeys(options_of("system", folders), False)
    for folder in folders:
        for system in (folder / WORKLOADS).glob("*/"):
            named = (system / "default.yaml").is_file()
            systems[system.name] = systems.get(system.name, False) or named
    return systems


def register_choices(entries: Iterable[str] = ()) -> list[Path]:
    """Generate the ``workload`` options and the one-workload defaults for every config folder
    (the package's and ``entries``: search-path entries or folders); return those folders."""
    for folder in config_folders(entries):
        if folder not in _KNOWN:
            _KNOWN.append(folder)
    store = ConfigStore.instance()
    for system, has_default in _systems_with_workloads(_KNOWN).items():
        offered = workloads_of(system, _KNOWN)
        for name in ["default", *offered]:
            store.store(group=CHOICE_GROUP, name=name, node={}, provider="harness")
        if not has_default:
            store.store(group=f"{WORKLOADS}/{system}", name="default", node=_default(system))
    return list(_KNOWN)


def _default(system: str) -> dict[str, Any]:
    """The generated default of a system without a ``default.yaml``: its only workload, or
    (none or several) a node whose driver refuses in one line, saying what to do."""
    offered = workloads_of(system, _KNOWN)
    if len(offered) == 1:
        return {"defaults": [f"/{WORKLOADS}/{system}/{offered[0]}@_here_", "_self_"]}
    target = f"{__name__}.{NoDefaultWorkload.__name__}"
    return {"name": "default", "_target_": target, "system": system, "offered": offered}


class NoDefaultWorkload:
    """The driver of a default that does not exist: a system with several workloads and no
    ``default.yaml`` runs the one the command line names, so building this one refuses."""

    def __init__(self, system: str, offered: list[str]) -> None:
        if not offered:
            raise ConfigError(
                f"system {system!r} has no workload: add {WORKLOADS}/{system}/<name>.yaml "
                "(name, _target_ and its settings) beside its system config"
            )
        raise ConfigError(
            f"system {system!r} offers several workloads and names no default: pick one, "
            f"e.g. workload={offered[0]} (of {', '.join(offered)}), or name it in "
            f"{WORKLOADS}/{system}/default.yaml"
        )
