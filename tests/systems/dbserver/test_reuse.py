"""The rules for skipping a data restore and reloading instead of restarting, without a server:
the pure functions, the catalogues' ``reloadable:`` lists, and the lifecycle decisions of
:class:`~systems.dbserver.base.ServerSystem` on a stand-in that records what it was asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.errors import HarnessError, KnobError, SystemStartError
from harness.space import Config, Knob, Space
from systems.dbserver.base import ServerSystem
from systems.dbserver.reuse import changed_knobs, load_reloadable, needs_restart, reads_only
from systems.dbserver.sysbench import SysbenchOLTP
from systems.mysql import system as mysql
from systems.postgres import PgBench
from systems.postgres import system as postgres


def test_read_only_is_what_a_workload_declares() -> None:
    assert reads_only(SysbenchOLTP("readonly"))
    assert not reads_only(SysbenchOLTP("readwrite"))
    assert reads_only(PgBench("select"))
    assert not reads_only(PgBench("tpcb"))
    assert not reads_only(object())  # no declaration: taken to write
    assert not reads_only(type("W", (), {"read_only": "yes"})())  # only True itself counts


def test_a_change_needs_a_restart_when_any_changed_knob_is_static() -> None:
    reloadable = frozenset({"work_mem", "random_page_cost"})
    running = {"work_mem": 4096, "random_page_cost": 4.0, "shared_buffers": 128}
    assert changed_knobs(running, dict(running)) == set()
    assert not needs_restart(set(), reloadable)
    wanted = {**running, "work_mem": 8192, "random_page_cost": 1.1}
    assert changed_knobs(running, wanted) == {"work_mem", "random_page_cost"}
    assert not needs_restart(changed_knobs(running, wanted), reloadable)
    wanted["shared_buffers"] = 256
    assert needs_restart(changed_knobs(running, wanted), reloadable)
    assert changed_knobs(running, {"work_mem": 4096}) == {"random_page_cost", "shared_buffers"}


@pytest.mark.parametrize(
    ("module", "static"),
    [
        (mysql, {"innodb_buffer_pool_size", "innodb_log_file_size", "innodb_flush_method"}),
        (postgres, {"shared_buffers", "wal_buffers", "max_connections"}),
    ],
)
def test_catalogues_list_their_reloadable_knobs(module: Any, static: set[str]) -> None:
    space = module.load_space("all")
    reloadable = load_reloadable(module.CATALOGUE, space)
    assert reloadable and reloadable <= set(space.names)
    assert not static & reloadable
    ten = module.load_space("10")
    assert load_reloadable(module.CATALOGUE, ten) <= set(ten.names)


def test_a_reloadable_list_naming_no_knob_is_refused(tmp_path: Path) -> None:
    catalogue = tmp_path / "knobs.yaml"
    catalogue.write_text(
        "knobs:\n  - {name: a, type: int, min: 1, max: 9, default: 1}\nreloadable: [a, b]\n"
    )
    with pytest.raises(KnobError, match="unknown knobs b"):
        load_reloadable(catalogue, Space((Knob("a", "int", 1, 1, 9),)))


def test_mysql_set_global_values_and_their_read_back() -> None:
    space = mysql.load_space("30")
    assert mysql.sql_value(space["innodb_adaptive_hash_index"], True) == "ON"
    assert mysql.sql_value(space["sort_buffer_size"], 256) == str(256 * 1024)
    assert mysql.sql_value(space["innodb_flush_log_at_trx_commit"], 2) == "2"
    assert mysql.sql_value(space["innodb_max_dirty_pages_pct"], 75.5) == "75.5"
    enum = Knob("method", "enum", "a'b", values=("a'b", "c"))
    assert mysql.sql_value(enum, "a'b") == "'a\\'b'"
    assert mysql.same_setting("ON", "1") and mysql.same_setting("OFF", "0")
    assert mysql.same_setting("75.5", "75.500000")
    assert not mysql.same_setting("20000", "2000")
    assert mysql.same_setting("'fsync'", "FSYNC")


class StandIn(ServerSystem):
    """A ServerSystem whose product steps only record the call (no processes, no files)."""

    name = "stand-in"

    def __init__(self, reload: bool, reloadable: set[str]) -> None:
        knobs = (Knob("dynamic", "int", 1, 1, 9), Knob("static", "int", 1, 1, 9))
        super().__init__(Space(knobs), reload=reload)
        self.reloadable = frozenset(reloadable)
        self.instance = Path("/nonexistent")
        self.calls: list[str] = []
        self.up = False
        self.refuse_reload = False
        self.fail_start = False

    def _find_binaries(self) -> None: ...
    def log_path(self) -> Path:
        return Path("/nonexistent/log")

    def _initialise(self) -> None: ...
    def _after_first_start(self) -> None: ...

    def _launch(self, timeout_s: float) -> None:
        self.calls.append("launch")
        if self.fail_start:
            raise SystemStartError("refused", "")
        self.up = True

    def _reload(self, changed: Config) -> None:
        self.calls.append(f"reload {sorted(changed)}")
        if self.refuse_reload:
            raise HarnessError("kept")

    def _halt(self) -> None:
        self.calls.append("halt")
        self.up = False

    def _running(self) -> bool:
        return self.up

    def as_user(self, command: Any, **kwargs: Any) -> None:  # the restore's rm and cp
        if command[0] == "cp":
            self.calls.append("restore")

    def apply(self, config: Config) -> None:
        self.config = {**self.space.default(), **config}

    def test(self, config: Config) -> None:
        """One test as the trial runs it."""
        self.reset()
        self.apply(config)
        self.start(10)
        self.stop()


def fresh(reload: bool, reads: bool) -> StandIn:
    """A stand-in as setup leaves it: stopped, its data the snapshot's."""
    system = StandIn(reload, {"dynamic"})
    system.workload_reads_only = reads
    system.data_pristine = True
    return system


