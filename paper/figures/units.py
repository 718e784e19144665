"""Units for the figures' axes: of a workload's metrics and of a real system's knobs.

Both come from where the harness itself declares them, so a figure and the session summary
never disagree: metric units from the workloads' :class:`~harness.system.MetricSpec` entries,
knob units from the systems' knob catalogues. Surrogates' recorded tables carry no units.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

from harness.errors import HarnessError
from harness.space import load_catalogue
from harness.system import Workload

__all__ = ["axis_label", "knob_unit", "metric_unit"]

ROOT = Path(__file__).resolve().parents[2]
#: the modules that define the real systems' workloads (their metric specs)
_WORKLOAD_MODULES = (
    "systems.dbserver.sysbench",
    "systems.tpcc.workload",
    "systems.postgres.pgbench",
    "systems.mapreduce.workload",
    "systems.sqlite",
    "systems.spark",
    "systems.tomcat",
    "systems.cassandra",
    "systems.hadoop",
    "systems.synthetic.system",
)
#: system name -> the folder of its knob catalogue, where they differ
_CATALOGUE = {"mariadb": "mysql", "hdfs": "hadoop", "hive": "hadoop"}


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    sub: type
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


@functools.cache
def _metric_units() -> dict[str, str]:
    for name in _WORKLOAD_MODULES:
        importlib.import_module(name)
    units: dict[str, str] = {}
    for workload in _subclasses(Workload):
        for spec in getattr(workload, "metrics", ()):
            units.setdefault(spec.name, spec.unit)
    return units


def metric_unit(metric: str) -> str:
    """The unit a workload declares for ``metric`` ('' when none does)."""
    return _metric_units().get(metric, "")


@functools.cache
def knob_unit(system: str, knob: str) -> str:
    """The unit of ``knob`` in the real system's catalogue ('' for surrogates and unknowns)."""
    path = ROOT / "systems" / _CATALOGUE.get(system, system) / "knobs.yaml"
    if not path.exists():
        return ""
    try:
        space = load_catalogue(path)
    except HarnessError:
        return ""
    return space[knob].unit if knob in space else ""


def axis_label(name: str, unit: str) -> str:
    return f"{name} ({unit})" if unit else name
