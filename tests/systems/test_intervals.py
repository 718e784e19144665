"""Interval samples: the recorder every workload emits into, the elapsed bound of job workloads,
and each client's line parser on real output captured on this machine (``tests/data/mysql``,
``postgres``, ``sqlite``: see their README) and on damaged or hostile lines."""

from __future__ import annotations

import copy
import itertools
import math
import pickle
import random
import statistics
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from harness.builder.session import make_workload
from harness.conf.schema import workloads_of
from harness.intervals import (
    ELAPSED,
    IntervalRecorder,
    IntervalSample,
    LineParser,
    ReportsIntervals,
    elapsed_bound,
    finite_number,
    parse_intervals,
    parse_json_line,
)
from harness.system import System
from systems.cassandra import ycsb
from systems.dbserver import sysbench
from systems.postgres import pgbench
from systems.sqlite import workload as sqlite_workload
from systems.sqlite.worker import IntervalReports
from systems.tomcat import workload as tomcat_workload
from systems.tpcc import driver
from systems.tpcc.workload import metrics_from_output
from tests.conftest import CONF, group_options

DATA = Path(__file__).resolve().parents[1] / "data"
Compose = Callable[..., DictConfig]

PARSERS: dict[str, LineParser] = {
    "sysbench": sysbench.parse_interval_line,
    "pgbench": pgbench.parse_progress_line,
    "tpcc": driver.parse_interval_line,
    "sqlite": sqlite_workload.parse_interval_line,
    "ycsb": ycsb.parse_status_line,
}

SYSBENCH_LINE = (
    "[ 3s ] thds: 2 tps: 1082.72 qps: 21641.38 (r/w/o: 15153.07/4322.88/2165.44) "
    "lat (ms,95%): 2.22 err/s: 0.00 reconn/s: 0.00"
)
PGBENCH_LINE = "progress: 2.0 s, 2488.1 tps, lat 0.802 ms stddev 0.485, 0 failed"

HOSTILE = [
    "",
    "\x00\x01\x02",
    "[",
    "progress:",
    "TPCC-INTERVAL ",
    "TPCC-INTERVAL {",
    "TPCC-INTERVAL []",
    'TPCC-INTERVAL {"t": "1", "tps": 3}',
    'TPCC-INTERVAL {"t": 1, "tps": NaN}',
    'TPCC-INTERVAL {"t": 1, "tps": Infinity}',
    'TPCC-INTERVAL {"t": -1, "tps": 3}',
    'TPCC-INTERVAL {"t": 1, "tps": true}',
    'TPCC-INTERVAL {"t": 1, "tps": ' + "9" * 400 + "}",
    "TPCC-INTERVAL " + "[" * 5000,
    'INTERVAL {"t": 1e999, "tps": 5}',
    'INTERVAL {"t": 1, "tps": {"nested": 1}}',
    'INTERVAL {"t": 1, "tps": -3}',
    SYSBENCH_LINE.replace("1082.72", "nan"),
    SYSBENCH_LINE.replace("1082.72", "inf"),
    SYSBENCH_LINE.replace("1082.72", "1e999"),
    SYSBENCH_LINE.replace("1082.72", "-5"),
    SYSBENCH_LINE.replace("3s", "xs"),
    SYSBENCH_LINE[:60],
    SYSBENCH_LINE.replace("2.22", "9" * 100),
    PGBENCH_LINE.replace("2488.1", "NaN"),
    PGBENCH_LINE.replace("0.802", "-inf"),
    PGBENCH_LINE.replace("0 failed", "x failed"),
    PGBENCH_LINE[:30],
    "2026-12-07 21:30:01:234 3 sec: 100 operations; nan current ops/sec; [READ: Count=5]",
    "2026-12-07 21:30:01:234 3 sec: 100 operations; inf current ops/sec;",
    "2026-12-07 21:30:01:234 -3 sec: 100 operations; 10 current ops/sec;",
    "2026-12-07 21:30:01:234 3 sec: 100 operations; est completion in 1 second",
    "2026-12-07 21:30:01:234 0 sec: 0 operations; est completion in 0 second",
    "3 sec: 1 operations; " + "9" * 500 + " current ops/sec;",
    "x" * 100_000,
    SYSBENCH_LINE.replace("95%", "9" * 5000 + "%"),
    "2026-12-07 21:30:01:234 3 sec: " + "1" * 5000 + " operations; est completion in 1 second",
    "é ü \ufffd \u202e",
]


