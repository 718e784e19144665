"""Settings that trade durability or redundancy for speed are named wherever the answer is
shown: the catalogue says which values are safe, the summary and the exported YAML say what an
unsafe value gives up; units follow every value."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.builder.export import best_yaml
from harness.cli.report import summary
from harness.errors import KnobError
from harness.knob_risk import Risk, risk_from_dict
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.options import SessionResult
from harness.space import Config, knob_from_dict, load_catalogue

ROOT = Path(__file__).resolve().parents[2]
SQLITE = load_catalogue(ROOT / "systems/sqlite/knobs.yaml")


def _result(config: Config) -> SessionResult:
    default = SQLITE.default()
    observations = [
        Observation(0, default, Status.SUCCEEDED, 100.0, {"tps": 100.0}, is_default=True),
        Observation(1, {**default, **config}, Status.SUCCEEDED, 180.0, {"tps": 180.0}),
    ]
    return SessionResult(
        "s", Path("."), Objective("tps", "max", "tx/s"), observations, [], "FINISHED", "off",
        space=SQLITE,
    )  # fmt: skip


def test_the_summary_names_what_an_unsafe_best_setting_gives_up() -> None:
    text = summary(_result({"synchronous": "off", "cache_size": 4096}))
    assert "settings that trade safety for speed" in text
    assert "synchronous = off: a power loss can lose the last commits" in text
    assert "cache_size = 4096 KiB" in text  # units on every knob that has one
    assert "journal_mode" not in text.split("trade safety")[1]  # delete is safe


def test_a_safe_best_setting_adds_no_warning() -> None:
    assert "trade safety" not in summary(_result({"synchronous": "extra"}))


def test_the_exported_yaml_carries_the_warning_beside_the_value() -> None:
    text = best_yaml({"journal_mode": "off", "cache_size": 4096}, SQLITE)
    assert "journal_mode: 'off'  # trades safety: a crash or power loss" in text
    assert "cache_size: 4096  # KiB" in text


@pytest.mark.parametrize(
    ("catalogue", "knob", "unsafe", "safe"),
    [
        ("mysql", "innodb_flush_log_at_trx_commit", 2, 1),
        ("mysql", "innodb_doublewrite", False, True),
        ("postgres", "synchronous_commit", "off", "local"),
        ("cassandra", "commitlog_sync", "periodic", "group"),
        ("hadoop", "dfs.replication", 1, 3),
    ],
)
def test_each_real_system_marks_its_durability_knobs(
    catalogue: str, knob: str, unsafe: object, safe: object
) -> None:
    risk = load_catalogue(ROOT / f"systems/{catalogue}/knobs.yaml")[knob].risk
    assert risk is not None and risk.applies_to(unsafe) and not risk.applies_to(safe)


def test_a_numeric_floor_and_bad_entries() -> None:
    assert Risk("x", safe_min=3).applies_to(2) and not Risk("x", safe_min=3).applies_to(3)
    for bad, named in [
        ("fsync off is bad", "risk is a mapping"),
        ({"safe": [1]}, "risk takes says"),
        ({"says": "x", "safe": [1], "safe_min": 2}, "exactly one"),
        ({"says": "x", "when": [0]}, "unknown: when"),
    ]:
        with pytest.raises(KnobError, match=named):
            risk_from_dict("k", bad)
    entry = {"name": "k", "type": "int", "min": 1, "max": 3, "default": 3}
    knob = knob_from_dict({**entry, "risk": {"says": "fewer copies", "safe_min": 3}})
    assert knob.risk == Risk("fewer copies", safe_min=3.0)
