"""TPC-C driver: ``load`` the database, or ``run`` N client processes for a fixed time and
print one JSON summary line.

Run as ``python -m systems.tpcc.driver load|run --target '<json>' ...``; the workload adapter
(:mod:`systems.tpcc.workload`) starts it through the executor, so a hung run can be killed
with its whole process group. Clients are processes (not threads) so that Python's GIL never
caps the load. Aggregation is the pure function :func:`summarize`, and :func:`parse_summary`
reads the printed line back.

Metrics: ``tpmC`` = committed New-Orders per minute; ``tps`` = all completed transactions
per second (the 1 % business rollbacks of New-Order included, they are a correct outcome);
latency avg/p95/p99 over completed transactions; ``errors`` = transactions that failed
with a database error (deadlock, serialisation failure, lost connection) and were rolled back.
No keying or think times: like sysbench, each client submits its next transaction at once.

While the clients run, the driver prints one ``TPCC-INTERVAL {"t": ..., "tps": ...,
"tpmC": ..., "errors_per_s": ..., "transactions": ...}`` line per second (rates over that
second and its count of completed transactions, from counters the clients share with it), read
back by :func:`parse_interval_line`.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from typing import Any

from harness.intervals import IntervalSample, parse_json_line
from systems.tpcc.loader import Random, load
from systems.tpcc.schema import DISTRICTS, Scale, connect, dialect_of
from systems.tpcc.transactions import TRANSACTIONS, BusinessRollback, Context, pick

__all__ = [
    "INTERVAL_PREFIX",
    "SUMMARY_PREFIX",
    "parse_interval_line",
    "parse_summary",
    "percentile",
    "run_clients",
    "summarize",
]

log = logging.getLogger(__name__)

SUMMARY_PREFIX = "TPCC-SUMMARY "
INTERVAL_PREFIX = "TPCC-INTERVAL "
#: The metrics of an interval line and their units.
INTERVAL_UNITS = {"tps": "txn/s", "tpmC": "New-Order/min", "errors_per_s": "1/s"}
#: Per client, three shared counters: completed transactions, committed New-Orders, errors.
_COUNTERS_PER_CLIENT = 3
_counters: Any = None  # the shared array, in each client process (set by _share)
#: The environment variable that carries the database password (never a command-line flag).
PASSWORD_ENV = "TPCC_PASSWORD"
#: one record per finished transaction: (type, latency in seconds, outcome)
Record = tuple[str, float, str]  # outcome: "ok" | "rollback" | "error"


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of already sorted values; NaN when empty."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q * len(sorted_values)))
    return float(sorted_values[rank - 1])


def summarize(
    records: Sequence[Record], elapsed_s: float, error_samples: Sequence[str] = ()
) -> dict[str, Any]:
    """Aggregate the clients' records into the metrics and per-type counts."""
    done = sorted(latency for _, latency, outcome in records if outcome != "error")
    committed_new = sum(
        1 for kind, _, outcome in records if kind == "new_order" and outcome == "ok"
    )
    per_type = {
        kind: sum(1 for k, _, o in records if k == kind and o != "error") for kind in TRANSACTIONS
    }
    elapsed = max(elapsed_s, 1e-9)
    metrics = {
        "tpmC": committed_new * 60.0 / elapsed,
        "tps": len(done) / elapsed,
        "latency_avg_ms": 1000.0 * sum(done) / len(done) if done else math.nan,
        "latency_p95_ms": 1000.0 * percentile(done, 0.95),
        "latency_p99_ms": 1000.0 * percentile(done, 0.99),
        "errors": float(sum(1 for _, _, outcome in records if outcome == "error")),
        "rollbacks": float(sum(1 for _, _, outcome in records if outcome == "rollback")),
    }
    return {
        "metrics": metrics,
        "counts": per_type,
        "elapsed_s": elapsed_s,
        "error_samples": list(error_samples)[:5],
    }


def parse_summary(output: str) -> dict[str, Any]:
    """The summary the ``run`` command printed (the last line starting with the prefix)."""
    for line in reversed(output.splitlines()):
        if line.startswith(SUMMARY_PREFIX):
            return dict(json.loads(line[len(SUMMARY_PREFIX) :]))
    raise ValueError("no TPC-C summary line in the driver output")


def parse_interval_line(line: str) -> list[IntervalSample]:
    """The samples of one ``TPCC-INTERVAL`` line (``[]`` for any other or damaged line)."""
    return parse_json_line(line, INTERVAL_PREFIX, INTERVAL_UNITS)


def _share(counters: Any) -> None:
    """Client process initialiser: keep the counters shared with the driver."""
    global _counters
    _counters = counters


def _count(client: int, kind: str, outcome: str) -> None:
    """Count one finished transaction in this client's own slots (one writer per slot)."""
    if _counters is None:
        return
    base = client * _COUNTERS_PER_CLIENT
    if outcome == "error":
        _counters[base + 2] += 1
        return
    _counters[base] += 1
    if kind == "new_order" and outcome == "ok":
        _counters[base + 1] += 1


