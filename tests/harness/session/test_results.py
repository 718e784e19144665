"""Finished sessions as tables (harness.session.results, api.sessions/api.tests), the
comparison command and the table at the end of a sweep: real sessions on the synthetic system."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import api
from harness.cli.compare import comparison, main, sessions_of
from harness.cli.report import summary
from harness.errors import StoreError
from harness.session.results import SESSION_COLUMNS, load_result
from harness.store.samples import SampleStore
from tests.helpers.sweeps import ROOT, harness_sweep


def _session(results: Path, tuner: str, seed: int, *more: str) -> Path:
    overrides = [
        "system=synthetic10",
        f"tuner={tuner}",
        "budget=6",
        f"seed={seed}",
        "tracking=none",
        "session.progress=false",
        f"results_dir={results}",
        *more,
    ]
    return api.run(api.compose(overrides)).directory


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three random-search and one BestConfig session, one of them with confirmation runs."""
    folder = tmp_path_factory.mktemp("results")
    _session(folder, "random", 0, "session.confirm=2")
    for tuner, seed in (("random", 1), ("random", 2), ("bestconfig", 0)):
        _session(folder, tuner, seed)
    return folder


def test_one_row_per_session_with_the_summarys_own_numbers(results: Path) -> None:
    frame = api.sessions(results)
    assert list(frame.columns) == list(SESSION_COLUMNS)
    assert sorted(zip(frame["tuner"], frame["seed"], strict=True)) == [
        ("bestconfig", 0),
        ("random", 0),
        ("random", 1),
        ("random", 2),
    ]
    assert set(frame["tests"]) == {6} and set(frame["status"]) == {"FINISHED"}
    for _, row in frame.iterrows():
        result = load_result(row["folder"])
        text = summary(result)
        assert f"{row['improvement'] * 100:+.1f}%" in text
        assert row["best"] == max(o.score for o in result.observations if o.score is not None)
    confirmed = frame[frame["confirmed_improvement"].notna()]
    assert list(confirmed["seed"]) == [0] and list(confirmed["tuner"]) == ["random"]


def test_one_row_per_test_with_typed_config_columns(results: Path) -> None:
    tests = api.tests(results)
    assert len(tests) == 4 * 6
    one = tests[tests["session"] == tests["session"].iloc[0]]
    assert list(one["trial"]) == list(range(6)) and one["is_default"].tolist()[0]
    assert one["best_so_far"].is_monotonic_increasing  # throughput is maximised
    assert tests["config.flush_policy"].map(type).eq(str).all()
    assert tests["config.compression"].map(type).eq(bool).all()
    assert {"config.buffer_pool_mb", "result.throughput", "tuner", "seed"} <= set(tests.columns)


def test_the_comparison_has_a_row_per_session_and_means_over_seeds(results: Path) -> None:
    text = comparison(api.sessions(results))
    lines = text.splitlines()
    assert lines[1].split() == [
        "tuner",
        "seed",
        "best",
        "improvement",
        "confirmed",
        "tests",
        "failed",
    ]
    assert sum(line.startswith("random ") for line in lines) == 4  # 3 sessions + the mean
    assert "means over seeds:" in text
    mean = next(line for line in lines if line.startswith("random ") and " 3 " in line)
    assert mean.split()[1] == "3"


def test_compare_reads_session_folders_and_refuses_a_missing_one(
    results: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    one = sorted((results / "sessions").iterdir())[:2]
    assert main([str(folder) for folder in one]) == 0
    out = capsys.readouterr().out
    assert out.count("\nrandom ") + out.count("\nbestconfig ") == 2
    assert "means over seeds" not in out
    assert main([str(results), "--csv", str(tmp_path / "sessions.csv")]) == 0
    assert len((tmp_path / "sessions.csv").read_text().splitlines()) == 1 + 4
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_failed_counts_the_tests_without_a_measurement(tmp_path: Path) -> None:
    def half(config: dict[str, float]) -> float:
        if config["x"] > 0.5:
            raise RuntimeError("refused")
        return config["x"]

    result = api.tune(half, {"x": (0.0, 1.0)}, budget=10, tuner="random", results_dir=tmp_path)
    row = api.sessions(tmp_path).iloc[0]
    refused = sum(float(o.config["x"]) > 0.5 for o in result.session.observations)
    assert row["failed"] == refused > 0
    assert row["stopped_early"] == 0 and row["best"] == result.best_value
    assert result.best_value is not None and result.best_value <= 0.5


def test_a_corrupt_session_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "session.json").write_text("[1, 2]")
    with pytest.raises(StoreError, match="not a session record"):
        api.sessions(folder)


def test_a_sweep_ends_with_the_comparison_and_compare_reads_its_folder(tmp_path: Path) -> None:
    results = tmp_path / "results"
    done = harness_sweep(
        [
            "system=synthetic10",
            "budget=5",
            "tracking=none",
            "session.progress=false",
            f"results_dir={results}",
            "tuner=random,bestconfig",
            "seed=0,1",
        ]
    )
    assert isinstance(done, subprocess.CompletedProcess)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # each job says one line; the sweep's end is one table
    ends = [line for line in out.splitlines() if line.startswith("session synthetic10-")]
    assert len(ends) == 4 and all(" FINISHED, best " in line for line in ends)
    assert "best configuration" not in out
    table = out[out.index("comparison (max throughput") :]
    assert [line.split()[:2] for line in table.splitlines()[2:6]] == [
        ["random", "0"],
        ["random", "1"],
        ["bestconfig", "0"],
        ["bestconfig", "1"],
    ]
    sweep = next((results / "multirun").glob("*/*"))
    assert len(sessions_of([sweep])) == 4
    again = subprocess.run(
        [sys.executable, "-m", "harness.cli.compare", str(sweep)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert again.stdout.strip() == table.strip()
    outcome = json.loads(next(sweep.rglob("harness_outcome.json")).read_text())
    assert SampleStore(outcome["session"]).exists
