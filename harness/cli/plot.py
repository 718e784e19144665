"""``python -m harness.cli.plot <session folder> [--out DIR] [--optuna STORAGE]``.

Three plots of any tuner's session, from its stored tests (read as data, never run):
convergence (each test's value and the best so far, against the test number, the default
dashed), knob importance, and parallel coordinates (one line per successful test, coloured by
its value). PNGs are written with matplotlib's headless Agg backend into ``--out`` (default:
``<session>/plots``). ``--optuna`` also writes the session as an Optuna study (a journal file
``*.log`` or a database URL) for Optuna's own importance, plots and ``optuna-dashboard``.

Knob importance here is each knob's correlation ratio (eta squared): the share of the variance
of the tests' values explained by the knob alone (numbers grouped into quantile bins). It needs
no model and reads sessions of a handful of tests; interactions between knobs are Optuna's
(fANOVA) through the export. The plotting functions take a DataFrame
(:func:`harness.session.results.observations_frame`) and return a Figure.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.install import install_command
from harness.session.results import load_result, observations_frame

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "convergence_figure",
    "importance_figure",
    "knob_importance",
    "main",
    "parallel_figure",
    "plot_session",
]

#: Numeric knobs are grouped into at most this many quantile bins for their importance.
IMPORTANCE_BINS = 5


def _succeeded(tests: pd.DataFrame) -> pd.DataFrame:
    return tests[(tests["status"] == "SUCCEEDED") & tests["value"].notna()]


def _knobs(tests: pd.DataFrame) -> list[str]:
    return [c for c in tests.columns if c.startswith("config.")]


def convergence_figure(tests: pd.DataFrame, label: str = "value") -> Figure:
    """Each successful test's value, the best so far as a step line, the default dashed;
    tests without a measurement (failed, stopped early) as ticks on the lower edge."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4), layout="constrained")
    axes = figure.subplots()
    ok = _succeeded(tests)
    axes.scatter(ok["trial"], ok["value"], s=14, color="0.55", label="test", zorder=2)
    axes.step(tests["trial"], tests["best_so_far"], where="post", color="C0", label="best so far")
    default = ok[ok["is_default"]]
    if not default.empty:
        axes.axhline(default["value"].iloc[0], color="C1", ls="--", lw=1, label="default")
    failed = tests[tests["status"] != "SUCCEEDED"]
    if not failed.empty:
        axes.plot(failed["trial"], [0] * len(failed), "|", color="C3", ms=12,
                  transform=axes.get_xaxis_transform(), label="no measurement")  # fmt: skip
    axes.set(xlabel="test", ylabel=label, title="convergence")
    axes.legend(loc="best", fontsize="small")
    return figure


def knob_importance(tests: pd.DataFrame) -> pd.Series:
    """Each knob's correlation ratio (eta squared, 0..1) for the successful tests' values,
    largest first; 0 for a knob that never changed."""
    import pandas as pd

    ok = _succeeded(tests)
    values = ok["value"].astype(float)
    total = float(((values - values.mean()) ** 2).sum())
    shares = {}
    for column in _knobs(ok):
        groups = _groups(ok[column])
        explained = sum(
            len(part) * (part.mean() - values.mean()) ** 2 for _, part in values.groupby(groups)
        )
        shares[column.removeprefix("config.")] = float(explained / total) if total > 0 else 0.0
    return pd.Series(shares, dtype=float).sort_values(ascending=False)


def _groups(column: pd.Series) -> pd.Series:
    """A knob's values as groups: categories as they are, numbers in quantile bins."""
    import pandas as pd

    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    if not numeric or column.nunique() <= IMPORTANCE_BINS:
        return column.astype(str)
    return pd.qcut(column.astype(float), IMPORTANCE_BINS, duplicates="drop").astype(str)


