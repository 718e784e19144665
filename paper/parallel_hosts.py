"""Tests per hour with 1, 2 and 4 SUT hosts (``session.parallel``), side by side in one run.

Starts a testbed of network-namespace hosts (tests/helpers/testbed.py; needs root), and on it, for
each pool size n and each round, one real PostgreSQL/pgbench session with ``session.parallel=n``
over the first n hosts. Rounds interleave the pool sizes (1, 2, 4, 1, 2, 4, ...) so that the
machine's drift hits every size alike. Per session it reports:

* tests/hour after the default: (budget − 1) tests from the end of the default (which runs
  alone) to the end of the last test;
* the median pgbench throughput (tps) of the tests, because hosts that share this machine's
  cores slow each other down: a metric measured beside other tests is not the metric measured
  alone, and a pool is only as fair as its hosts are separate.

    python -m paper.parallel_hosts --hosts 1 2 4 --rounds 2 --budget 13 \
        --out results/parallel/README.md
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf, open_dict

from harness import api
from tests.helpers import testbed  # the namespace hosts; run from the repository root (needs root)


def _session(
    everything: dict[str, Any], results: Path, n: int, budget: int, duration: float, name: str
) -> dict[str, float]:
    """One session on the first ``n`` hosts; its timings and median throughput."""
    inventory = dict(everything)
    inventory["hosts"] = everything["hosts"][:n]
    inventory["name"] = f"pool{n}"
    cfg = api.compose(
        [
            "system=postgres",
            "workload=pgbench",
            f"workload.duration_s={duration:g}",
            "tuner=lhs",
            f"budget={budget}",
            f"session.parallel={n}",
            "session.progress=false",
            "session.confirm=0",
            "tracking=none",
            f"session.name={name}",
            f"results_dir={results}",
        ]
    )
    with open_dict(cfg):
        cfg.hosts = OmegaConf.merge(cfg.hosts, inventory)
    finished: list[float] = []
    started = time.perf_counter()
    session = api.prepare(cfg)
    result = api.run(session, on_progress=lambda obs, best: finished.append(time.perf_counter()))
    if result.status != "FINISHED":
        raise SystemExit(f"pool of {n}: the session ended {result.status}: {result.message}")
    after_default = finished[-1] - finished[0]
    tps = [o.metrics["tps"] for o in result.observations[1:] if o.ok]
    return {
        "n": n,
        "tests_per_hour": (budget - 1) / after_default * 3600,
        "after_default_s": after_default,
        "session_s": time.perf_counter() - started,
        "median_tps": statistics.median(tps) if tps else float("nan"),
        "failed": sum(not o.ok for o in result.observations),
    }


def _table(rows: list[dict[str, float]], sizes: list[int]) -> str:
    base = statistics.median(r["tests_per_hour"] for r in rows if r["n"] == sizes[0])
    base_tps = statistics.median(r["median_tps"] for r in rows if r["n"] == sizes[0])
    lines = [
        "| hosts | tests/hour (median of rounds) | × one host | median tps of a test "
        "| tps vs one host | rounds (tests/hour) | failed tests |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        mine = [r for r in rows if r["n"] == n]
        rate = statistics.median(r["tests_per_hour"] for r in mine)
        tps = statistics.median(r["median_tps"] for r in mine)
        each = ", ".join(f"{r['tests_per_hour']:.0f}" for r in mine)
        lines.append(
            f"| {n} | {rate:.0f} | {rate / base:.2f} | {tps:.0f} | {tps / base_tps:.2f} | {each} "
            f"| {sum(int(r['failed']) for r in mine)} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.parallel_hosts", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--hosts", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=int, default=13, help="tests per session (default 13)")
    parser.add_argument("--duration", type=float, default=4.0, help="pgbench seconds per test")
    parser.add_argument("--out", type=Path, help="also write the report here (markdown)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the testbed needs root (network namespaces and sshd)")
    folder = Path(tempfile.mkdtemp(prefix="harness-bench-parallel-", dir="/tmp"))
    bed = testbed.start(max(args.hosts), folder)
    print(f"testbed: {bed.mode}, hosts {[h.address for h in bed.hosts]}", flush=True)
    rows: list[dict[str, float]] = []
    try:
        inventory: dict[str, Any] = bed.inventory("all")
        inventory["common"] = {"connect_timeout_s": 5}
        for round_ in range(args.rounds):
            for n in args.hosts:
                row = _session(
                    inventory, folder / "results", n, args.budget, args.duration, f"r{round_}-n{n}"
                )
                rows.append(row)
                print(
                    f"round {round_ + 1}, {n} host(s): {row['tests_per_hour']:.0f} tests/hour, "
                    f"median tps {row['median_tps']:.0f}, session {row['session_s']:.0f} s",
                    flush=True,
                )
    finally:
        left = bed.down()
        shutil.rmtree(folder, ignore_errors=True)
        if left:
            print(f"testbed teardown left: {left}", file=sys.stderr)
    command = "python -m paper.parallel_hosts " + " ".join(sys.argv[1:])
    report = (
        f"Command: `{command}`\n\nPostgreSQL + pgbench ({args.duration:g} s per test, "
        f"budget {args.budget}, tuner lhs) on {bed.mode} test hosts of this "
        f"{os.cpu_count()}-core machine, {args.rounds} round(s) interleaving the pool sizes.\n\n"
        + _table(rows, args.hosts)
        + "\n"
    )
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
