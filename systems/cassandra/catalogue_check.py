"""Check the knob catalogue and the base cassandra.yaml against an installed Cassandra.

Cassandra refuses to start on a cassandra.yaml key it does not know, so a key that a new version
renamed or removed would crash every test. This reads the settings the install really has (the
public fields of ``org.apache.cassandra.config.Config`` in its ``cassandra-all`` jar, through
``javap``) and reports every catalogue key and base-template key that is not one of them.

    python -m systems.cassandra.catalogue_check [<install folder>]

``scripts/setup.sh --full`` runs it after installing; it exits 1 when a key is unknown.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from harness.errors import ConfigError
from harness.hosts.machine import install_dir
from systems.cassandra import render

__all__ = ["config_fields", "unknown_keys"]

_FIELD = re.compile(r"^\s*public\s+(?:[\w.$<>\[\], ?]+\s+)+(\w+);\s*$")


def config_fields(install: Path) -> set[str]:
    """The names of the settings (public fields of ``Config``) of the install's Cassandra."""
    jars = sorted((install / "lib").glob("cassandra-all-*.jar"))
    if not jars:
        raise ConfigError(
            f"no lib/cassandra-all-*.jar under {install}; run `bash scripts/setup.sh --full`"
        )
    result = subprocess.run(
        ["javap", "-public", "-cp", str(jars[-1]), "org.apache.cassandra.config.Config"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise ConfigError(f"javap could not read {jars[-1].name}: {result.stderr.strip()}")
    return {m.group(1) for line in result.stdout.splitlines() if (m := _FIELD.match(line))}


def unknown_keys(fields: set[str]) -> dict[str, list[str]]:
    """Catalogue knobs and base-template keys whose cassandra.yaml key is not in ``fields``."""
    knobs = sorted(
        f"{name} -> {target.key}"
        for name, target in render.yaml_targets().items()
        if target.key not in fields
    )
    base = yaml.safe_load(render.TEMPLATE.read_text()) or {}
    template = sorted(key for key in base if key not in fields)
    return {"knob catalogue": knobs, render.TEMPLATE.name: template}


def main(argv: list[str]) -> int:
    install = Path(argv[0]) if argv else Path(install_dir("cassandra"))
    try:
        fields = config_fields(install)
    except ConfigError as exc:
        print(f"catalogue_check: {exc}", file=sys.stderr)
        return 1
    version = sorted((install / "lib").glob("cassandra-all-*.jar"))[-1].stem.split("-")[-1]
    problems = {where: keys for where, keys in unknown_keys(fields).items() if keys}
    for where, keys in problems.items():
        print(f"Cassandra {version} does not know these {where} keys (renamed or removed):")
        for key in keys:
            print(f"  {key}")
    if not problems:
        print(
            f"Cassandra {version}: all {len(render.yaml_targets())} catalogue keys and every "
            f"{render.TEMPLATE.name} key are settings it knows ({len(fields)} in all)"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