def importance_figure(importance: pd.Series) -> Figure:
    """Horizontal bars, the most important knob on top."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 0.8 + 0.3 * max(len(importance), 1)), layout="constrained")
    axes = figure.subplots()
    shown = importance.iloc[::-1]
    axes.barh(list(shown.index), list(shown.values), color="C0")
    axes.set(xlim=(0, 1), xlabel="share of the value's variance explained by the knob alone")
    axes.set_title("knob importance (correlation ratio)")
    return figure


def _scaled(column: pd.Series) -> pd.Series:
    """A knob on [0, 1]: numbers min-max, categories by their sorted position."""
    import pandas as pd

    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        values = column.astype(float)
    else:
        order = {v: i for i, v in enumerate(sorted(column.astype(str).unique()))}
        values = column.astype(str).map(order).astype(float)
    span = values.max() - values.min()
    return (values - values.min()) / span if span > 0 else values * 0 + 0.5


def parallel_figure(tests: pd.DataFrame, label: str = "value") -> Figure:
    """One line per successful test across the knobs (each scaled to [0, 1]) and the value,
    coloured by the value; the best test drawn thick."""
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    ok = _succeeded(tests)
    knobs = _knobs(ok)
    names = [k.removeprefix("config.") for k in knobs] + [label]
    figure = Figure(figsize=(max(7, 0.9 * len(names)), 4.5), layout="constrained")
    axes = figure.subplots()
    if ok.empty:
        axes.set_title("parallel coordinates: no successful test")
        return figure
    table = [_scaled(ok[k]) for k in knobs] + [_scaled(ok["value"])]
    norm = Normalize(float(ok["value"].min()), float(ok["value"].max()))
    cmap = colormaps["viridis"]
    best = ok["value"].eq(ok["best_so_far"].iloc[-1])
    for row, (value, is_best) in enumerate(zip(ok["value"], best, strict=True)):
        ys = [column.iloc[row] for column in table]
        axes.plot(range(len(names)), ys, color=cmap(norm(value)), lw=2.5 if is_best else 0.8,
                  alpha=1.0 if is_best else 0.6)  # fmt: skip
    axes.set_xticks(range(len(names)), names, rotation=30, ha="right")
    axes.set(ylim=(-0.03, 1.03), ylabel="scaled (min..max tested)", title="parallel coordinates")
    figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=axes, label=label)
    return figure


def plot_session(folder: str | Path, out: str | Path | None = None) -> list[Path]:
    """The session's three PNGs in ``out`` (default ``<folder>/plots``); their paths."""
    result = load_result(folder)
    tests = observations_frame(result.observations, result.objective)
    label = f"{result.objective.metric} ({result.objective.direction})"
    target = Path(out) if out is not None else result.directory / "plots"
    target.mkdir(parents=True, exist_ok=True)
    figures = {
        "convergence.png": convergence_figure(tests, label),
        "importance.png": importance_figure(knob_importance(tests)),
        "parallel.png": parallel_figure(tests, label),
    }
    written = []
    for name, figure in figures.items():
        figure.savefig(target / name, dpi=120)  # a Figure of its own: Agg, no pyplot state
        written.append(target / name)
    return written


def _has_matplotlib() -> bool:
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except ImportError:  # a finder that refuses it, as a missing package does
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Draw a session's plots (and export its Optuna study); 2 on bad input."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.cli.plot",
        description="Convergence, knob importance and parallel coordinates of a session.",
    )
    parser.add_argument("session", type=Path, help="a session folder (results/sessions/<id>)")
    parser.add_argument("--out", type=Path, help="folder for the PNGs (default <session>/plots)")
    parser.add_argument(
        "--optuna",
        metavar="STORAGE",
        help="also write an Optuna study: study.log or sqlite:///x.db",
    )
    args = parser.parse_args(argv)
    if not _has_matplotlib():
        print(f"error: plots need matplotlib: {install_command('plot')}", file=sys.stderr)
        return 2
    try:
        for path in plot_session(args.session, args.out):
            print(path)
        if args.optuna:
            from harness.session.optuna_export import to_optuna_study

            study = to_optuna_study(args.session, args.optuna)
            print(f"Optuna study {study.study_name!r} in {args.optuna}")
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
