"""The SQLite benchmark worker: one fresh process per tuning test (standard library only).

Run by path (``python -I systems/sqlite/worker.py run ...``) so that no harness package, numpy
or YAML import slows its start. Two commands:

``build``
    Create a database file with the sysbench-like table ``sbtest1`` (``id`` primary key, ``k``
    indexed, ``c`` 120 and ``pad`` 60 characters) filled with deterministic rows from ``--seed``.
    ``--page-size`` and ``--auto-vacuum`` are set before the first table exists, which is the
    only moment SQLite honours them. The same arguments always give a byte-identical file.
``run``
    Open the database, apply the PRAGMAs given as JSON pairs, run the sysbench-OLTP-like mix
    for ``--duration`` seconds on one connection (SQLite has one writer), and print one JSON
    line with the counts, rates and latency percentiles. While it runs, it prints one
    ``INTERVAL {"t": ..., "tps": ..., "qps": ..., "latency_avg_ms": ..., "errors_per_s": ...}``
    line per second (``t``: seconds since the mix began, at the interval's end), flushed so
    that a reader can follow it live; the result line is always last.

PRAGMA values arrive already validated against the knob catalogue by the adapter; this worker
checks every name and value against strict patterns again before they reach the SQL, so that
nothing but a bare word or an integer can ever be interpolated.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence

TABLE = "sbtest1"
RANGE_SIZE = 100  # rows per range query, as sysbench's --range_size default
POINT_SELECTS = 10  # point selects per transaction, as sysbench's --point_selects default

#: The prefix of a per-interval report line (read by systems.sqlite.workload).
INTERVAL_PREFIX = "INTERVAL "

_NAME = re.compile(r"^[a-z_]{1,40}$")
_VALUE = re.compile(r"^(-?[0-9]{1,20}|[A-Za-z]{1,20})$")


def pragma_sql(name: str, value: str) -> str:
    """``PRAGMA name=value`` after checking both tokens; raises ValueError on anything else."""
    if not _NAME.match(name) or not _VALUE.match(str(value)):
        raise ValueError(f"refusing PRAGMA {name!r}={value!r}: not a plain name and word/integer")
    return f"PRAGMA {name}={value}"


def _rows(count: int, seed: int) -> Iterator[tuple[int, int, str, str]]:
    rng = random.Random(seed)
    for row_id in range(1, count + 1):
        yield row_id, rng.randint(1, count), rng.randbytes(60).hex(), rng.randbytes(30).hex()


def _remove(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


def build(path: str, rows: int, seed: int, page_size: int, auto_vacuum: str) -> None:
    """Create ``path`` with ``rows`` deterministic rows (replacing any existing file)."""
    _remove(path)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(pragma_sql("page_size", str(page_size)))
        conn.execute(pragma_sql("auto_vacuum", auto_vacuum))
        # The load itself needs no durability: the file is fsynced once at the end.
        conn.execute(pragma_sql("journal_mode", "OFF"))
        conn.execute(pragma_sql("synchronous", "OFF"))
        conn.execute(pragma_sql("cache_size", "-65536"))
        conn.execute("BEGIN")
        conn.execute(
            f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0,"
            " c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')"
        )
        conn.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?)", _rows(rows, seed))
        conn.execute(f"CREATE INDEX k_1 ON {TABLE}(k)")
        conn.execute("COMMIT")
        # Back to the rollback-journal default so the file header does not record OFF.
        conn.execute(pragma_sql("journal_mode", "DELETE"))
    finally:
        conn.close()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending sequence (0 for an empty one)."""
    if not ordered:
        return 0.0
    rank = max(math.ceil(fraction * len(ordered)), 1)
    return ordered[min(rank, len(ordered)) - 1]


class IntervalReports:
    """Counts since the last report, and a report (a dict) each time ``interval_s`` passed."""

    def __init__(
        self, started: float, report: Callable[[dict[str, float]], None], interval_s: float = 1.0
    ) -> None:
        self.started = started
        self.report = report
        self.interval_s = interval_s
        self.last = started
        self.transactions = self.queries = self.errors = 0
        self.latency_s = 0.0

    def count(self, now: float, queries: int, latency_s: float | None) -> None:
        """One finished transaction (``latency_s`` None: it failed), then a report if due."""
        if latency_s is None:
            self.errors += 1
        else:
            self.transactions += 1
            self.queries += queries
            self.latency_s += latency_s
        if now - self.last >= self.interval_s:
            self.flush(now)

    def pending(self) -> bool:
        """Whether a transaction finished (or failed) since the last report."""
        return bool(self.transactions or self.errors)

    def flush(self, now: float) -> None:
        """Report the counts since the last report and start a new interval."""
        span = max(now - self.last, 1e-9)
        done = self.transactions
        self.report(
            {
                "t": round(now - self.started, 3),
                "tps": done / span,
                "qps": self.queries / span,
                "latency_avg_ms": 1000.0 * self.latency_s / done if done else 0.0,
                "errors_per_s": self.errors / span,
            }
        )
        self.last = now
        self.transactions = self.queries = self.errors = 0
        self.latency_s = 0.0


