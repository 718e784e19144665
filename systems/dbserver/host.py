"""What a server adapter asks of its host: where a program is (or which package to install),
a free TCP port, and knob maxima scaled to the host's RAM."""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from typing import Any

from harness.errors import ConfigError
from harness.executor import Executor
from harness.hosts.machine import Machine
from harness.space import Space

__all__ = ["find_binary", "free_port", "memory_overrides"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def find_binary(
    executor: Executor, names: Sequence[str], dirs: Sequence[str], package: str
) -> str:
    """Absolute path of the first of ``names`` found in ``dirs`` or on PATH, or a ConfigError
    naming the Debian package that provides it."""
    for name in names:
        found = executor.which(name, dirs)
        if found:
            return found
    raise ConfigError(
        f"on {executor.host}: none of {', '.join(names)} found on PATH or in "
        f"{', '.join(dirs)}; install it with `apt-get install {package}`"
    )


def memory_overrides(
    machine: Machine,
    fractions: Mapping[str, tuple[float, float]],
    space: Space,
    unit_bytes: Mapping[str, int],
) -> dict[str, dict[str, Any]]:
    """Range overrides ``{knob: {"max": ...}}`` scaling knob maxima to this machine's RAM.

    ``fractions[name] = (fraction, floor)``: the maximum becomes ``fraction`` × RAM (in the
    knob's unit), never below ``floor`` nor below the knob's default, so the server default
    always stays inside the range.
    """
    overrides: dict[str, dict[str, Any]] = {}
    for name, (fraction, floor) in fractions.items():
        if name not in space:
            continue
        knob = space[name]
        top = int(machine.ram_bytes * fraction / unit_bytes[name])
        top = max(top, int(floor), int(float(knob.default)) + 1, int(float(knob.low or 0)) + 1)
        overrides[name] = {"max": top}
    return overrides
