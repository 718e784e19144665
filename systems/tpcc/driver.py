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
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from systems.tpcc.loader import Random, load
from systems.tpcc.schema import DISTRICTS, Scale, connect, dialect_of
from systems.tpcc.transactions import TRANSACTIONS, BusinessRollback, Context, pick

__all__ = ["SUMMARY_PREFIX", "parse_summary", "percentile", "run_clients", "summarize"]

log = logging.getLogger(__name__)

SUMMARY_PREFIX = "TPCC-SUMMARY "
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
    conn.close()
    return records, samples


def run_clients(
    target: Mapping[str, Any], scale: Scale, clients: int, duration_s: float, seed: int = 0
) -> dict[str, Any]:
    """Run ``clients`` terminal processes for ``duration_s`` and summarise them."""
    started = time.time()
    deadline = started + duration_s
    with ProcessPoolExecutor(max_workers=clients) as pool:
        futures = [
            pool.submit(_client, dict(target), scale, i, deadline, seed) for i in range(clients)
        ]
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
    summary = run_clients(target, scale, args.clients, args.duration, args.seed)
    print(SUMMARY_PREFIX + json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
