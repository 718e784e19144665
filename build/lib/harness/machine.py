"""Facts about the machine a system runs on (memory, cores), for ranges and expert rules."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["Machine"]


@dataclass(frozen=True)
class Machine:
    """Memory and cores of the host that runs the system under tune."""

    ram_bytes: int
    cores: int

    @property
    def ram_mib(self) -> int:
        return self.ram_bytes // (1024 * 1024)

    @classmethod
    def detect(cls) -> Machine:
        """This machine (``/proc/meminfo`` and the CPUs this process may use)."""
        ram = 0
        try:
            with open("/proc/meminfo") as meminfo:
                for line in meminfo:
                    if line.startswith("MemTotal:"):
                        ram = int(line.split()[1]) * 1024
                        break
        except OSError:
            ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return cls(ram_bytes=ram, cores=len(os.sched_getaffinity(0)))
