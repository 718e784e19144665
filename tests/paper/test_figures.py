"""Figures: pure plotting functions on hand-made DataFrames, the pool analysis, and the loader
+ CLI on a tiny real MLflow store written by a 5-test session."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Polygon, Rectangle
from omegaconf import DictConfig

from paper.conf import EXPERIMENT_DIR
from paper.figures import analysis, plots
from paper.figures.cli import main, make_figure
from paper.figures.loader import NoRunsError, load_pools, load_sessions
from paper.figures.plot_subspaces import fig8_subspaces

ROOT = Path(__file__).resolve().parents[2]


def _sessions() -> pd.DataFrame:
    rows = [
        {
            "system": s,
            "tuner": t,
            "seed": k,
            "improvement": imp + 0.01 * k,
            "tuner_seconds_total": 10.0 * (1 + k),
        }
        for s in ("synthetic10", "surrogate_tomcat")
        for t, imp in (("classytune", 0.7), ("bestconfig", 0.5), ("gpbo", 0.4))
        for k in range(3)
    ]
    return pd.DataFrame(rows)


def test_fig6_bars_show_seed_means() -> None:
    fig = plots.fig6_improvement(_sessions())
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    heights = sorted(round(p.get_height(), 3) for p in ax.patches if isinstance(p, Rectangle))
    # 2 systems x 3 tuners, mean over seeds 0..2 of (imp + 0.01 k) in percent
    assert heights == [41.0, 41.0, 51.0, 51.0, 71.0, 71.0]
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["classytune", "bestconfig", "gpbo"]


def test_fig10b_and_missing_columns() -> None:
    fig = plots.fig10b_time(_sessions())
    assert len(fig.axes[0].patches) == 6
    with pytest.raises(ValueError, match="tuner_seconds_total"):
        plots.fig10b_time(_sessions().drop(columns="tuner_seconds_total"))
    with pytest.raises(ValueError, match="no rows"):
        plots.fig6_improvement(_sessions().iloc[:0])


def test_fig5_fig9_fig2_panels() -> None:
    share = pd.DataFrame(
        {
            "system": ["a", "a", "b", "b"],
            "model": ["xgboost", "svm"] * 2,
            "induction": ["zorder", "concat"] * 2,
            "share": [0.9, 0.1, 1, 0],
        }
    )
    assert len(plots.fig5_classifiers(share).axes[0].patches) == 4
    assert len(plots.fig9_induction(share).axes) == 1
    runs = share.assign(improvement=[0.5, 0.2, 0.3, 0.1])
    assert len(plots.fig9_induction(share, runs).axes) == 2
    err = pd.DataFrame(
        {
            "system": ["a", "a"],
            "model": ["rfr", "svr"],
            "n_train": [50, 100],
            "max_rel_error": [1.5, 0.5],
        }
    )
    assert len(plots.fig2_errors(err, err).axes) == 2


def _pool(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.random((n, 3))
    score = 10 + 5 * x[:, 0] - 3 * x[:, 1]  # a monotone surface every model can learn
    return pd.DataFrame(
        {
            "system": "toy",
            "system_kind": "synthetic",
            "seed": seed,
            "trial": np.arange(n),
            "status": "SUCCEEDED",
            "score": score,
            "config.a": x[:, 0],
            "config.b": x[:, 1] * 100,
            "config.c": np.where(x[:, 2] > 0.5, "on", "off"),
        }
    )


def test_winners_recognised_on_an_easy_surface() -> None:
    pool = _pool(300, 0)
    points, _scores = analysis.encode_pool(pool)
    assert points.shape == (300, 3) and points.min() == 0 and points.max() == 1
    out = analysis.winners_recognised(
        pool, ("xgboost", "logistic"), ("zorder", "concat"), regressor=True
    )
    assert set(out["model"]) == {"xgboost", "logistic", "dt_regressor"}
    assert (out["winners"] > 0).all() and (out["winners"] <= 20).all()
    assert out.loc[out["model"] == "logistic", "share"].max() >= 0.5


def test_regression_errors_fall_with_samples() -> None:
    pool = _pool(450, 1)
    err = analysis.regression_errors(pool, ("rfr",))
    assert len(err) == 1 and 0 < err["max_rel_error"].iloc[0] < 1
    curve = analysis.error_vs_samples(pool, (25, 200))
    small, large = curve.sort_values("n_train")["max_rel_error"]
    assert large < small


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("store")
    uri = f"sqlite:///{root}/mlflow.db"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "tuner=lhs",
            "system=synthetic10",
            "seed=0",
            "budget=5",
            f"tracking.uri={uri}",
            "tracking.experiment=pools",
            f"results_dir={root}",
            "session.progress=false",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return uri


@pytest.mark.slow
def test_loader_reads_a_real_session(tiny_store: str) -> None:
    runs = load_sessions(tiny_store)
    assert len(runs) == 1
    row = runs.iloc[0]
    assert (row.system, row.tuner, row.seed, row.system_kind) == (
        "synthetic10",
        "lhs",
        0,
        "synthetic",
    )
    assert row.tests == 5 and row.default_value > 0
    pool = load_pools(tiny_store, "pools")
    assert len(pool) == 5 and pool["trial"].tolist() == list(range(5))
    assert any(c.startswith("config.") for c in pool.columns)
    assert load_sessions(tiny_store, "fig6").empty


@pytest.mark.slow
def test_cli_names_the_recipe_when_no_runs(
    tiny_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "no-tables"  # neither runs nor tables: the recipe to run is named
    with pytest.raises(NoRunsError, match=r"\+experiment=fig6"):
        make_figure("fig6", tiny_store, tmp_path, data=empty)
    argv = ["fig10b", "--tracking-uri", tiny_store, "--out", str(tmp_path), "--data", str(empty)]
    assert main(argv) == 1
    assert "+experiment=fig10b" in capsys.readouterr().err


def test_cli_redraws_from_exported_data(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    _sessions().to_csv(tmp_path / "data" / "fig6.csv", index=False)
    assert main(["fig6", "--from-data", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "fig6.png").stat().st_size > 1000


# -- Fig. 8, 1, 3, 7, 10(a) ---------------------------------------------------------------------


def _spans(ax: Axes) -> list[Patch]:
    """axvspan patches (Rectangle since matplotlib 3.9, Polygon before)."""
    return [p for p in ax.patches if isinstance(p, Rectangle | Polygon)]


def _heights(ax: Axes) -> list[float]:
    return [round(p.get_height(), 3) for p in ax.patches if isinstance(p, Rectangle)]


def _fig8_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    from harness.space import Knob, Space
    from paper.figures.tables import subspace_tables

    space = Space(
        (
            Knob("a", "int", low=1, high=1000, default=10, log=True),
            Knob("b", "float", low=0.0, high=1.0, default=0.5),
        )
    )
    samples = pd.DataFrame(
        {
            "trial": range(6),
            "status": ["SUCCEEDED"] * 5 + ["FAILED"],
            "score": [1.0, 2, 3, 4, 5, np.nan],
            "config.a": [10, 1, 100, 1000, 30, 5],
            "config.b": [0.5, 0.1, 0.2, 0.3, 0.4, 0.9],
        }
    )
    subspaces = {
        "knobs": ["a", "b"],
        "rounds": [
            {
                "round": 1,
                "pivot": [1.0, 0.3],
                "n_candidates": 200,
                "n_winners": 7,
                "fallback": False,
                "boxes": [
                    {"centre": [0.5, 0.5], "size": 5, "low": [0.0, 0.2], "high": [2 / 3, 0.6]},
                    {"centre": [0.9, 0.1], "size": 2, "low": [2 / 3, 0.0], "high": [1.0, 0.4]},
                ],
            }
        ],
    }
    return subspace_tables(samples, subspaces, space, {"a": 0.7, "b": 0.3}, n_initial=3)


def test_fig8_tables_pick_the_most_important_knob_and_decode_bounds() -> None:
    points, boxes = _fig8_tables()
    assert set(points["knob"]) == {"a"} and points["value"].tolist() == [10, 1, 100, 1000, 30, 5]
    assert points["phase"].tolist() == ["initial"] * 3 + ["resampled"] * 3
    # log knob 1..1000: u=2/3 decodes to 100, u=1 to 1000
    assert boxes[["low", "high"]].to_numpy().tolist() == [[1, 100], [100, 1000]]
    assert boxes["pivot"].tolist() == [1000, 1000] and boxes["runner_up"].iloc[0] == "b"


def test_fig8_plot_draws_one_span_per_subspace() -> None:
    points, boxes = _fig8_tables()
    points, boxes = points.assign(system="s1"), boxes.assign(system="s1")
    fig = fig8_subspaces(points, boxes)
    full, zoom = fig.axes
    assert len(_spans(full)) == 2 and len(_spans(zoom)) == 2
    offsets = [np.asarray(c.get_offsets()).shape[0] for c in full.collections]
    assert offsets == [3, 2]  # initial, resampled successes (the failed test is not drawn)
    assert full.get_xscale() == "log" and full.get_xlabel() == "a"
    assert zoom.get_xlim()[0] < 1 and 1000 < zoom.get_xlim()[1] < 1200  # the boxes, padded


def test_fig8_draws_an_enum_knob_as_categories_not_a_number_line() -> None:
    points = pd.DataFrame(
        {
            "system": "surrogate_x",
            "knob": "flush_policy",
            "knob_type": "enum",
            "value": ["lazy", "eager", "lazy", "batch", "eager", "lazy"],
            "score": [1.0, 2.0, 1.5, 3.0, 2.5, 1.2],
            "status": "SUCCEEDED",
            "phase": ["initial"] * 3 + ["resampled"] * 3,
        }
    )
    boxes = pd.DataFrame(
        {"system": ["surrogate_x"], "low": ["batch"], "high": ["eager"], "winners": [2],
         "pivot": ["batch"]}
    )  # fmt: skip
    fig = fig8_subspaces(points, boxes)
    full = fig.axes[0]
    assert [t.get_text() for t in full.get_xticklabels()] == ["batch", "eager", "lazy"]
    assert full.get_xlabel() == "flush_policy (categories)"
    (span,) = _spans(full)  # batch..eager: columns 0 and 1, whole
    left, right = span.get_extents().x0, span.get_extents().x1  # display units: map back
    to_data = full.transData.inverted()
    xs = [to_data.transform((left, 0))[0], to_data.transform((right, 0))[0]]
    assert xs == pytest.approx([-0.45, 1.45], abs=1e-6)
    assert not fig.axes[1].get_visible()  # no zoom on categories
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "† surrogate" in texts and "flush_policy is an enum" in texts


def test_a_tuner_missing_on_a_system_is_stated_under_the_bars() -> None:
    runs = pd.DataFrame(
        {
            "system": ["surrogate_a", "surrogate_a", "b", "b", "b"],
            "tuner": ["classytune", "gpbo", "classytune", "gpbo", "bestconfig"],
            "improvement": [0.1, 0.2, 0.3, 0.4, 0.5],
        }
    )
    fig = plots.fig6_improvement(runs)
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "no bestconfig bar: no finished run on a †" in texts
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["b", "a †"]  # (sorted by the raw name: b < surrogate_a)


def test_sweep_tuner_moves_one_knob_only() -> None:
    from harness.space import Knob, Space
    from paper.figures.tuners import SweepTuner, sweep_values

    space = Space(
        (
            Knob("cache", "int", low=1, high=10000, default=100, log=True),
            Knob("mode", "enum", default="x", values=("x", "y", "z")),
        )
    )
    assert sweep_values(space, "cache", 5) == [1, 10, 100, 1000, 10000]
    assert sweep_values(space, "mode", 5) == ["x", "y", "z"]
    tuner = SweepTuner(space, budget=8, knob="cache", points=5)
    configs = tuner.ask(8)
    assert configs[0] == space.default()
    assert [c["cache"] for c in configs[1:]] == [1, 10, 100, 1000, 10000, 1, 10]
    assert all(c["mode"] == "x" for c in configs)
    with pytest.raises(Exception, match="not in the space"):
        SweepTuner(space, knob="nope")


def test_mapped_expert_converts_units_and_clamps() -> None:
    from harness.space import Knob, Space
    from paper.figures.tuners import MappedExpertTuner

    real = Space(
        (
            Knob("pool", "int", low=8, high=65536, default=128, unit="MiB"),
            Knob("conns", "int", low=10, high=1000, default=151),
            Knob("only_real", "int", low=0, high=10, default=0),
        )
    )
    surrogate = Space(
        (
            Knob("pool", "int", low=1024, high=1048576, default=131072, unit="KiB"),
            Knob("conns", "int", low=10, high=500, default=151),
        )
    )
    mapped = MappedExpertTuner.map_setting(
        {"pool": 512, "conns": 151, "only_real": 3}, real, surrogate
    )
    assert mapped == {"pool": 512 * 1024}  # KiB; unchanged defaults and unknown knobs dropped
    assert surrogate.fit({"pool": 4096 * 1024})["pool"] == 1048576  # clamped to the range


def test_fig1_fig3_fig7_fig10a_plots() -> None:
    sweep = pd.DataFrame(
        {
            "system": "s",
            "workload": "w",
            "knob": "cache",
            "metric": "tps",
            "value": [100, 1, 10, 100, 1000, 1, 10],
            "status": "SUCCEEDED",
            "is_default": [True] + [False] * 6,
            "performance": [5.0, 1, 2, 6, 3, 1.2, 2.2],
        }
    )
    ax = plots.fig1_sweep(sweep).axes[0]
    line = ax.get_lines()[0]
    assert np.asarray(line.get_xdata()).tolist() == [1, 10, 100, 1000]  # mean per value
    assert np.asarray(line.get_ydata()).tolist() == pytest.approx([1.1, 2.1, 5.5, 3.0])
    runs = pd.DataFrame(
        {
            "system": "t",
            "n_initial": [5, 5, 50, 50],
            "seed": [0, 1, 0, 1],
            "improvement": [0.1, 0.3, 0.5, 0.7],
        }
    )
    curves = pd.DataFrame(
        {"n_initial": [5, 5, 50, 50], "trial": [0, 1, 0, 1], "best": [1.0, 2.0, 1.0, 3.0]}
    )
    fig = plots.fig3_initial(runs, curves)
    assert sorted(_heights(fig.axes[0])) == [20.0, 60.0] and len(fig.axes[1].get_lines()) == 2
    assert len(plots.fig10a_improvement(_sessions()).axes[0].patches) == 6
    best = pd.DataFrame(
        {
            "system": "m",
            "tuner": ["default", "expert_manual", "classytune"],
            "best_value": [100.0, 90.0, 250.0],
        }
    )
    # in the paper's order, in % over the default (the zero line, not a bar of its own)
    assert _heights(plots.fig7_expert(best).axes[0]) == [-10.0, 150.0]


@pytest.mark.parametrize("recipe", sorted(p.stem for p in EXPERIMENT_DIR.glob("*.yaml")))
def test_every_recipe_composes_into_the_store_its_figure_reads(
    compose_cfg: Callable[..., DictConfig], recipe: str
) -> None:
    from functools import partial

    from hydra.utils import instantiate

    from paper.figures.cli import DEFAULT_URI, FIGURES

    cfg = compose_cfg(f"+experiment={recipe}")
    assert isinstance(instantiate(cfg.tuner), partial)
    if recipe.endswith("_real"):  # its queue's session folders are the data (paper.real_panel)
        assert cfg.session.existing == "resume" and cfg.tracking.experiment == recipe
        assert (cfg.budget, cfg.session.default_every, cfg.session.confirm) == (100, 10, 3)
        return
    assert cfg.tracking.uri == DEFAULT_URI
    readers = [name for name, spec in FIGURES.items() if spec.recipe == recipe]
    # every figure's recipe exists; fig7_expert and fig5's pools feed figures under other names
    assert readers or recipe in ("fig7_expert", "fig5")
    assert all((EXPERIMENT_DIR / f"{s.recipe}.yaml").exists() for s in FIGURES.values())


@pytest.mark.slow
def test_fig1_end_to_end_from_a_sweep_session(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "+experiment=fig1",
            "budget=4",
            "tuner.points=3",
            f"tracking.uri={uri}",
            f"results_dir={tmp_path}",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=180,
    )
    make_figure("fig1", uri, tmp_path / "figs")
    table = pd.read_csv(tmp_path / "figs" / "data" / "fig1.csv")
    assert table["knob"].unique().tolist() == ["innodb_buffer_pool_size"]
    # default (131072 KiB), then the range's ends and middle; other knobs stay at default
    assert table.sort_values("trial")["value"].tolist() == [131072, 11830, 525131, 1038431]
    assert table["performance"].notna().all() and (tmp_path / "figs" / "fig1.png").exists()


def test_merge_keeps_committed_sessions_the_store_lacks(tmp_path: Path) -> None:
    from paper.figures.cli import merged

    committed = pd.DataFrame(
        {"system": ["a", "a", "b"], "tuner": ["gpbo", "classytune", "gpbo"], "seed": [0, 0, 0],
         "improvement": [0.1, 0.2, 0.3]}
    )  # fmt: skip
    committed.to_csv(tmp_path / "fig6.csv", index=False)
    new = pd.DataFrame(
        {"system": ["a", "a"], "tuner": ["classytune", "classytune_paper"], "seed": [0, 0],
         "improvement": [0.25, 0.15]}
    )  # fmt: skip
    out = merged(new, tmp_path / "fig6.csv")
    rows = {(r.system, r.tuner): r.improvement for r in out.itertuples()}
    assert rows == {
        ("a", "gpbo"): 0.1,
        ("b", "gpbo"): 0.3,
        ("a", "classytune"): 0.25,  # the store's session replaces the committed one
        ("a", "classytune_paper"): 0.15,
    }


def test_axis_units_come_from_the_workloads_and_the_catalogues() -> None:
    from paper.figures.units import axis_label, knob_unit, metric_unit

    assert metric_unit("tpmC") == "New-Order/min" and metric_unit("job_duration_s") == "s"
    assert knob_unit("sqlite", "cache_size") == "KiB"
    assert knob_unit("mariadb", "innodb_buffer_pool_size") == "MB"  # MariaDB: mysql's catalogue
    assert knob_unit("surrogate_mysql_oltp", "innodb_buffer_pool_size") == ""  # no units there
    assert axis_label("tps", "txn/s") == "tps (txn/s)" and axis_label("x", "") == "x"


# -- one look across figures; redraws that write only what was asked -----------------------------


def _bar_colours(fig: Figure) -> dict[str, set[tuple[float, ...]]]:
    """Each labelled bar series of a figure -> the face colours of its bars."""
    from matplotlib.colors import to_rgba
    from matplotlib.container import BarContainer

    found: dict[str, set[tuple[float, ...]]] = {}
    for ax in fig.axes:
        for bars in ax.containers:
            if isinstance(bars, BarContainer) and bars.patches:
                colours = {to_rgba(p.get_facecolor()) for p in bars.patches}
                found.setdefault(str(bars.get_label()), set()).update(colours)
    return found


def test_a_tuner_has_one_colour_in_every_figure() -> None:
    from matplotlib.colors import to_rgba

    from paper.figures.plot_real import fig6_figure, fig7_figure
    from paper.figures.style import STYLES

    sessions = _sessions()
    best = pd.DataFrame(
        {"system": "m", "tuner": ["default", "gpbo", "classytune"], "best_value": [1.0, 2, 3]}
    )
    real = pd.DataFrame(
        {"system": "mysql", "workload": "tpcc", "tuner": ["gpbo_paper", "classytune"],
         "seed": 0, "improvement": [0.1, 0.2], "default_rsd": 0.1, "tests": 100}
    )  # fmt: skip
    figures = [
        plots.fig6_improvement(sessions),
        plots.fig10a_improvement(sessions.iloc[::-1]),  # another order, same colours
        plots.fig10b_time(sessions[sessions["tuner"] != "classytune"]),
        plots.fig7_expert(best),
        fig6_figure(sessions, real),
        fig7_figure(best, real),
    ]
    seen: dict[str, set[tuple[float, ...]]] = {}
    for fig in figures:
        for tuner, colours in _bar_colours(fig).items():
            seen.setdefault(tuner, set()).update(colours)
    assert {"classytune", "bestconfig", "gpbo", "gpbo_paper"} <= set(seen)
    for tuner, colours in seen.items():
        assert colours == {to_rgba(STYLES[tuner].colour)}, tuner
    tuner_colours = [STYLES[t].colour for t in FIG7_TUNERS]
    assert len(set(tuner_colours)) == len(tuner_colours)  # no two tuners share a colour


FIG7_TUNERS = (
    "default", "expert_manual", "expert_script", "gpbo", "gpbo_paper", "bestconfig",
    "classytune_paper", "classytune", "random", "lhs", "optuna_tpe", "optuna_gp", "smac",
    "gbrt", "svr", "rfr", "cart",
)  # fmt: skip


def test_unknown_series_never_take_a_known_ones_colour() -> None:
    from paper.figures.style import STYLES, series_styles

    styles = series_styles(["classytune", "n_initial=5", "n_initial=50"])
    assert styles["classytune"] == STYLES["classytune"]
    colours = [s.colour for s in styles.values()]
    assert len(set(colours)) == 3


def test_the_bar_table_tells_a_zero_from_a_missing_value() -> None:
    from paper.figures.bars import BAR, MISSING, ZERO, bar_table

    df = pd.DataFrame(
        {
            "system": ["a", "a", "a", "b", "b"],
            "tuner": ["gpbo", "gpbo", "classytune", "classytune", "gpbo"],
            "pct": [0.0, 0.0, 5.0, 7.0, np.nan],
        }
    )
    table = bar_table(df, "system", "tuner", "pct", ["classytune", "gpbo"])
    states = {(r.system, r.tuner): r.state for r in table.itertuples()}
    assert states == {
        ("a", "classytune"): BAR,
        ("a", "gpbo"): ZERO,
        ("b", "classytune"): BAR,
        ("b", "gpbo"): MISSING,  # a row without a value is nothing measured
    }
    fig = plots.fig6_improvement(df.rename(columns={"pct": "improvement"}))
    marks = [t.get_text() for t in fig.axes[0].texts]
    assert sorted(marks) == ["0", "n/a"]


def test_fig10b_draws_seconds_on_a_log_axis() -> None:
    times = pd.DataFrame(
        {"system": "s", "tuner": ["classytune", "gpbo"], "tuner_seconds_total": [7.4, 754.0]}
    )
    ax = plots.fig10b_time(times).axes[0]
    assert ax.get_yscale() == "log"
    assert sorted(t.get_text() for t in ax.texts) == ["7.4 s", "754 s"]


def _written(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_all_figures_redraw_into_any_folder_from_the_committed_tables(tmp_path: Path) -> None:
    """`python -m paper.figures all --out DIR` on a fresh clone: no MLflow store, so every
    figure is drawn from the committed tables; only the PNGs are written (no store is created
    where the default URI points), and each is byte for byte the committed one. Run as the
    command it is, in a process of its own: a drawing in this test process after others (fonts
    and caches warmed by earlier tests) is not always byte for byte the command's."""
    from paper.figures.cli import FIGURES

    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "paper.figures", "all", "--out", str(out)],
        cwd=tmp_path,  # the default store URI is relative: it would be made here
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert _written(tmp_path) == sorted(f"out/{name}.png" for name in FIGURES)
    stale = [
        name
        for name in FIGURES
        if (out / f"{name}.png").read_bytes()
        != (ROOT / "results" / "figures" / f"{name}.png").read_bytes()
    ]
    assert not stale, f"redraw with `python -m paper.figures all --from-data`: {stale}"


def test_a_redraw_from_data_writes_only_the_pngs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store.db"
    argv = [
        "fig6",
        "fig10b",
        "--from-data",
        "--out",
        "figs",
        "--tracking-uri",
        f"sqlite:///{store}",
    ]
    assert main(argv) == 0
    assert _written(tmp_path) == ["figs/fig10b.png", "figs/fig6.png"]
    with pytest.raises(NoRunsError, match="no MLflow store at"):
        load_sessions(f"sqlite:///{store}")
    assert not store.exists()
