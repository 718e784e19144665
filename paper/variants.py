"""The one parser of tuner variants given on a study's command line.

    label=conf:key=value,key=value     tuner config ``conf`` with ``tuner.<key>`` overrides
    conf                               a bare config name labels itself
    label=key=value,key=value          with ``fixed_conf`` (a study of one tuner's options)
    label=                             with ``fixed_conf``: that tuner's defaults

Values are YAML (``3``, ``true``, ``"off"``, ``[a, b]``), so ``categorical_moves="off"`` stays
the text ``off`` rather than YAML's ``False``. A comma always separates options: a list value
needs no comma inside it (``rules=[a]``) or has to be set in a config file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

__all__ = ["Variant", "parse_options", "parse_variant"]


@dataclass(frozen=True)
class Variant:
    """A labelled tuner config with option overrides (``tuner.<key>=<value>``)."""

    label: str
    conf: str
    options: dict[str, Any] = field(default_factory=dict)


def parse_options(text: str) -> dict[str, Any]:
    """``key=value,key=value`` as a dict of YAML values; an empty text is no option."""
    options: dict[str, Any] = {}
    for item in filter(None, text.split(",")):
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise ValueError(f"option {item!r} is not key=value")
        options[key.strip()] = yaml.safe_load(value)
    return options


def parse_variant(spec: str, fixed_conf: str | None = None) -> Variant:
    """One variant from its command-line form (see the module's docstring). ``fixed_conf``:
    every variant is that tuner config, and the text after ``label=`` holds only options."""
    label, _, rest = spec.partition("=")
    if not label:
        raise ValueError(f"variant {spec!r} has no label")
    if fixed_conf is not None:
        return Variant(label, fixed_conf, parse_options(rest))
    conf, _, text = (rest or label).partition(":")
    return Variant(label, conf, parse_options(text))
