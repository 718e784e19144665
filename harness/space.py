"""Knobs and the knob space: the one place that turns configurations into points and back.

A configuration is a plain ``dict[str, value]`` keyed by knob name. Tuners work on the unit
hypercube ``[0, 1]^d``; :class:`Space` converts in both directions, samples it, and validates
user-supplied values with messages that name the knob, the value and the allowed range.

Knob catalogues are YAML data files next to each system adapter (see :func:`load_catalogue`).

Knob values end up in configuration files and command lines that other programs parse, so a
knob definition is checked for text that could start a new directive there: every
enum choice is a single line of printable characters, and the choices of catalogue knobs
(``strict``) match :data:`SAFE_CHOICE`. Overrides (``+system.ranges...``) rebuild the knob, so
they pass the same checks; configuration values are only ever one of the checked choices.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml

from harness.errors import KnobError
from harness.knob_risk import Risk, risk_from_dict

__all__ = ["SAFE_CHOICE", "Config", "Knob", "KnobType", "Space", "Value", "load_catalogue"]

KnobType = Literal["int", "float", "bool", "enum"]
Value = int | float | bool | str
Config = dict[str, Value]

#: What an enum choice of a catalogue knob may look like. Catalogue knobs belong to real systems
#: whose renderers write the choice verbatim (or mapped) into my.cnf, postgresql.conf,
#: server.xml, site XML, cassandra.yaml, PRAGMAs and command lines, so a choice holds no
#: whitespace, quote, comment sign (``#`` ``;``), shell or XML metacharacter, and does not start
#: like an option or a path (``-`` ``/`` ``.``). ``=`` and ``,`` stay for flag lists such as
#: MySQL's ``optimizer_switch`` (``index_merge=on,mrr=off``); every choice in the repository's
#: catalogues is far inside this. Knobs inferred from data tables (``systems/dataset``) are not
#: strict: a surrogate renders nothing, and real categorical cells ("read committed") have
#: spaces; they still get the single-line, printable check every choice gets.
SAFE_CHOICE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:+/,=-]*")


@dataclass(frozen=True)
class Knob:
    """One tunable parameter.

    ``int``/``float`` knobs have ``[low, high]`` (inclusive) and may be log-scaled; ``enum`` knobs
    have ``values``; ``bool`` knobs are False/True. Whether a change needs a restart is not a
    knob's field: a test restarts the system unless its adapter can reload, and an adapter that
    can keeps its own list of what it may reload (the catalogue's ``reloadable:``), so a knob
    nobody listed costs a restart, never a wrong measurement.
    """

    name: str
    type: KnobType
    default: Value
    low: float | None = None
    high: float | None = None
    values: tuple[Value, ...] = ()
    log: bool = False
    unit: str = ""
    description: str = ""
    #: What unsafe values of the knob trade for speed (:mod:`harness.knob_risk`).
    risk: Risk | None = field(default=None, compare=False)
    #: Enum choices must match :data:`SAFE_CHOICE` (set for catalogue knobs, whose values are
    #: rendered into files and command lines). Not part of equality: it restricts, not defines.
    strict: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        where = f"knob {self.name!r}"
        if not isinstance(self.name, str) or not self.name or not self.name.isprintable():
            raise KnobError(f"knob {self.name!r}: a knob name is one line of printable text")
        if self.type not in ("int", "float", "bool", "enum"):
            raise KnobError(f"{where}: unknown type {self.type!r} (use int, float, bool or enum)")
        if not isinstance(self.log, bool | np.bool_):
            raise KnobError(f"{where}: log must be true or false, got {self.log!r}")
        if self.type in ("int", "float"):
            self._check_bounds(where)
        if self.type == "enum" and len(self.values) < 2:
            raise KnobError(f"{where}: an enum knob needs at least two values")
        if self.type != "enum" and self.values:
            raise KnobError(f"{where}: only enum knobs take 'values'")
        for choice in self.values:
            _check_choice(self, choice)
        self.check(self.default, what="default")

    def _check_bounds(self, where: str) -> None:
        """A numeric knob's ``min`` and ``max``: finite, in order, positive on a log scale."""
        if self.low is None or self.high is None:
            raise KnobError(f"{where}: a {self.type} knob needs 'min' and 'max'")
        for key, bound in (("min", self.low), ("max", self.high)):
            if not _is_number(bound) or not math.isfinite(float(bound)):  # type: ignore[arg-type]
                raise KnobError(f"{where}: {key} {bound!r} is not a finite number")
        if not self.low < self.high:
            raise KnobError(f"{where}: min {self.low} must be below max {self.high}")
        if self.log and self.low <= 0:
            raise KnobError(f"{where}: a log-scaled knob needs min > 0, got {self.low}")

    # -- validation -------------------------------------------------------------------------
    def describe_range(self) -> str:
        """The allowed values in words, for error messages and docs."""
        if self.type == "bool":
            return "true or false"
        if self.type == "enum":
            return "one of " + ", ".join(map(str, self.values))
        scale = ", log scale" if self.log else ""
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.type} in [{_fmt(self.low)}, {_fmt(self.high)}]{unit}{scale}"

    def check(self, value: Any, what: str = "value") -> Value:
        """Return ``value`` coerced to the knob's type, or raise a precise :class:`KnobError`."""
        bad = f"knob {self.name!r}: {what} {value!r} is invalid; allowed: {self.describe_range()}"
        if self.type == "bool":
            if isinstance(value, bool | np.bool_):
                return bool(value)
            if isinstance(value, str) and value.lower() in ("true", "false", "on", "off"):
                return value.lower() in ("true", "on")
            raise KnobError(bad)
        if self.type == "enum":
            for allowed in self.values:
                if value == allowed or str(value) == str(allowed):
                    return allowed
            raise KnobError(bad)
        numeric = isinstance(value, int | float | np.integer | np.floating)
        if isinstance(value, bool) or not numeric:
            raise KnobError(bad)
        number = float(value)
        if math.isnan(number) or not (self.low <= number <= self.high):  # type: ignore[operator]
            raise KnobError(bad)
        if self.type == "int":
            if number != int(number):
                raise KnobError(bad + " (must be a whole number)")
            return int(number)
        return number

    # -- unit-interval codec ----------------------------------------------------------------
    def decode(self, u: float) -> Value:
        """Map a coordinate in [0, 1] to a knob value (total: every u gives a valid value)."""
        u = min(max(float(u), 0.0), 1.0)
        if self.type == "bool":
            return u >= 0.5
        if self.type == "enum":
            return self.values[min(int(u * len(self.values)), len(self.values) - 1)]
        low, high = float(self.low), float(self.high)  # type: ignore[arg-type]
        if self.type == "int" and not self.log:
            # Equal-width bins per integer, so LHS gives every value the same share.
            return int(min(low + math.floor(u * (high - low + 1)), high))
        if self.log:
            value = math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
        else:
            value = low + u * (high - low)
        if self.type == "int":
            return int(min(max(round(value), low), high))
        return min(max(value, low), high)

    def encode(self, value: Value) -> float:
        """Map a valid knob value to the centre of its region of [0, 1]."""
        value = self.check(value)
        if self.type == "bool":
            return 0.75 if value else 0.25
        if self.type == "enum":
            return (self.values.index(value) + 0.5) / len(self.values)
        low, high = float(self.low), float(self.high)  # type: ignore[arg-type]
        number = float(value)
        if self.type == "int" and not self.log:
            return (number - low + 0.5) / (high - low + 1)
        if self.log:
            return (math.log(number) - math.log(low)) / (math.log(high) - math.log(low))
        return (number - low) / (high - low)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def _check_choice(knob: Knob, choice: Any) -> None:
    """Refuse an enum choice that a renderer could not write safely (see SAFE_CHOICE)."""
    where = f"knob {knob.name!r}: enum choice {choice!r}"
    if isinstance(choice, bool | np.bool_):
        return
    if _is_number(choice):
        if not math.isfinite(float(choice)):
            raise KnobError(f"{where} is not a finite number")
        return
    if not isinstance(choice, str):
        raise KnobError(f"{where} must be a string, a number or a boolean")
    if not choice or not choice.isprintable():
        # isprintable() is False for newlines, tabs, NUL and Unicode line separators: each
        # would end the line of a config file and let the rest start a new directive.
        raise KnobError(
            f"{where} is not one line of printable text; remove the newline or control character"
        )
    if knob.strict and not SAFE_CHOICE.fullmatch(choice):
        raise KnobError(
            f"{where} may not be written into a config file or command line: "
            "use letters, digits and _ . : + / , = - only (starting with a letter, "
            "digit or _)"
        )


