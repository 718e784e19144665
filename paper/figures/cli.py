"""``python -m paper.figures <name>... | all``: rebuild the paper's figures.

For each figure: read the runs of its recipe from the MLflow store (``--tracking-uri``), derive
its tidy table(s), write them to ``<out>/data/<table>.csv`` and the figure to
``<out>/<name>.png``. With ``--from-data``, or when the store has no runs for a figure, the
tables are read from ``--data`` instead (by default ``<out>/data``, or the committed
``results/figures/data`` when ``<out>`` has none), so a fresh clone redraws every figure into
any folder without rerunning. A redraw from tables writes only the PNGs: no table, and no
MLflow store (a store that does not exist is not opened, since opening one creates it).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from paper.figures import analysis, plots, tables
from paper.figures.loader import NoRunsError, load_pools, load_sessions
from paper.figures.plot_real import fig6_figure, fig7_figure, fig10a_figure
from paper.figures.plot_subspaces import fig8_subspaces
from paper.figures.units import ROOT
from paper.real_figures import FIGURES as REAL_FIGURES
from paper.real_panel import session_table

__all__ = ["COMMITTED", "FIGURES", "FigureSpec", "data_folder", "main", "make_figure"]

log = logging.getLogger(__name__)
DEFAULT_URI = "sqlite:///results/experiments/mlflow.db"
#: the committed figures and their tables (a fresh clone redraws from these)
COMMITTED = ROOT / "results" / "figures"
Tables = dict[str, pd.DataFrame]


@dataclass(frozen=True)
class FigureSpec:
    """How to derive one figure's tables from a store and draw them."""

    recipe: str  # paper/conf/experiment/<recipe>.yaml
    tables: tuple[str, ...]  # CSV names; the first is required
    compute: Callable[[str], Tables]
    draw: Callable[[Tables], Figure]
    #: tables read from committed session folders whatever the store (the real systems' panels
    #: of Fig. 6, 7 and 10(a): paper.real_queue's sessions, results/real/), added to the
    #: computed ones
    committed: Callable[[], Tables] | None = None

    @property
    def command(self) -> str:
        return f"python -m harness -m +experiment={self.recipe}"


def _sessions(uri: str, experiment: str) -> pd.DataFrame:
    df = load_sessions(uri, experiment)
    if df.empty:
        raise NoRunsError(f"no finished sessions in experiment {experiment!r} of {uri}")
    return df


def _pools(uri: str) -> pd.DataFrame:
    pools = load_pools(uri, "pools")
    if pools.empty:
        raise NoRunsError(f"no LHS sample pools (experiment 'pools') in {uri}")
    return pools


def _fig6(uri: str) -> Tables:
    cols = [
        "system",
        "system_kind",
        "tuner",
        "seed",
        "default_value",
        "best_value",
        "improvement",
        "tests",
    ]
    # a seed rerun replaces the earlier session (search_runs lists the newest first)
    runs = _sessions(uri, "fig6").drop_duplicates(["system", "tuner", "seed"])
    return {"fig6": runs[cols]}


def _real(figure: str) -> Callable[[], Tables]:
    """A figure's real systems' panel: its queue's finished sessions (paper.real_queue,
    ``results/real/<figure>/``), not MLflow; none until one has finished."""

    def sessions() -> Tables:
        real = session_table(ROOT / REAL_FIGURES[figure].results_dir)
        return {} if real.empty else {f"{figure}_real": real}

    return sessions


def _fig10b(uri: str) -> Tables:
    return {
        "fig10b": _sessions(uri, "fig10b")[
            ["system", "system_kind", "tuner", "seed", "tuner_seconds_total", "improvement"]
        ]
    }


def _fig5(uri: str) -> Tables:
    from classytune.classifiers import CLASSIFIERS

    return {"fig5": analysis.winners_recognised(_pools(uri), CLASSIFIERS, regressor=True)}


def _fig9(uri: str) -> Tables:
    share = analysis.winners_recognised(
        _pools(uri), ("xgboost",), ("zorder", "difference", "concat")
    )
    tables = {"fig9a": share}
    runs = load_sessions(uri, "fig9")
    if not runs.empty and "tuner.induction" in runs.columns:
        tables["fig9b"] = runs.rename(columns={"tuner.induction": "induction"})[
            ["system", "system_kind", "induction", "seed", "improvement"]
        ]
    return tables


def _fig2(uri: str) -> Tables:
    pools = _pools(uri)
    return {"fig2a": analysis.regression_errors(pools), "fig2b": analysis.error_vs_samples(pools)}


FIGURES: dict[str, FigureSpec] = {
    "fig1": FigureSpec(
        "fig1", ("fig1",), tables.fig1_tables, lambda t: plots.fig1_sweep(t["fig1"])
    ),
    "fig2": FigureSpec(
        "fig2", ("fig2a", "fig2b"), _fig2, lambda t: plots.fig2_errors(t["fig2a"], t.get("fig2b"))
    ),
    "fig3": FigureSpec(
        "fig3",
        ("fig3", "fig3_curves"),
        tables.fig3_tables,
        lambda t: plots.fig3_initial(t["fig3"], t.get("fig3_curves")),
    ),
    "fig5": FigureSpec("fig5", ("fig5",), _fig5, lambda t: plots.fig5_classifiers(t["fig5"])),
    "fig6": FigureSpec(
        "fig6",
        ("fig6",),
        _fig6,
        lambda t: fig6_figure(t["fig6"], t.get("fig6_real")),
        committed=_real("fig6"),
    ),
    "fig7": FigureSpec(
        "fig7",
        ("fig7",),
        tables.fig7_tables,
        lambda t: fig7_figure(t["fig7"], t.get("fig7_real")),
        committed=_real("fig7"),
    ),
    "fig8": FigureSpec(
        "fig8",
        ("fig8", "fig8_subspaces"),
        tables.fig8_tables,
        lambda t: fig8_subspaces(t["fig8"], t["fig8_subspaces"]),
    ),
    "fig9": FigureSpec(
        "fig9",
        ("fig9a", "fig9b"),
        _fig9,
        lambda t: plots.fig9_induction(t["fig9a"], t.get("fig9b")),
    ),
    "fig10a": FigureSpec(
        "fig10a",
        ("fig10a",),
        tables.fig10a_tables,
        lambda t: fig10a_figure(t["fig10a"], t.get("fig10a_real")),
        committed=_real("fig10a"),
    ),
    "fig10b": FigureSpec("fig10b", ("fig10b",), _fig10b, lambda t: plots.fig10b_time(t["fig10b"])),
}


