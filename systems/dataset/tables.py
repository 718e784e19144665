"""Reading (configuration -> performance) tables from ARFF and CSV files.

Both readers return a :class:`Table` of raw text cells (``None`` for a missing value) with the
source line of every row, so that later checks can name the exact line of a bad value. Types
are decided later, per column, by :mod:`systems.dataset.infer`; ARFF nominal attributes keep
their declared values.

* **ARFF** is parsed by ``scipy.io.arff`` (numeric and nominal attributes, ``?``, ``%``
  comments), not by a reader of our own; its numbers come back as text again so that both
  formats look the same to the inference. String and date attributes are refused with the
  attribute's name (scipy does not read strings, and a date is not a knob).
* **CSV**: a header row, then data. A leading column with an empty name (what
  ``DataFrame.to_csv()`` writes for the index) or pandas' ``Unnamed: 0`` holding distinct whole
  numbers is an index, not a knob: it is dropped with a note. ``exclude`` columns are removed
  before any check, so that a column which would fail one (an empty or duplicate name, text)
  can always be excluded.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
import math
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import ConfigError

log = logging.getLogger(__name__)

__all__ = [
    "Table",
    "file_digest",
    "parse_arff",
    "parse_csv",
    "read_arff",
    "read_csv",
    "read_regular",
    "read_table",
    "without_columns",
]

#: Header names pandas gives an unnamed index column when a CSV is read back and re-written.
_INDEX_NAMES = ("", "Unnamed: 0")
#: A large table logs its progress every this many rows (a million rows take minutes).
PROGRESS_ROWS = 200_000
_DATA_LINE = re.compile(r"^\s*@data\b", re.IGNORECASE)


@dataclass(frozen=True)
class Table:
    """Raw cells of a sample table: ``rows[i][j]`` is column ``columns[j]`` of row ``i``."""

    columns: list[str]
    rows: list[list[str | None]]
    lines: list[int]  # 1-based source line of each row, for error messages
    source: str = "<memory>"
    nominal: dict[str, tuple[str, ...]] = field(default_factory=dict)  # ARFF {a,b,c} columns
    notes: list[str] = field(default_factory=list)  # what reading changed (index dropped, ...)

    def column(self, name: str) -> list[str | None]:
        j = self.columns.index(name)
        return [row[j] for row in self.rows]

    def where(self, i: int) -> str:
        """'file line N (data row i+1)' for error messages."""
        return f"{self.source} line {self.lines[i]} (data row {i + 1})"


def read_regular(path: str | Path) -> bytes:
    """The bytes of ``path`` if it is a regular file; ConfigError (one line) for a FIFO, a
    device, a socket or a folder, checked on the opened descriptor before anything is read
    (opened non-blocking: a FIFO with no writer would otherwise block forever)."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ConfigError(f"dataset file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read dataset file {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigError(
                f"dataset file {path} is not a regular file (it is a {_kind(mode)}); "
                "give a CSV or ARFF file"
            )
        return handle.read()


def _kind(mode: int) -> str:
    kinds = {
        "folder": stat.S_ISDIR,
        "FIFO": stat.S_ISFIFO,
        "socket": stat.S_ISSOCK,
        "character device": stat.S_ISCHR,
        "block device": stat.S_ISBLK,
    }
    return next((name for name, test in kinds.items() if test(mode)), "special file")


def file_digest(path: str | Path) -> str:
    """SHA-256 of a regular file's bytes (keys fitted-model caches and committed optima)."""
    return hashlib.sha256(read_regular(path)).hexdigest()


def read_table(path: str | Path, exclude: Sequence[str] = ()) -> Table:
    """Read ``.arff`` as ARFF and anything else as CSV; raise ConfigError if it does not parse.

    ``exclude`` names columns to leave out, removed before any check of the columns."""
    path = Path(path)
    try:
        text = read_regular(path).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"cannot read dataset file {path}: byte {exc.start} is not UTF-8 text"
        ) from None
    if path.suffix.lower() == ".arff":
        return parse_arff(text, source=path.name, exclude=exclude)
    return parse_csv(text, source=path.name, exclude=exclude)


def read_arff(path: str | Path) -> Table:
    return parse_arff(read_regular(path).decode("utf-8-sig"), source=Path(path).name)


def read_csv(path: str | Path) -> Table:
    return parse_csv(read_regular(path).decode("utf-8-sig"), source=Path(path).name)