# -- the core ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,value",
    [("1.5", 1.5), ("0", 0.0), ("-2", -2.0), ("nan", None), ("inf", None), ("1e999", None)],
)
def test_finite_number(text: str, value: float | None) -> None:
    assert finite_number(text) == value


def test_finite_number_refuses_non_numbers_and_absurd_lengths() -> None:
    assert finite_number("") is None and finite_number("1,5") is None
    assert finite_number("1" * 65) is None


def test_json_line_takes_only_the_named_finite_metrics() -> None:
    line = 'X {"t": 2.5, "tps": 10, "other": 1, "qps": 20.5}'
    assert parse_json_line(line, "X ", {"tps": "txn/s", "qps": "q/s"}) == [
        IntervalSample(2.5, "tps", 10.0, "txn/s"),
        IntervalSample(2.5, "qps", 20.5, "q/s"),
    ]
    assert parse_json_line('Y {"t": 2.5, "tps": 10}', "X ", {"tps": "txn/s"}) == []


def test_recorder_stores_then_tells_listeners_and_begin_forgets_the_last_run() -> None:
    recorder = IntervalRecorder("rate", target="tps")
    heard: list[IntervalSample] = []
    recorder.subscribe(heard.append)
    recorder.feed(SYSBENCH_LINE, sysbench.parse_interval_line)
    assert heard == list(recorder.samples) and len(heard) == 5
    recorder.begin()
    assert recorder.samples == ()
    recorder.unsubscribe(heard.append)
    recorder.feed(SYSBENCH_LINE, sysbench.parse_interval_line)
    assert len(heard) == 5 and len(recorder.samples) == 5


def test_a_copied_recorder_keeps_its_samples_and_drops_the_listeners() -> None:
    recorder = IntervalRecorder("rate", target="tps")
    heard: list[IntervalSample] = []
    recorder.subscribe(heard.append)
    recorder.feed(SYSBENCH_LINE, sysbench.parse_interval_line)
    for copied in (pickle.loads(pickle.dumps(recorder)), copy.deepcopy(recorder)):
        assert (copied.kind, copied.target, copied.samples) == ("rate", "tps", recorder.samples)
        copied.feed(SYSBENCH_LINE, sysbench.parse_interval_line)
        assert len(copied.samples) == 10 and len(heard) == 5


def test_a_failing_listener_is_dropped_and_never_breaks_the_run() -> None:
    recorder = IntervalRecorder()
    calls: list[IntervalSample] = []

    def broken(sample: IntervalSample) -> None:
        calls.append(sample)
        raise RuntimeError("observer bug")

    recorder.subscribe(broken)
    recorder.feed_output(f"{SYSBENCH_LINE}\n{SYSBENCH_LINE}", sysbench.parse_interval_line)
    assert len(calls) == 1 and len(recorder.samples) == 10


def test_elapsed_bound_ends_with_the_whole_block_even_when_it_raises() -> None:
    recorder = IntervalRecorder("elapsed", target="duration_s")
    recorder.emit(IntervalSample(0.0, "tps", 1.0, "txn/s"))  # a previous run's sample
    with pytest.raises(KeyError), elapsed_bound(recorder, period_s=0.01):
        raise KeyError("job failed")
    samples = recorder.samples
    assert samples and all(s.metric == ELAPSED and s.unit == "s" for s in samples)
    assert all(s.value == s.offset_s >= 0 for s in samples)
    assert [s.value for s in samples] == sorted(s.value for s in samples)
    assert not [t for t in threading.enumerate() if t.name == "elapsed-bound"]
    with pytest.raises(ValueError), elapsed_bound(recorder, period_s=0):
        pass


# -- every parser on hostile lines ------------------------------------------------------------
@pytest.mark.parametrize("client", sorted(PARSERS))
@pytest.mark.parametrize("line", HOSTILE)
def test_parsers_never_raise_and_never_yield_non_finite_values(client: str, line: str) -> None:
    samples = PARSERS[client](line)
    assert samples == [], (client, line, samples)


@pytest.mark.parametrize("client", sorted(PARSERS))
def test_parsers_survive_mutated_real_lines(client: str) -> None:
    rng = random.Random(client)
    lines = [line for line in _fixture(client).splitlines() if PARSERS[client](line)]
    alphabet = '0123456789.-+eE naNinf[]{}:,;=%/"\x00\u202e'
    for _ in range(3000):
        chars = list(rng.choice(lines))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(chars))
            action = rng.choice(("replace", "insert", "delete", "cut"))
            if action == "replace":
                chars[at] = rng.choice(alphabet)
            elif action == "insert":
                chars.insert(at, rng.choice(alphabet) * rng.choice((1, 3, 400)))
            elif action == "delete":
                del chars[at]
            else:
                del chars[at:]
            if not chars:
                chars = ["x"]
        for sample in PARSERS[client]("".join(chars)):
            assert math.isfinite(sample.offset_s) and math.isfinite(sample.value), sample
            assert sample.offset_s >= 0 and sample.value >= 0, sample


