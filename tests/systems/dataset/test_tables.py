"""ARFF/CSV parsing and the one-line errors for bad dataset input."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from systems.dataset import DatasetSystem
from systems.dataset.system import DATA_DIR
from systems.dataset.tables import parse_arff, parse_csv, read_table

ARFF = """% a comment
@relation demo

@attribute 'cache size' numeric
@attribute mode {fast, safe}
@attribute label {'a b', x}
@attribute performance real

@data
1024, fast, 'a b', 10.5
2048,safe,x,?
% trailing comment
"""


def test_parse_arff_reads_attributes_rows_and_lines() -> None:
    table = parse_arff(ARFF, source="demo.arff")
    assert table.columns == ["cache size", "mode", "label", "performance"]
    assert table.rows == [["1024", "fast", "a b", "10.5"], ["2048", "safe", "x", None]]
    assert table.lines == [10, 11]
    assert table.nominal == {"mode": ("fast", "safe"), "label": ("a b", "x")}
    assert table.where(1) == "demo.arff line 11 (data row 2)"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("@relation r\n@attribute a numeric\n", "no @data section"),
        (
            "@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n1,2\n3\n",
            "not an ARFF file scipy.io.arff can read",
        ),
        ("@relation r\n@attribute a date\n@data\n", "line 2: attribute 'a' has type 'date'"),
        ("@relation r\n@attribute s string\n@data\n", "type 'string'; scipy.io.arff"),
        ("hello,world\n1,2\n", "no @data section"),
        ("hello,world\n@data\n1,2\n", "no @attribute declared"),
        ("@relation r\n@attribute a numeric\n@data\n{0 1}\n", "line 4: sparse ARFF"),
        ("@data\n1\n", "no @attribute declared"),
    ],
)
def test_bad_arff_is_a_config_error_naming_the_line(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        parse_arff(text, source="bad.arff")


def test_parse_csv_with_empty_cells_and_blank_lines() -> None:
    table = parse_csv("a,b,y\n1,x,3\n\n2,,4\n", source="t.csv")
    assert table.columns == ["a", "b", "y"]
    assert table.rows == [["1", "x", "3"], ["2", None, "4"]]
    assert table.lines == [2, 4]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty file"),
        ("a,b\n1,2,3\n", "line 2: 3 fields, the header has 2"),
        ("a;b;c\n1;2;3\n", "only one column"),
        ("a,a\n1,2\n", "duplicate column"),
    ],
)
def test_bad_csv_is_a_config_error(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        parse_csv(text, source="bad.csv")


def test_read_table_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        read_table(tmp_path / "nope.csv")
    blob = tmp_path / "blob.csv"
    blob.write_bytes(b"\xff\xfe\x00\x81binary")
    with pytest.raises(ConfigError, match="cannot read"):
        read_table(blob)


def test_every_bestconf_file_parses_with_its_documented_shape() -> None:
    shapes = {
        "mysql_MySQL_OLTP_simple.arff": (101, 12),
        "cassandra_cassandraYcsba.arff": (101, 29),
        "spark_pagerank00.arff": (101, 31),
        "hive_hadoopJoin.arff": (501, 111),
        "hive_hadoopPageRank.arff": (101, 110),
        "tomcat_comt_positive.arff": (3960, 13),
        "mysql_MySQL_zipfian_readwrite.arff": (101, 12),
    }
    for name, (rows, columns) in shapes.items():
        table = read_table(DATA_DIR / "bestconf" / name)
        assert (len(table.rows), len(table.columns)) == (rows, columns), name
        assert table.columns[-1] == "performance"


# -- bad input to the system: one clear ConfigError before any test -------------------------


def _csv(tmp_path: Path, text: str) -> str:
    path = tmp_path / "samples.csv"
    path.write_text(text)
    return str(path)


def _good_rows(n: int) -> str:
    return "".join(f"{i},{(i * 7) % 13},{i * 1.5 + (i * 7) % 13}\n" for i in range(n))


def test_missing_target_lists_the_columns(tmp_path: Path) -> None:
    path = _csv(tmp_path, "cache,threads,tps\n" + _good_rows(30))
    with pytest.raises(
        ConfigError,
        match=r"'qps' is not in samples.csv; its columns are: "
        r"cache, threads, tps",
    ):
        DatasetSystem(path, "qps", cache_dir=None)


def test_text_in_a_numeric_knob_names_column_and_row(tmp_path: Path) -> None:
    rows = _good_rows(30).splitlines()
    rows[4] = "4,lots,10"
    path = _csv(tmp_path, "cache,threads,tps\n" + "\n".join(rows) + "\n")
    with pytest.raises(
        ConfigError,
        match=r"line 6 \(data row 5\): numeric knob column "
        r"'threads' holds text, which",
    ):
        DatasetSystem(path, "tps", cache_dir=None)


def test_too_few_rows_says_how_many_are_needed(tmp_path: Path) -> None:
    path = _csv(tmp_path, "cache,threads,tps\n" + _good_rows(7))
    with pytest.raises(ConfigError, match="7 successful rows, at least 20 are needed"):
        DatasetSystem(path, "tps", cache_dir=None)


def test_unparsable_file_and_missing_path(tmp_path: Path) -> None:
    path = tmp_path / "x.arff"
    path.write_text("not an arff\n")
    with pytest.raises(ConfigError, match=r"x\.arff: no @data section"):
        DatasetSystem(str(path), "y", cache_dir=None)
    with pytest.raises(ConfigError, match=r"dataset\.path=FILE"):
        DatasetSystem(None, "y", cache_dir=None)  # type: ignore[arg-type]


def test_non_numeric_target_names_the_row(tmp_path: Path) -> None:
    path = _csv(tmp_path, "cache,tps\n1,2\n3,fast\n")
    with pytest.raises(
        ConfigError, match=r"line 3 \(data row 2\): the value of target 'tps' is not"
    ):
        DatasetSystem(path, "tps", cache_dir=None)