def _read_data(spec: FigureSpec, data_dir: Path) -> Tables:
    tables = {
        name: pd.read_csv(data_dir / f"{name}.csv")
        for name in spec.tables
        if (data_dir / f"{name}.csv").exists()
    }
    if spec.tables[0] not in tables:
        raise NoRunsError(f"no {data_dir / (spec.tables[0] + '.csv')} either")
    return tables


#: the columns that name one session in a figure's table (``--merge`` replaces by them)
SESSION_KEY = ("system", "tuner", "seed")


def merged(new: pd.DataFrame, old_csv: Path) -> pd.DataFrame:
    """``new`` rows, plus the committed rows of every session ``new`` does not have."""
    if not old_csv.exists() or not set(SESSION_KEY) <= set(new.columns):
        return new
    old = pd.read_csv(old_csv)
    if not set(SESSION_KEY) <= set(old.columns):
        return new
    fresh = set(map(tuple, new[list(SESSION_KEY)].astype(str).to_numpy()))
    kept = old[[k not in fresh for k in map(tuple, old[list(SESSION_KEY)].astype(str).to_numpy())]]
    return pd.concat([kept, new], ignore_index=True)


def data_folder(out: Path) -> Path:
    """Where a redraw into ``out`` reads its tables: ``<out>/data`` when it exists, else the
    committed ones."""
    return out / "data" if (out / "data").is_dir() else COMMITTED / "data"


def _tables(
    spec: FigureSpec, name: str, uri: str, data_dir: Path, from_data: bool
) -> tuple[Tables, bool]:
    """The figure's tables from the store, else (or with ``from_data``) from ``data_dir``,
    and whether they came from the store."""
    try:
        if from_data:
            return _read_data(spec, data_dir), False
        try:
            return spec.compute(uri), True
        except NoRunsError as exc:
            log.info("%s: %s; drawn from %s", name, exc, data_dir)
            return _read_data(spec, data_dir), False
    except NoRunsError as exc:
        raise NoRunsError(
            f"{name}: {exc}; produce the runs with `{spec.command}` "
            f"(paper/conf/experiment/{spec.recipe}.yaml)"
        ) from None


def _export(tables: Tables, out_data: Path, old_data: Path, merge: bool) -> None:
    """Write the tables computed from the store to ``out_data`` (``merge``: keeping the rows
    of ``old_data``'s sessions the store lacks)."""
    out_data.mkdir(parents=True, exist_ok=True)
    for table, df in list(tables.items()):
        if merge:
            tables[table] = df = merged(df, old_data / f"{table}.csv")
        df.to_csv(out_data / f"{table}.csv", index=False)


def make_figure(
    name: str,
    uri: str,
    out: Path,
    from_data: bool = False,
    merge: bool = False,
    data: Path | None = None,
) -> Path:
    """Build one figure; return the PNG path. Raises NoRunsError with the recipe to run.

    ``data``: the folder of tables to redraw from (default :func:`data_folder`). ``merge``:
    the store's sessions replace the committed table's rows of the same (system, tuner, seed)
    and the other committed rows stay (a figure grown over several days)."""
    spec = FIGURES[name]
    data_dir = data if data is not None else data_folder(out)
    tables, from_store = _tables(spec, name, uri, data_dir, from_data)
    if from_store:
        _export(tables, out / "data", data_dir, merge)
    if spec.committed is not None:
        tables.update(spec.committed())
    path = out / f"{name}.png"
    out.mkdir(parents=True, exist_ok=True)
    spec.draw(tables).savefig(path, dpi=120)
    log.info("%s: wrote %s from %s", name, path, uri if from_store else data_dir)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paper.figures", description=__doc__)
    parser.add_argument("names", nargs="+", help=f"'all' or some of {', '.join(FIGURES)}")
    parser.add_argument("--tracking-uri", default=DEFAULT_URI)
    parser.add_argument(
        "--out", type=Path, default=COMMITTED, help="folder of the PNGs (default: %(default)s)"
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder of the tables to redraw from (default: <out>/data if it exists, else "
        "the committed results/figures/data)",
    )
    parser.add_argument(
        "--from-data",
        action="store_true",
        help="redraw from the tables without reading the store; writes only the PNGs",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the committed rows of sessions the store does not have (by system, tuner, "
        "seed); the store's sessions replace theirs",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    names = list(FIGURES) if "all" in args.names else args.names
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        print(
            f"error: unknown figure(s) {unknown}; choose from {', '.join(FIGURES)} or all",
            file=sys.stderr,
        )
        return 2
    failed = 0
    for name in names:
        try:
            path = make_figure(
                name, args.tracking_uri, args.out, args.from_data, args.merge, args.data
            )
            print(path)
        except NoRunsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0
