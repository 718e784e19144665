"""Facts about the machine a system runs on (memory, cores), for ranges and expert rules.

The facts describe the host that runs the system under tune, which is not always the harness's
machine: with ``hosts=`` they are read *on* the SUT host through its executor
(:meth:`Machine.of`), by one small POSIX shell script. A host's budget is the smaller of what
the kernel reports and what its control group allows: a container or a systemd slice with a
memory limit (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``) or a CPU quota (v2
``cpu.max``, v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us``) has only that to give a server.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.conf import CONFIG_DIR
from harness.errors import ConfigError

if TYPE_CHECKING:
    from harness.executor import Executor

__all__ = ["FACTS_SCRIPT", "Machine", "parse_facts", "sut_machine"]

#: Prints ``key=value`` lines: MemTotal, the usable CPUs and the limits of the control group
#: the shell runs in (both cgroup versions; a line only when the file is readable).
FACTS_SCRIPT = r"""
awk '/^MemTotal:/ {print "mem_kib=" $2}' /proc/meminfo
echo "cores=$(nproc)"
v2=$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
m1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
c1=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/self/cgroup)
f=/sys/fs/cgroup$v2/memory.max; [ -r "$f" ] && echo "v2_memory_max=$(cat "$f")"
f=/sys/fs/cgroup$v2/cpu.max; [ -r "$f" ] && echo "v2_cpu_max=$(cat "$f")"
f=/sys/fs/cgroup/memory$m1/memory.limit_in_bytes; [ -r "$f" ] && echo "v1_memory_limit=$(cat "$f")"
f=/sys/fs/cgroup/cpu$c1/cpu.cfs_quota_us; [ -r "$f" ] && echo "v1_cpu_quota=$(cat "$f")"
f=/sys/fs/cgroup/cpu$c1/cpu.cfs_period_us; [ -r "$f" ] && echo "v1_cpu_period=$(cat "$f")"
true
"""


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

    @classmethod
    def of(cls, executor: Executor) -> Machine:
        """The host ``executor`` runs on, read there (:data:`FACTS_SCRIPT`, control-group
        limits applied): the SUT host's facts, also over SSH. An inventory host's ``ram_mib``
        and ``cores`` then narrow them (:meth:`within`)."""
        found = parse_facts(executor.run(["sh", "-c", FACTS_SCRIPT], timeout_s=30).stdout)
        spec = getattr(executor, "spec", None)  # an inventory host (harness.hosts.inventory)
        if spec is None:
            return found
        where = f"host {getattr(spec, 'name', '?')!r}"
        return found.within(getattr(spec, "ram_mib", None), getattr(spec, "cores", None), where)

    def within(self, ram_mib: int | None, cores: int | None, where: str) -> Machine:
        """This machine narrowed to a declared share: ``ram_mib`` MiB and ``cores`` CPUs.
        A share above what the host has is refused (ranges sized to memory that is not there
        would fail at the first test)."""
        ram = self.ram_bytes
        if ram_mib is not None:
            if ram_mib > self.ram_mib:
                raise ConfigError(
                    f"{where}: ram_mib {ram_mib} is more than the host has "
                    f"({self.ram_mib} MiB, control-group limit applied); lower it or drop it"
                )
            ram = ram_mib * 1024 * 1024
        if cores is not None and cores > self.cores:
            raise ConfigError(
                f"{where}: cores {cores} is more than the host has ({self.cores}); "
                "lower it or drop it"
            )
        return Machine(ram_bytes=ram, cores=cores if cores is not None else self.cores)


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:  # "max": no limit
        return None
    return value if math.isfinite(value) and value > 0 else None


def parse_facts(text: str) -> Machine:
    """:data:`FACTS_SCRIPT`'s output → the host's budget: RAM and cores, each the smaller of
    the kernel's figure and the control group's limit (a limit of "max", -1 or beyond the
    RAM means none)."""
    facts = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    ram = int(facts.get("mem_kib", "0")) * 1024
    cores = int(facts.get("cores", "1"))
    for limit in (_number(facts.get("v2_memory_max")), _number(facts.get("v1_memory_limit"))):
        if limit is not None and limit < ram:
            ram = int(limit)
    v2_quota, _, v2_period = facts.get("v2_cpu_max", "").partition(" ")
    quotas = [
        (_number(v2_quota), _number(v2_period)),
        (_number(facts.get("v1_cpu_quota")), _number(facts.get("v1_cpu_period"))),
    ]
    for share, period in quotas:
        if share is not None and period is not None:
            cores = min(cores, max(1, math.ceil(share / period)))
    return Machine(ram_bytes=ram, cores=max(1, cores))


def sut_machine(system: object) -> Machine:
    """The facts of the host that runs ``system``: its executor's host, or its cluster's
    master, read there (:meth:`Machine.of`); this machine when the system runs here."""
    from harness.executor import LocalExecutor

    known = getattr(system, "host_machine", None)  # already read at preflight: not twice
    if isinstance(known, Machine):
        return known
    cluster = getattr(system, "cluster", None)
    executor = cluster.master if cluster is not None else getattr(system, "executor", None)
    if executor is None or isinstance(executor, LocalExecutor):
        return Machine.detect()
    return Machine.of(executor)


#: Where ``scripts/setup.sh --full`` installs Java servers and tools from Maven Central (outside
#: git); ``HARNESS_INSTALLS`` points elsewhere (e.g. for a wheel install, or a shared folder).
INSTALLS_DIR = CONFIG_DIR.parents[1] / ".installs"


def install_dir(name: str) -> str:
    """The install folder of ``name`` (``${harness_install:cassandra}`` in the configs)."""
    root = os.environ.get("HARNESS_INSTALLS") or str(INSTALLS_DIR)
    return str(Path(root).absolute() / name)