def without_columns(table: Table, exclude: Sequence[str]) -> Table:
    """``table`` without the ``exclude`` columns (every name must be a column)."""
    unknown = [c for c in exclude if c not in table.columns]
    if unknown:
        raise ConfigError(
            f"exclude names unknown columns {unknown}; columns: {', '.join(table.columns)}"
        )
    keep = [j for j, c in enumerate(table.columns) if c not in exclude]
    return Table(
        [table.columns[j] for j in keep],
        [[row[j] for j in keep] for row in table.rows],
        table.lines,
        table.source,
        {k: v for k, v in table.nominal.items() if k not in exclude},
        table.notes + ([f"excluded columns {list(exclude)}"] if exclude else []),
    )


def _number_text(value: float) -> str | None:
    """A float from scipy as the text a table would hold (whole numbers without '.0')."""
    if math.isnan(value):
        return None
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def _data_lines(text: str) -> list[int]:
    """1-based line numbers of the data rows (after ``@data``; not blank, not ``%``)."""
    lines, in_data = [], False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not in_data:
            in_data = bool(_DATA_LINE.match(line))
        elif line and not line.startswith("%"):
            lines.append(lineno)
    return lines


def parse_arff(text: str, source: str = "<arff>", exclude: Sequence[str] = ()) -> Table:
    """Parse ARFF text with ``scipy.io.arff`` (numeric and nominal attributes)."""
    from scipy.io import arff

    _refuse_unreadable_attributes(text, source)
    lines = _data_lines(text)
    if not any(_DATA_LINE.match(raw) for raw in text.splitlines()):
        raise ConfigError(f"{source}: no @data section (not an ARFF file, or truncated)")
    sparse = [n for n in lines if text.splitlines()[n - 1].lstrip().startswith("{")]
    if sparse:
        raise ConfigError(f"{source} line {sparse[0]}: sparse ARFF rows are not supported")
    try:
        data, meta = arff.loadarff(io.StringIO(text))
    except (ValueError, arff.ParseArffError, NotImplementedError, LookupError):
        raise ConfigError(
            f"{source}: not an ARFF file scipy.io.arff can read: {_arff_problem(text)}"
        ) from None
    except StopIteration:  # scipy's reader ran out of lines looking for the header
        raise ConfigError(
            f"{source}: no @relation/@attribute header (is this an ARFF file?)"
        ) from None
    columns = list(meta.names())
    if not columns:
        raise ConfigError(f"{source}: no @attribute declared")
    nominal: dict[str, tuple[str, ...]] = {}
    kinds = dict(zip(columns, meta.types(), strict=True))
    for name in columns:
        if kinds[name] == "nominal":
            nominal[name] = tuple(str(v) for v in meta[name][1])
    rows = [_arff_row(record, columns, kinds) for record in data]
    if len(lines) != len(rows):  # e.g. a data line scipy skipped: fall back to row numbers
        lines = list(range(1, len(rows) + 1))
    table = Table(columns, rows, lines, source, nominal)
    return without_columns(table, exclude) if exclude else table


def _refuse_unreadable_attributes(text: str, source: str) -> None:
    """A string, date or relational attribute: one line naming it, before scipy fails on it."""
    for lineno, raw in enumerate(text.splitlines(), start=1):
        match = re.match(r"\s*@attribute\s+('[^']*'|\"[^\"]*\"|\S+)\s+(\w+)", raw, re.I)
        if match and match.group(2).lower() in ("string", "date", "relational"):
            name = match.group(1).strip("'\"")
            raise ConfigError(
                f"{source} line {lineno}: attribute {name!r} has type {match.group(2)!r}; "
                "scipy.io.arff reads numeric, real, integer and {nominal values} "
                "attributes (declare it nominal, or convert the file to CSV)"
            )


def _arff_row(record: Any, columns: list[str], kinds: dict[str, str]) -> list[str | None]:
    """One ARFF record as table cells: nominal values as text (``?``: missing), numbers as
    their shortest text."""
    row: list[str | None] = []
    for name in columns:
        cell = record[name]
        if kinds[name] == "nominal":
            value = cell.decode() if isinstance(cell, bytes) else str(cell)
            row.append(None if value == "?" else value)
        else:
            row.append(_number_text(float(cell)))
    return row


