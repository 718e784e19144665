"""Experience rules: tuning knowledge written as comparisons, turned into labelled pairs.

A rule says "raising knob K (optionally only within [low, high], in the knob's own units) raises
performance" (``direction: increase``) or lowers it (``direction: decrease``). In config::

    rules:
      - {knob: buffer_pool_mb, direction: increase, low: 64, high: 4096}

For each rule, :func:`rule_pairs` draws ``n`` base settings by Latin hypercube over the whole
space (so the generated pairs are spread uniformly, as the paper demands: skewed pairs would
mislead the model), draws two values of K uniformly in the rule's range, and makes the two
settings that differ only in K. After snapping to representable values (int/enum/bool cells)
pairs whose K values coincide are dropped. Each remaining pair gives two rows: (higher, lower)
labelled by the rule and (lower, higher) with the opposite label.

Rules are off by default: a wrong rule poisons the model. Enum knobs are ordered as listed in the
catalogue and bool knobs as false < true.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from harness.errors import ConfigError, KnobError
from harness.sampling import latin_hypercube
from harness.space import Space

__all__ = ["Rule", "parse_rules", "rule_pairs"]


@dataclass(frozen=True)
class Rule:
    """ "Changing ``knob`` in ``direction`` within [low, high] raises performance"."""

    knob: str
    direction: str = "increase"
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_rules(entries: Sequence[Mapping[str, Any]] | None, space: Space) -> list[Rule]:
    """Validate rule entries from config against the space; raise ConfigError naming the rule."""
    rules: list[Rule] = []
    for i, entry in enumerate(entries or []):
        where = f"rule {i} ({dict(entry)})"
        extra = set(entry) - {"knob", "direction", "low", "high"}
        if extra:
            raise ConfigError(
                f"{where}: unknown field(s) {', '.join(sorted(extra))}; "
                "use knob, direction, low, high"
            )
        if "knob" not in entry:
            raise ConfigError(f"{where}: needs 'knob'")
        rule = Rule(
            str(entry["knob"]),
            str(entry.get("direction", "increase")),
            entry.get("low"),
            entry.get("high"),
        )
        if rule.knob not in space:
            raise ConfigError(f"{where}: unknown knob; the space has {', '.join(space.names)}")
        if rule.direction not in ("increase", "decrease"):
            raise ConfigError(f"{where}: direction must be 'increase' or 'decrease'")
        low, high = _unit_range(rule, space, where)
        if not low < high:
            raise ConfigError(f"{where}: low must be below high")
        rules.append(rule)
    return rules


def _unit_range(rule: Rule, space: Space, where: str = "rule") -> tuple[float, float]:
    knob = space[rule.knob]
    try:
        low = 0.0 if rule.low is None else knob.encode(rule.low)  # type: ignore[arg-type]
        high = 1.0 if rule.high is None else knob.encode(rule.high)  # type: ignore[arg-type]
    except KnobError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return low, high


def rule_pairs(
    rules: Sequence[Rule], space: Space, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(xa, xb, label)`` arrays: for each rule up to ``2n`` pairs, label 1 iff xa is better."""
    xas, xbs, labels = [], [], []
    for rule in rules:
        column = space.names.index(rule.knob)
        low, high = _unit_range(rule, space)
        base = latin_hypercube(n, space.dim, rng)
        values = low + rng.random((n, 2)) * (high - low)
        lower, upper = base.copy(), base.copy()
        lower[:, column], upper[:, column] = values.min(axis=1), values.max(axis=1)
        lower, upper = space.snap(lower), space.snap(upper)
        keep = upper[:, column] > lower[:, column]
        lower, upper = lower[keep], upper[keep]
        upper_wins = 1 if rule.direction == "increase" else 0
        xas += [upper, lower]
        xbs += [lower, upper]
        labels += [np.full(len(upper), upper_wins), np.full(len(upper), 1 - upper_wins)]
    if not xas:
        empty = np.empty((0, space.dim))
        return empty, empty, np.empty(0, dtype=np.int64)
    return np.vstack(xas), np.vstack(xbs), np.concatenate(labels).astype(np.int64)
