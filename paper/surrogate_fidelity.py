"""Held-out fidelity of every built-in surrogate, as a Markdown table.

Usage (from the repository root; fitted models are cached in results/cache/surrogates):
    python -m paper.surrogate_fidelity            # print the table
    python -m paper.surrogate_fidelity --readme   # also replace it in systems/dataset/README.md

Numbers are those the surrogate computes when it is built (systems/dataset/model.py): seeded
4-fold cross-validation, each fold holding out 25% of the successful rows; R², Kendall τ and
top-10% recall on the pooled held-out predictions.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from systems.dataset.builtin import builtin_names, load_builtin

README = Path(__file__).resolve().parents[1] / "systems" / "dataset" / "README.md"
BEGIN, END = "<!-- fidelity:begin -->", "<!-- fidelity:end -->"


def table() -> str:
    lines = [
        "| surrogate | rows (failed) | knobs | target | R² | Kendall τ | top-10% recall "
        "| failure model bal. acc. | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in builtin_names():
        system, _ = load_builtin(name)
        fid = system.fidelity
        data = system.dataset
        verdict = "ok" if not system.problems else "POOR: " + "; ".join(system.problems)
        if fid.tau < 0.1:
            verdict = "USELESS (allow_poor_fidelity)"
        balanced = (
            "-"
            if fid.failure_balanced_accuracy is None
            else f"{fid.failure_balanced_accuracy:.2f}"
        )
        lines.append(
            f"| {name} | {len(data.configs)} ({int(data.failed.sum())}) | {system.space.dim} | "
            f"{system.target} ({system.direction}) | {fid.r2:.2f} | {fid.tau:.2f} | "
            f"{fid.topk_recall:.2f} (k={fid.top_k}) | {balanced} | {verdict} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.surrogate_fidelity", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--readme", action="store_true", help=f"update {README}")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    text = table()
    print(text)
    if args.readme:
        readme = README.read_text()
        start, stop = readme.index(BEGIN) + len(BEGIN), readme.index(END)
        README.write_text(readme[:start] + "\n" + text + "\n" + readme[stop:])
        print(f"updated {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
