"""paper.surrogate_vs_real on small real-format inputs: a running session's observations and
an exported samples table give the same comparison, and the surrogate's own ranking of its
predictions is perfect by construction."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hydra.utils import instantiate

from harness import api
from paper.surrogate_vs_real import compare, read_tests, surrogate_config


@pytest.fixture(scope="module")
def surrogate():  # type: ignore[no-untyped-def]
    return instantiate(api.compose(["system=surrogate_cassandra_ycsba"]).system.adapter)


def _sessions(tmp_path: Path, system, metric_of) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """The same 12 tests as observations.jsonl and as samples.csv."""
    space = system.space
    rows, lines = [], []
    for trial in range(12):
        config = space.decode([(trial * 0.37 + k * 0.11) % 1 for k in range(space.dim)])
        value = metric_of(config)
        status = "FAILED" if trial == 5 else "SUCCEEDED"
        metrics = {} if status == "FAILED" else {"throughput_ops": value}
        lines.append(
            json.dumps({"trial": trial, "status": status, "config": config, "metrics": metrics})
        )
        rows.append(
            {
                "trial": trial,
                "status": status,
                **{f"config.{k}": v for k, v in config.items()},
                **{f"result.{k}": v for k, v in metrics.items()},
            }
        )
    jsonl, csv = tmp_path / "observations.jsonl", tmp_path / "samples.csv"
    jsonl.write_text("\n".join(lines) + "\n")
    pd.DataFrame(rows).to_csv(csv, index=False)
    return jsonl, csv


def test_running_and_exported_sessions_compare_alike(tmp_path: Path, surrogate) -> None:  # type: ignore[no-untyped-def]
    jsonl, csv = _sessions(tmp_path, surrogate, surrogate.predict)
    assert len(read_tests(jsonl)) == 12
    from_jsonl = compare(jsonl, "surrogate_cassandra_ycsba", "throughput_ops", boot=50)
    from_csv = compare(csv, "surrogate_cassandra_ycsba", "throughput_ops", boot=50)
    assert from_jsonl == pytest.approx(from_csv)
    assert from_jsonl["tests"] == 11  # the FAILED test has no measurement
    assert from_jsonl["shared_knobs"] == surrogate.space.dim
    assert from_jsonl["tau"] == pytest.approx(1.0)  # its own predictions rank perfectly


def test_values_outside_the_recorded_ranges_are_clipped(surrogate) -> None:  # type: ignore[no-untyped-def]
    knob = next(k for k in surrogate.space.knobs if k.type == "int")
    row = pd.Series({f"config.{knob.name}": float(knob.high) * 10, "config.not_a_knob": 3})
    config = surrogate_config(surrogate.space, row)
    assert config[knob.name] == knob.high
    assert "not_a_knob" not in config
    assert surrogate.space.validate(config) == config
