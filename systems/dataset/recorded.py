"""The recorded-sample backend: every answer is a measured row of the table.

A test of configuration ``x`` is answered with the nearest recorded configuration not yet used
in this session: categorical knobs (text enums, one-hot groups, booleans) must match exactly
(rows with fewer mismatches always come first), numeric knobs (ranges and recorded levels)
are compared by Euclidean distance of their standardised values (z-scores over the table).
A configuration recorded several times is answered by its repeats in turn, so repeated tests
see the table's own noise; a configuration asked again once its rows are used gets the
nearest unused one; once every row is used, the nearest row is answered again.

Also here, because they read the table the same way: the fidelity of answering held-out rows
with their nearest recorded neighbour (the recorded backend's counterpart of the forest's
cross-validation), the table's measured noise (spread of repeated configurations) and its
coverage of the discrete configuration space.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import KFold

from harness.space import Config, Knob, Space
from systems.dataset.model import Direction, Fidelity, fidelity_scores

__all__ = ["Noise", "RecordedSamples", "coverage", "measured_noise", "nearest_fidelity"]

_MAX_CHECKED = 1500  # held-out rows the neighbour fidelity looks at (big tables: a sample)


def _categorical(knob: Knob) -> bool:
    """Exact-match knobs: booleans and text enums (recorded numeric levels are numeric)."""
    return knob.type == "bool" or (
        knob.type == "enum" and any(isinstance(v, str) for v in knob.values)
    )


class RecordedSamples:
    """Nearest-recorded-row lookup over a table's configurations (see the module docstring)."""

    def __init__(self, space: Space, configs: list[Config]) -> None:
        self.space = space
        self.configs = configs
        self.cat_knobs = [k for k in space.knobs if _categorical(k)]
        self.num_knobs = [k for k in space.knobs if not _categorical(k)]
        self.cats = np.array(
            [[self._code(k, c[k.name]) for k in self.cat_knobs] for c in configs], dtype=int
        ).reshape(len(configs), len(self.cat_knobs))
        raw = np.array(
            [[float(c[k.name]) for k in self.num_knobs] for c in configs], dtype=float
        ).reshape(len(configs), len(self.num_knobs))
        self.mean = raw.mean(axis=0) if len(raw) else raw
        spread = raw.std(axis=0) if len(raw) else raw
        self.scale = np.where(spread > 0, spread, 1.0)
        self.nums = (raw - self.mean) / self.scale
        self.uses = np.zeros(len(configs), dtype=int)

    @staticmethod
    def _code(knob: Knob, value: object) -> int:
        if knob.type == "bool":
            return int(bool(value))
        return next((i for i, v in enumerate(knob.values) if str(v) == str(value)), -1)

    def _query(self, config: Config) -> tuple[np.ndarray, np.ndarray]:
        cats = np.array([self._code(k, config[k.name]) for k in self.cat_knobs], dtype=int)
        nums = np.array([float(config[k.name]) for k in self.num_knobs], dtype=float)
        return cats, (nums - self.mean) / self.scale

    def distances(
        self, cats: np.ndarray, nums: np.ndarray, rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(categorical mismatches, standardised numeric distance) to the recorded rows."""
        table_cats = self.cats if rows is None else self.cats[rows]
        table_nums = self.nums if rows is None else self.nums[rows]
        mismatches = (table_cats != cats).sum(axis=1)
        distance = np.sqrt(((table_nums - nums) ** 2).sum(axis=1))
        return mismatches, distance

    def reset(self) -> None:
        """Forget which rows were used (a new session)."""
        self.uses[:] = 0

    def answer(self, config: Config) -> int:
        """Index of the row that answers ``config``, marked as used (see the module docstring)."""
        mismatches, distance = self.distances(*self._query(config))
        order = np.lexsort((distance, mismatches))  # exact matches (its repeats) first
        unused = order[self.uses[order] == 0]
        index = int(unused[0] if len(unused) else order[0])
        self.uses[index] += 1
        return index

    def find(self, config: Config) -> int:
        """Index of the nearest recorded row to ``config`` (nothing marked as used)."""
        mismatches, distance = self.distances(*self._query(config))
        return int(np.lexsort((distance, mismatches))[0])


def _nearest(mismatches: np.ndarray, distance: np.ndarray) -> int:
    """``np.lexsort((distance, mismatches))[0]`` in linear time: the fewest categorical
    mismatches, then the smallest distance, then the first row."""
    fewest = np.flatnonzero(mismatches == mismatches.min())
    return int(fewest[np.argmin(distance[fewest])])


def nearest_fidelity(
    samples: RecordedSamples,
    values: np.ndarray,
    failed: np.ndarray,
    direction: Direction,
    folds: int = 4,
    seed: int = 0,
    top_fraction: float = 0.1,
) -> Fidelity:
    """How well a held-out row is predicted by its nearest recorded neighbour in the other
    folds (same folds and scores as the forest's check, :func:`model.cross_validate`)."""
    ok = np.flatnonzero(~failed)
    y = values[ok]
    pred = np.full(len(ok), np.nan)
    rng = np.random.default_rng(seed)
    checked = np.zeros(len(ok), dtype=bool)
    splitter = KFold(folds, shuffle=True, random_state=seed)
    for train, test in splitter.split(ok):
        if len(ok) > _MAX_CHECKED:
            test = rng.choice(test, size=max(1, _MAX_CHECKED // folds), replace=False)
        rows = ok[train]
        # The fold's table once (indexing it per held-out row copied it 1500 times).
        fold_cats, fold_nums = samples.cats[rows], samples.nums[rows]
        for t in test:
            i = ok[t]
            mismatches = (fold_cats != samples.cats[i]).sum(axis=1)
            distance = np.sqrt(((fold_nums - samples.nums[i]) ** 2).sum(axis=1))
            pred[t] = values[rows[_nearest(mismatches, distance)]]
            checked[t] = True
    r2, tau, recall, k = fidelity_scores(y[checked], pred[checked], direction, top_fraction)
    return Fidelity(
        r2=r2,
        tau=tau,
        topk_recall=recall,
        rows=int(checked.sum()),
        top_k=k,
        folds=folds,
        failures=int(failed.sum()),
    )


@dataclass(frozen=True)
class Noise:
    """Spread of the target over repeated configurations: pooled standard deviation."""

    sd: float
    configurations: int  # configurations recorded more than once
    rows: int  # rows of those configurations

    def summary(self) -> str:
        return (
            f"sd {self.sd:.4g} from {self.configurations} configurations recorded "
            f"more than once ({self.rows} rows)"
        )


def measured_noise(configs: list[Config], values: np.ndarray, failed: np.ndarray) -> Noise | None:
    """The table's measurement noise from repeated configurations (None: none repeated)."""
    groups: dict[tuple[tuple[str, str], ...], list[float]] = defaultdict(list)
    for config, value, bad in zip(configs, values, failed, strict=True):
        if not bad:
            groups[tuple(sorted((k, str(v)) for k, v in config.items()))].append(float(value))
    repeated = [np.array(v) for v in groups.values() if len(v) > 1]
    if not repeated:
        return None
    squares = sum(float(((g - g.mean()) ** 2).sum()) for g in repeated)
    dof = sum(len(g) - 1 for g in repeated)
    return Noise(math.sqrt(squares / dof), len(repeated), sum(len(g) for g in repeated))


def coverage(space: Space, configs: list[Config]) -> float | None:
    """Distinct recorded configurations / size of the space, when every knob is discrete."""
    size = 1
    for knob in space.knobs:
        if knob.type == "bool":
            size *= 2
        elif knob.type == "enum":
            size *= len(knob.values)
        elif knob.type == "int" and not knob.log:
            size *= int(knob.high - knob.low + 1)  # type: ignore[operator]
        else:
            return None
    distinct = {tuple(str(c[k]) for k in space.names) for c in configs}
    return len(distinct) / size
