"""Summarise the committed long real-system sessions in results/long/*.csv.

Prints, per session: tests and statuses, the default's objective, the best, the improvement,
the trial that found it, and the median of the first and second half of the tests (a simple
view of machine drift during the run).

    python scripts/summarize_long_runs.py [results/long]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def summarise(path: Path, metric: str) -> str:
    table = pd.read_csv(path)
    ok = table[table["status"] == "SUCCEEDED"]
    default = float(table.loc[table["trial"] == 0, f"result.{metric}"].iloc[0])
    best_row = ok.loc[ok[f"result.{metric}"].idxmax()]
    best = float(best_row[f"result.{metric}"])
    half = len(table) // 2
    first = table[f"result.{metric}"].iloc[1:half].median()
    second = table[f"result.{metric}"].iloc[half:].median()
    return (f"| {path.stem} | {len(table)} ({len(ok)} ok) | {default:,.0f} | {best:,.0f} | "
            f"{(best / default - 1) * 100:+.1f}% | {int(best_row['trial'])} | "
            f"{first:,.0f} / {second:,.0f} |")


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "results/long")
    print("| session | tests | default tpmC | best tpmC | improvement | best at trial "
          "| median tpmC, 1st / 2nd half |")
    print("|---|---|---|---|---|---|---|")
    for path in sorted(folder.glob("*.csv")):
        print(summarise(path, "tpmC"))


if __name__ == "__main__":
    main()
