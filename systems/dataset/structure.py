"""The structure a recorded table shows beyond its single columns: one-hot groups, recorded
levels and value pairs that never occur together.

* **One-hot groups.** 0/1 columns of which exactly one is 1 in every row (an exact cover of the
  rows) are one categorical choice, recorded one-hot; they become one enum knob whose values
  are the columns (their common name part removed). A 0/1 *parent* column that is 1 exactly
  when one of its 0/1 children is (``journalCompression`` = ``…Snappy`` + ``…Zlib``) is a
  feature with a detail option: one enum knob ``{off, Snappy, Zlib}``, so that a detail can
  never be on while its feature is off. Groups are found by an exact-cover search (Knuth's
  Algorithm X, bounded), so their columns need not be adjacent.
* **Recorded levels.** A numeric column measured at only a few levels (at most ``max_levels``,
  each seen twice on average) is an ordinal knob over exactly those levels: a tuner can then
  only propose values that were measured.
* **Never together.** Two values of two categorical knobs that no row combines, although
  independence would predict at least ``min_expected`` such rows, are a constraint of the
  table (e.g. journal compression without a journal). The recorded-sample backend keeps them
  by construction; the surrogate reports a configuration that breaks one as a failed test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Constraint",
    "Group",
    "find_constraints",
    "find_groups",
    "group_values",
    "recorded_levels",
]

_SEARCH_NODES = 20_000  # bound on the exact-cover search per column (tables are small)
_SEPARATORS = "_-. :"


@dataclass(frozen=True)
class Group:
    """0/1 columns that record one categorical choice; ``values[i]`` names ``columns[i]``.

    ``parent`` (if any) is 1 exactly when one member is; the knob then also has ``off``."""

    name: str
    columns: tuple[str, ...]
    values: tuple[str, ...]
    parent: str | None = None
    off: str = "off"

    @property
    def choices(self) -> tuple[str, ...]:
        return ((self.off,) if self.parent else ()) + self.values

    @property
    def sources(self) -> tuple[str, ...]:
        return ((self.parent,) if self.parent else ()) + self.columns

    def reason(self) -> str:
        cols = ", ".join(self.columns)
        if self.parent:
            return (
                f"0/1 columns {cols} are 1 only when {self.parent} is, and exactly one of "
                f"them then: a feature with a detail option ({self.off} = {self.parent} is 0)"
            )
        return f"0/1 columns {cols}: exactly one is 1 in every row (one-hot)"


@dataclass(frozen=True)
class Constraint:
    """``first`` and ``second`` (knob, value) never occur together in the table."""

    first: tuple[str, object]
    second: tuple[str, object]
    expected: float  # rows independence would predict

    def broken_by(self, config: Mapping[str, object]) -> bool:
        return all(str(config.get(k)) == str(v) for k, v in (self.first, self.second))

    def __str__(self) -> str:
        (a, x), (b, y) = self.first, self.second
        return f"{a}={x} never with {b}={y} (0 rows, {self.expected:.0f} expected)"


def _common_prefix(names: Sequence[str]) -> str:
    first = min(names)
    last = max(names)
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    return first[:size]


def _name_parts(columns: Sequence[str], parent: str | None) -> tuple[str, tuple[str, ...]]:
    """A knob name and one value per column, from the columns' shared name part."""
    prefix = parent if parent and all(c.startswith(parent) for c in columns) else ""
    if not prefix:
        prefix = _common_prefix(columns)
    values = tuple(c[len(prefix) :].strip(_SEPARATORS) for c in columns)
    name = (parent or prefix).strip(_SEPARATORS)
    if len(name) >= 2 and all(values) and len(set(values)) == len(values):
        return name, values
    reverse = _common_prefix([c[::-1] for c in columns])[::-1]
    name = parent or reverse.strip(_SEPARATORS) or "|".join(columns[:3])
    return name, tuple(columns)


