"""The default configuration of a recorded table: which rule chose it, and the knob catalogue.

The rule, in order: a given ``default_config`` (knobs it lacks take the median/mode); the row
flagged ``is_default`` (a harness export); ``default_row`` (``first`` or a row index; BestConfig's
first row is the system's default; ``median_value``: the successful row of median performance,
a configuration of typical performance where a table has no default); else the per-knob
median (mode for enum/bool knobs).
Where the default must be a recorded configuration (the recorded-sample backend, or a median
that breaks a constraint of the table), the system moves it to the nearest recorded row
(:func:`with_default_row`) and says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from statistics import median
from typing import Any

import numpy as np

from harness.errors import ConfigError
from harness.space import Config, Knob, Space
from systems.dataset.tables import Table
from systems.dataset.typed import Dataset

__all__ = [
    "apply_catalogue",
    "default_rule",
    "median_config",
    "median_value_row",
    "plain_config",
    "with_default_row",
]

_TRUE = ("true", "yes", "on")


def default_rule(
    table: Table,
    knobs: list[Knob],
    configs: list[Config],
    default_row: int | str | None,
    default_config: Mapping[str, Any] | None,
    values: Sequence[float] | np.ndarray = (),
    failed: Sequence[bool] | np.ndarray = (),
) -> tuple[list[Knob], int | None, str]:
    """Knobs with the default of the documented rule, its row (if one) and its description.

    ``values``/``failed`` (the target per row) are needed by ``default_row="median_value"``."""
    if default_config:
        space = Space(tuple(knobs))
        try:
            given = space.complete(dict(default_config))
        except ConfigError as exc:
            raise ConfigError(f"default_config does not fit the data's knobs: {exc}") from None
        lacking = [k.name for k in knobs if k.name not in default_config]
        source = "the configuration given (default_config)" + (
            f"; median/mode for {', '.join(lacking)}" if lacking else ""
        )
        return [_with_default(k, given[k.name]) for k in knobs], None, source
    default_source = "median of each knob (mode for enum/bool): the data marks no default"
    default_index: int | None = None
    if "is_default" in table.columns:
        flags = [(c or "").lower() in _TRUE for c in table.column("is_default")]
        if any(flags):
            default_index = flags.index(True)
            default_source = f"row flagged is_default ({table.where(default_index)})"
    if default_index is None and default_row == "median_value":
        default_index = median_value_row(values, failed)
        default_source = f"the successful row of median performance ({table.where(default_index)})"
    elif default_index is None and default_row not in (None, "median"):
        index = 0 if default_row == "first" else int(default_row)  # type: ignore[arg-type]
        if not 0 <= index < len(table.rows):
            raise ConfigError(f"default_row {default_row} is outside the {len(table.rows)} rows")
        default_index = index
        default_source = f"data row {index + 1} ({table.where(index)})"
    if default_index is not None:
        knobs = [_with_default(k, configs[default_index][k.name]) for k in knobs]
    return knobs, default_index, default_source


def median_value_row(
    values: Sequence[float] | np.ndarray, failed: Sequence[bool] | np.ndarray
) -> int:
    """The index of the successful row whose value is the (lower) median of the successful
    values; the earliest such row on ties."""
    flags = list(failed) or [False] * len(values)
    ok = [i for i, bad in enumerate(flags) if not bad]
    if not ok:
        raise ConfigError("default_row median_value needs at least one successful row")
    ordered = sorted(ok, key=lambda i: (float(values[i]), i))
    return ordered[(len(ordered) - 1) // 2]


def _with_default(knob: Knob, value: bool | int | float | str) -> Knob:
    return replace(knob, default=value)


def apply_catalogue(dataset: Dataset, catalogue: Space) -> Dataset:
    """Take the definitions (type, range, log scale, enum values, unit) of knobs that a knob
    catalogue knows from the catalogue instead of the data, e.g. so that a surrogate of a
    harness export keeps ``page_size`` a power-of-two enum and log-scaled sizes log-scaled.

    The default stays the data's when it came from a row (``is_default``/``default_row``),
    else the catalogue's. Every recorded value must be valid under the catalogue.
    """
    from_row = not dataset.default_source.startswith("median")
    knobs = []
    for knob in dataset.space.knobs:
        if knob.name not in catalogue:
            knobs.append(knob)
            continue
        ref = catalogue[knob.name]
        default = ref.check(knob.default, "default") if from_row else ref.default
        knobs.append(replace(ref, default=default))
    space = Space(tuple(knobs))
    configs: list[Config] = []
    for i, config in enumerate(dataset.configs):
        try:
            configs.append(space.validate(config))
        except ConfigError as exc:
            raise ConfigError(f"data row {i + 1} does not fit the knob catalogue: {exc}") from None
    if not from_row:
        source = "the knob catalogue's defaults (the data marks no default)"
    else:
        source = dataset.default_source
    return replace(
        dataset,
        space=space,
        configs=configs,
        points=space.encode_many(configs),
        default_source=source,
    )


def with_default_row(dataset: Dataset, index: int, why: str) -> Dataset:
    """``dataset`` whose default is recorded row ``index`` (``why``: the rule that led there)."""
    row = dataset.configs[index]
    space = Space(tuple(_with_default(k, row[k.name]) for k in dataset.space.knobs))
    return replace(
        dataset,
        space=space,
        default_index=index,
        default_source=f"{why}: data row {index + 1}",
    )


def median_config(space: Space, configs: list[Config]) -> Config:
    """The per-knob median of the recorded values (mode for enum/bool knobs; for recorded
    numeric levels the lower middle level, so that it is a recorded level)."""
    out: Config = {}
    for knob in space.knobs:
        column = [c[knob.name] for c in configs]
        numeric_levels = knob.type == "enum" and not any(isinstance(v, str) for v in knob.values)
        if knob.type in ("int", "float") or numeric_levels:
            ordered = sorted(float(v) for v in column)
            middle = ordered[(len(ordered) - 1) // 2] if numeric_levels else median(ordered)
            out[knob.name] = knob.check(round(middle) if knob.type == "int" else middle)
        else:
            out[knob.name] = Counter(column).most_common(1)[0][0]
    return out


def plain_config(value: Any) -> dict[str, Any] | None:
    """``default_config`` as ``{knob: value}`` of single values (``None`` when not given);
    anything else (a list, a number, a nested value) is one ConfigError line."""
    if value is None or (isinstance(value, Mapping) and not value):
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"default_config must be {{knob: value, ...}}, got a {type(value).__name__}"
        )
    plain = {}
    for knob, item in value.items():
        if not isinstance(knob, str) or not isinstance(item, str | int | float | bool):
            raise ConfigError(
                f"default_config: knob {str(knob)!r} must have one value (a number, text or "
                f"true/false), got a {type(item).__name__}"
            )
        plain[knob] = item
    return plain
