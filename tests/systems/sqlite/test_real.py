"""Integration tests of the SQLite system: the real worker process on a real database file.

Small tables (2000 rows) and ~1 s runs keep the whole file quick.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hydra.utils import instantiate

from harness import api
from harness.builder.session import make_workload
from harness.errors import SystemStartError, WorkloadError, WorkloadTimeout
from harness.objectives.objective import Objective
from harness.records import Status
from harness.session.trial import run_test
from systems.sqlite import SQLiteOLTP, SQLiteSystem

pytestmark = pytest.mark.integration

ROWS = 2000


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def sqlite_rw(tmp_path: Path) -> Iterator[tuple[SQLiteSystem, SQLiteOLTP]]:
    system = SQLiteSystem(knob_set="all")
    workload = SQLiteOLTP(mix="readwrite", duration_s=1.0, rows=ROWS, seed=3)
    system.setup(tmp_path / "work", workload)
    yield system, workload
    system.teardown()


def test_wal_without_sync_beats_the_default_on_readwrite(sqlite_rw) -> None:
    system, workload = sqlite_rw
    objective = Objective.for_workload(workload.metrics, None, None)
    default = run_test(system, workload, objective, system.space.default(), 0, timeout_s=30)
    fast = run_test(
        system,
        workload,
        objective,
        {**system.space.default(), "journal_mode": "wal", "synchronous": "off"},
        1,
        timeout_s=30,
    )
    assert default.status is Status.SUCCEEDED and fast.status is Status.SUCCEEDED, (
        default.message,
        fast.message,
    )
    assert set(default.metrics) == {m.name for m in workload.metrics}
    assert default.metrics["errors"] == 0
    assert 0.9 < default.extra["run_s"] < 5.0
    # Each default commit waits for several fsyncs; WAL/OFF waits for none.
    assert fast.metrics["tps"] > 1.3 * default.metrics["tps"], (default.metrics, fast.metrics)


def test_reset_and_start_restore_the_pristine_bytes(sqlite_rw) -> None:
    system, workload = sqlite_rw
    system.apply(system.space.default())
    system.start(10)
    pristine = system.pristine(4096, "none")
    assert _digest(system.database) == _digest(pristine)
    workload.duration_s = 0.3
    workload.run(system, timeout_s=20)
    assert _digest(system.database) != _digest(pristine)  # the run changed rows
    system.reset()
    assert not system.database.exists()
    system.start(10)
    assert _digest(system.database) == _digest(pristine)


def test_page_size_and_auto_vacuum_take_effect(sqlite_rw) -> None:
    system, workload = sqlite_rw
    system.apply(
        {
            **system.space.default(),
            "page_size": 1024,
            "auto_vacuum": "full",
            "journal_mode": "wal",
            "locking_mode": "exclusive",
            "mmap_size": 16,
        }
    )
    system.start(10)  # reads every PRAGMA back and raises on a difference
    workload.duration_s = 0.3
    metrics = workload.run(system, timeout_s=20)
    assert metrics["transactions"] > 0 and metrics["setup_s"] > 0
    assert system.pristine(1024, "full").exists()


def test_readonly_mix_runs(tmp_path: Path) -> None:
    system = SQLiteSystem()
    workload = SQLiteOLTP(mix="readonly", duration_s=0.5, rows=ROWS)
    system.setup(tmp_path, workload)
    system.apply({**system.space.default(), "cache_size": 8192, "temp_store": "memory"})
    system.start(10)
    metrics = workload.run(system, timeout_s=20)
    assert metrics["tps"] > 0 and metrics["qps"] == pytest.approx(14 * metrics["tps"], rel=0.01)
    system.teardown()
    assert not (tmp_path / "sqlite").exists()


def test_a_run_longer_than_the_timeout_is_killed(sqlite_rw) -> None:
    system, workload = sqlite_rw
    workload.duration_s = 30.0
    system.apply(system.space.default())
    system.start(10)
    with pytest.raises(WorkloadTimeout):
        workload.run(system, timeout_s=0.5)


def test_a_setting_sqlite_does_not_honour_is_a_start_error(sqlite_rw) -> None:
    """mmap_size is capped at 0x7fff0000 by this build: a widened range is caught at start."""
    system, _ = sqlite_rw
    system.space = system.space.with_overrides(
        {"mmap_size": {"values": [0, 1, 4, 16, 64, 256, 1024, 4096]}}
    )
    system.apply({**system.space.default(), "mmap_size": 4096})
    with pytest.raises(SystemStartError, match="mmap_size"):
        system.start(10)


def test_a_corrupt_database_fails_the_test(sqlite_rw) -> None:
    system, workload = sqlite_rw
    system.apply(system.space.default())
    system.start(10)
    with system.database.open("r+b") as handle:  # overwrite table pages after the schema
        handle.seek(2 * 4096)
        handle.write(b"\xff" * 4096 * 20)
    workload.duration_s = 0.2
    with pytest.raises(WorkloadError, match="malformed"):
        workload.run(system, timeout_s=20)


def test_a_broken_pristine_file_is_a_crash(sqlite_rw) -> None:
    system, workload = sqlite_rw
    system.pristine(4096, "none").write_bytes(b"not a database" * 100)
    objective = Objective.for_workload(workload.metrics, None, None)
    obs = run_test(system, workload, objective, system.space.default(), 0, timeout_s=20)
    assert obs.status is Status.CRASHED and "SQLite rejected" in obs.message


def test_the_hydra_config_builds_the_system_and_both_workloads() -> None:
    cfg = api.compose(["system=sqlite"])
    system = instantiate(cfg.system.adapter)
    assert isinstance(system, SQLiteSystem) and system.space.dim == 10
    assert cfg.workload.name == "readwrite"
    for name in ("readwrite", "readonly"):
        workload = make_workload(api.compose(["system=sqlite", f"workload={name}"]))
        assert isinstance(workload, SQLiteOLTP) and workload.mix == name
        assert 4.0 <= workload.duration_s <= 5.0