def print_interval(record: dict[str, float]) -> None:
    """One interval line on stdout, flushed."""
    sys.stdout.write(INTERVAL_PREFIX + json.dumps(record) + "\n")
    sys.stdout.flush()


def run(
    path: str,
    pragmas: Sequence[tuple[str, str]],
    mix: str,
    duration_s: float,
    rows: int,
    seed: int,
    report: Callable[[dict[str, float]], None] | None = None,
) -> dict[str, object]:
    """Run the OLTP mix for ``duration_s`` seconds and return the result record; ``report``
    (if given) hears each second's rates while it runs."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"database {path} does not exist (build it first)")
    conn = sqlite3.connect(path, isolation_level=None)  # explicit BEGIN/COMMIT, as sysbench
    for name, value in pragmas:
        conn.execute(pragma_sql(name, value)).fetchall()
    write = mix == "readwrite"
    rng = random.Random(seed)
    point = f"SELECT c FROM {TABLE} WHERE id=?"
    ranges = (
        f"SELECT c FROM {TABLE} WHERE id BETWEEN ? AND ?",
        f"SELECT SUM(k) FROM {TABLE} WHERE id BETWEEN ? AND ?",
        f"SELECT c FROM {TABLE} WHERE id BETWEEN ? AND ? ORDER BY c",
        f"SELECT DISTINCT c FROM {TABLE} WHERE id BETWEEN ? AND ? ORDER BY c",
    )
    latencies: list[float] = []
    queries = errors = 0
    first_error = ""
    high = max(rows - RANGE_SIZE + 1, 1)
    started = time.perf_counter()
    deadline = started + duration_s
    now = started
    intervals = IntervalReports(started, report or (lambda record: None))
    while now < deadline:
        begun = now
        done = 0
        try:
            conn.execute("BEGIN")
            for _ in range(POINT_SELECTS):
                conn.execute(point, (rng.randint(1, rows),)).fetchall()
                done += 1
            for sql in ranges:
                low = rng.randint(1, high)
                conn.execute(sql, (low, low + RANGE_SIZE - 1)).fetchall()
                done += 1
            if write:
                conn.execute(f"UPDATE {TABLE} SET k=k+1 WHERE id=?", (rng.randint(1, rows),))
                conn.execute(
                    f"UPDATE {TABLE} SET c=? WHERE id=?",
                    (rng.randbytes(60).hex(), rng.randint(1, rows)),
                )
                victim = rng.randint(1, rows)
                conn.execute(f"DELETE FROM {TABLE} WHERE id=?", (victim,))
                conn.execute(
                    f"INSERT INTO {TABLE} (id, k, c, pad) VALUES (?, ?, ?, ?)",
                    (
                        victim,
                        rng.randint(1, rows),
                        rng.randbytes(60).hex(),
                        rng.randbytes(30).hex(),
                    ),
                )
                done += 4
            conn.execute("COMMIT")
            queries += done
            now = time.perf_counter()
            latencies.append(now - begun)
            intervals.count(now, done, now - begun)
        except sqlite3.Error as exc:
            errors += 1
            first_error = first_error or f"{type(exc).__name__}: {exc}"
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            now = time.perf_counter()
            intervals.count(now, 0, None)
    if intervals.pending():
        intervals.flush(now)  # the rest of the run, so that the intervals add up to the run
    elapsed = now - started
    effective = {
        name: conn.execute(f"PRAGMA {name}").fetchone() for name, _ in pragmas if _NAME.match(name)
    }
    conn.close()
    latencies.sort()
    committed = len(latencies)
    return {
        "mix": mix,
        "sqlite_version": sqlite3.sqlite_version,
        "run_s": elapsed,
        "transactions": committed,
        "queries": queries,
        "errors": errors,
        "tps": committed / elapsed if elapsed > 0 else 0.0,
        "qps": queries / elapsed if elapsed > 0 else 0.0,
        "latency_avg_ms": 1000.0 * sum(latencies) / committed if committed else 0.0,
        "latency_p95_ms": 1000.0 * _percentile(latencies, 0.95),
        "latency_p99_ms": 1000.0 * _percentile(latencies, 0.99),
        "first_error": first_error,
        "pragmas": {name: (row[0] if row else None) for name, row in effective.items()},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: ``build`` or ``run`` (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build")
    make.add_argument("--db", required=True)
    make.add_argument("--rows", type=int, default=100_000)
    make.add_argument("--seed", type=int, default=0)
    make.add_argument("--page-size", type=int, default=4096)
    make.add_argument("--auto-vacuum", default="NONE")
    bench = sub.add_parser("run")
    bench.add_argument("--db", required=True)
    bench.add_argument("--mix", choices=("readonly", "readwrite"), default="readwrite")
    bench.add_argument("--duration", type=float, default=4.0)
    bench.add_argument("--rows", type=int, default=100_000)
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--pragmas", default="[]", help='JSON list of ["name", "value"] pairs')
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.db, args.rows, args.seed, args.page_size, args.auto_vacuum)
        return 0
    pairs = [(str(name), str(value)) for name, value in json.loads(args.pragmas)]
    result = run(
        args.db, pairs, args.mix, args.duration, args.rows, args.seed, report=print_interval
    )
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
