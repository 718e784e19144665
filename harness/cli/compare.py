"""``python -m harness.cli.compare <sweep folder | results folder | session folders...>``.

One table of finished sessions (tuner, seed, best, improvement over the default, confirmed
improvement, tests, failed), and each tuner's means when a tuner ran several seeds. A sweep
ends with the same table (:func:`harness.cli.sweep_outcome.report`), so comparing tuners needs
neither the MLflow UI nor hand-written pandas; :func:`harness.api.sessions` gives the table as
a DataFrame for more.

A sweep's folder (Hydra's ``multirun/...``) names its sessions in each job's outcome file; any
other folder is searched for session folders. Everything is read as data, never run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli.report import format_value
from harness.errors import HarnessError
from harness.session.results import find_sessions, sessions_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["comparison", "main", "sessions_of"]

#: Written by each sweep job next to its Hydra output (:data:`sweep_outcome.OUTCOME_FILE`).
_OUTCOME_FILE = "harness_outcome.json"
_SHOWN = ("tuner", "seed", "best", "improvement", "confirmed", "tests", "failed")


def sessions_of(paths: Sequence[str | Path]) -> list[Path]:
    """The session folders of sweep folders (their jobs' sessions, in job order), results
    folders or session folders."""
    found: list[Path] = []
    for path in map(Path, paths):
        named = _sessions_named_by_jobs(path)
        found += named if named else find_sessions([path])
    return list(dict.fromkeys(found))


def _sessions_named_by_jobs(folder: Path) -> list[Path]:
    """The sessions a sweep's job outcomes name (that still exist), ordered by job."""
    jobs: dict[int, Path] = {}
    for outcome_path in folder.rglob(_OUTCOME_FILE) if folder.is_dir() else ():
        try:
            outcome = json.loads(outcome_path.read_text())
            session = Path(str(outcome["session"]))
            jobs[int(outcome["job"])] = session
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a job that never reached its session names none
    return [jobs[n] for n in sorted(jobs) if (jobs[n] / "session.json").is_file()]


def _percent(value: object) -> str:
    return "n/a" if not isinstance(value, float) or value != value else f"{value * 100:+.1f}%"


def _number(value: object) -> str:
    return format_value(value) if isinstance(value, float) and value == value else "n/a"


def _rows(frame: pd.DataFrame, labels: list[str]) -> list[list[str]]:
    return [
        [
            *(str(row[key]) for key in labels),
            str(row["tuner"]),
            str(row["seed"]),
            _number(row["best"]),
            _percent(row["improvement"]),
            _percent(row["confirmed_improvement"]),
            str(row["tests"]),
            str(row["failed"]),
        ]
        for _, row in frame.iterrows()
    ]


def _aligned(header: list[str], rows: list[list[str]], numbers: int) -> list[str]:
    """Columns padded to their widest cell: text left, the last ``numbers`` columns right."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    numeric = [i >= len(header) - numbers for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = [
            cell.rjust(w) if right else cell.ljust(w)
            for cell, w, right in zip(cells, widths, numeric, strict=True)
        ]
        return "  ".join(padded).rstrip()

    return [line(header), *(line(row) for row in rows)]


def _varying_labels(frame: pd.DataFrame) -> list[str]:
    """system/workload columns, only when the sessions differ in them."""
    return [key for key in ("system", "workload") if frame[key].nunique(dropna=False) > 1]


def _means(frame: pd.DataFrame, labels: list[str]) -> list[str]:
    """Each tuner's mean over its seeds, when some tuner ran more than one."""
    groups = frame.groupby([*labels, "tuner"], sort=True, dropna=False)
    if groups.size().max() < 2:
        return []
    header = [*labels, "tuner", "seeds", "mean best", "mean impr.", "mean confirmed"]
    rows = [
        [
            *(str(k) for k in (keys if isinstance(keys, tuple) else (keys,))),
            str(len(group)),
            _number(float(group["best"].astype(float).mean())),
            _percent(float(group["improvement"].astype(float).mean())),
            _percent(float(group["confirmed_improvement"].astype(float).mean())),
        ]
        for keys, group in groups
    ]
    return ["", "means over seeds:", *_aligned(header, rows, numbers=4)]


def comparison(frame: pd.DataFrame) -> str:
    """The comparison table of a :func:`harness.session.results.sessions_frame`."""
    if frame.empty:
        return "no finished session to compare"
    labels = _varying_labels(frame)
    objectives = frame["objective"].dropna().unique()
    header = [*labels, *_SHOWN]
    lines = _aligned(header, _rows(frame, labels), numbers=5)
    title = f"comparison ({', '.join(map(str, objectives))}; improvement over the default):"
    return "\n".join([title, *lines, *_means(frame, labels)])


def main(argv: Sequence[str] | None = None) -> int:
    """Print the comparison of the sessions named on the command line; 2 on bad input."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.cli.compare",
        description="Compare finished sessions: a sweep's folder, a results folder, or "
        "session folders.",
    )
    parser.add_argument("folders", nargs="+", help="sweep, results or session folders")
    parser.add_argument("--csv", type=Path, help="also write the sessions table to this file")
    args = parser.parse_args(argv)
    try:
        frame = sessions_frame(sessions_of(args.folders))
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(comparison(frame))
    if args.csv is not None:
        frame.to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
