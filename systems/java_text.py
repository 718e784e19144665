"""Value formatting shared by the JVM systems' renderers (Java properties, XML attributes)."""

from __future__ import annotations

from harness.space import Value

__all__ = ["java_text"]


def java_text(value: Value) -> str:
    """A knob value as Java reads it: booleans lower-case, everything else as ``str``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
