"""MySQL adapter logic without a server: my.cnf rendering, ranges, sysbench command and parser
on captured real MariaDB output, expert settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import KnobError, WorkloadError
from harness.hosts.machine import Machine
from systems.dbserver.sysbench import histogram_percentile, parse_sysbench, sysbench_command
from systems.mysql import expert
from systems.mysql.system import format_value, load_space, render_mycnf

DATA = Path(__file__).resolve().parents[2] / "data"
SMALL = Machine(ram_bytes=2 * 2**30, cores=2)
BIG = Machine(ram_bytes=64 * 2**30, cores=16)


@pytest.mark.parametrize("knob_set,dim", [("10", 10), ("30", 30)])
def test_catalogue(knob_set: str, dim: int) -> None:
    space = load_space(knob_set, SMALL)
    assert space.dim == dim
    assert space.default()["innodb_buffer_pool_size"] == 128


def test_buffer_pool_range_follows_the_machine() -> None:
    assert load_space("10", SMALL)["innodb_buffer_pool_size"].high == 1228
    assert load_space("10", BIG)["innodb_buffer_pool_size"].high == 39321


def test_render_mycnf() -> None:
    space = load_space("30", SMALL)
    text = render_mycnf(
        space,
        {
            "innodb_buffer_pool_size": 256,
            "sort_buffer_size": 512,
            "innodb_doublewrite": False,
            "innodb_flush_log_at_trx_commit": 2,
            "innodb_flush_method": "O_DSYNC",
            "innodb_max_dirty_pages_pct": 75.5,
        },
        ["port = 1234", "bind-address = 127.0.0.1"],
    )
    lines = text.splitlines()
    assert lines[1] == "[mysqld]" and "port = 1234" in lines
    assert {
        "innodb_buffer_pool_size = 256M",
        "sort_buffer_size = 512K",
        "innodb_doublewrite = OFF",
        "innodb_flush_log_at_trx_commit = 2",
        "innodb_flush_method = O_DSYNC",
        "innodb_max_dirty_pages_pct = 75.5",
    } <= set(lines)
    assert format_value(space["innodb_flush_log_at_timeout"], 5) == "5"
    with pytest.raises(KnobError):
        render_mycnf(space, {"innodb_flush_method": "nosync"}, [])


def test_sysbench_command() -> None:
    command = sysbench_command(
        "sysbench",
        ["--db-driver=mysql"],
        "oltp_read_only",
        "run",
        tables=4,
        table_size=1000,
        threads=2,
        duration_s=3,
    )
    assert command[0] == "sysbench" and command[-2:] == ["oltp_read_only", "run"]
    assert "--time=3" in command and "--histogram=on" in command
    prepare = sysbench_command(
        "sysbench",
        [],
        "oltp_read_write",
        "prepare",
        tables=4,
        table_size=1000,
        threads=2,
        duration_s=3,
    )
    assert "--time=3" not in prepare and prepare[-1] == "prepare"


@pytest.mark.parametrize("name,tps", [("readwrite", 894.82), ("readonly", 1378.79)])
def test_parse_captured_sysbench_mysql(name: str, tps: float) -> None:
    metrics = parse_sysbench((DATA / f"sysbench_mysql_{name}.txt").read_text())
    assert metrics["tps"] == pytest.approx(tps)
    assert set(metrics) == {
        "tps",
        "qps",
        "latency_avg_ms",
        "latency_p95_ms",
        "latency_p99_ms",
        "latency_max_ms",
        "errors",
        "reconnects",
    }
    assert metrics["latency_p95_ms"] <= metrics["latency_p99_ms"] <= metrics["latency_max_ms"]


def test_histogram_percentile_and_bad_output() -> None:
    buckets = [(1.0, 90), (2.0, 5), (5.0, 4), (9.0, 1)]
    assert histogram_percentile(buckets, 0.95) == 2.0
    assert histogram_percentile(buckets, 0.99) == 5.0
    with pytest.raises(WorkloadError, match="histogram"):
        parse_sysbench("FATAL: unable to connect to MySQL server")


@pytest.mark.parametrize("machine", [SMALL, BIG])
@pytest.mark.parametrize("knob_set", ["10", "30"])
def test_expert_settings_are_valid(machine: Machine, knob_set: str) -> None:
    space = load_space(knob_set, machine)
    for rule in (expert.manual, expert.script):
        config = rule(space, machine)
        assert config and space.validate(config, partial=True) == config
    assert expert.manual(space, machine)["innodb_flush_log_at_trx_commit"] == 1


@pytest.mark.parametrize("workload", ["readonly", "readwrite", "tpcc"])
def test_hydra_config_builds_every_workload(compose_cfg, workload: str) -> None:  # type: ignore[no-untyped-def]
    from hydra.utils import instantiate

    from harness.builder.session import make_workload

    cfg = compose_cfg("system=mysql", f"workload={workload}", "system.adapter.knob_set=30")
    driver = make_workload(cfg)
    assert driver.name == workload and driver.metrics
    assert instantiate(cfg.system.adapter).space.dim == 30
