"""Recorded knobs typed from the data, so that an exported answer applies as it is: counts
as ints (recorded fractions rounded, as the system rounded them), BestConfig's type codes as
enums over their whole codes, and real fractions as floats."""

from __future__ import annotations

import numpy as np

from systems.dataset.infer import WHOLE_SHARE, build_dataset
from systems.dataset.system import load_dataset, resolve_path
from systems.dataset.tables import parse_csv

ROWS = 40


def _table(columns: dict[str, list[float]]) -> str:
    names = [*columns, "performance"]
    lines = [",".join(names)]
    for i in range(ROWS):
        lines.append(",".join([*(repr(columns[c][i]) for c in columns), str(100 + i)]))
    return "\n".join(lines) + "\n"


def _mostly_whole(share: float) -> list[float]:
    fractional = round(ROWS * (1 - share))
    return [i * 10.0 + (0.26 if i < fractional else 0.0) for i in range(ROWS)]


def test_a_mostly_whole_column_is_an_int_knob_with_rounded_values() -> None:
    ratio = [0.01 + i / ROWS for i in range(ROWS)]
    text = _table({"maxThreads": _mostly_whole(0.75), "ratio": ratio})
    data = build_dataset(parse_csv(text, "t.csv"), "performance")
    threads, fraction = data.space.knobs
    assert (threads.type, threads.low, threads.high) == ("int", 0, 390)
    assert all(type(c["maxThreads"]) is int for c in data.configs)
    assert data.configs[0]["maxThreads"] == 0  # 0.26, rounded
    assert fraction.type == "float"
    assert any("75% whole: a count" in line for line in data.inference)


def test_a_mostly_fractional_column_stays_a_float() -> None:
    share = WHOLE_SHARE / 2
    data = build_dataset(parse_csv(_table({"x": _mostly_whole(share)}), "t.csv"), "performance")
    assert data.space["x"].type == "float"


def test_a_bestconf_type_code_is_an_enum_of_whole_codes() -> None:
    codes = [0.0098, 0.85, 1.06, 1.99] * (ROWS // 4)
    text = _table({"sqlmyd_Typequery_cache_type": codes, "sqlmyd_Kx": _mostly_whole(1.0)})
    data = build_dataset(parse_csv(text, "t.csv"), "performance", rename="bestconf")
    knob = data.space["query_cache_type"]
    assert (knob.type, knob.values) == ("enum", (0, 1, 2))
    assert [c["query_cache_type"] for c in data.configs[:4]] == [0, 1, 1, 2]
    assert data.space["x"].unit == "KiB"


def test_the_recorded_tomcat_and_mysql_knobs_are_typed_as_the_systems_take_them() -> None:
    tomcat = load_dataset(
        resolve_path("builtin:bestconf/tomcat_comt_positive.arff"),
        "performance",
        failure_value=-1,
        default_row="first",
        rename="bestconf",
    )
    assert tomcat.space["maxThreads"].type == "int"
    assert all(isinstance(c["maxThreads"], int) for c in tomcat.configs)
    mysql = load_dataset(
        resolve_path("builtin:bestconf/mysql_MySQL_OLTP_simple.arff"),
        "performance",
        default_row="first",
        rename="bestconf",
    )
    assert mysql.space["query_cache_type"].values == (0, 1, 2)
    assert np.isfinite(mysql.points).all()