def _client(
    target: Mapping[str, Any], scale: Scale, client: int, deadline: float, seed: int
) -> tuple[list[Record], list[str]]:
    """One terminal: a home warehouse/district, transactions back to back until ``deadline``."""
    dialect = dialect_of(target)
    conn = connect(target)
    rnd = Random(seed * 1000 + client)
    home_w = client % scale.warehouses + 1
    home_d = (client // scale.warehouses) % DISTRICTS + 1
    ctx = Context(conn, dialect, scale, rnd, home_w, home_d)
    records: list[Record] = []
    samples: list[str] = []
    while time.time() < deadline:
        kind = pick(rnd)
        started = time.perf_counter()
        try:
            TRANSACTIONS[kind](ctx)
            outcome = "ok"
        except BusinessRollback:
            conn.rollback()
            outcome = "rollback"
        except Exception as exc:
            outcome = "error"
            if len(samples) < 5:
                samples.append(f"{kind}: {type(exc).__name__}: {str(exc).strip()[:200]}")
            try:
                conn.rollback()
            except Exception:
                conn = connect(target)
                ctx = Context(conn, dialect, scale, rnd, home_w, home_d)
        records.append((kind, time.perf_counter() - started, outcome))
        _count(client, kind, outcome)
    conn.close()
    return records, samples


def _totals(counters: Any, clients: int) -> tuple[int, int, int]:
    """(completed, committed New-Orders, errors) summed over the clients."""
    sums = [0, 0, 0]
    for client in range(clients):
        for slot in range(_COUNTERS_PER_CLIENT):
            sums[slot] += int(counters[client * _COUNTERS_PER_CLIENT + slot])
    return sums[0], sums[1], sums[2]


def _interval(span_s: float, before: Sequence[int], after: Sequence[int]) -> dict[str, float]:
    """The rates of one interval from the counter totals at its start and end."""
    span = max(span_s, 1e-9)
    done, new_orders, errors = (b - a for a, b in zip(before, after, strict=True))
    return {
        "tps": done / span,
        "tpmC": new_orders * 60.0 / span,
        "errors_per_s": errors / span,
        "transactions": float(done),
    }


def _report_intervals(
    futures: Sequence[Future[Any]],
    counters: Any,
    clients: int,
    started: float,
    report: Callable[[dict[str, float]], None],
    interval_s: float,
) -> None:
    """Until every client is done, call ``report`` once per ``interval_s`` with that
    interval's rates (``t`` = seconds since ``started``, the end of the interval); then once
    for the rest of the run, unless nothing finished in it, so that the intervals' counts add
    up to the run's."""
    last_t, last = 0.0, (0, 0, 0)
    running = True
    while running:
        running = bool(wait(futures, timeout=interval_s).not_done)
        now = time.time() - started
        totals = _totals(counters, clients)
        if running or totals != last:
            report({"t": round(now, 3), **_interval(now - last_t, last, totals)})
        last_t, last = now, totals


def print_interval(record: dict[str, float]) -> None:
    """Print one interval line (flushed: a reader may follow the output live)."""
    print(INTERVAL_PREFIX + json.dumps(record), flush=True)


def run_clients(
    target: Mapping[str, Any],
    scale: Scale,
    clients: int,
    duration_s: float,
    seed: int = 0,
    report: Callable[[dict[str, float]], None] | None = None,
    interval_s: float = 1.0,
) -> dict[str, Any]:
    """Run ``clients`` terminal processes for ``duration_s`` and summarise them; ``report``
    (if given) hears each interval's rates while they run."""
    counters = multiprocessing.Array("q", clients * _COUNTERS_PER_CLIENT, lock=False)
    started = time.time()
    deadline = started + duration_s
    with ProcessPoolExecutor(
        max_workers=clients, initializer=_share, initargs=(counters,)
    ) as pool:
        futures = [
            pool.submit(_client, dict(target), scale, i, deadline, seed) for i in range(clients)
        ]
        if report is not None:
            _report_intervals(futures, counters, clients, started, report, interval_s)
        results = [f.result() for f in futures]
    elapsed = max(time.time() - started, duration_s)
    records = [r for recs, _ in results for r in recs]
    samples = [s for _, errs in results for s in errs]
    return summarize(records, elapsed, samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m systems.tpcc.driver", description="TPC-C loader and driver (DB-API)"
    )
    parser.add_argument("action", choices=["load", "run"])
    parser.add_argument("--target", required=True, help="JSON connection description")
    parser.add_argument("--warehouses", type=int, default=1)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument(
        "--customers", type=int, default=3_000, help="customers (and initial orders) per district"
    )
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s"
    )
    target = json.loads(args.target)
    if PASSWORD_ENV in os.environ:  # never on the command line (see workload.driver_command)
        target["password"] = os.environ[PASSWORD_ENV]
    scale = Scale(args.warehouses, args.items, args.customers)
    if args.action == "load":
        conn = connect(target)
        counts = load(conn, dialect_of(target), scale, seed=args.seed)
        conn.close()
        print(json.dumps(counts))
        return 0
    summary = run_clients(
        target, scale, args.clients, args.duration, args.seed, report=print_interval
    )
    print(SUMMARY_PREFIX + json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