def _fmt(number: float | None) -> str:
    if number is None:
        return "?"
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


@dataclass(frozen=True)
class Space:
    """An ordered set of knobs; converts configurations to and from ``[0, 1]^d``."""

    knobs: tuple[Knob, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.knobs:
            raise KnobError("a knob space needs at least one knob")
        index = {knob.name: i for i, knob in enumerate(self.knobs)}
        if len(index) != len(self.knobs):
            names = [k.name for k in self.knobs]
            dupes = sorted({n for n in names if names.count(n) > 1})
            raise KnobError(f"duplicate knob names: {', '.join(dupes)}")
        object.__setattr__(self, "_index", index)

    @property
    def dim(self) -> int:
        return len(self.knobs)

    @property
    def names(self) -> list[str]:
        return [knob.name for knob in self.knobs]

    def __getitem__(self, name: str) -> Knob:
        try:
            return self.knobs[self._index[name]]
        except KeyError:
            raise KnobError(self._unknown(name)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def _unknown(self, name: str) -> str:
        return f"unknown knob {name!r}; this space has: {', '.join(self.names)}"

    def default(self) -> Config:
        """The system's default configuration (trial 0 of every session)."""
        return {knob.name: knob.default for knob in self.knobs}

    def validate(self, config: Mapping[str, Any], partial: bool = False) -> Config:
        """Check and coerce a configuration; ``partial`` allows missing knobs."""
        for name in config:
            if name not in self._index:
                raise KnobError(self._unknown(name))
        missing = [k.name for k in self.knobs if k.name not in config]
        if missing and not partial:
            raise KnobError(f"configuration lacks knobs: {', '.join(missing)}")
        return {k.name: k.check(config[k.name]) for k in self.knobs if k.name in config}

    def encode(self, config: Mapping[str, Value]) -> np.ndarray:
        """One configuration → a point in [0, 1]^d."""
        return np.array([k.encode(config[k.name]) for k in self.knobs], dtype=float)

    def decode(self, point: Sequence[float] | np.ndarray) -> Config:
        """A point in [0, 1]^d → a valid configuration."""
        if len(point) != self.dim:
            raise KnobError(f"point has {len(point)} coordinates, the space has {self.dim} knobs")
        return {k.name: k.decode(u) for k, u in zip(self.knobs, point, strict=True)}

    def encode_many(self, configs: Iterable[Mapping[str, Value]]) -> np.ndarray:
        rows = [self.encode(c) for c in configs]
        return np.array(rows, dtype=float).reshape(len(rows), self.dim)

    def decode_many(self, points: np.ndarray) -> list[Config]:
        return [self.decode(p) for p in np.atleast_2d(points)]

    def snap(self, points: np.ndarray) -> np.ndarray:
        """Round points to the representable ones (int/enum/bool cells), as measured."""
        return self.encode_many(self.decode_many(points))

    def complete(self, config: Mapping[str, Any]) -> Config:
        """``config`` validated and completed with the defaults of the knobs it lacks."""
        return {**self.default(), **self.validate(config, partial=True)}

    def fit(self, settings: Mapping[str, Any]) -> Config:
        """Settings moved into this space: knobs it lacks dropped, numbers clamped into range
        (ints rounded), a numeric value for an enum moved to the nearest allowed entry.

        For rule-based settings (expert rules) computed without knowing the catalogue's ranges.
        """
        fitted: dict[str, Any] = {}
        for name, value in settings.items():
            if name in self._index:
                fitted[name] = _nearest(self[name], value)
        return self.validate(fitted, partial=True)

    def subspace(self, names: Sequence[str]) -> Space:
        """The space restricted to ``names`` (in that order)."""
        return Space(tuple(self[name] for name in names))

    def with_overrides(self, overrides: Mapping[str, Mapping[str, Any]]) -> Space:
        """Narrow ranges or change defaults, e.g. ``{"cache_size": {"max": 4096}}``."""
        knobs = list(self.knobs)
        allowed = {
            "min": "low",
            "max": "high",
            "default": "default",
            "log": "log",
            "values": "values",
        }
        for name, changes in overrides.items():
            knob = self[name]
            kwargs: dict[str, Any] = {}
            for key, value in changes.items():
                if key not in allowed:
                    raise KnobError(
                        f"knob {name!r}: cannot override {key!r}; use one of {', '.join(allowed)}"
                    )
                if key == "values" and (
                    isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable)
                ):
                    raise KnobError(f"knob {name!r}: values must be a list, got {value!r}")
                kwargs[allowed[key]] = tuple(value) if key == "values" else value
            # replace() runs Knob.__post_init__ again, so overridden choices, bounds and
            # defaults pass every check a catalogue entry does (and keep the knob's strictness).
            knobs[self._index[name]] = replace(knob, **kwargs)
        return Space(tuple(knobs))


def _nearest(knob: Knob, value: Any) -> Any:
    if knob.type == "enum":
        if any(value == v or str(value) == str(v) for v in knob.values):
            return value
        numeric = [
            v for v in knob.values if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        if numeric and isinstance(value, int | float) and not isinstance(value, bool):
            return min(numeric, key=lambda v: abs(float(v) - float(value)))
        return value  # validate() then names the allowed values
    if knob.type == "bool" or isinstance(value, bool) or not isinstance(value, int | float):
        return value
    number = min(max(float(value), float(knob.low)), float(knob.high))  # type: ignore[arg-type]
    return round(number) if knob.type == "int" else number


#: Catalogue fields that no longer exist, with why (named in the error for an old catalogue).
_RETIRED = {
    "restart": "a knob records no restart flag; an adapter that can reload lists its "
    "reloadable knobs in the catalogue's top-level 'reloadable:'; delete it"
}


def knob_from_dict(entry: Mapping[str, Any], strict: bool = False) -> Knob:
    """Build a :class:`Knob` from one catalogue entry (keys: name, type, min, max, ...);
    ``strict`` restricts enum choices to :data:`SAFE_CHOICE`."""
    known = {
        "name",
        "type",
        "default",
        "min",
        "max",
        "values",
        "log",
        "unit",
        "description",
        "risk",
    }
    name = entry.get("name", "?")
    extra = set(entry) - known
    if extra:
        retired = [f"{key} ({_RETIRED[key]})" for key in sorted(extra) if key in _RETIRED]
        raise KnobError(
            f"knob {name!r}: unknown field(s) {', '.join(sorted(extra))}"
            + (f"; removed: {', '.join(retired)}" if retired else "")
        )
    try:
        return Knob(
            name=str(entry["name"]),
            type=entry["type"],
            default=entry["default"],
            low=entry.get("min"),
            high=entry.get("max"),
            values=tuple(entry.get("values", ())),
            log=bool(entry.get("log", False)),
            unit=str(entry.get("unit", "")),
            description=str(entry.get("description", "")),
            risk=risk_from_dict(str(name), entry["risk"]) if "risk" in entry else None,
            strict=strict,
        )
    except KeyError as missing:
        raise KnobError(f"knob {name!r}: missing field {missing}") from None


def load_catalogue(path: str | Path, knob_set: str | None = None) -> Space:
    """Read a knob catalogue YAML: ``knobs: [...]`` and optional ``sets: {name: [knobs]}``.

    ``knob_set`` picks a named subset (e.g. ``"10"`` for the paper's 10-knob experiments);
    ``None`` or ``"all"`` takes every knob. Catalogue knobs are ``strict`` (see SAFE_CHOICE).
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise KnobError(f"cannot read knob catalogue {path}: {exc}") from None
    space = Space(tuple(knob_from_dict(entry, strict=True) for entry in data.get("knobs", [])))
    if knob_set in (None, "all"):
        return space
    sets = data.get("sets", {})
    if str(knob_set) not in sets:
        choices = ", ".join(["all", *map(str, sets)])
        raise KnobError(f"catalogue {path.name} has no knob set {knob_set!r}; choose {choices}")
    return space.subspace(sets[str(knob_set)])
