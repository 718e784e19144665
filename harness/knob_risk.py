"""What a knob's value trades for speed: durability, crash safety, redundancy.

A catalogue entry may say ``risk: {safe: [1], says: "..."}`` (the values that keep the
guarantee; every other value gives it up) or ``risk: {safe_min: 3, says: "..."}`` (numbers at
or above it keep it). The summary and the exported files name every such setting of the best
configuration, so that a faster answer that loses commits on a crash is never taken for free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import KnobError

__all__ = ["Risk", "risk_from_dict"]


@dataclass(frozen=True)
class Risk:
    """The guarantee a knob's unsafe values give up (``says``), and which values are safe."""

    says: str
    safe: tuple[Any, ...] = ()
    safe_min: float | None = None

    def applies_to(self, value: Any) -> bool:
        """Whether ``value`` gives the guarantee up."""
        if self.safe_min is not None:
            return isinstance(value, (int, float)) and value < self.safe_min
        return value not in self.safe


def risk_from_dict(knob: str, entry: Any) -> Risk:
    """Parse a catalogue's ``risk:`` mapping; one error line names what is wrong."""
    if not isinstance(entry, Mapping):
        raise KnobError(f"knob {knob!r}: risk is a mapping {{says: ..., safe: [...]}}")
    unknown = set(entry) - {"says", "safe", "safe_min"}
    says = entry.get("says")
    if unknown or not isinstance(says, str) or not says.strip() or not says.isprintable():
        raise KnobError(
            f"knob {knob!r}: risk takes says (one line of text) and safe: [values] or "
            f"safe_min: number" + (f"; unknown: {', '.join(sorted(unknown))}" if unknown else "")
        )
    if ("safe" in entry) == ("safe_min" in entry):
        raise KnobError(f"knob {knob!r}: risk needs exactly one of safe: [...] or safe_min: N")
    if "safe_min" in entry:
        return Risk(says, safe_min=float(entry["safe_min"]))
    return Risk(says, safe=tuple(entry["safe"]))
