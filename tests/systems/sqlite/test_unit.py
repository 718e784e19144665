"""Unit tests of the SQLite system: catalogue, PRAGMA rendering and checks, output parsing,
expert settings. No worker process runs here (see test_sqlite_integration.py)."""

from __future__ import annotations

import re
import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import KnobError, WorkloadError
from harness.hosts.machine import Machine
from harness.space import load_catalogue
from systems.sqlite import SQLiteSystem, expert, pragmas, worker
from systems.sqlite.system import CATALOGUE
from systems.sqlite.workload import METRICS, SQLiteOLTP, parse_output

# Captured from a real run: worker.py run --rows 1000 --duration 0.3 with WAL + NORMAL.
GOOD = (
    '{"mix": "readwrite", "sqlite_version": "3.40.1", "run_s": 0.30006285499985097, '
    '"transactions": 1362, "queries": 24516, "errors": 0, "tps": 4539.048993587282, '
    '"qps": 81702.88188457108, "latency_avg_ms": 0.22031046622602862, '
    '"latency_p95_ms": 0.24129800021910341, "latency_p99_ms": 0.6475919999502366, '
    '"first_error": "", "pragmas": {"journal_mode": "wal", "synchronous": 1}}\n'
)
# Captured from a real run on a database whose pages 3-22 were overwritten with 0xff.
CORRUPT = (
    '{"mix": "readwrite", "sqlite_version": "3.40.1", "run_s": 0.05001444400022592, '
    '"transactions": 0, "queries": 0, "errors": 4904, "tps": 0.0, "qps": 0.0, '
    '"latency_avg_ms": 0.0, "latency_p95_ms": 0.0, "latency_p99_ms": 0.0, '
    '"first_error": "DatabaseError: database disk image is malformed", "pragmas": {}}\n'
)
# Captured stderr of a worker started on a missing database file (exit code 1).
TRACEBACK = """Traceback (most recent call last):
  File "/opt/harness/systems/sqlite/worker.py", line 103, in run
    raise FileNotFoundError(f"database {path} does not exist (build it first)")
FileNotFoundError: database missing.db does not exist (build it first)
"""


@pytest.fixture(scope="module")
def system() -> SQLiteSystem:
    return SQLiteSystem(knob_set="all")


# -- catalogue ------------------------------------------------------------------------------
def test_knob_sets_have_10_and_all_knobs() -> None:
    assert load_catalogue(CATALOGUE, "10").dim == 10
    assert load_catalogue(CATALOGUE, "all").dim == 15
    assert set(load_catalogue(CATALOGUE, "10").names) <= set(pragmas.PRAGMAS)
    assert set(load_catalogue(CATALOGUE, "all").names) == set(pragmas.PRAGMAS)


def test_catalogue_defaults_are_what_this_sqlite_uses(system: SQLiteSystem, tmp_path) -> None:
    """A fresh file database with no PRAGMA reads back exactly the catalogue defaults."""
    path = tmp_path / "fresh.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    actual = {name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in pragmas.PRAGMAS}
    conn.close()
    expected = pragmas.expected_readback({}, system.space, system.defaults)
    assert pragmas.mismatches(expected, actual) == []


# -- rendering ------------------------------------------------------------------------------
def test_render_maps_values_to_plain_tokens(system: SQLiteSystem) -> None:
    rendered = dict(
        pragmas.render(
            {
                "journal_mode": "wal",
                "synchronous": "off",
                "cache_size": 65536,
                "mmap_size": 256,
                "cache_spill": False,
                "journal_size_limit": 64,
                "page_size": 1024,
            },
            system.space,
            system.defaults,
        )
    )
    assert rendered["journal_mode"] == "WAL"
    assert rendered["synchronous"] == "OFF"
    assert rendered["cache_size"] == "-65536"  # negative = KiB
    assert rendered["mmap_size"] == str(256 * 1024 * 1024)
    assert rendered["cache_spill"] == "OFF"
    assert rendered["journal_size_limit"] == str(64 * 1024)
    assert "page_size" not in rendered and "auto_vacuum" not in rendered  # creation-time
    assert pragmas.creation_key({"page_size": 1024}, system.space, system.defaults) == (
        1024,
        "none",
    )


def test_render_orders_locking_mode_before_journal_mode(system: SQLiteSystem) -> None:
    names = [name for name, _ in pragmas.render({}, system.space, system.defaults)]
    assert names.index("locking_mode") < names.index("journal_mode")


def test_knobs_outside_the_set_keep_sqlite_defaults() -> None:
    small = SQLiteSystem(knob_set="10")
    rendered = dict(pragmas.render(small.space.default(), small.space, small.defaults))
    assert rendered["automatic_index"] == "ON" and rendered["threads"] == "0"


