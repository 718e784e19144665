"""``--help`` without composing a config: the page of ``conf/config.yaml`` (``hydra.help``),
its choices listed from the config folders.

The rule: ``python -m harness --help`` must answer at once. Hydra's own ``--help`` composes
the config and lists every option of every config group (hundreds of compositions, most of
the time it takes) even when the page never shows that listing; and importing the session
machinery (NumPy, SciPy, MLflow) costs as much again. So the entry point asks this module
first: it reads the help template as data, resolves it with the group options found in the
folders (the package's, its search path's and a ``--config-dir``'s), and prints it, importing
neither Hydra's composition nor the harness's sessions. Whatever it cannot render exactly as
Hydra would (another config name, a template that asks for Hydra's own listings, a user
folder with a ``config.yaml`` of its own) is left to Hydra.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["help_text", "main"]

_HELP_FLAGS = ("--help", "-h")
#: Flags after which the page is not the package's ``config.yaml`` one.
_NOT_OURS = ("--config-name", "-cn", "--config-path", "-cp", "--hydra-help")
#: What only Hydra can fill in (its listings and the composed config).
_HYDRA_ONLY = ("$FLAGS_HELP", "$HYDRA_CONFIG_GROUPS", "$APP_CONFIG_GROUPS", "$CONFIG")


def _wants_our_help(arguments: Sequence[str]) -> bool:
    names = [a.partition("=")[0] for a in arguments]
    return any(a in _HELP_FLAGS for a in arguments) and not any(n in _NOT_OURS for n in names)


def _chosen(arguments: Sequence[str], group: str, default: str) -> str:
    """The option ``group=...`` names last on the command line, else ``default``."""
    chosen = default
    for argument in arguments:
        name, sep, value = argument.partition("=")
        if sep and name.lstrip("+") == group:
            chosen = value
    return chosen


def _default_choices(top: dict[str, Any]) -> dict[str, str]:
    """``group: option`` of the defaults list of ``config.yaml``."""
    found: dict[str, str] = {}
    for entry in top.get("defaults") or []:
        if isinstance(entry, dict):
            found.update({str(k).lstrip("/"): str(v) for k, v in entry.items()})
    return found


def _resolvers(folders: list[Path]) -> dict[str, Callable[[str], str]]:
    from harness.conf.choices import options_of, workloads_of

    return {
        "harness_options": lambda group: ", ".join(options_of(group, folders)),
        "harness_workloads": lambda system: ", ".join(workloads_of(system, folders)) or "none",
    }


def help_text(arguments: Sequence[str]) -> str | None:
    """The ``--help`` page for ``arguments``, or None when Hydra should answer them."""
    if not _wants_our_help(arguments):
        return None
    import yaml
    from omegaconf import OmegaConf

    from harness.conf import CONFIG_DIR
    from harness.conf.choices import config_folders, user_folders

    folders = config_folders(user_folders(arguments))
    if any((folder / "config.yaml").is_file() for folder in folders[1:]):
        return None  # a user's config.yaml may be the one Hydra composes
    top = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text()) or {}
    page = (top.get("hydra") or {}).get("help") or {}
    template = str(page.get("template") or "")
    if not template or any(token in template for token in _HYDRA_ONLY):
        return None
    for name, resolver in _resolvers(folders).items():
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, resolver)
    choices = _default_choices(top)
    choices["system"] = _chosen(arguments, "system", choices.get("system", ""))
    tree = OmegaConf.create({"hydra": {"help": page, "runtime": {"choices": choices}}})
    rendered = str(tree.hydra.help.template)
    return string.Template(rendered).safe_substitute()


def main() -> None:
    """The entry point: the help page at once, else the Hydra application."""
    text = help_text(sys.argv[1:])
    if text is not None:
        print(text)
        return
    from harness.cli.app import main as app_main

    app_main()