@pytest.mark.parametrize("client", sorted(PARSERS))
def test_parsers_ignore_every_line_of_the_other_clients(client: str) -> None:
    for other, parse in PARSERS.items():
        if other != client:
            for sample in parse_intervals(_fixture(client), parse):
                pytest.fail(f"{other} parsed {sample} from {client}'s output")


def _fixture(client: str) -> str:
    return {
        "sysbench": (DATA / "mysql" / "sysbench_mysql_readwrite_intervals.txt").read_text(),
        "pgbench": (DATA / "postgres" / "pgbench_tpcb_progress_stderr.txt").read_text(),
        "tpcc": (DATA / "postgres" / "tpcc_postgres_intervals.txt").read_text(),
        "sqlite": (DATA / "sqlite" / "worker_readwrite_intervals.txt").read_text(),
        "ycsb": (DATA / "cassandra" / "ycsb_run_status_stderr.txt").read_text(),
    }[client]


def _series(samples: list[IntervalSample], metric: str) -> list[float]:
    return [s.value for s in samples if s.metric == metric]


def _offsets(samples: list[IntervalSample], metric: str) -> list[float]:
    return [s.offset_s for s in samples if s.metric == metric]


# -- each client on its captured output -------------------------------------------------------
@pytest.mark.parametrize("database", ["mysql", "postgres"])
def test_sysbench_intervals_and_unchanged_summary(database: str) -> None:
    output = (DATA / database / f"sysbench_{database}_readwrite_intervals.txt").read_text()
    samples = parse_intervals(output, sysbench.parse_interval_line)
    assert _offsets(samples, "tps") == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert {s.metric for s in samples} == {
        "tps",
        "qps",
        "latency_p95_ms",
        "errors_per_s",
        "reconnects_per_s",
    }
    final = sysbench.parse_sysbench(output)  # the summary reads as before
    assert statistics.mean(_series(samples, "tps")) == pytest.approx(final["tps"], rel=0.05)
    first = samples[:5]
    assert first == [
        IntervalSample(1.0, name, value, unit)
        for name, value, unit in _first_sysbench_line(database)
    ]


def _first_sysbench_line(database: str) -> list[tuple[str, float, str]]:
    values = {
        "mysql": (981.41, 19666.19, 4.03),
        "postgres": (1177.80, 23582.00, 3.19),
    }[database]
    return [
        ("tps", values[0], "txn/s"),
        ("qps", values[1], "queries/s"),
        ("latency_p95_ms", values[2], "ms"),
        ("errors_per_s", 0.0, "1/s"),
        ("reconnects_per_s", 0.0, "1/s"),
    ]


def test_sysbench_asks_for_one_second_reports() -> None:
    command = sysbench.sysbench_command(
        "sysbench", [], "oltp_read_only", "run", tables=1, table_size=10, threads=1, duration_s=3
    )
    assert "--report-interval=1" in command and "--histogram=on" in command


def test_pgbench_progress_and_unchanged_summary() -> None:
    stderr = (DATA / "postgres" / "pgbench_tpcb_progress_stderr.txt").read_text()
    stdout = (DATA / "postgres" / "pgbench_tpcb_progress_stdout.txt").read_text()
    samples = parse_intervals(stderr, pgbench.parse_progress_line)
    assert _offsets(samples, "tps") == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert samples[:3] == [
        IntervalSample(1.0, "tps", 1596.9, "txn/s"),
        IntervalSample(1.0, "latency_avg_ms", 1.219, "ms"),
        IntervalSample(1.0, "errors_per_s", 0.0, "1/s"),
    ]
    final = pgbench.parse_pgbench(stdout)
    assert statistics.mean(_series(samples, "tps")) == pytest.approx(final["tps"], rel=0.05)
    # pgbench before 15 ends the line after stddev: no failure count, the rest still read
    old = pgbench.parse_progress_line("progress: 4.0 s, 2517.0 tps, lat 0.793 ms stddev 0.432")
    assert [s.metric for s in old] == ["tps", "latency_avg_ms"]


