"""api.tune: a Python function tuned through the session loop, and the README's snippet."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness import api
from harness.builder.function import space_from_shorthand
from harness.errors import ConfigError
from harness.session.results import load_result
from tests.helpers.sweeps import ROOT

SPACE = {"x": (0.0, 1.0), "n": (1, 64), "mode": ["a", "b"], "on": [True, False]}


def _score(config: dict) -> float:
    return -((config["x"] - 0.3) ** 2) + config["n"] / 64 + (config["mode"] == "b") + config["on"]


def test_the_shorthand_makes_float_int_enum_and_bool_knobs() -> None:
    space = space_from_shorthand({**SPACE, "rate": (1e-4, 1e-1, "log")})
    assert [space[k].type for k in space.names] == ["float", "int", "enum", "bool", "float"]
    assert space["n"].default == 32 and space["mode"].default == "a" and space["on"].default
    assert space["rate"].log and space["rate"].default == pytest.approx(1e-4**0.5 * 1e-1**0.5)


@pytest.mark.parametrize(
    ("space", "says"),
    [
        ({"x": (1.0,)}, "space['x']: (1.0,) is not a range"),
        ({"x": (2, 1)}, "space['x']: range (2, 1): low must be below high"),
        ({"x": ["a"]}, "space['x']: ['a']: a list of at least two different values"),
        ({"x": [True, "a"]}, "booleans and other values cannot be mixed"),
        ({"x": "abc"}, "space['x']: 'abc' is not a range"),
        ({"x": (0, "9")}, "space['x']: (0, '9') is not a range"),
        ({}, "space: a dict of knob name"),
    ],
)
def test_a_bad_shorthand_is_one_line(space: dict, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)) as caught:
        api.tune(_score, space, budget=3)
    assert "\n" not in str(caught.value)


def test_a_function_is_maximised_in_memory() -> None:
    result = api.tune(_score, SPACE, budget=12, tuner="random", seed=1)
    frame = result.to_dataframe()
    assert len(frame) == 12 and frame["is_default"].tolist()[0]
    assert result.best_value == frame["value"].max() == frame["best_so_far"].iloc[-1]
    assert result.best_value == _score(result.best_config)  # type: ignore[arg-type]
    assert set(result.best_config) == set(SPACE)  # type: ignore[arg-type]
    assert not result.session.directory.exists()  # nothing written


def test_minimise_a_dict_of_metrics_and_a_failing_test_is_only_a_failure() -> None:
    def latency(config: dict) -> dict[str, float]:
        if config["x"] > 0.9:
            raise ValueError("too far")
        return {"latency": abs(config["x"] - 0.5), "other": 1.0}

    result = api.tune(
        latency, {"x": (0.0, 1.0)}, budget=15, tuner="random", direction="min", metric="latency"
    )
    frame = result.to_dataframe()
    assert result.best_value == frame["value"].min()
    failed = frame[frame["status"] != "SUCCEEDED"]
    assert (frame["config.x"] > 0.9).sum() == len(failed)
    assert failed["message"].str.contains("latency raised ValueError: too far").all()


def test_a_durable_session_is_a_folder_and_an_mlflow_run(tmp_path: Path) -> None:
    result = api.tune(
        _score, SPACE, budget=6, tuner="bestconfig", results_dir=tmp_path, tracking=True
    )
    folder = result.session.directory
    assert folder.parent == tmp_path / "sessions" and (folder / "samples.csv").exists()
    assert load_result(folder).value(load_result(folder).answer) == result.best_value
    row = api.sessions(tmp_path).iloc[0]
    assert (row["tuner"], row["tests"], row["status"]) == ("bestconfig", 6, "FINISHED")
    assert result.session.tracking.startswith("MLflow run ")
    assert (tmp_path / "mlflow.db").exists()


def test_unknown_tuner_and_tracking_without_a_folder_are_one_line() -> None:
    with pytest.raises(ConfigError, match=r"unknown tuner 'nope'; the tuners are: .*random"):
        api.tune(_score, SPACE, budget=3, tuner="nope")
    with pytest.raises(ConfigError, match="give results_dir= too"):
        api.tune(_score, SPACE, budget=3, tracking=True)


def test_the_readme_snippet_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text()
    snippet = readme.split("<!-- api.tune: tests/harness/test_tune.py runs this -->")[1]
    code = snippet.split("```python\n")[1].split("```")[0]
    assert len(code.strip().splitlines()) <= 6
    exec(compile(code, "README.md", "exec"), {})
    assert "'x':" in capsys.readouterr().out
