"""Knob space: codec round trips, validation messages, catalogue loading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import KnobError
from harness.space import Config, Knob, Space, load_catalogue

SPACE = Space(
    (
        Knob("threads", "int", 4, low=1, high=64),
        Knob("cache_mb", "int", 128, low=8, high=16384, log=True, unit="MiB"),
        Knob("ratio", "float", 0.5, low=0.0, high=1.0),
        Knob("delay_ms", "float", 10.0, low=0.1, high=1000.0, log=True),
        Knob("mode", "enum", "b", values=("a", "b", "c")),
        Knob("fast", "bool", False),
    )
)


@given(st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6))
def test_decode_is_always_valid_and_snapping_is_idempotent(point: list[float]) -> None:
    config = SPACE.decode(point)
    assert SPACE.validate(config) == config
    snapped = SPACE.snap(np.array([point]))
    assert np.allclose(SPACE.snap(snapped), snapped)
    again = SPACE.decode(snapped[0])
    for name, value in config.items():  # floats may differ in the last bits (log/exp)
        if isinstance(value, float):
            assert again[name] == pytest.approx(value, rel=1e-12)
        else:
            assert again[name] == value


def test_encode_decode_round_trip_of_valid_values() -> None:
    at_the_bounds: Config = {
        "threads": 64,
        "cache_mb": 8,
        "ratio": 1.0,
        "delay_ms": 1000.0,
        "mode": "c",
        "fast": True,
    }
    for config in (SPACE.default(), at_the_bounds):
        assert SPACE.decode(SPACE.encode(config)) == pytest.approx(config)


def test_integer_cells_have_equal_width() -> None:
    knob = Knob("k", "int", 0, low=0, high=3)
    counts = np.bincount([knob.decode(u) for u in np.linspace(0, 1, 4000, endpoint=False)])
    assert counts.tolist() == [1000, 1000, 1000, 1000]


def test_log_scale_spends_half_the_range_below_the_geometric_mean() -> None:
    knob = Knob("k", "float", 10.0, low=1.0, high=100.0, log=True)
    assert knob.decode(0.5) == pytest.approx(10.0)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"threads": 0}, "knob 'threads': value 0 is invalid; allowed: int in [1, 64]"),
        ({"threads": 2.5}, "must be a whole number"),
        ({"mode": "z"}, "allowed: one of a, b, c"),
        ({"fast": "maybe"}, "allowed: true or false"),
        ({"ratio": "high"}, "knob 'ratio'"),
        ({"nope": 1}, "unknown knob 'nope'; this space has: threads, cache_mb"),
    ],
)
def test_validation_names_knob_value_and_range(config: dict, message: str) -> None:
    with pytest.raises(KnobError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SPACE.validate(config, partial=True)


def test_missing_knobs_are_named() -> None:
    with pytest.raises(KnobError, match="lacks knobs: cache_mb"):
        SPACE.validate({k: v for k, v in SPACE.default().items() if k != "cache_mb"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": "int", "default": 1, "low": 5, "high": 2}, "min 5 must be below max 2"),
        ({"type": "float", "default": 1.0, "low": 0.0, "high": 2.0, "log": True}, "needs min > 0"),
        ({"type": "enum", "default": "a", "values": ("a",)}, "at least two values"),
        ({"type": "int", "default": 99, "low": 0, "high": 10}, "default 99 is invalid"),
        ({"type": "text", "default": "a"}, "unknown type 'text'"),
    ],
)
def test_bad_knob_definitions_fail_precisely(kwargs: dict, message: str) -> None:
    with pytest.raises(KnobError, match=message):
        Knob("k", **kwargs)


def test_overrides_narrow_ranges_and_reject_bad_ones() -> None:
    narrowed = SPACE.with_overrides({"threads": {"max": 8}})
    assert narrowed["threads"].high == 8
    with pytest.raises(KnobError, match="min 1 must be below max 0"):
        SPACE.with_overrides({"threads": {"max": 0}})
    with pytest.raises(KnobError, match="cannot override 'step'"):
        SPACE.with_overrides({"threads": {"step": 2}})


def test_catalogue_sets_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "knobs.yaml"
    path.write_text(
        "knobs:\n- {name: a, type: int, min: 0, max: 9, default: 1}\n"
        "- {name: b, type: bool, default: false}\nsets: {'1': [b]}\n"
    )
    assert load_catalogue(path).names == ["a", "b"]
    assert load_catalogue(path, "1").names == ["b"]
    with pytest.raises(KnobError, match="no knob set '5'; choose all, 1"):
        load_catalogue(path, "5")
    path.write_text("knobs:\n- {name: a, type: int, min: 0, max: 9, default: 1, colour: red}\n")
    with pytest.raises(KnobError, match="unknown field"):
        load_catalogue(path)


def test_a_catalogue_with_the_removed_restart_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "knobs.yaml"
    path.write_text("knobs:\n- {name: a, type: int, min: 0, max: 9, default: 1, restart: true}\n")
    with pytest.raises(
        KnobError, match=r"knob 'a': unknown field\(s\) restart; removed: "
    ) as info:
        load_catalogue(path)
    assert "\n" not in str(info.value)
    assert not hasattr(Knob("a", "int", 1, 0, 9), "restart")


def test_every_catalogue_in_the_repo_loads() -> None:
    root = Path(__file__).resolve().parents[2] / "systems"
    catalogues = list(root.glob("*/knobs*.yaml"))
    assert catalogues
    for path in catalogues:
        space = load_catalogue(path)
        assert space.validate(space.default()) == space.default()


def test_fit_drops_foreign_knobs_clamps_numbers_and_snaps_numeric_enums() -> None:
    space = Space((*SPACE.knobs, Knob("page", "enum", 4096, values=(1024, 4096, 16384))))
    fitted = space.fit({"threads": 500, "ratio": -1.0, "page": 5000, "elsewhere": 1, "mode": "c"})
    assert fitted == {"threads": 64, "ratio": 0.0, "page": 4096, "mode": "c"}
    with pytest.raises(KnobError, match="knob 'mode'"):
        space.fit({"mode": "z"})