def test_pgbench_asks_for_one_second_progress() -> None:
    command = pgbench.pgbench_command(
        "pgbench",
        [],
        mode="tpcb",
        clients=1,
        duration_s=3,
        sampling_rate=0.5,
        log_prefix="/x/log",
    )
    assert command[command.index("-P") + 1] == "1"


@pytest.mark.parametrize("database", ["mysql", "postgres"])
def test_tpcc_intervals_and_unchanged_summary(database: str) -> None:
    output = (DATA / database / f"tpcc_{database}_intervals.txt").read_text()
    samples = parse_intervals(output, driver.parse_interval_line)
    offsets = _offsets(samples, "tpmC")
    assert len(offsets) >= 5 and offsets == sorted(offsets)
    assert {s.metric for s in samples} == {"tps", "tpmC", "errors_per_s"}
    final = metrics_from_output(output)
    # each sample covers the time since the previous one: weighed so, the rates give the run's
    assert _span_weighted_mean(samples, "tpmC") == pytest.approx(final["tpmC"], rel=0.02)
    assert _span_weighted_mean(samples, "tps") == pytest.approx(final["tps"], rel=0.02)


def _span_weighted_mean(samples: list[IntervalSample], metric: str) -> float:
    offsets = [0.0, *_offsets(samples, metric)]
    spans = [end - start for start, end in itertools.pairwise(offsets)]
    return sum(v * w for v, w in zip(_series(samples, metric), spans, strict=True)) / sum(spans)


def test_tpcc_interval_rates_from_counter_totals() -> None:
    record = driver._interval(0.5, (10, 2, 0), (60, 12, 1))
    assert record == {"tps": 100.0, "tpmC": 1200.0, "errors_per_s": 2.0, "transactions": 50.0}


def test_sqlite_worker_intervals_and_unchanged_summary() -> None:
    output = (DATA / "sqlite" / "worker_readwrite_intervals.txt").read_text()
    samples = parse_intervals(output, sqlite_workload.parse_interval_line)
    assert _offsets(samples, "tps") == [1.0, 2.001, 3.002, 4.003, 4.501]
    final = sqlite_workload.parse_output(output)  # the result line is still the last one
    assert final["tps"] == pytest.approx(754.3286489620936)
    assert min(_series(samples, "tps")) > 0.5 * final["tps"]


def test_sqlite_worker_reports_each_interval_with_a_fake_clock() -> None:
    reports: list[dict[str, float]] = []
    intervals = IntervalReports(100.0, reports.append, interval_s=1.0)
    intervals.count(100.4, 14, 0.002)
    intervals.count(100.8, 0, None)
    assert reports == []
    intervals.count(101.0, 14, 0.004)
    assert reports == [
        {"t": 1.0, "tps": 2.0, "qps": 28.0, "latency_avg_ms": 3.0, "errors_per_s": 1.0}
    ]
    intervals.flush(101.5)  # the rest of the run: nothing finished in it
    assert reports[-1] == {
        "t": 1.5,
        "tps": 0.0,
        "qps": 0.0,
        "latency_avg_ms": 0.0,
        "errors_per_s": 0.0,
    }


def test_ycsb_status_lines_and_unchanged_summary() -> None:
    samples = parse_intervals(_fixture("ycsb"), ycsb.parse_status_line)
    # seconds 1-2: the client still connecting (no rate printed); 6 twice: the last, partial
    # interval ends within the sixth second
    assert _offsets(samples, "throughput_ops") == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 6.0]
    assert _series(samples, "throughput_ops")[:3] == [0.0, 0.0, 134.52]
    assert samples[3] == IntervalSample(3.0, "read_latency_avg_ms", 21.22712, "ms")
    assert {s.metric for s in samples} == {
        "throughput_ops",
        "read_latency_avg_ms",
        "update_latency_avg_ms",
    }  # no CLEANUP
    stdout = (DATA / "cassandra" / "ycsb_run_status_stdout.txt").read_text()
    final = ycsb.ycsb_metrics(stdout)
    assert final["throughput_ops"] == pytest.approx(1578 / 6.023)


def test_ycsb_status_line_keeps_the_rate_when_an_operation_block_is_damaged() -> None:
    line = "2026-12-07 21:30:01:234 3 sec: 100 operations; 10 current ops/sec; [READ: Avg=nan]"
    assert ycsb.parse_status_line(line) == [IntervalSample(3.0, "throughput_ops", 10.0, "ops/s")]
    cut = "2026-12-07 21:30:01:234 3 sec: 100 operations; 10 current ops/sec; [READ: Count=5, A"
    assert ycsb.parse_status_line(cut) == [IntervalSample(3.0, "throughput_ops", 10.0, "ops/s")]


