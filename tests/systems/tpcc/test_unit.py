"""TPC-C driver: random functions, mix, aggregation, the captured real summaries, and a short
real load + run on SQLite (stdlib, so it runs everywhere)."""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from harness.errors import ConfigError, WorkloadError
from systems.tpcc.driver import parse_summary, percentile, run_clients, summarize
from systems.tpcc.loader import Random, last_name, load
from systems.tpcc.schema import Scale, connect, ddl, dialect_of
from systems.tpcc.transactions import MIX, pick
from systems.tpcc.workload import driver_command, driver_env, metrics_from_output

DATA = Path(__file__).resolve().parents[2] / "data"
TINY = Scale(warehouses=1, items=1000, customers=60)


def test_last_names_and_nurand_ranges() -> None:
    assert last_name(0) == "BARBARBAR" and last_name(371) == "PRICALLYOUGHT"
    r = Random(1)
    full = Scale()
    items = [r.item_id(full) for _ in range(5000)]
    assert min(items) >= 1 and max(items) <= 100_000
    small = [r.item_id(TINY) for _ in range(5000)]
    assert min(small) >= 1 and max(small) <= TINY.items
    assert {r.customer_last(TINY) for _ in range(2000)} <= {last_name(i) for i in range(60)}
    # NURand is skewed: the most frequent customer is far above the uniform share
    counts = Counter(r.customer_id(full) for _ in range(30_000))
    assert counts.most_common(1)[0][1] > 3 * 30_000 / 3000


def test_mix_matches_the_standard_shares() -> None:
    r = Random(7)
    drawn = Counter(pick(r) for _ in range(20_000))
    for name, share in MIX:
        assert drawn[name] / 20_000 == pytest.approx(share / 100, abs=0.015)


def test_summarize_counts_rollbacks_as_completed_not_errors() -> None:
    records = [("new_order", 0.010, "ok")] * 6 + [
        ("new_order", 0.020, "rollback"),
        ("payment", 0.004, "ok"),
        ("delivery", 0.5, "error"),
    ]
    summary = summarize(records, elapsed_s=6.0, error_samples=["delivery: deadlock"])
    metrics = summary["metrics"]
    assert metrics["tpmC"] == pytest.approx(60.0)  # 6 committed New-Orders in 6 s
    assert metrics["tps"] == pytest.approx(8 / 6)
    assert metrics["errors"] == 1 and metrics["rollbacks"] == 1
    assert metrics["latency_p99_ms"] == pytest.approx(20.0)
    assert summary["counts"]["new_order"] == 7 and summary["counts"]["delivery"] == 0
    assert math.isnan(percentile([], 0.5)) and percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0


@pytest.mark.parametrize("database", ["postgres", "mysql"])
def test_parse_captured_driver_output(database: str) -> None:
    text = (DATA / f"tpcc_{database}.txt").read_text()
    metrics = metrics_from_output(text)
    assert set(metrics) == {
        "tpmC",
        "tps",
        "latency_avg_ms",
        "latency_p95_ms",
        "latency_p99_ms",
        "errors",
        "rollbacks",
    }
    summary = parse_summary(text)
    assert metrics["tpmC"] == pytest.approx(
        summary["counts"]["new_order"] * 60 / summary["elapsed_s"], rel=0.05
    )
    with pytest.raises(WorkloadError):
        metrics_from_output("Traceback ...")


def test_driver_command_and_scale_checks() -> None:
    command = driver_command(
        "python3", "run", {"dialect": "sqlite", "path": "/x"}, TINY, clients=3, duration_s=2.5
    )
    assert command[:4] == ["python3", "-m", "systems.tpcc.driver", "run"]
    assert json.loads(command[5]) == {"dialect": "sqlite", "path": "/x"}
    assert "--clients=3" in command and "--duration=2.5" in command
    secret = {"dialect": "postgres", "host": "h", "password": "s3cr3t"}
    command = driver_command("python3", "load", secret, TINY)
    assert not any("s3cr3t" in part for part in command)  # `ps` shows command lines
    assert driver_env(secret) == {"TPCC_PASSWORD": "s3cr3t"} and driver_env({"path": "x"}) == {}
    with pytest.raises(ConfigError):
        Scale(items=10)
    with pytest.raises(ConfigError):
        dialect_of({"dialect": "oracle"})
    assert len(ddl("mysql")) == 11 and "DATETIME" in ddl("mysql")[2]


def test_load_and_run_on_sqlite(tmp_path: Path) -> None:
    target = {
        "dialect": "sqlite",
        "path": str(tmp_path / "tpcc.db"),
        "init_sql": ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"],
    }
    conn = connect(target)
    counts = load(conn, dialect_of(target), TINY)
    conn.close()
    assert counts["stock"] == 1000 and counts["customer"] == 600
    assert counts["new_order"] == 10 * TINY.new_orders
    summary = run_clients(target, TINY, clients=2, duration_s=1.5)
    metrics = summary["metrics"]
    assert metrics["tpmC"] > 0 and metrics["tps"] > 0, summary
    with sqlite3.connect(str(target["path"])) as db:
        orders = db.execute("SELECT COUNT(*) FROM orders").fetchone()[0]
        next_ids = db.execute("SELECT SUM(d_next_o_id - 1) FROM district").fetchone()[0]
    # every committed New-Order added exactly one order and advanced its district's counter
    assert orders == next_ids == 600 + summary["counts"]["new_order"] - metrics["rollbacks"]
