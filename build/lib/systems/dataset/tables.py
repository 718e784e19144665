"""Reading (configuration -> performance) tables from ARFF and CSV files.

Both readers return a :class:`Table` of raw text cells (``None`` for a missing value) with the
source line of every row, so that later checks can name the exact line of a bad value. Types
are decided later, per column, by :mod:`systems.dataset.infer`; ARFF nominal attributes keep
their declared values.

The ARFF reader is deliberately small: dense ``@data`` rows, ``numeric``/``real``/``integer``/
``string``/``{nominal}`` attributes, ``%`` comments and ``?`` for missing values, which covers
the files BestConfig wrote (and Weka's common output). Anything else is refused with the line.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import ConfigError

__all__ = [
    "Table",
    "file_digest",
    "parse_arff",
    "parse_csv",
    "read_arff",
    "read_csv",
    "read_table",
]

_NUMERIC_TYPES = ("numeric", "real", "integer")


@dataclass(frozen=True)
class Table:
    """Raw cells of a sample table: ``rows[i][j]`` is column ``columns[j]`` of row ``i``."""

    columns: list[str]
    rows: list[list[str | None]]
    lines: list[int]  # 1-based source line of each row, for error messages
    source: str = "<memory>"
    nominal: dict[str, tuple[str, ...]] = field(default_factory=dict)  # ARFF {a,b,c} columns

    def column(self, name: str) -> list[str | None]:
        j = self.columns.index(name)
        return [row[j] for row in self.rows]

    def where(self, i: int) -> str:
        """'file line N (data row i+1)' for error messages."""
        return f"{self.source} line {self.lines[i]} (data row {i + 1})"


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes (used to key fitted-model caches and committed optima)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_table(path: str | Path) -> Table:
    """Read ``.arff`` as ARFF and anything else as CSV; raise ConfigError if it does not parse."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"dataset file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read dataset file {path}: {exc}") from None
    if path.suffix.lower() == ".arff":
        return parse_arff(text, source=path.name)
    return parse_csv(text, source=path.name)


def read_arff(path: str | Path) -> Table:
    return parse_arff(Path(path).read_text(encoding="utf-8-sig"), source=Path(path).name)


def read_csv(path: str | Path) -> Table:
    return parse_csv(Path(path).read_text(encoding="utf-8-sig"), source=Path(path).name)


def _unquote(token: str) -> str:
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return token


def _split_attribute(rest: str, source: str, lineno: int) -> tuple[str, str]:
    """Split the text after ``@attribute`` into (name, type); names may be quoted."""
    rest = rest.strip()
    if rest[:1] in ("'", '"'):
        end = rest.find(rest[0], 1)
        if end < 0:
            raise ConfigError(f"{source} line {lineno}: unterminated quoted attribute name")
        return rest[1:end], rest[end + 1 :].strip()
    parts = rest.split(None, 1)
    if len(parts) != 2:
        raise ConfigError(f"{source} line {lineno}: @attribute needs a name and a type")
    return parts[0], parts[1].strip()


def parse_arff(text: str, source: str = "<arff>") -> Table:
    """Parse dense ARFF text (see the module docstring for what is supported)."""
    columns: list[str] = []
    nominal: dict[str, tuple[str, ...]] = {}
    rows: list[list[str | None]] = []
    lines: list[int] = []
    in_data = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        lower = line.lower()
        if not in_data:
            if lower.startswith("@relation"):
                continue
            if lower.startswith("@attribute"):
                name, kind = _split_attribute(line[len("@attribute") :], source, lineno)
                if kind.startswith("{"):
                    if not kind.endswith("}"):
                        raise ConfigError(f"{source} line {lineno}: unterminated nominal type")
                    values = next(
                        csv.reader([kind[1:-1]], quotechar="'", skipinitialspace=True), []
                    )
                    nominal[name] = tuple(v.strip() for v in values)
                elif kind.lower() not in (*_NUMERIC_TYPES, "string"):
                    raise ConfigError(
                        f"{source} line {lineno}: attribute {name!r} has type "
                        f"{kind!r}; supported: numeric, real, integer, string, "
                        "{nominal values}"
                    )
                columns.append(name)
                continue
            if lower.startswith("@data"):
                if not columns:
                    raise ConfigError(f"{source} line {lineno}: @data before any @attribute")
                in_data = True
                continue
            raise ConfigError(
                f"{source} line {lineno}: expected @relation, @attribute or "
                f"@data, got {line[:40]!r} (is this an ARFF file?)"
            )
        if line.startswith("{"):
            raise ConfigError(f"{source} line {lineno}: sparse ARFF rows are not supported")
        cells = next(csv.reader([line], quotechar="'", skipinitialspace=True))
        if len(cells) != len(columns):
            raise ConfigError(
                f"{source} line {lineno}: {len(cells)} values, but "
                f"{len(columns)} attributes are declared"
            )
        rows.append([None if c.strip() == "?" else _unquote(c) for c in cells])
        lines.append(lineno)
    if not in_data:
        raise ConfigError(f"{source}: no @data section (not an ARFF file, or truncated)")
    return Table(columns, rows, lines, source, nominal)


def parse_csv(text: str, source: str = "<csv>") -> Table:
    """Parse CSV text with a header row; empty cells become ``None``."""
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    rows: list[list[str | None]] = []
    lines: list[int] = []
    try:
        for cells in reader:
            lineno = reader.line_num
            if not cells or all(not c.strip() for c in cells):
                continue
            if header is None:
                header = [c.strip() for c in cells]
                if len(set(header)) != len(header) or any(not h for h in header):
                    raise ConfigError(
                        f"{source} line {lineno}: the header has empty or duplicate column names"
                    )
                continue
            if len(cells) != len(header):
                raise ConfigError(
                    f"{source} line {lineno}: {len(cells)} fields, the header has {len(header)}"
                )
            rows.append([c.strip() if c.strip() else None for c in cells])
            lines.append(lineno)
    except csv.Error as exc:
        raise ConfigError(f"{source} line {reader.line_num}: not valid CSV: {exc}") from None
    if header is None:
        raise ConfigError(f"{source}: empty file (no header row)")
    if len(header) < 2:
        raise ConfigError(
            f"{source}: only one column {header[0]!r}; a sample table needs "
            "knob columns and a target column (is the separator a comma?)"
        )
    return Table(header, rows, lines, source)
