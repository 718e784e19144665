"""The study modules of paper/: one variant parser, each module runs with ``python -m``."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from paper.variants import Variant, parse_options, parse_variant

ROOT = Path(__file__).resolve().parents[2]
STUDIES = (
    "analyze_agreement",
    "gpbo_step",
    "imprecision_table",
    "long_runs",
    "measure_sqlite",
    "overhead",
    "readings",
    "surrogate_fidelity",
    "surrogate_optima",
)


@pytest.mark.parametrize(
    ("spec", "fixed", "expected"),
    [
        ("classytune", None, Variant("classytune", "classytune")),
        ("ct=classytune", None, Variant("ct", "classytune")),
        ("ts=classytune:n_members=3,acquisition=thompson", None,
         Variant("ts", "classytune", {"n_members": 3, "acquisition": "thompson"})),
        ("base=", "classytune", Variant("base", "classytune")),
        ('b=categorical_moves="off",trust_region=true', "classytune",
         Variant("b", "classytune", {"categorical_moves": "off", "trust_region": True})),
    ],
)  # fmt: skip
def test_a_variant_reads_its_label_config_and_yaml_options(spec, fixed, expected):
    assert parse_variant(spec, fixed) == expected


@pytest.mark.parametrize("spec", ["=classytune", "x=classytune:n_members"])
def test_a_variant_without_a_label_or_with_a_bare_option_is_refused(spec):
    with pytest.raises(ValueError):
        parse_variant(spec)


def test_options_off_stays_text_when_quoted():
    assert parse_options("a=off,b='off'") == {"a": False, "b": "off"}


@pytest.mark.parametrize("name", STUDIES)
def test_each_study_is_a_module_with_a_main(name):
    assert callable(importlib.import_module(f"paper.{name}").main)


def test_no_paper_module_edits_the_import_path():
    edits = [p.name for p in (ROOT / "paper").rglob("*.py") if "sys.path.insert" in p.read_text()]
    assert not edits
