"""Figures: pure plotting functions on hand-made DataFrames, the pool analysis, and the loader
+ CLI on a tiny real MLflow store written by a 5-test session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from harness.figures import analysis, plots
from harness.figures.cli import main, make_figure
from harness.figures.loader import NoRunsError, load_pools, load_sessions

ROOT = Path(__file__).resolve().parents[1]


def _sessions() -> pd.DataFrame:
    rows = [{"system": s, "tuner": t, "seed": k, "improvement": imp + 0.01 * k,
             "tuner_seconds_total": 10.0 * (1 + k)}
            for s in ("synthetic10", "surrogate_tomcat")
            for t, imp in (("classytune", 0.7), ("bestconfig", 0.5), ("gpbo", 0.4))
            for k in range(3)]
    return pd.DataFrame(rows)


def test_fig6_bars_show_seed_means() -> None:
    fig = plots.fig6_improvement(_sessions())
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    heights = sorted(round(p.get_height(), 3) for p in ax.patches
                     if isinstance(p, Rectangle))
    # 2 systems x 3 tuners, mean over seeds 0..2 of (imp + 0.01 k) in percent
    assert heights == [41.0, 41.0, 51.0, 51.0, 71.0, 71.0]
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["classytune", "bestconfig",
                                                                  "gpbo"]


def test_fig10b_and_missing_columns() -> None:
    fig = plots.fig10b_time(_sessions())
    assert len(fig.axes[0].patches) == 6
    with pytest.raises(ValueError, match="tuner_seconds_total"):
        plots.fig10b_time(_sessions().drop(columns="tuner_seconds_total"))
    with pytest.raises(ValueError, match="no rows"):
        plots.fig6_improvement(_sessions().iloc[:0])


def test_fig5_fig9_fig2_panels() -> None:
    share = pd.DataFrame({"system": ["a", "a", "b", "b"], "model": ["xgboost", "svm"] * 2,
                          "induction": ["zorder", "concat"] * 2, "share": [0.9, 0.1, 1, 0]})
    assert len(plots.fig5_classifiers(share).axes[0].patches) == 4
    assert len(plots.fig9_induction(share).axes) == 1
    runs = share.assign(improvement=[0.5, 0.2, 0.3, 0.1])
    assert len(plots.fig9_induction(share, runs).axes) == 2
    err = pd.DataFrame({"system": ["a", "a"], "model": ["rfr", "svr"], "n_train": [50, 100],
                        "max_rel_error": [1.5, 0.5]})
    assert len(plots.fig2_errors(err, err).axes) == 2


def _pool(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.random((n, 3))
    score = 10 + 5 * x[:, 0] - 3 * x[:, 1]  # a monotone surface every model can learn
    return pd.DataFrame({"system": "toy", "system_kind": "synthetic", "seed": seed,
                         "trial": np.arange(n), "status": "SUCCEEDED", "score": score,
                         "config.a": x[:, 0], "config.b": x[:, 1] * 100,
                         "config.c": np.where(x[:, 2] > 0.5, "on", "off")})


def test_winners_recognised_on_an_easy_surface() -> None:
    pool = _pool(300, 0)
    points, _scores = analysis.encode_pool(pool)
    assert points.shape == (300, 3) and points.min() == 0 and points.max() == 1
    out = analysis.winners_recognised(pool, ("xgboost", "logistic"), ("zorder", "concat"),
                                      regressor=True)
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
    subprocess.run([sys.executable, "-m", "harness", "tuner=lhs", "system=synthetic10",
                    "seed=0", "budget=5", f"tracking.uri={uri}", "tracking.experiment=pools",
                    f"results_dir={root}", "session.progress=false"],
                   cwd=ROOT, check=True, capture_output=True, timeout=120)
    return uri


@pytest.mark.slow
def test_loader_reads_a_real_session(tiny_store: str) -> None:
    runs = load_sessions(tiny_store)
    assert len(runs) == 1
    row = runs.iloc[0]
    assert (row.system, row.tuner, row.seed, row.system_kind) == ("synthetic10", "lhs", 0,
                                                                  "synthetic")
    assert row.tests == 5 and row.default_value > 0
    pool = load_pools(tiny_store, "pools")
    assert len(pool) == 5 and pool["trial"].tolist() == list(range(5))
    assert any(c.startswith("config.") for c in pool.columns)
    assert load_sessions(tiny_store, "fig6").empty


@pytest.mark.slow
def test_cli_names_the_recipe_when_no_runs(tiny_store: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(NoRunsError, match=r"\+experiment=fig6"):
        make_figure("fig6", tiny_store, tmp_path)
    assert main(["fig10b", "--tracking-uri", tiny_store, "--out", str(tmp_path)]) == 1
    assert "+experiment=fig10b" in capsys.readouterr().err


def test_cli_redraws_from_exported_data(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    _sessions().to_csv(tmp_path / "data" / "fig6.csv", index=False)
    assert main(["fig6", "--from-data", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "fig6.png").stat().st_size > 1000
