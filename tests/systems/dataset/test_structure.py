"""Recorded tables in the shapes users bring: a pandas CSV with its index, one-hot groups,
numbers recorded at a few levels, objective markers. They load without help, infer the knobs
a human would, and every answer (test, best, optimum) is a valid recorded configuration."""

from __future__ import annotations

import itertools
import logging
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from baselines.sampling import RandomTuner
from harness import api
from harness.errors import ConfigError
from harness.space import Config
from systems.dataset import DatasetSystem, SurrogateWorkload
from systems.dataset.infer import build_dataset
from systems.dataset.recorded import measured_noise
from systems.dataset.tables import parse_csv

ROOT = Path(__file__).resolve().parents[3]


def _frame() -> pd.DataFrame:
    """Every valid configuration of a small system: a one-hot engine, a feature with a detail
    option (compression on with lz4 or zstd), three recorded buffer sizes, a 0/1 flag."""
    rows = []
    for engine, (comp, algo), buffer, flag in itertools.product(
        ("inno", "myisam", "rocks"),
        ((0, None), (1, "lz4"), (1, "zstd")),
        (16, 64, 256),
        (0, 1),
    ):
        speed = {"inno": 100, "myisam": 60, "rocks": 80}[engine] + 0.1 * buffer + 7 * flag
        speed += {None: 0, "lz4": 15, "zstd": 5}[algo]
        rows.append(
            {
                "engine_inno": int(engine == "inno"),
                "engine_myisam": int(engine == "myisam"),
                "engine_rocks": int(engine == "rocks"),
                "compression": comp,
                "compression_lz4": int(algo == "lz4"),
                "compression_zstd": int(algo == "zstd"),
                "buffer_mb": buffer,
                "fsync": flag,
                "throughput+": speed,
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture()
def table(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    frame = _frame()
    path = tmp_path / "valid.csv"
    frame.to_csv(path)  # with pandas' unnamed index column
    return path, frame


def _recorded(frame: pd.DataFrame) -> set[tuple[Any, ...]]:
    """Each recorded row as (engine, compression, buffer_mb, fsync) knob values."""
    out: set[tuple[Any, ...]] = set()
    for r in frame.itertuples(index=False):
        engine = next(e for e in ("inno", "myisam", "rocks") if getattr(r, f"engine_{e}"))
        algo = "lz4" if r.compression_lz4 else "zstd" if r.compression_zstd else "off"
        out.add((engine, algo, r.buffer_mb, bool(r.fsync)))
    return out


def _key(config: Mapping[str, object]) -> tuple[object, ...]:
    return (config["engine"], config["compression"], config["buffer_mb"], config["fsync"])


def test_a_pandas_csv_with_one_hot_groups_and_levels_infers_the_human_knobs(
    table: tuple[Path, pd.DataFrame], caplog: pytest.LogCaptureFixture
) -> None:
    path, _ = table
    data = build_dataset(parse_csv(path.read_text(), path.name), None)
    assert any("unnamed leading column" in n for n in data.notes)
    assert data.target == "throughput+" and data.direction == "max"
    space = data.space
    assert space.names == ["engine", "compression", "buffer_mb", "fsync"]
    assert (space["engine"].type, space["engine"].values) == ("enum", ("inno", "myisam", "rocks"))
    assert space["compression"].values == ("off", "lz4", "zstd")  # detail only when on
    assert (space["buffer_mb"].type, space["buffer_mb"].values) == ("enum", (16, 64, 256))
    assert space["fsync"].type == "bool"
    assert any("one-hot" in line for line in data.inference)
    ranges = build_dataset(parse_csv(path.read_text(), path.name), None, ordinal=False)
    assert (ranges.space["buffer_mb"].low, ranges.space["buffer_mb"].high) == (16, 256)


def test_exclude_applies_before_the_header_check() -> None:
    text = "a,a,b,y\n" + "".join(f"{i},{i},{i % 3},{i}\n" for i in range(30))
    with pytest.raises(ConfigError, match="duplicate column names"):
        parse_csv(text, "d.csv")
    table = parse_csv("a,x,b,y\n" + text.split("\n", 1)[1], "d.csv", exclude=["x"])
    assert table.columns == ["a", "b", "y"]


def test_the_dense_table_is_answered_by_recorded_rows_only(
    table: tuple[Path, pd.DataFrame], tmp_path: Path
) -> None:
    path, frame = table
    system = DatasetSystem(str(path), "throughput", cache_dir=str(tmp_path))
    assert system.backend == "recorded" and "dense table" in system.choice.reason
    assert system.direction == "max" and system.target == "throughput"
    recorded = _recorded(frame)
    assert _key(system.space.default()) in recorded  # the median moved onto a recorded row
    workload = SurrogateWorkload("throughput", "max")
    result = api.run_objects(
        RandomTuner(system.space, seed=1, budget=40), system, workload,
        budget=40, results_dir=tmp_path,
    )  # fmt: skip
    assert result.status == "FINISHED"
    keys = [_key(o.config) for o in result.observations]
    assert set(keys) <= recorded  # only valid, recorded configurations were measured
    assert len(set(keys)) == len(keys)  # each row at most once: nearest *unused* row
    assert result.best is not None and _key(result.best.config) in recorded
    best_config, best_value = system.known_optimum()
    assert _key(best_config) in recorded and best_value == frame["throughput+"].max()
    assert "best of the 54 successful recorded rows" in system.optimum_source
    tags = system.describe()
    assert tags["surrogate_backend"] == "recorded" and "one-hot" in tags["surrogate_inference"]


def test_the_surrogate_backend_fails_configurations_that_break_recorded_constraints(
    tmp_path: Path,
) -> None:
    frame = _frame()
    frame = frame[~((frame.engine_myisam == 1) & (frame.compression == 1))]  # never together
    rng = np.random.default_rng(0)
    copies = [frame.assign(**{"throughput+": frame["throughput+"] + rng.normal(0, 1, len(frame))})
              for _ in range(3)]  # fmt: skip
    path = tmp_path / "repeated.csv"
    pd.concat(copies).to_csv(path, index=False)
    system = DatasetSystem(str(path), "throughput+", backend="surrogate", cache_dir=None)
    assert system.backend == "surrogate" and system.model is not None
    found = [str(c) for c in system.dataset.constraints]
    assert any("engine=myisam never with compression=lz4" in c for c in found), found
    assert system.noise_measured is not None and system.noise_measured.configurations == 42
    config = {**system.space.default(), "engine": "myisam", "compression": "lz4"}
    system.apply(config)
    system.start(1.0)
    with pytest.raises(Exception, match="breaks a constraint of the recorded table"):
        system.measure()


def test_noise_comes_from_repeated_configurations() -> None:
    configs: list[Config] = [{"a": 1}, {"a": 1}, {"a": 2}, {"a": 2}, {"a": 3}]
    noise = measured_noise(configs, np.array([10.0, 12.0, 20.0, 22.0, 5.0]), np.zeros(5, bool))
    assert noise is not None and noise.configurations == 2 and noise.sd == pytest.approx(2**0.5)
    assert measured_noise([{"a": 1}, {"a": 2}], np.array([1.0, 2.0]), np.zeros(2, bool)) is None


def test_a_session_through_the_app_prints_default_and_best_known(
    table: tuple[Path, pd.DataFrame], tmp_path: Path
) -> None:
    path, frame = table
    out = subprocess.run(
        [
            sys.executable, "-m", "harness", "system=dataset", "tuner=random", "budget=12",
            f"dataset.path={path}", "dataset.target=throughput+", "tracking=none",
            f"results_dir={tmp_path / 'results'}", "session.progress=false",
            f"system.adapter.cache_dir={tmp_path / 'cache'}", "session.name=valid",
        ],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "backend recorded" in out.stdout
    assert "default:" in out.stdout and "by the rule:" in out.stdout
    assert f"best known: {frame['throughput+'].max():.6g}" in out.stdout
    assert "best of the 54 successful recorded rows" in out.stdout
    assert "engine: enum {inno, myisam, rocks}" in out.stderr + out.stdout  # at session start
    samples = pd.read_csv(tmp_path / "results" / "sessions" / "valid" / "samples.csv")
    recorded = _recorded(frame)
    assert len(samples) == 12
    for _, r in samples.iterrows():
        key = (
            r["config.engine"],
            r["config.compression"],
            int(r["config.buffer_mb"]),
            str(r["config.fsync"]) == "True",
        )
        assert key in recorded
    meta = (tmp_path / "results" / "sessions" / "valid" / "session.json").read_text()
    assert "best_known_source" in meta and "surrogate_inference" in meta


def test_a_marked_target_that_contradicts_the_direction_is_refused_clearly(
    table: tuple[Path, pd.DataFrame], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, _ = table
    system = DatasetSystem(str(path), "throughput", cache_dir=None)
    with caplog.at_level(logging.INFO):
        workload = SurrogateWorkload("throughput", "min")
    with pytest.raises(ConfigError, match=r"dataset\.direction=max"):
        workload.prepare(system, tmp_path)
    marked = SurrogateWorkload("throughput+", "min")  # the marker wins
    assert marked.metric == "throughput" and marked.metrics[0].direction == "max"