def test_ycsb_run_asks_for_status_every_second() -> None:
    from systems.cassandra import CassandraSystem, YCSBWorkload

    command = YCSBWorkload(ycsb_dir="/opt/ycsb").command(CassandraSystem(), "run", 5)
    assert "status.interval=1" in command and command[-1] == "-s"


def test_wrk_intervals_sum_the_threads_per_whole_second() -> None:
    output = (DATA / "tomcat" / "wrk_explore_intervals.txt").read_text()
    samples = tomcat_workload.wrk_intervals(output)
    # seconds 760 and 765 are the run's partial first and last: left out
    assert samples == [
        IntervalSample(1.0, "requests_per_s", 580 + 543, "req/s"),
        IntervalSample(2.0, "requests_per_s", 544 + 475, "req/s"),
        IntervalSample(3.0, "requests_per_s", 700 + 446, "req/s"),
        IntervalSample(4.0, "requests_per_s", 535 + 754, "req/s"),
    ]
    final = tomcat_workload.parse_wrk(output)  # the summary reads as before
    assert final["requests_per_s"] == pytest.approx(5891 / 5.031694)
    # every request was issued in some counted second: the issued ones exceed the answered
    # ones by at most the requests in flight at the end, one per connection
    lines = [tomcat_workload.parse_interval_line(line) for line in output.splitlines()]
    issued = sum(parsed[1] for parsed in lines if parsed is not None)
    assert 0 <= issued - 5891 <= 32


def test_wrk_intervals_fill_silent_seconds_and_refuse_forged_spans() -> None:
    lines = [
        "HARNESS_INTERVAL thread=1 second=100 requests=5",
        "HARNESS_INTERVAL thread=1 second=101 requests=50",
        "HARNESS_INTERVAL thread=1 second=104 requests=7",
    ]
    samples = tomcat_workload.wrk_intervals("\n".join(lines))
    assert [(s.offset_s, s.value) for s in samples] == [(1.0, 50.0), (2.0, 0.0), (3.0, 0.0)]
    forged = [*lines, "HARNESS_INTERVAL thread=1 second=999999999999 requests=1"]
    assert tomcat_workload.wrk_intervals("\n".join(forged)) == []
    assert tomcat_workload.wrk_intervals("Running 5s test @ http://x/") == []


@pytest.mark.parametrize(
    "line",
    [
        *HOSTILE,
        "HARNESS_INTERVAL thread=1 second=100",
        "HARNESS_INTERVAL thread=1 second=-100 requests=5",
        "HARNESS_INTERVAL thread=1 second=100 requests=5.5",
        "HARNESS_INTERVAL thread=1 second=100 requests=" + "9" * 40,
    ],
)
def test_wrk_interval_line_parser_refuses_hostile_lines(line: str) -> None:
    assert tomcat_workload.parse_interval_line(line) is None


REAL_SYSTEMS = [
    "cassandra",
    "hdfs",
    "hive",
    "mapreduce",
    "mysql",
    "postgres",
    "spark",
    "sqlite",
    "tomcat",
]


def test_the_real_systems_are_exactly_those_whose_adapters_say_so() -> None:
    real = []
    for system in group_options("system"):
        adapter = get_class(OmegaConf.load(CONF / "system" / f"{system}.yaml").adapter._target_)
        assert issubclass(adapter, System)
        if adapter.kind in ("real", "remote"):  # a real client, here or on hosts
            real.append(system)
    assert real == REAL_SYSTEMS


@pytest.mark.parametrize("system", REAL_SYSTEMS)
def test_every_real_workload_reports_intervals_about_one_of_its_metrics(
    compose_cfg: Compose, system: str
) -> None:
    for name in workloads_of(system):
        workload = make_workload(compose_cfg(f"system={system}", f"workload={name}"))
        assert isinstance(workload, ReportsIntervals), f"{system}/{name}"
        recorder = workload.intervals
        assert recorder is workload.intervals  # one recorder per workload, kept across runs
        target = {m.name: m for m in workload.metrics}[recorder.target]
        if recorder.kind == "elapsed":  # bounds a time from below: the time to minimise
            assert (target.direction, target.unit) == ("min", "s"), f"{system}/{name}"
        else:  # estimates a rate to maximise
            assert recorder.kind == "rate" and target.direction == "max", f"{system}/{name}"
