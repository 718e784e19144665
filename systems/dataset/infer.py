"""From a raw sample table to a knob space, encoded points and target values.

Rules (each a documented choice, see ``systems/dataset/README.md``):

* **Layout.** A table with ``config.<knob>`` columns is a harness export: those columns are the
  knobs, ``result.<metric>`` columns are metrics (``target`` may be given with or without the
  ``result.`` prefix), and ``status``/``is_default`` are honoured; other columns are ignored.
  Any other table: every column except the target, ``exclude`` and the bookkeeping columns
  (``trial``, ``status``, ``is_default``) is a knob.
* **Failures.** A row failed if its ``status`` is neither SUCCEEDED nor INFEASIBLE (an
  infeasible test ran and measured its metrics), if its target is empty, or if it equals
  ``failure_value`` (BestConfig writes -1).
* **Objectives.** A column name ending in ``-`` (minimise) or ``+`` (maximise), as in MOOT's
  tables, is an objective: never a knob; ``target`` may name it with or without the marker,
  the marker then gives the direction, and without a target the first marked column is it.
* **Knob types.** All values true/false -> bool; one-hot and feature/detail 0/1 column groups
  -> one enum knob each, and numbers recorded at only a few levels -> an ordinal (enum) knob
  over exactly those levels (:mod:`systems.dataset.structure`; ``one_hot=False`` and
  ``ordinal=False`` turn these off); a BestConfig type code (``rename=bestconf``, prefix
  ``sqlmyd_Type``), sampled there as a continuous number, -> an enum over its whole codes;
  other numbers -> int if at least :data:`WHOLE_SHARE` of them are whole (a count: recorded
  fractions are rounded, as the system rounded them), else float, with the data's min/max
  as range; all text with at most ``max_enum`` distinct values -> enum; a
  mostly-numeric column with some text is an error naming the cell. Constant columns are
  dropped with a logged note. Every knob's reason is in :attr:`Dataset.inference`.
* **Default.** A given ``default_config`` (knobs it lacks: median/mode); else the row flagged
  ``is_default``; else ``default_row`` (an index, ``"first"``, or ``"median_value"``: the
  successful row of median performance); else ``"median"``: the
  per-knob median (mode for enum/bool), which is a configuration inside the data's range but
  not necessarily a recorded one (the system then moves it to the nearest recorded row where
  it must be one).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.errors import ConfigError
from harness.space import Knob, Space
from systems.dataset.defaults import apply_catalogue, default_rule
from systems.dataset.structure import (
    Group,
    find_constraints,
    find_groups,
    group_values,
    recorded_levels,
)
from systems.dataset.tables import Table, without_columns
from systems.dataset.typed import Dataset, marker_direction

__all__ = [
    "BOOKKEEPING",
    "Dataset",
    "apply_catalogue",
    "bestconf_name",
    "build_dataset",
    "marker_direction",
]

log = logging.getLogger(__name__)

BOOKKEEPING = ("trial", "status", "is_default")
_OK_STATUSES = ("SUCCEEDED", "INFEASIBLE")
_TRUE, _FALSE = ("true", "yes", "on"), ("false", "no", "off")

# BestConfig's unit-hint prefixes (see data/bestconf/README.md): prefix -> unit.
_BESTCONF_PREFIXES = (
    ("sqlmyd_K", "KiB"),
    ("sqlmyd_Type", ""),
    ("sqlmyd", ""),
    ("Size.", "KiB"),
    ("Time.", "ms"),
    ("mapred", ""),
    ("yarn", ""),
)


def bestconf_codes(column: str) -> bool:
    """Whether a BestConfig column holds a type code (``sqlmyd_Typequery_cache_type``): a knob
    of a few whole codes that BestConfig sampled as a continuous number."""
    return column.startswith(_BESTCONF_CODES) and len(column) > len(_BESTCONF_CODES)


#: BestConfig's prefix of a type code (the system takes a whole code: 0, 1, 2, ...).
_BESTCONF_CODES = "sqlmyd_Type"
#: A numeric column whose values are whole in at least this share of the rows is a count (an
#: int knob): BestConfig recorded some settings of integer knobs with the fraction it sampled,
#: which the system rounded (``maxThreads`` 9578.26); a real float knob is almost never whole.
WHOLE_SHARE = 0.5


def bestconf_name(column: str) -> tuple[str, str]:
    """BestConfig column -> (real knob name, unit), e.g. sqlmyd_Ksort_buffer_size ->
    (sort_buffer_size, KiB), yarnyarn.nodemanager.x -> (yarn.nodemanager.x, '')."""
    for prefix, unit in _BESTCONF_PREFIXES:
        if column.startswith(prefix) and len(column) > len(prefix):
            return column[len(prefix) :], unit
    return column, ""


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _target_column(table: Table, target: str | None, export: bool) -> str:
    listing = ", ".join(table.columns)
    if not target:
        marked = [c for c in table.columns if marker_direction(c)]
        if marked:
            return marked[0]
        raise ConfigError(
            f"no target column given for {table.source}; set dataset.target to one of: {listing}"
        )
    candidates = [target] + ([f"result.{target}"] if export else [])
    if not marker_direction(target):
        candidates += [f"{target}-", f"{target}+"]
    for name in candidates:
        if name in table.columns:
            return name
    raise ConfigError(
        f"target column {target!r} is not in {table.source}; its columns are: {listing}"
    )


def _failures(
    table: Table, target_col: str, failure_value: float | None
) -> tuple[np.ndarray, np.ndarray]:
    raw = table.column(target_col)
    status = table.column("status") if "status" in table.columns else [None] * len(raw)
    values = np.full(len(raw), np.nan)
    failed = np.zeros(len(raw), dtype=bool)
    for i, (cell, state) in enumerate(zip(raw, status, strict=True)):
        if state is not None and state.strip().upper() not in _OK_STATUSES:
            failed[i] = True
            continue
        if cell is None or cell.lower() == "nan":
            failed[i] = True
            continue
        number = _number(cell)
        if number is None:
            raise ConfigError(
                f"{table.where(i)}: the value of target {target_col!r} is not a number"
            )
        if failure_value is not None and number == failure_value:
            failed[i] = True
            continue
        values[i] = number
    return values, failed


def _median_level(values: np.ndarray) -> float:
    """The lower middle recorded value (a median that was measured)."""
    ordered = np.sort(values)
    return float(ordered[(len(ordered) - 1) // 2])


def _infer_knob(
    name: str,
    column: str,
    cells: list[str | None],
    table: Table,
    unit: str,
    max_enum: int,
    max_levels: int,
    codes: bool = False,
) -> tuple[Knob, str] | None:
    """One knob from one column and why, or None if the column is constant; ``codes``: the
    column holds type codes (see :func:`bestconf_codes`)."""
    for i, cell in enumerate(cells):
        if cell is None:
            raise ConfigError(
                f"{table.where(i)}: knob column {column!r} is empty; every row "
                "needs a value for every knob (or exclude the column)"
            )
    texts = [c for c in cells if c is not None]
    if len(set(texts)) < 2:
        return None
    lowered = {t.lower() for t in texts}
    if lowered <= set(_TRUE + _FALSE):
        flag = Counter(t.lower() in _TRUE for t in texts).most_common(1)[0][0]
        return Knob(name, "bool", default=flag, unit=unit), "true/false values"
    numbers = [_number(t) for t in texts]
    n_numeric = sum(v is not None for v in numbers)
    if n_numeric == len(numbers):
        return _numeric_knob(name, np.array(numbers, dtype=float), unit, max_levels, codes)
    if column in table.nominal or n_numeric * 2 < len(numbers):
        distinct = sorted(set(texts))
        if len(distinct) > max_enum:
            raise ConfigError(
                f"{table.source}: column {column!r} has {len(distinct)} distinct "
                f"text values, too many for an enum knob (max {max_enum}); "
                "exclude it or raise max_enum"
            )
        default_text = Counter(texts).most_common(1)[0][0]
        knob = Knob(name, "enum", default=default_text, values=tuple(distinct), unit=unit)
        return knob, f"{len(distinct)} distinct text values"
    bad = next(i for i, v in enumerate(numbers) if v is None)
    raise ConfigError(
        f"{table.where(bad)}: numeric knob column {column!r} holds text, which is not a number"
    )


def _numeric_knob(
    name: str, values: np.ndarray, unit: str, max_levels: int, codes: bool
) -> tuple[Knob, str] | None:
    """A knob from a column of numbers (see the module docstring's knob types)."""
    low, high = float(values.min()), float(values.max())
    if low == high:
        return None
    if set(values.tolist()) == {0.0, 1.0}:
        flag = bool(_median_level(values))
        return Knob(name, "bool", default=flag, unit=unit), "0/1 values: an on/off flag"
    if codes:
        levels = tuple(sorted({round(v) for v in values.tolist()}))
        default = _nearest(levels, _median_level(values))
        why = f"a type code (BestConfig's Type prefix): enum over the {len(levels)} whole codes"
        return Knob(name, "enum", default=default, values=levels, unit=unit), why
    found = recorded_levels(values.tolist(), max_levels)
    if found is not None:
        level = _nearest(found, _median_level(values))
        why = f"numbers recorded at only {len(found)} levels: ordinal over exactly those"
        return Knob(name, "enum", default=level, values=found, unit=unit), why
    whole = float(np.mean(values == np.round(values)))
    median = float(np.median(values))
    distinct = len(set(values.tolist()))
    if whole >= WHOLE_SHARE:
        rounded = np.round(values)
        why = f"{distinct} distinct numbers: a range, the data's min..max"
        if whole < 1:
            why = f"{distinct} distinct numbers, {whole:.0%} whole: a count, the data's min..max"
        knob = Knob(
            name,
            "int",
            default=round(median),
            low=int(rounded.min()),
            high=int(rounded.max()),
            unit=unit,
        )
        return knob, why
    why = f"{distinct} distinct numbers: a range, the data's min..max"
    return Knob(name, "float", default=median, low=low, high=high, unit=unit), why


def _nearest(levels: Sequence[int | float], number: float) -> int | float:
    """The level closest to ``number`` (a recorded level matches itself)."""
    return min(levels, key=lambda level: abs(float(level) - number))


def _cell_value(knob: Knob, cell: str) -> bool | int | float | str:
    if knob.type == "bool":
        return cell.lower() in _TRUE or _number(cell) == 1.0
    if knob.type == "enum":
        if knob.values and not isinstance(knob.values[0], str):  # numeric levels or codes
            return _nearest(knob.values, float(cell))  # type: ignore[arg-type]
        return cell
    number = float(cell)
    return round(number) if knob.type == "int" else number


def _describe(knob: Knob) -> str:
    if knob.type == "enum":
        return "enum {" + ", ".join(map(str, knob.values)) + "}"
    return knob.describe_range()


def _numbers(cells: list[str | None]) -> list[float] | None:
    numbers = [_number(c) for c in cells]
    return None if any(v is None for v in numbers) else numbers  # type: ignore[return-value]


def build_dataset(
    table: Table,
    target: str | None,
    *,
    exclude: Sequence[str] = (),
    failure_value: float | None = None,
    default_row: int | str | None = None,
    default_config: Mapping[str, Any] | None = None,
    rename: str | None = None,
    max_enum: int = 12,
    one_hot: bool = True,
    ordinal: bool = True,
    max_levels: int = 10,
) -> Dataset:
    """Type a raw table into a :class:`Dataset` (see the module docstring for the rules)."""
    if exclude:
        table = without_columns(table, exclude)
    if not table.rows:
        raise ConfigError(f"{table.source} has a header but no data rows")
    if rename not in (None, "bestconf"):
        raise ConfigError(f"unknown rename scheme {rename!r} (use bestconf or null)")
    export = any(c.startswith("config.") for c in table.columns)
    target_col = _target_column(table, target, export)
    values, failed = _failures(table, target_col, failure_value)
    notes: list[str] = list(table.notes)
    objectives = [c for c in table.columns if c != target_col and marker_direction(c)]
    if objectives and not export:
        notes.append(f"other objective columns {objectives} are not knobs")
    skip = {target_col, *BOOKKEEPING, *objectives}
    if export:
        sources = [c for c in table.columns if c.startswith("config.") and c not in skip]
    else:
        sources = [c for c in table.columns if c not in skip]
    cells = {c: table.column(c) for c in sources}
    numeric = {c: v for c, v in ((c, _numbers(cells[c])) for c in sources) if v is not None}
    groups = find_groups([c for c in sources if c in numeric], numeric) if one_hot else []
    grouped = {c: g for g in groups for c in g.sources}
    varying = {c for c in sources if len(set(cells[c])) > 1}
    typed = _TypedColumns()
    for column in sources:
        if column in grouped:
            if column == grouped[column].sources[0]:
                typed.add_group(grouped[column], numeric, varying, len(table.rows))
            continue
        name = column.removeprefix("config.") if export else column
        unit, codes = "", False
        if rename == "bestconf":
            (name, unit), codes = bestconf_name(column), bestconf_codes(column)
        levels = max_levels if ordinal else 0
        found = _infer_knob(name, column, cells[column], table, unit, max_enum, levels, codes)
        if found is None:
            notes.append(f"dropped constant column {column!r}")
            log.info("%s: dropped constant column %r (not a knob)", table.source, column)
            continue
        typed.add_column(name, column, cells[column], *found)
    knobs, columns, inference, row_values = (
        typed.knobs,
        typed.columns,
        typed.inference,
        typed.row_values,
    )
    n = len(table.rows)
    if not knobs:
        raise ConfigError(f"{table.source}: no knob columns left (all constant or excluded)")
    configs = [{k.name: row_values[k.name][i] for k in knobs} for i in range(n)]
    knobs, default_index, default_source = default_rule(
        table, knobs, configs, default_row, default_config, values, failed
    )
    space = Space(tuple(knobs))
    categorical = [k.name for k in knobs if k.type in ("enum", "bool")]
    constraints = find_constraints(configs, categorical)
    inference += [f"constraint: {c}" for c in constraints]
    statuses = _failure_statuses(table, failed)
    return Dataset(
        space=space,
        configs=configs,
        points=space.encode_many(configs),
        values=values,
        failed=failed,
        target=target_col,
        default_source=default_source,
        columns=columns,
        notes=notes,
        failure_statuses=statuses,
        inference=inference,
        constraints=constraints,
        default_index=default_index,
        direction=marker_direction(target_col),
    )


class _TypedColumns:
    """The knobs typed so far, the columns they come from, and each row's value of each."""

    def __init__(self) -> None:
        self.knobs: list[Knob] = []
        self.columns: dict[str, str] = {}
        self.inference: list[str] = []
        self.row_values: dict[str, list[Any]] = {}

    def add_group(
        self, group: Group, numeric: dict[str, list[float]], varying: set[str], rows: int
    ) -> None:
        """One enum knob for a one-hot (or ordinal) group of columns."""
        choice = group_values(group, numeric, rows)
        name = group.name
        while name in self.columns or (name in varying and name not in group.sources):
            name += "_choice"  # a group named like another knob's column
        mode = Counter(choice).most_common(1)[0][0]
        knob = Knob(name, "enum", default=mode, values=group.choices)
        self.columns[name], self.row_values[name] = ", ".join(group.sources), choice
        self.knobs.append(knob)
        self.inference.append(f"{name}: {_describe(knob)} <- {group.reason()}")

    def add_column(
        self, name: str, column: str, cells: list[str | None], knob: Knob, why: str
    ) -> None:
        """One knob for one column, typed by :func:`_infer_knob`."""
        self.knobs.append(knob)
        self.columns[name] = column
        self.row_values[name] = [_cell_value(knob, c) for c in cells]  # type: ignore[arg-type]  # a typed knob has no empty cell
        self.inference.append(f"{name}: {_describe(knob)} <- {column!r}: {why}")


def _failure_statuses(table: Table, failed: Any) -> dict[str, int]:
    """How many failed rows carry each status other than SUCCEEDED and INFEASIBLE."""
    statuses: Counter[str] = Counter()
    if "status" in table.columns:
        statuses.update(
            (c or "").strip().upper()
            for c, bad in zip(table.column("status"), failed, strict=True)
            if bad
        )
        statuses.pop("SUCCEEDED", None)
        statuses.pop("INFEASIBLE", None)
    return dict(statuses)
