"""Summarise the committed long real-system sessions in results/long/.

For each exported session (``<name>.csv``, columns ``config.*`` / ``result.*``) it prints the
tests and statuses, the default's metric (trial 0), the best, the improvement, the trial that
found it, and the median of the first and second half of the tests (a simple view of machine
drift). When the session re-measured the default (``session.default_every``; the measurements
are in ``<name>.references.jsonl``) it also prints the median of all default measurements and
the improvement against that median and against the default measurement nearest in time to
the best test, which are the fairer numbers on a drifting machine, and, when the session
confirmed its answer (``session.confirm``), the medians of the alternating re-measurements of
the best and the default. A second table gives each
session's per-test wall time and the machine's load while it ran (the README quotes it).

    python -m paper.long_runs [results/long]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pandas as pd

#: The objective of each long run's system, and whether larger is better.
METRICS = {
    "mysql": ("tpmC", "max"),
    "postgres": ("tpmC", "max"),
    "tomcat": ("requests_per_s", "max"),
    "mapreduce": ("job_duration_s", "min"),
    "spark": ("job_duration_s", "min"),
    "cassandra": ("throughput_ops", "max"),
    "hive": ("duration_s", "min"),
    "hdfs": ("throughput_mb_s", "max"),
}


def _gain(best: float, default: float, direction: str) -> str:
    """Improvement in the paper's sense: throughput ratio - 1, or time saved / time."""
    change = best / default - 1 if direction == "max" else (default - best) / default
    return f"{change * 100:+.1f}%"


def summarise(path: Path) -> str:
    metric, direction = METRICS[path.stem.split("_")[0]]
    table = pd.read_csv(path)
    column = f"result.{metric}"
    ok = table[table["status"] == "SUCCEEDED"]
    default = float(table.loc[table["trial"] == 0, column].iloc[0])
    best_row = ok.loc[ok[column].idxmax() if direction == "max" else ok[column].idxmin()]
    best = float(best_row[column])
    half = len(table) // 2
    first = ok[ok["trial"].between(1, half - 1)][column].median()
    second = ok[ok["trial"] >= half][column].median()
    # (trial after which the default was measured, its metric); the end-of-session
    # confirmation's default runs count too, its runs of the best go to their own column
    measured = [(0, default)]
    confirmed: dict[str, list[float]] = {"best": [], "default": []}
    references = path.with_suffix(".references.jsonl")
    if references.exists():
        for line in references.read_text().splitlines():
            record = json.loads(line)
            if record["status"] != "SUCCEEDED":
                continue
            value = float(record["metrics"][metric])
            role = record["extra"].get("confirm")
            if role in confirmed:
                confirmed[role].append(value)
            if role != "best":
                measured.append((int(record["extra"]["after_trial"]), value))
    defaults = [value for _, value in measured]
    median_default = statistics.median(defaults)
    nearest = min(measured, key=lambda m: abs(m[0] - int(best_row["trial"])))[1]
    if confirmed["best"] and confirmed["default"]:
        again = statistics.median(confirmed["best"])
        base = statistics.median(confirmed["default"])
        confirmation = (
            f"{_gain(again, base, direction)} ({again:,.1f} vs {base:,.1f}, "
            f"{len(confirmed['best'])} runs each)"
        )
    else:
        confirmation = "-"
    spread = f"{min(defaults):,.1f}–{max(defaults):,.1f}" if len(defaults) > 1 else "-"
    return (
        f"| {path.stem} | {metric} ({direction}) | {len(table)} ({len(ok)} ok) | "
        f"{default:,.1f} | {len(defaults)}: median {median_default:,.1f}, {spread} | "
        f"{best:,.1f} | {_gain(best, default, direction)} | "
        f"{_gain(best, median_default, direction)} | "
        f"{_gain(best, nearest, direction)} ({nearest:,.1f}) | {int(best_row['trial'])} | "
        f"{first:,.1f} / {second:,.1f} | {confirmation} |"
    )


def test_times(path: Path, folder: Path) -> str:
    """Per-test wall time (setup + run + teardown) of a session, and the machine's load."""
    table = pd.read_csv(path)
    ok = table[table["status"] == "SUCCEEDED"]["duration_s"]
    system = path.stem.split("_")[0]
    loads = [
        float(record["extra"]["loadavg_1m"])
        for stored in sorted(folder.glob(f"{system}/sessions/*/observations.jsonl"))
        for record in map(json.loads, stored.read_text().splitlines())
        if "loadavg_1m" in record.get("extra", {})
    ]
    load = (
        f"median {statistics.median(loads):.2f}, {min(loads):.2f}–{max(loads):.2f} "
        f"({len(loads)} tests)"
        if loads
        else "not recorded (session predates it)"
    )
    return (
        f"| {path.stem} | {len(ok)} | {ok.median():.1f} s | "
        f"{ok.quantile(0.1):.1f}–{ok.quantile(0.9):.1f} s | {load} |"
    )


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "results/long")
    print(
        "| session | metric | tests | default (trial 0) | default measurements | best | "
        "vs trial 0 | vs median default | vs nearest default | best at trial | "
        "median of tests, 1st / 2nd half | confirmed (median best vs default, alternating) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(folder.glob("*.csv")):
        print(summarise(path))
    print(
        "\nPer-test wall time of the succeeded tests (setup, workload and teardown), and the "
        "1-minute load average as each test's run ended (2 cores: above ~2 the machine was "
        "shared):\n"
    )
    print("| session | tests | median | 10th–90th percentile | load average |")
    print("|---|---|---|---|---|")
    for path in sorted(folder.glob("*.csv")):
        print(test_times(path, folder))


if __name__ == "__main__":
    main()
