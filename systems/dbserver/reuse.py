"""When a database test may skip the data restore, and when a reload may replace a restart.

Two rules, both pure so that they are unit-tested without a server:

- **No restore after a read-only workload.** A test restores the data directory so that every
  configuration meets the same data. A workload that only reads leaves the data as the snapshot
  had it, so copying the snapshot again buys nothing. A workload says it only reads with a
  ``read_only = True`` attribute (sysbench ``oltp_read_only``, pgbench ``-S``); any other
  workload (no attribute) is taken to write. A start that failed (crash recovery, a redo log
  half resized) makes the data suspect, and the next test restores it whatever the workload.
  (A server killed at its stop replays its own log at the next start; after a read-only
  workload there is nothing in it that changes a row.)
- **A reload instead of a restart** when the server runs and every knob whose value changes
  is *reloadable*: PostgreSQL's ``sighup``, ``superuser`` and ``user`` context settings
  (``pg_reload_conf()``), MariaDB's dynamic variables (``SET GLOBAL``) whose change takes effect
  at once. The catalogue (``knobs.yaml``) lists them under ``reloadable:``; a knob not listed
  is static, so a catalogue that forgets one costs a restart, never a wrong measurement. One
  static change means a restart. A reload keeps the server's caches warm, which a restart
  empties: that is a bias, so reloading is an adapter option (``reload``), off by default.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from harness.errors import KnobError
from harness.space import Space, Value

__all__ = ["changed_knobs", "load_reloadable", "needs_restart", "reads_only"]


def reads_only(workload: object) -> bool:
    """Whether ``workload`` declared that it never writes (its ``read_only`` attribute)."""
    return getattr(workload, "read_only", False) is True


def load_reloadable(catalogue: Path, space: Space) -> frozenset[str]:
    """The catalogue's ``reloadable:`` knob names; a name that is not a catalogue knob is a
    KnobError (a typo would otherwise silently mean a restart)."""
    try:
        data = yaml.safe_load(catalogue.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise KnobError(f"cannot read knob catalogue {catalogue}: {exc}") from None
    names = frozenset(str(name) for name in data.get("reloadable", ()))
    known = {str(entry.get("name")) for entry in data.get("knobs", ())}
    unknown = sorted(names - known)
    if unknown:
        raise KnobError(f"{catalogue.name}: reloadable names unknown knobs {', '.join(unknown)}")
    return names & frozenset(space.names)


def changed_knobs(running: Mapping[str, Value], wanted: Mapping[str, Value]) -> set[str]:
    """Knobs whose value in ``wanted`` differs from the running server's (or is new)."""
    return {name for name, value in wanted.items() if running.get(name) != value} | (
        set(running) - set(wanted)
    )


def needs_restart(changed: set[str], reloadable: frozenset[str]) -> bool:
    """True when any changed knob is static (not reloadable); no change needs no restart."""
    return not changed <= reloadable