def test_a_read_only_workload_restores_nothing_and_a_writing_one_restores_every_test() -> None:
    reader = fresh(reload=False, reads=True)
    for _ in range(3):
        reader.test({})
    assert reader.calls == ["launch", "halt"] * 3 and reader.restores_skipped == 3
    writer = fresh(reload=False, reads=False)
    for _ in range(3):
        writer.test({})
    assert writer.calls.count("restore") == 2  # the first test meets the snapshot's data
    assert writer.calls.count("launch") == 3


def test_a_failed_start_makes_the_next_test_restore() -> None:
    system = fresh(reload=False, reads=True)
    system.fail_start = True
    with pytest.raises(SystemStartError):
        system.start(10)
    system.stop()
    system.fail_start = False
    system.test({})
    assert "restore" in system.calls


def test_reload_off_always_restarts() -> None:
    system = fresh(reload=False, reads=True)
    system.test({})
    system.test({"dynamic": 5})
    assert system.calls == ["launch", "halt", "launch", "halt"] and system.reloads == 0


def test_reload_on_reloads_dynamic_changes_and_restarts_for_a_static_one() -> None:
    system = fresh(reload=True, reads=True)
    system.test({})
    assert system.up  # left running for the next test
    system.test({"dynamic": 5})
    system.test({"dynamic": 5})
    assert system.calls == ["launch", "reload ['dynamic']", "reload []"]
    system.test({"dynamic": 5, "static": 2})
    assert system.calls[-2:] == ["halt", "launch"] and system.reloads == 2
    system.shutdown()
    assert not system.up and system.running_config is None


def test_reload_on_restarts_after_a_refused_reload_and_for_a_writing_workload() -> None:
    system = fresh(reload=True, reads=True)
    system.test({})
    system.refuse_reload = True
    system.test({"dynamic": 5})
    assert system.calls == ["launch", "reload ['dynamic']", "halt", "launch"]
    writer = fresh(reload=True, reads=False)
    writer.test({})
    assert not writer.up  # its data will be restored: nothing to keep running
    writer.test({"dynamic": 5})
    assert writer.calls == ["launch", "halt", "restore", "launch", "halt"]
