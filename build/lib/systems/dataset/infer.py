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
* **Knob types.** All values true/false -> bool; all numbers -> int if all whole, else float,
  with the data's min/max as range; all text with at most ``max_enum`` distinct values -> enum;
  a mostly-numeric column with some text is an error naming the cell. Constant columns are
  dropped with a logged note.
* **Default.** The row flagged ``is_default``; else ``default_row`` (an index, or ``"first"``);
  else ``"median"``: the per-knob median (mode for enum/bool), which is a configuration inside
  the data's range but not necessarily a recorded one.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from harness.errors import ConfigError
from harness.space import Config, Knob, Space
from systems.dataset.tables import Table

__all__ = ["BOOKKEEPING", "Dataset", "apply_catalogue", "bestconf_name", "build_dataset"]

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


def bestconf_name(column: str) -> tuple[str, str]:
    """BestConfig column -> (real knob name, unit), e.g. sqlmyd_Ksort_buffer_size ->
    (sort_buffer_size, KiB), yarnyarn.nodemanager.x -> (yarn.nodemanager.x, '')."""
    for prefix, unit in _BESTCONF_PREFIXES:
        if column.startswith(prefix) and len(column) > len(prefix):
            return column[len(prefix) :], unit
    return column, ""


@dataclass(frozen=True)
class Dataset:
    """A parsed, typed sample table ready for fitting."""

    space: Space
    configs: list[Config]
    points: np.ndarray  # (n, d) encoded configurations, all rows
    values: np.ndarray  # (n,) target values, NaN where the row failed
    failed: np.ndarray  # (n,) bool
    target: str
    default_source: str
    columns: dict[str, str]  # knob name -> source column
    notes: list[str] = field(default_factory=list)
    #: Statuses of failed rows when the table has a ``status`` column (e.g. CRASHED: 3).
    failure_statuses: dict[str, int] = field(default_factory=dict)

    @property
    def n_ok(self) -> int:
        return int((~self.failed).sum())


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
        raise ConfigError(
            f"no target column given for {table.source}; set dataset.target to one of: {listing}"
        )
    candidates = [target] + ([f"result.{target}"] if export else [])
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
                f"{table.where(i)}: target {target_col!r} value {cell!r} is not a number"
            )
        if failure_value is not None and number == failure_value:
            failed[i] = True
            continue
        values[i] = number
    return values, failed


def _infer_knob(
    name: str, column: str, cells: list[str | None], table: Table, unit: str, max_enum: int
) -> Knob | None:
    """One knob from one column, or None if the column is constant."""
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
        return Knob(name, "bool", default=flag, unit=unit)
    numbers = [_number(t) for t in texts]
    n_numeric = sum(v is not None for v in numbers)
    if n_numeric == len(numbers):
        values = np.array(numbers, dtype=float)
        low, high = float(values.min()), float(values.max())
        if low == high:
            return None
        whole = bool(np.all(values == np.round(values)))
        median = float(np.median(values))
        if whole:
            return Knob(name, "int", default=round(median), low=low, high=high, unit=unit)
        return Knob(name, "float", default=median, low=low, high=high, unit=unit)
    if column in table.nominal or n_numeric * 2 < len(numbers):
        distinct = sorted(set(texts))
        if len(distinct) > max_enum:
            raise ConfigError(
                f"{table.source}: column {column!r} has {len(distinct)} distinct "
                f"text values, too many for an enum knob (max {max_enum}); "
                "exclude it or raise max_enum"
            )
        default_text = Counter(texts).most_common(1)[0][0]
        return Knob(name, "enum", default=default_text, values=tuple(distinct), unit=unit)
    bad = next(i for i, v in enumerate(numbers) if v is None)
    raise ConfigError(
        f"{table.where(bad)}: numeric knob column {column!r} holds "
        f"{texts[bad]!r}, which is not a number"
    )


def _cell_value(knob: Knob, cell: str) -> bool | int | float | str:
    if knob.type == "bool":
        return cell.lower() in _TRUE
    if knob.type == "enum":
        return cell
    number = float(cell)
    return int(number) if knob.type == "int" else number


def build_dataset(
    table: Table,
    target: str | None,
    *,
    exclude: Sequence[str] = (),
    failure_value: float | None = None,
    default_row: int | str | None = None,
    rename: str | None = None,
    max_enum: int = 12,
) -> Dataset:
    """Type a raw table into a :class:`Dataset` (see the module docstring for the rules)."""
    if not table.rows:
        raise ConfigError(f"{table.source} has a header but no data rows")
    export = any(c.startswith("config.") for c in table.columns)
    target_col = _target_column(table, target, export)
    values, failed = _failures(table, target_col, failure_value)
    skip = {target_col, *BOOKKEEPING, *exclude}
    unknown = [c for c in exclude if c not in table.columns]
    if unknown:
        raise ConfigError(
            f"exclude names unknown columns {unknown}; columns: {', '.join(table.columns)}"
        )
    if export:
        sources = [c for c in table.columns if c.startswith("config.") and c not in skip]
    else:
        sources = [c for c in table.columns if c not in skip]
    notes: list[str] = []
    knobs: list[Knob] = []
    columns: dict[str, str] = {}
    for column in sources:
        name = column.removeprefix("config.") if export else column
        unit = ""
        if rename == "bestconf":
            name, unit = bestconf_name(column)
        elif rename is not None:
            raise ConfigError(f"unknown rename scheme {rename!r} (use bestconf or null)")
        knob = _infer_knob(name, column, table.column(column), table, unit, max_enum)
        if knob is None:
            notes.append(f"dropped constant column {column!r}")
            log.info("%s: dropped constant column %r (not a knob)", table.source, column)
            continue
        knobs.append(knob)
        columns[name] = column
    if not knobs:
        raise ConfigError(f"{table.source}: no knob columns left (all constant or excluded)")
    cells = {name: table.column(col) for name, col in columns.items()}
    configs = [
        {k.name: _cell_value(k, cells[k.name][i]) for k in knobs}  # type: ignore[arg-type]
        for i in range(len(table.rows))
    ]
    default_source = "median of each knob (mode for enum/bool): the data marks no default"
    default_index: int | None = None
    if "is_default" in table.columns:
        flags = [(c or "").lower() in _TRUE for c in table.column("is_default")]
        if any(flags):
            default_index = flags.index(True)
            default_source = f"row flagged is_default ({table.where(default_index)})"
    if default_index is None and default_row not in (None, "median"):
        index = 0 if default_row == "first" else int(default_row)  # type: ignore[arg-type]
        if not 0 <= index < len(table.rows):
            raise ConfigError(f"default_row {default_row} is outside the {len(table.rows)} rows")
        default_index = index
        default_source = f"data row {index + 1} ({table.where(index)})"
    if default_index is not None:
        knobs = [_with_default(k, configs[default_index][k.name]) for k in knobs]
    space = Space(tuple(knobs))
    statuses: Counter[str] = Counter()
    if "status" in table.columns:
        statuses.update(
            (c or "").strip().upper()
            for c, bad in zip(table.column("status"), failed, strict=True)
            if bad
        )
        statuses.pop("SUCCEEDED", None)
        statuses.pop("INFEASIBLE", None)
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
        failure_statuses=dict(statuses),
    )


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