_ARFF_ATTRIBUTE = re.compile(r"\s*@attribute\s+('[^']*'|\"[^\"]*\"|\S+)\s+(.*)$", re.I)
_NUMERIC = ("numeric", "real", "integer")


def _attributes(text: str) -> list[tuple[int, str, str]]:
    """(line, name, declared type) of every ``@attribute`` line."""
    found = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        match = _ARFF_ATTRIBUTE.match(raw)
        if match:
            found.append((lineno, match.group(1).strip("'\""), match.group(2).strip()))
    return found


def _arff_problem(text: str) -> str:
    """Where an ARFF file scipy refused is wrong: a line and column, never the file's text
    (the file may be anything a config named)."""
    attributes = _attributes(text)
    for lineno, name, kind in attributes:
        if kind.lower() not in _NUMERIC and not kind.startswith("{"):
            return f"line {lineno}: attribute {name!r} has a type it does not read"
    lines = text.splitlines()
    for lineno in _data_lines(text):
        cells = next(csv.reader([lines[lineno - 1]], quotechar="'", skipinitialspace=True))
        if len(cells) != len(attributes):
            return f"line {lineno}: {len(cells)} values, {len(attributes)} attributes declared"
        pairs = zip(cells, attributes, strict=True)
        for column, (cell, (_, name, kind)) in enumerate(pairs, start=1):
            if not _fits(cell.strip(), kind):
                return f"line {lineno} column {column}: not a value of attribute {name!r}"
    return "a declaration or value it does not accept (line not located)"


def _fits(cell: str, kind: str) -> bool:
    """Whether an ARFF data cell fits its declared type (``?`` is missing, always fits)."""
    if cell == "?":
        return True
    if kind.lower() in _NUMERIC:
        try:
            float(cell)
        except ValueError:
            return False
        return True
    declared = next(csv.reader([kind.strip("{} ")], quotechar="'", skipinitialspace=True))
    return cell.strip("'\"") in [v.strip().strip("'\"") for v in declared]


def parse_csv(text: str, source: str = "<csv>", exclude: Sequence[str] = ()) -> Table:
    """Parse CSV text with a header row; empty cells become ``None``. A leading unnamed index
    column is dropped (with a note) and ``exclude`` columns are removed before the checks."""
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str | None]] = []
    lines: list[int] = []
    try:
        for cells in reader:
            lineno = reader.line_num
            if not cells or all(not c.strip() for c in cells):
                continue
            if header is None:
                header, header_line = [c.strip() for c in cells], lineno
                continue
            if len(cells) != len(header):
                raise ConfigError(
                    f"{source} line {lineno}: {len(cells)} fields, the header has {len(header)}"
                )
            rows.append([c.strip() if c.strip() else None for c in cells])
            lines.append(lineno)
            if len(rows) % PROGRESS_ROWS == 0:
                log.info("%s: %d rows read (line %d)...", source, len(rows), lineno)
    except csv.Error as exc:
        raise ConfigError(f"{source} line {reader.line_num}: not valid CSV: {exc}") from None
    if header is None:
        raise ConfigError(f"{source}: empty file (no header row)")
    table = Table(header, rows, lines, source)
    if _is_index(table):
        table = without_columns(table, [header[0]])
        table = Table(
            table.columns,
            table.rows,
            table.lines,
            source,
            notes=[
                f"dropped the unnamed leading column {header[0]!r}: it numbers the rows (an "
                "index, as DataFrame.to_csv() writes it), it is not a knob"
            ],
        )
    if exclude:
        table = without_columns(table, exclude)
    names = table.columns
    if len(set(names)) != len(names) or any(not h for h in names):
        raise ConfigError(
            f"{source} line {header_line}: the header has empty or duplicate column names "
            "(exclude= can remove them)"
        )
    if len(names) < 2:
        raise ConfigError(
            f"{source} line {header_line}: only one column; a sample table needs "
            "knob columns and a target column (is the separator a comma?)"
        )
    return table


def _is_index(table: Table) -> bool:
    """Whether the first column is an unnamed row index (distinct whole numbers)."""
    if not table.columns or table.columns[0] not in _INDEX_NAMES or not table.rows:
        return False
    cells = [row[0] for row in table.rows]
    if any(c is None or not re.fullmatch(r"-?\d+", c) for c in cells):
        return False
    return len(set(cells)) == len(cells)
