"""Knob-space inference from sample tables, and the fidelity computation on hand-made data."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from harness.errors import ConfigError
from systems.dataset.infer import bestconf_name, build_dataset
from systems.dataset.model import ModelSettings, cross_validate, fidelity_scores
from systems.dataset.tables import parse_arff, parse_csv

CSV = (
    (
        "trial,status,is_default,score,config.cache_mb,config.ratio,config.mode,config.fsync,"
        "config.const,result.tps,result.p99,message\n"
    )
    + """\
0,SUCCEEDED,True,100,128,0.5,safe,true,7,100,5,
1,CRASHED,False,,4096,0.25,fast,false,7,,,would not start
2,SUCCEEDED,False,150,64,0.75,fast,true,7,150,4,
3,SUCCEEDED,False,120,512,0.125,none,false,7,120,6,
"""
)


def test_harness_export_knobs_types_ranges_default_and_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO):
        data = build_dataset(parse_csv(CSV, "s.csv"), "tps")
    space = data.space
    assert space.names == ["cache_mb", "ratio", "mode", "fsync"]  # const dropped, result.* not
    assert "dropped constant column 'config.const'" in data.notes
    assert "config.const" in caplog.text
    cache, ratio, mode, fsync = space.knobs
    assert (cache.type, cache.low, cache.high) == ("int", 64, 4096)
    assert (ratio.type, ratio.low, ratio.high) == ("float", 0.125, 0.75)
    assert (mode.type, mode.values) == ("enum", ("fast", "none", "safe"))
    assert fsync.type == "bool"
    assert space.default() == {"cache_mb": 128, "ratio": 0.5, "mode": "safe", "fsync": True}
    assert "is_default" in data.default_source
    assert data.target == "result.tps"
    assert data.failed.tolist() == [False, True, False, False]
    assert np.isnan(data.values[1]) and data.values[2] == 150
    assert data.failure_statuses == {"CRASHED": 1}
    assert data.points.shape == (4, 4) and np.all((data.points >= 0) & (data.points <= 1))


def test_target_may_be_named_with_the_result_prefix() -> None:
    assert build_dataset(parse_csv(CSV, "s.csv"), "result.p99").target == "result.p99"


def test_generic_table_default_rules() -> None:
    text = "a,b,y\n" + "".join(f"{i},{i % 3 + 0.5},{i}\n" for i in range(9))
    table = parse_csv(text, "g.csv")
    median = build_dataset(table, "y").space.default()
    assert median == {"a": 4, "b": 1.5}  # per-knob medians: no default row is known
    assert build_dataset(table, "y", default_row="first").space.default() == {"a": 0, "b": 0.5}
    assert build_dataset(table, "y", default_row=2).space.default() == {"a": 2, "b": 2.5}
    with pytest.raises(ConfigError, match="outside the 9 rows"):
        build_dataset(table, "y", default_row=20)


def test_failure_value_and_exclude() -> None:
    text = "a,b,note,y\n1,2,x,10\n2,3,x,-1\n3,1,y,12\n"
    data = build_dataset(parse_csv(text, "f.csv"), "y", failure_value=-1, exclude=["note"])
    assert data.space.names == ["a", "b"]
    assert data.failed.tolist() == [False, True, False]
    with pytest.raises(ConfigError, match="exclude names unknown columns"):
        build_dataset(parse_csv(text, "f.csv"), "y", exclude=["nope"])


def test_text_columns_become_enums_unless_too_many_values() -> None:
    rows = "".join(f"v{i % 4},{i}\n" for i in range(20))
    data = build_dataset(parse_csv("engine,y\n" + rows, "e.csv"), "y")
    assert data.space["engine"].values == ("v0", "v1", "v2", "v3")
    many = "".join(f"id{i},{i}\n" for i in range(20))
    with pytest.raises(ConfigError, match="20 distinct text values, too many"):
        build_dataset(parse_csv("engine,y\n" + many, "e.csv"), "y")


def test_arff_nominal_attribute_and_bestconf_names() -> None:
    text = (
        "@relation r\n@attribute sqlmyd_Kbuf numeric\n@attribute m {a,b}\n"
        "@attribute performance numeric\n@data\n1,a,3\n2,b,4\n"
    )
    data = build_dataset(parse_arff(text, "r.arff"), "performance", rename="bestconf")
    assert data.space.names == ["buf", "m"]
    assert data.space["buf"].unit == "KiB" and data.space["m"].type == "enum"
    assert bestconf_name("yarnyarn.nodemanager.resource.cpu-vcores") == (
        "yarn.nodemanager.resource.cpu-vcores",
        "",
    )
    assert bestconf_name("mapredmapreduce.task.io.sort.mb") == ("mapreduce.task.io.sort.mb", "")
    assert bestconf_name("Time.spark.network.timeout") == ("spark.network.timeout", "ms")
    assert bestconf_name("maxThreads") == ("maxThreads", "")


def test_empty_knob_cell_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"line 3 \(data row 2\): knob column 'a' is empty"):
        build_dataset(parse_csv("a,b,y\n1,2,3\n,2,4\n", "m.csv"), "y")


# -- fidelity computation ------------------------------------------------------------------


def test_fidelity_scores_on_hand_made_predictions() -> None:
    truth = np.arange(20, dtype=float)
    assert fidelity_scores(truth, truth, "max") == (1.0, 1.0, 1.0, 2)
    r2, tau, recall, _ = fidelity_scores(truth, -truth, "max")
    assert tau == pytest.approx(-1.0) and recall == 0.0 and r2 < -1
    # Swap the best row (19) with a middling one (5): of the true top-2 {18, 19} only 18 stays.
    pred = truth.copy()
    pred[[19, 5]] = pred[[5, 19]]
    assert fidelity_scores(truth, pred, "max")[2] == 0.5
    # For a minimised metric the best rows are the smallest ones: {0, 1}; swap 0 with 10.
    pred = truth.copy()
    pred[[0, 10]] = pred[[10, 0]]
    assert fidelity_scores(truth, pred, "min")[2] == 0.5
    assert fidelity_scores(truth, truth, "max", top_fraction=0.25)[3] == 5
    r2, tau, _, _ = fidelity_scores(truth, np.full(20, 3.0), "max")
    assert tau == 0.0 and r2 < 0  # constant predictions rank nothing


def test_cross_validated_fidelity_separates_signal_from_noise() -> None:
    rng = np.random.default_rng(1)
    x = rng.random((120, 3))
    signal = 10 * x[:, 0] + 5 * (x[:, 1] - 0.5) ** 2
    failed = np.zeros(120, dtype=bool)
    settings = ModelSettings(n_estimators=30)
    good = cross_validate(x, signal, failed, "max", settings)
    assert good.r2 > 0.8 and good.tau > 0.7 and good.topk_recall >= 0.5 and good.rows == 120
    assert good.problems() == []
    noise = cross_validate(x, rng.random(120), failed, "max", settings)
    assert abs(noise.tau) < 0.2 and noise.problems()
