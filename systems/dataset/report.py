"""The backend and fidelity table of the built-in recorded-data systems (and of other tables).

Usage (from the repository root; fitted models are cached in results/cache/surrogates):

    python -m systems.dataset.report                 # print the table of the built-ins
    python -m systems.dataset.report --readme        # also replace it in systems/dataset/README.md
    python -m systems.dataset.report --table T.csv   # add a table of your own (repeatable)

For each data set: rows, knobs (of which discrete), coverage of the discrete space, the
held-out fidelity of both backends (forest and nearest recorded neighbour), the backend the
data chooses and why, the measured noise and the best-known optimum with its source.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from systems.dataset.builtin import builtin_names, load_builtin
from systems.dataset.model import load_or_fit
from systems.dataset.system import DatasetSystem

README = Path(__file__).with_name("README.md")
BEGIN, END = "<!-- backends:begin -->", "<!-- backends:end -->"

HEADER = (
    "| data set | rows (failed) | knobs (discrete) | coverage | forest R² / τ "
    "| neighbour R² / τ | backend | why | noise | best known |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def row(label: str, system: DatasetSystem) -> str:
    """One line of the table for a built system."""
    data = system.dataset
    forest = system.choice.surrogate
    if forest is None:  # the data chose without the forest: fit it for the table only
        model, _ = load_or_fit(
            data.points, data.values, data.failed, system.direction, system.settings, None
        )
        forest = model.fidelity
    near = system.choice.recorded
    discrete = sum(k.type in ("enum", "bool") for k in system.space.knobs)
    cover = "-" if system.choice.coverage is None else f"{system.choice.coverage:.2f}"
    _, value = system.known_optimum()
    noise = f"{system.noise_measured.sd:.3g}" if system.noise_measured else "not measured"
    return (
        f"| {label} | {len(data.configs)} ({int(data.failed.sum())}) | {system.space.dim} "
        f"({discrete}) | {cover} | {forest.r2:.2f} / {forest.tau:.2f} | {near.r2:.2f} / "
        f"{near.tau:.2f} | **{system.backend}** | {system.choice.reason} | {noise} | "
        f"{value:.6g} ({system.optimum_source.split(' (')[0].split(':')[0]}) |"
    )


def table(extra: list[str]) -> str:
    lines = [HEADER]
    for name in builtin_names():
        system, _ = load_builtin(name)
        lines.append(row(name, system))
    for path in extra:
        system = DatasetSystem(path, None, allow_poor_fidelity=True)
        lines.append(row(f"{Path(path).name} (`dataset.path`)", system))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m systems.dataset.report", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--readme", action="store_true", help=f"update {README}")
    parser.add_argument("--table", action="append", default=[], help="another table (CSV/ARFF)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    text = table(args.table)
    print(text)
    if args.readme:
        readme = README.read_text()
        start, stop = readme.index(BEGIN) + len(BEGIN), readme.index(END)
        README.write_text(readme[:start] + "\n" + text + "\n" + readme[stop:])
        print(f"updated {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
