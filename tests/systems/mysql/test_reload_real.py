"""MariaDB/MySQL on a real private server with ``reload=True`` and a read-only workload: a
change of dynamic knobs reaches the running server by ``SET GLOBAL`` (same pid, new value
visible), a static change still restarts it, and the catalogue's ``reloadable:`` knobs are
dynamic on this server."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from harness.space import Config
from systems.dbserver.sysbench import SysbenchOLTP
from systems.mysql import MySQLSystem

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def one_test(system: MySQLSystem, workload: SysbenchOLTP, config: Config, trial: int) -> int:
    """Run one test and return the pid of the server it left running."""
    objective = Objective.for_workload(workload.metrics)
    observation = run_test(system, workload, objective, config, trial, start_timeout_s=60)
    assert observation.status is Status.SUCCEEDED, (observation.message, observation.extra)
    assert system._pid is not None and system._running()
    return system._pid


def test_dynamic_change_reloads_and_static_change_restarts(tmp_path: Path) -> None:
    system = MySQLSystem(reload=True)
    workload = SysbenchOLTP("readonly", duration_s=1, tables=1, table_size=1_000)
    try:
        system.setup(tmp_path, workload)
        first = one_test(system, workload, {}, 0)
        dynamic: Config = {"thread_cache_size": 20, "innodb_max_dirty_pages_pct": 50.0}
        assert set(dynamic) <= system.reloadable
        assert one_test(system, workload, dynamic, 1) == first
        assert system.reloads == 1
        values = system.sql(
            "SELECT @@GLOBAL.thread_cache_size, @@GLOBAL.innodb_max_dirty_pages_pct"
        )
        assert [float(v) for v in values.split("\t")] == [20.0, 50.0]
        static: Config = {**dynamic, "innodb_log_buffer_size": 32}
        assert "innodb_log_buffer_size" not in system.reloadable
        assert one_test(system, workload, static, 2) != first
        assert system.reloads == 1
        assert system.sql("SELECT @@GLOBAL.innodb_log_buffer_size") == str(32 * 2**20)
        assert system.sql("SELECT @@GLOBAL.thread_cache_size") == "20"
        assert system.restore_times == []  # read-only: the snapshot's data throughout
        dynamic_here = system.sql(
            "SELECT lower(VARIABLE_NAME) FROM information_schema.SYSTEM_VARIABLES "
            "WHERE READ_ONLY = 'NO'"
        ).split()
        assert set(MySQLSystem(knob_set="30").reloadable) <= set(dynamic_here)
        last = system._pid
    finally:
        system.teardown()
    assert last is not None and not system.pid_alive(last)  # teardown stops a kept server