@pytest.mark.parametrize(
    "config",
    [
        {"journal_mode": "wal; DROP TABLE sbtest1"},
        {"journal_mode": "WAL2"},
        {"cache_size": "-2000"},
        {"cache_size": 10**9},
        {"page_size": 4000},
        {"threads": 9},
        {"no_such_pragma": 1},
    ],
)
def test_values_outside_the_catalogue_never_reach_sql(system: SQLiteSystem, config) -> None:
    with pytest.raises(KnobError):
        pragmas.render(config, system.space, system.defaults)
    with pytest.raises(KnobError):
        system.apply(config)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("journal_mode", "WAL; DROP TABLE x"),
        ("cache_size", "1 OR 1"),
        ("x; y", "1"),
        ("journal_mode", "'wal'"),
        ("cache_size", ""),
    ],
)
def test_worker_refuses_anything_but_a_word_or_an_integer(name: str, value: str) -> None:
    with pytest.raises(ValueError):
        worker.pragma_sql(name, value)
    assert worker.pragma_sql("cache_size", "-2000") == "PRAGMA cache_size=-2000"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=15, max_size=15))
def test_every_point_of_the_space_renders_safe_tokens(point: list[float]) -> None:
    space = load_catalogue(CATALOGUE, "all")
    defaults = space.default()
    for name, token in pragmas.render(space.decode(np.array(point)), space, defaults):
        assert worker.pragma_sql(name, token).startswith("PRAGMA ")
        assert re.fullmatch(r"-?\d+|[A-Z]+", token)


def test_mismatches_names_the_pragma() -> None:
    problems = pragmas.mismatches(
        {"journal_mode": "wal", "mmap_size": 2**32, "cache_spill": True},
        {"journal_mode": "delete", "mmap_size": 0x7FFF0000, "cache_spill": 483},
    )
    assert len(problems) == 2
    assert problems[0].startswith("journal_mode: requested 'wal'")
    assert problems[1].startswith("mmap_size")


def test_start_without_setup_is_a_start_error() -> None:
    from harness.errors import SystemStartError

    fresh = SQLiteSystem()
    fresh.apply(fresh.space.default())
    with pytest.raises(SystemStartError):
        fresh.start(5.0)


# -- output parsing -------------------------------------------------------------------------
def test_parse_real_output() -> None:
    metrics = parse_output("some warning\n" + GOOD)
    assert metrics["tps"] == pytest.approx(4539.049, rel=1e-6)
    assert metrics["transactions"] == 1362 and metrics["errors"] == 0
    assert metrics["latency_p99_ms"] > metrics["latency_p95_ms"]
    assert set(metrics) == {m.name for m in METRICS} - {"setup_s"}


def test_parse_output_with_no_committed_transaction_is_a_workload_error() -> None:
    with pytest.raises(WorkloadError, match="malformed") as caught:
        parse_output(CORRUPT)
    assert "4904" in str(caught.value) and caught.value.output_tail


def test_parse_output_fails_when_more_than_1_percent_of_transactions_fail() -> None:
    few = GOOD.replace('"errors": 0', '"errors": 13')
    assert parse_output(few)["errors"] == 13
    with pytest.raises(WorkloadError, match="15 of 1377"):
        parse_output(GOOD.replace('"errors": 0', '"errors": 15'))


@pytest.mark.parametrize(
    "stdout",
    [
        "",
        TRACEBACK,
        '{"tps": 1.0',
        "[1, 2]",
        GOOD.replace('"tps": 4539.048993587282', '"tps": "fast"'),
        GOOD.replace('"qps": 81702.88188457108, ', ""),
        GOOD.replace('"tps": 4539.048993587282', '"tps": NaN'),
    ],
)
def test_parse_garbage_is_a_workload_error(stdout: str) -> None:
    with pytest.raises(WorkloadError):
        parse_output(stdout)


def test_workload_rejects_bad_settings() -> None:
    with pytest.raises(ValueError):
        SQLiteOLTP(mix="tpcc")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        SQLiteOLTP(duration_s=0)
    assert SQLiteOLTP(mix="readonly").params()["mix"] == "readonly"


# -- expert settings ------------------------------------------------------------------------
@pytest.mark.parametrize("knob_set", ["10", "all"])
@pytest.mark.parametrize(
    "machine",
    [
        Machine(64 * 2**20, 1),
        Machine(2 * 2**30, 2),
        Machine(24 * 2**30, 2),
        Machine(512 * 2**30, 64),
    ],
)
def test_expert_settings_are_valid_partial_configs(knob_set: str, machine: Machine) -> None:
    space = load_catalogue(CATALOGUE, knob_set)
    for rule in (expert.manual, expert.script):
        config = rule(space, machine)
        assert config and set(config) <= set(space.names)
        assert space.validate(config, partial=True) == config
        assert config["journal_mode"] == "wal" and config["synchronous"] == "normal"


def test_expert_script_scales_with_memory() -> None:
    space = load_catalogue(CATALOGUE, "all")
    small = expert.script(space, Machine(2 * 2**30, 2))
    big = expert.script(space, Machine(24 * 2**30, 2))
    assert isinstance(small["cache_size"], int) and isinstance(big["cache_size"], int)
    assert small["cache_size"] < big["cache_size"] <= 1024 * 1024
    assert small["mmap_size"] == 64 and big["mmap_size"] == 1024
    assert "threads" not in expert.script(load_catalogue(CATALOGUE, "10"), Machine(2**34, 8))


def test_expert_respects_narrowed_ranges() -> None:
    space = load_catalogue(CATALOGUE, "10").with_overrides({"cache_size": {"max": 4096}})
    assert expert.manual(space, Machine(2**34, 2))["cache_size"] == 4096
