"""Knob values → SQLite PRAGMA statements, and the check that SQLite honoured them.

Pure functions: every value is first validated against the knob catalogue (so only catalogue
values can reach the SQL), then mapped to a bare keyword or an integer through the fixed tables
below. Nothing from a configuration is interpolated as text: :func:`render` refuses any token
that is not a bare word or an integer (:data:`TOKEN`) with a KnobError naming the knob, so a
widened space (``+system.ranges.journal_mode.values=...``) cannot smuggle ``;``, a quote, a
comment or a second statement into the SQL. The worker re-checks each token against the same
patterns before executing it (defence in depth).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from harness.errors import KnobError
from harness.space import Config, Space, Value

__all__ = [
    "CREATION_KNOBS",
    "PRAGMAS",
    "TOKEN",
    "Pragma",
    "creation_key",
    "expected_readback",
    "mismatches",
    "render",
    "script",
]

#: Knobs that take effect only when the database file is created (handled by the adapter).
CREATION_KNOBS = ("page_size", "auto_vacuum")

MIB = 1024 * 1024
#: What a PRAGMA value may be: a bare keyword or an integer (as the worker accepts).
TOKEN = re.compile(r"-?[0-9]{1,20}|[A-Za-z]{1,20}")


@dataclass(frozen=True)
class Pragma:
    """How one knob becomes ``PRAGMA name=value`` and what ``PRAGMA name`` then reads back."""

    sql: Callable[[Value], str]
    readback: Callable[[Value], object]


def _keyword(value: Value) -> str:
    return str(value).upper()


def _switch(value: Value) -> str:
    return "ON" if value else "OFF"


def _level(table: Mapping[str, int]) -> Callable[[Value], int]:
    """The read-back number of a keyword knob; a value outside ``table`` is a KnobError."""

    def read(value: Value) -> int:
        try:
            return table[str(value)]
        except KeyError:
            raise KnobError(
                f"PRAGMA value {value!r} is not supported; use one of {', '.join(table)}"
            ) from None

    return read


_SYNC = {"off": 0, "normal": 1, "full": 2, "extra": 3}
_TEMP = {"default": 0, "file": 1, "memory": 2}
_SECURE = {"off": 0, "on": 1, "fast": 2}
_VACUUM = {"none": 0, "full": 1, "incremental": 2}

#: Render order matters: locking_mode before journal_mode lets WAL run without shared memory.
PRAGMAS: dict[str, Pragma] = {
    "locking_mode": Pragma(_keyword, lambda v: str(v)),
    "journal_mode": Pragma(_keyword, lambda v: str(v)),
    "synchronous": Pragma(_keyword, _level(_SYNC)),
    "cache_size": Pragma(lambda v: str(-int(v)), lambda v: -int(v)),
    "cache_spill": Pragma(_switch, lambda v: bool(v)),
    "mmap_size": Pragma(lambda v: str(int(v) * MIB), lambda v: int(v) * MIB),
    "temp_store": Pragma(_keyword, _level(_TEMP)),
    "wal_autocheckpoint": Pragma(lambda v: str(int(v)), lambda v: int(v)),
    "journal_size_limit": Pragma(
        lambda v: str(int(v) * 1024 if int(v) > 0 else int(v)),
        lambda v: int(v) * 1024 if int(v) > 0 else int(v),
    ),
    "threads": Pragma(lambda v: str(int(v)), lambda v: int(v)),
    "secure_delete": Pragma(_keyword, _level(_SECURE)),
    "automatic_index": Pragma(_switch, lambda v: int(bool(v))),
    "cell_size_check": Pragma(_switch, lambda v: int(bool(v))),
    # Creation-time knobs: never rendered per connection, but checked after the copy.
    "page_size": Pragma(lambda v: str(int(v)), lambda v: int(v)),
    "auto_vacuum": Pragma(_keyword, _level(_VACUUM)),
}


def _full(config: Mapping[str, Value], space: Space, defaults: Config) -> Config:
    """Validate ``config`` against ``space`` and fill the knobs it lacks from ``defaults``."""
    checked = space.validate(config, partial=True)
    unknown = set(checked) - set(PRAGMAS)
    if unknown:
        raise KnobError(f"knob(s) {', '.join(sorted(unknown))} have no SQLite PRAGMA mapping")
    return {**defaults, **checked}


def render(config: Mapping[str, Value], space: Space, defaults: Config) -> list[tuple[str, str]]:
    """The per-connection PRAGMAs for ``config`` as ``(name, token)`` pairs, in apply order.

    ``defaults`` holds every catalogue knob's default, so knobs outside a reduced knob set
    keep SQLite's default. Raises :class:`KnobError` for anything outside the catalogue.
    """
    full = _full(config, space, defaults)
    return [
        (name, _token(name, pragma.sql(full[name])))
        for name, pragma in PRAGMAS.items()
        if name in full and name not in CREATION_KNOBS
    ]


def script(config: Mapping[str, Value], space: Space, defaults: Config) -> list[str]:
    """``PRAGMA name=token;`` for each knob of ``config``, tokens exactly as :func:`render`
    makes them: the creation-time knobs first (they hold only on a new, empty database or
    after ``VACUUM``), then the per-connection ones in apply order."""
    full = _full(config, space, defaults)
    first = [(n, _token(n, PRAGMAS[n].sql(full[n]))) for n in CREATION_KNOBS if n in config]
    rest = [(n, t) for n, t in render(config, space, defaults) if n in config]
    return [f"PRAGMA {name}={token};" for name, token in [*first, *rest]]


def _token(name: str, token: str) -> str:
    if not TOKEN.fullmatch(token):
        raise KnobError(
            f"knob {name!r}: PRAGMA value {token!r} is not a bare word or an "
            "integer; use one of the catalogue's values"
        )
    return token


def creation_key(config: Mapping[str, Value], space: Space, defaults: Config) -> tuple[int, str]:
    """``(page_size, auto_vacuum)`` of the pristine database this config needs."""
    full = _full(config, space, defaults)
    return int(full["page_size"]), _token("auto_vacuum", _keyword(full["auto_vacuum"])).lower()


def expected_readback(
    config: Mapping[str, Value], space: Space, defaults: Config
) -> dict[str, object]:
    """What ``PRAGMA name`` should return once ``config`` is applied (every mapped knob)."""
    full = _full(config, space, defaults)
    return {name: pragma.readback(full[name]) for name, pragma in PRAGMAS.items() if name in full}


def mismatches(expected: Mapping[str, object], actual: Mapping[str, object]) -> list[str]:
    """Human-readable differences between the requested and the effective PRAGMA values."""
    problems = []
    for name, wanted in expected.items():
        got = actual.get(name)
        if name == "cache_spill":  # reads back the spill threshold in pages; 0 means off
            ok = bool(got) == bool(wanted)
        elif isinstance(wanted, str):
            ok = isinstance(got, str) and got.lower() == wanted.lower()
        else:
            ok = got == wanted
        if not ok:
            problems.append(f"{name}: requested {wanted!r}, SQLite uses {got!r}")
    return problems
