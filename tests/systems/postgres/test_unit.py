"""PostgreSQL adapter logic without a server: rendering, ranges, command builders, parsers on
captured real pgbench output, expert settings."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.errors import KnobError, WorkloadError
from harness.hosts.machine import Machine
from systems.dbserver.sysbench import parse_sysbench
from systems.postgres import expert
from systems.postgres.pgbench import log_latencies_ms, parse_pgbench, pgbench_command
from systems.postgres.system import format_value, load_space, render_tuning_conf

DATA = Path(__file__).resolve().parents[2] / "data"
SMALL = Machine(ram_bytes=2 * 2**30, cores=2)
BIG = Machine(ram_bytes=64 * 2**30, cores=16)


@pytest.mark.parametrize("knob_set,dim", [("10", 10), ("30", 30)])
def test_catalogue_sets_and_defaults(knob_set: str, dim: int) -> None:
    space = load_space(knob_set, SMALL)
    assert space.dim == dim
    default = space.default()
    assert default["shared_buffers"] == 128 and default["synchronous_commit"] == "on"


def test_memory_ranges_follow_the_machine() -> None:
    small, big = load_space("10", SMALL), load_space("10", BIG)
    assert small["shared_buffers"].high == 1024  # half of 2 GiB
    assert big["shared_buffers"].high == 32768
    # the server default stays inside the range even where RAM is small
    assert (small["effective_cache_size"].high or 0) >= 4096


def test_render_units_quotes_and_bools() -> None:
    space = load_space("30", SMALL)
    text = render_tuning_conf(
        space,
        {
            "shared_buffers": 256,
            "work_mem": 8192,
            "synchronous_commit": "off",
            "jit": False,
            "random_page_cost": 1.1,
            "commit_delay": 10,
            "checkpoint_timeout": 600,
        },
    )
    lines = set(text.splitlines())
    assert {
        "shared_buffers = '256MB'",
        "work_mem = '8192kB'",
        "synchronous_commit = 'off'",
        "jit = off",
        "random_page_cost = 1.1",
        "commit_delay = 10",
        "checkpoint_timeout = '600s'",
    } <= lines
    assert format_value(space["autovacuum"], True) == "on"


def test_render_refuses_values_outside_the_catalogue() -> None:
    space = load_space("10", SMALL)
    with pytest.raises(KnobError, match="shared_buffers"):
        render_tuning_conf(space, {"shared_buffers": 10**9})
    with pytest.raises(KnobError, match="unknown knob"):
        render_tuning_conf(space, {"fsync": False})


def test_pgbench_command() -> None:
    command = pgbench_command(
        "/usr/bin/pgbench",
        ["-h", "127.0.0.1", "-p", "5"],
        mode="select",
        clients=2,
        duration_s=3.4,
        sampling_rate=0.2,
        log_prefix="/x/log",
    )
    assert command[:4] == ["/usr/bin/pgbench", "-h", "127.0.0.1", "-p"]
    assert command[command.index("-T") : command.index("-T") + 2] == ["-T", "3"]
    assert "-S" in command and command[-1] == "bench" and "--log-prefix=/x/log" in command


def test_parse_captured_pgbench() -> None:
    tpcb = parse_pgbench((DATA / "pgbench_tpcb.txt").read_text())
    assert tpcb == {"tps": pytest.approx(441.811078), "latency_avg_ms": 4.527, "errors": 0.0}
    select = parse_pgbench((DATA / "pgbench_select.txt").read_text())
    assert select["tps"] > 1000 and select["errors"] == 0.0
    with pytest.raises(WorkloadError):
        parse_pgbench("pgbench: error: connection refused")


def test_pgbench_log_latencies() -> None:
    values = log_latencies_ms((DATA / "pgbench_tpcb_log.txt").read_text())
    assert len(values) == 275 and values[0] == pytest.approx(1.585)
    assert log_latencies_ms("0 1 failed 0 1 2\n0 2 1500 0 1 2\n") == [1.5]


def test_parse_captured_sysbench_pgsql() -> None:
    metrics = parse_sysbench((DATA / "sysbench_pgsql_readwrite.txt").read_text())
    assert metrics["tps"] == pytest.approx(271.44)
    assert metrics["errors"] == 0.0 and metrics["latency_avg_ms"] == 7.35
    # sysbench's own 95th percentile (16.12) is the histogram bucket we compute
    assert metrics["latency_p95_ms"] == pytest.approx(16.12, abs=0.01)
    assert metrics["latency_p95_ms"] <= metrics["latency_p99_ms"] <= metrics["latency_max_ms"]


@pytest.mark.parametrize("machine", [SMALL, BIG])
@pytest.mark.parametrize("knob_set", ["10", "30"])
def test_expert_settings_are_valid(machine: Machine, knob_set: str) -> None:
    space = load_space(knob_set, machine)
    for rule in (expert.manual, expert.script):
        config = rule(space, machine)
        assert config and space.validate(config, partial=True) == config
    assert expert.script(space, machine)["shared_buffers"] == machine.ram_mib // 4
    assert not math.isnan(float(expert.manual(space, machine)["effective_cache_size"]))


@pytest.mark.parametrize(
    "workload", ["readonly", "readwrite", "pgbench", "pgbench_select", "tpcc"]
)
def test_hydra_config_builds_every_workload(compose_cfg, workload: str) -> None:  # type: ignore[no-untyped-def]
    from hydra.utils import instantiate

    from harness.builder.session import make_workload

    cfg = compose_cfg("system=postgres", f"workload={workload}", "workload.duration_s=4")
    driver = make_workload(cfg)
    assert driver.name == workload and driver.duration_s == 4 and driver.metrics
    adapter = instantiate(cfg.system.adapter)
    assert adapter.space.dim == 10 and adapter.instance is None


def test_missing_binary_names_the_debian_package(tmp_path: Path) -> None:
    from harness.errors import ConfigError
    from harness.executor import LocalExecutor
    from systems.dbserver.host import find_binary, free_port

    with pytest.raises(ConfigError, match="apt-get install postgresql-15"):
        find_binary(LocalExecutor(), ["no-such-initdb-x"], [str(tmp_path)], "postgresql-15")
    (tmp_path / "initdb").write_text("")
    assert find_binary(LocalExecutor(), ["initdb"], [str(tmp_path)], "x") == str(
        tmp_path / "initdb"
    )
    assert 1024 < free_port() < 65536
