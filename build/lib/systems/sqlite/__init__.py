"""The embedded default system: a real SQLite database tuned through its PRAGMAs.

:class:`SQLiteSystem` (adapter), :class:`SQLiteOLTP` (sysbench-like readonly/readwrite mixes),
``knobs.yaml`` (catalogue), :mod:`systems.sqlite.expert` (expert settings) and
:mod:`systems.sqlite.worker` (the stdlib-only benchmark process, one per test).
"""

from systems.sqlite.system import SQLiteSystem
from systems.sqlite.workload import SQLiteOLTP

__all__ = ["SQLiteOLTP", "SQLiteSystem"]