def _exact_cover(
    matrix: np.ndarray, rows: np.ndarray, first: int, candidates: list[int]
) -> list[int] | None:
    """Columns (``first`` among them) that cover each of ``rows`` exactly once, or None."""
    budget = [_SEARCH_NODES]
    sub = matrix[rows]

    def search(chosen: list[int], covered: np.ndarray) -> list[int] | None:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        if covered.all():
            return chosen
        r = int(np.flatnonzero(~covered)[0])
        for c in candidates:
            if c in chosen or not sub[r, c] or (sub[:, c] & covered).any():
                continue
            found = search([*chosen, c], covered | sub[:, c])
            if found:
                return found
        return None

    return search([first], sub[:, first].copy())


def find_groups(columns: Sequence[str], cells: dict[str, list[float]]) -> list[Group]:
    """One-hot groups and feature/detail groups among the 0/1 ``columns`` (see the module
    docstring); ``cells`` holds every column's numbers, row by row."""
    binary = [c for c in columns if set(cells[c]) == {0.0, 1.0}]
    if len(binary) < 2:
        return []
    matrix = np.array([cells[c] for c in binary], dtype=bool).T
    everyone = np.ones(len(matrix), dtype=bool)
    free = list(range(len(binary)))
    found: list[Group] = []
    for i in range(len(binary)):  # exact covers of all rows: plain one-hot groups
        if i not in free:
            continue
        others = [j for j in free if j != i and not (matrix[:, i] & matrix[:, j]).any()]
        cover = _exact_cover(matrix, everyone, i, others)
        if cover and len(cover) >= 2:
            members = tuple(binary[j] for j in sorted(cover))
            name, values = _name_parts(members, None)
            found.append(Group(name, members, values))
            free = [j for j in free if j not in cover]
    for p in list(free):  # a feature column and its exclusive detail columns
        if p not in free:
            continue
        on = matrix[:, p]
        children = [j for j in free if j != p and not (matrix[:, j] & ~on).any()]
        if len(children) < 2:
            continue
        cover = _exact_cover(matrix, on, children[0], children)
        if not cover or len(cover) < 2:
            continue
        members = tuple(binary[j] for j in sorted(cover))
        name, values = _name_parts(members, binary[p])
        off = "off" if "off" not in values else "none"
        found.append(Group(name, members, values, parent=binary[p], off=off))
        free = [j for j in free if j not in cover and j != p]
    return found


def group_values(group: Group, cells: dict[str, list[float]], n_rows: int) -> list[str]:
    """The group knob's value in each row."""
    out = []
    for i in range(n_rows):
        on = [v for c, v in zip(group.columns, group.values, strict=True) if cells[c][i] == 1.0]
        out.append(on[0] if on else group.off)
    return out


def recorded_levels(numbers: Sequence[float], max_levels: int) -> tuple[int | float, ...] | None:
    """The sorted distinct levels of a numeric column measured at only a few of them (at most
    ``max_levels``, and each seen twice on average), else None."""
    levels = sorted(set(numbers))
    if max_levels < 2 or not 2 <= len(levels) <= max_levels or len(numbers) < 2 * len(levels):
        return None
    if all(float(v).is_integer() for v in levels):
        return tuple(int(v) for v in levels)
    return tuple(float(v) for v in levels)


def find_constraints(
    configs: Sequence[dict[str, object]], names: Sequence[str], min_expected: float = 5.0
) -> list[Constraint]:
    """Value pairs of the categorical knobs ``names`` that never occur together although
    independence predicts at least ``min_expected`` rows with them."""
    n = len(configs)
    if n < 20:
        return []
    counts = {k: Counter(str(c[k]) for c in configs) for k in names}
    found = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            pairs = Counter((str(c[a]), str(c[b])) for c in configs)
            for x, nx in sorted(counts[a].items()):
                for y, ny in sorted(counts[b].items()):
                    expected = nx * ny / n
                    if expected >= min_expected and pairs[(x, y)] == 0:
                        found.append(Constraint((a, x), (b, y), expected))
    return found
