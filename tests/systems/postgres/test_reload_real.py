"""PostgreSQL on a real private cluster with ``reload=True`` and a read-only workload: a
change of sighup/superuser/user knobs reaches the running server by ``pg_reload_conf()`` (same
postmaster pid, new value visible), a postmaster knob still restarts it, and the catalogue's
``reloadable:`` list is exactly its knobs this server can reload."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from harness.space import Config
from systems.dbserver.sysbench import SysbenchOLTP
from systems.postgres import PostgresSystem

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def one_test(system: PostgresSystem, workload: SysbenchOLTP, config: Config, trial: int) -> int:
    """Run one test and return the postmaster pid it left running."""
    objective = Objective.for_workload(workload.metrics)
    observation = run_test(system, workload, objective, config, trial, start_timeout_s=60)
    assert observation.status is Status.SUCCEEDED, (observation.message, observation.extra)
    pid = system._postmaster_pid()
    assert pid is not None and system._running()
    return pid


def test_reloadable_change_reloads_and_static_change_restarts(tmp_path: Path) -> None:
    system = PostgresSystem(reload=True)
    workload = SysbenchOLTP("readonly", duration_s=1, tables=1, table_size=1_000)
    try:
        system.setup(tmp_path, workload)
        first = one_test(system, workload, {}, 0)
        reloadable: Config = {"work_mem": 8192, "checkpoint_timeout": 600, "random_page_cost": 1.5}
        assert set(reloadable) <= system.reloadable
        assert one_test(system, workload, reloadable, 1) == first
        assert system.reloads == 1
        shown = system.psql(
            "SELECT current_setting('work_mem'), current_setting('checkpoint_timeout'), "
            "current_setting('random_page_cost')"
        )
        assert shown == "8MB|10min|1.5"
        static: Config = {**reloadable, "shared_buffers": 64}
        assert "shared_buffers" not in system.reloadable
        assert one_test(system, workload, static, 2) != first
        assert system.reloads == 1
        assert system.psql("SHOW shared_buffers") == "64MB"
        assert system.restore_times == []  # read-only: the snapshot's data throughout
        catalogue = PostgresSystem(knob_set="30")
        names = ", ".join(f"'{name}'" for name in catalogue.space.names)
        contexts = system.psql(
            f"SELECT name FROM pg_settings WHERE name IN ({names}) "
            "AND context IN ('sighup', 'superuser', 'user')"
        ).split()
        assert set(contexts) == set(catalogue.reloadable)
        last = system._postmaster_pid()
    finally:
        system.teardown()
    assert last is not None and not system.pid_alive(last)  # teardown stops a kept server
