"""Hostile data (issue 54): nothing read from a cache, an artifact folder or a dataset path
runs code, is trusted beyond what it can be checked for, hangs, or is echoed back.

* The surrogate fit cache holds plain arrays (no pickle), checked before any tree is rebuilt,
  in a folder under ``results_dir`` (or the user's cache folder) that must be the user's own.
* A cached optimum must be exactly what the model predicts at its configuration.
* ``python -m classytune.analyze`` never loads a pickle, and reads only ``classifier.json``
  inside the folder; malformed JSON is one line; ``samples.csv`` cells cannot be formulas.
* A dataset path that is a FIFO is refused at once; parse errors name places, not content;
  a bad ``default_config`` is one line; a large table shows its progress.

A planted pickle creates a marker folder when unpickled: its absence proves no code ran.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import pickle
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from omegaconf import DictConfig

from baselines.sampling import LHSTuner
from classytune.analyze import main as analyze_main
from classytune.model_io import _jsonable, _knob_entry, save_artifacts
from harness.errors import ConfigError
from harness.records import Observation, Status
from harness.space import Knob, Space
from systems.dataset import DatasetSystem
from systems.dataset import model as model_module
from systems.dataset.tables import parse_csv
from systems.synthetic import SyntheticSystem
from tests.conftest import group_options
from tests.helpers.hostile import ROOT, run_harness

Compose = Callable[..., DictConfig]


class _Payload:
    """Unpickling this creates ``marker`` (a folder): proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (str(self.marker),))


def _table(folder: Path) -> Path:
    """A small recorded table: three knobs, a throughput, six failed rows (value -1)."""
    rng = np.random.default_rng(0)
    lines = ["a,b,mode,y"]
    for i in range(60):
        a, b, mode = rng.random(), int(rng.integers(1, 64)), ["x", "y", "z"][i % 3]
        y = -1 if i % 10 == 0 else 10 + 5 * a + b / 10 + (mode == "y") + rng.normal(0, 0.2)
        lines.append(f"{a:.4f},{b},{mode},{y:.4f}")
    path = folder / "table.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _surrogate(table: Path, cache: Path | str | None) -> DatasetSystem:
    return DatasetSystem(
        str(table),
        "y",
        cache_dir=None if cache is None else str(cache),
        backend="surrogate",
        failure_value=-1,
        n_estimators=20,
        allow_poor_fidelity=True,
    )


@pytest.fixture
def private(tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    return folder


def _no_refit(monkeypatch: pytest.MonkeyPatch) -> None:
    def refit(*args: object, **kwargs: object) -> None:
        raise AssertionError("refitted although a valid cached model exists")

    monkeypatch.setattr(model_module.SurrogateModel, "fit", refit)


# -- finding 1: the fit cache is data, checked before use ---------------------------------
def test_a_planted_pickle_in_the_fit_cache_runs_no_code(tmp_path: Path, private: Path) -> None:
    table = _table(tmp_path)
    key = _surrogate(table, None).model_key
    marker = tmp_path / "pwned"
    for suffix in (".pkl", ".npz"):  # the old name and the new one
        (private / f"surrogate-{key}{suffix}").write_bytes(pickle.dumps(_Payload(marker)))
    model_module.clear_memory_cache()
    system = _surrogate(table, private)
    assert not marker.exists()
    assert system.model is not None and system.model.has_failure_model


def test_a_loaded_model_predicts_exactly_as_the_fitted_one(
    tmp_path: Path, private: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_module.clear_memory_cache()
    fitted = _surrogate(_table(tmp_path), private).model
    assert fitted is not None and len(list(private.glob("surrogate-*.npz"))) == 1
    model_module.clear_memory_cache()
    _no_refit(monkeypatch)
    loaded = _surrogate(_table(tmp_path), private).model
    assert loaded is not None and loaded is not fitted
    x = np.random.default_rng(1).random((1000, 3))
    assert np.array_equal(loaded.predict(x), fitted.predict(x))
    assert np.array_equal(loaded.failure_probability(x), fitted.failure_probability(x))
    assert np.array_equal(loaded.residuals, fitted.residuals)
    assert loaded.fidelity == fitted.fidelity and loaded.value_range == fitted.value_range


def _tamper(path: Path, change: str, marker: Path) -> None:
    with np.load(path, allow_pickle=False) as npz:
        arrays = {name: npz[name].copy() for name in npz.files}
    nodes = arrays["reg_nodes"]
    meta = json.loads(arrays["meta"].tobytes())
    if change == "cycle":
        nodes["left_child"][0] = 0
    elif change == "child out of the tree":
        nodes["right_child"][0] = 10**9
    elif change == "leaf with a child":
        leaf = int(np.flatnonzero(nodes["left_child"] == -1)[0])
        nodes["right_child"][leaf] = leaf + 1
    elif change == "feature":
        nodes["feature"][0] = 3
    elif change == "threshold":
        nodes["threshold"][0] = np.nan
    elif change == "values dtype":
        arrays["reg_values"] = arrays["reg_values"].astype(np.float32)
    elif change == "node dtype":
        arrays["reg_nodes"] = np.zeros(len(nodes), dtype=[("left_child", "<i8")])
    elif change == "counts":
        arrays["reg_counts"][0] += 1
    elif change == "key":
        meta["key"] = "0" * 24
    elif change == "data digest":
        meta["data"] = "0" * 64
    elif change == "object array":
        arrays["residuals"] = np.array([_Payload(marker)], dtype=object)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with path.open("wb") as out:
        np.savez(out, **arrays)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [
        "cycle",
        "child out of the tree",
        "leaf with a child",
        "feature",
        "threshold",
        "values dtype",
        "node dtype",
        "counts",
        "key",
        "data digest",
        "object array",
    ],
)
def test_a_tampered_cache_file_is_ignored_with_a_warning_and_refitted(
    tmp_path: Path, private: Path, change: str, caplog: pytest.LogCaptureFixture
) -> None:
    model_module.clear_memory_cache()
    table = _table(tmp_path)
    fitted = _surrogate(table, private).model
    assert fitted is not None
    (path,) = private.glob("surrogate-*.npz")
    marker = tmp_path / "pwned"
    _tamper(path, change, marker)
    model_module.clear_memory_cache()
    with caplog.at_level(logging.WARNING):
        again = _surrogate(table, private).model
    assert any("ignoring the surrogate cache" in r.getMessage() for r in caplog.records)
    assert not marker.exists()
    x = np.random.default_rng(2).random((200, 3))
    assert again is not None and np.array_equal(again.predict(x), fitted.predict(x))


def test_a_cache_file_of_another_key_is_not_used(
    tmp_path: Path, private: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model_module.clear_memory_cache()
    table = _table(tmp_path)
    first = _surrogate(table, private)
    (path,) = private.glob("surrogate-*.npz")
    other = table.read_text().replace("\n0.", "\n0.1", 1)  # other data: another key
    table.write_text(other)
    model_module.clear_memory_cache()
    second_key = _surrogate(table, None).model_key
    assert second_key != first.model_key
    path.rename(private / f"surrogate-{second_key}.npz")
    model_module.clear_memory_cache()
    with caplog.at_level(logging.WARNING):
        _surrogate(table, private)
    assert any("its key is" in r.getMessage() for r in caplog.records)


# -- finding 2: caches live under results_dir or the user's cache folder, and are private --
def test_every_system_config_caches_under_results_dir(
    compose_cfg: Compose, tmp_path: Path
) -> None:
    names = [n for n in group_options("system") if "cache_dir" in _system_yaml(n)]
    assert len(names) >= 10
    for name in names:
        cfg = compose_cfg(f"system={name}")
        expected = str(tmp_path / "results" / "cache" / "surrogates")
        assert cfg.system.adapter.cache_dir == expected, name


def _system_yaml(name: str) -> str:
    return (ROOT / "harness" / "conf" / "system" / f"{name}.yaml").read_text()


def test_the_default_cache_is_the_users_own_folder_not_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _table(tmp_path)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    model_module.clear_memory_cache()
    DatasetSystem(str(table), "y", backend="surrogate", failure_value=-1, n_estimators=20)
    assert list(work.iterdir()) == []
    folder = tmp_path / "xdg" / "classytune-harness" / "surrogates"
    files = list(folder.iterdir())
    assert [f.suffix for f in files] == [".npz"]
    for made in (folder, folder.parent, tmp_path / "xdg"):
        assert made.stat().st_mode & 0o777 == 0o700, made
    assert files[0].stat().st_mode & 0o777 == 0o600


def test_a_cache_folder_others_can_write_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    model_module.clear_memory_cache()
    with caplog.at_level(logging.WARNING):
        system = _surrogate(_table(tmp_path), shared)
        system.known_optimum()
    assert system.model is not None
    assert list(shared.iterdir()) == []  # nothing cached, nothing read
    refusals = [r for r in caplog.records if "group or others can write" in r.getMessage()]
    assert len(refusals) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_a_cache_file_owned_by_another_user_is_not_read(
    tmp_path: Path, private: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_module.clear_memory_cache()
    table = _table(tmp_path)
    _surrogate(table, private)
    (path,) = private.glob("surrogate-*.npz")
    os.chown(path, 65534, 65534)
    model_module.clear_memory_cache()
    calls: list[int] = []
    fit = model_module.SurrogateModel.fit

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return fit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(model_module.SurrogateModel, "fit", counted)
    _surrogate(table, private)
    assert calls == [1]


# -- finding 12: a poisoned cached optimum is not trusted -----------------------------------
def test_a_poisoned_cached_optimum_is_searched_again(tmp_path: Path, private: Path) -> None:
    model_module.clear_memory_cache()
    table = _table(tmp_path)
    _, value = _surrogate(table, private).known_optimum()
    (path,) = private.glob("optimum-*.json")
    cached = json.loads(path.read_text())
    cached["value"] = 99999.0
    path.write_text(json.dumps(cached))
    _, again = _surrogate(table, private).known_optimum()
    assert again == value != 99999.0


# -- findings 3 and 4: analyze loads no pickle and stays in its folder ---------------------
def _artifacts(folder: Path, model_file: str | None, classifier: str = "decision_tree") -> Path:
    space = SyntheticSystem("10").space
    configs = [space.decode(p) for p in np.random.default_rng(0).random((12, space.dim))]
    points = space.encode_many(configs)
    scores = points[:, 0] + points[:, 1]
    settings = {
        "format": 1,
        "tuner": {"seed": 0},
        "space": [_knob_entry(k) for k in space.knobs],
        "induction": "zorder",
        "bits": 10,
        "classifier": classifier,
        "model_file": model_file,
        "best_trial": 0,
        "round_log": [],
    }
    samples = {
        "points": points.tolist(),
        "imputed_score": scores.tolist(),
        "configs": configs,
        "trials": list(range(12)),
    }
    folder.mkdir(parents=True)
    (folder / "settings.json").write_text(json.dumps(_jsonable(settings)))
    (folder / "samples.json").write_text(json.dumps(_jsonable(samples)))
    return folder


def _analyze(folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = analyze_main([str(folder), "--probes", "2", "--members", "2"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_analyze_never_unpickles_the_model_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _artifacts(tmp_path / "artifacts", "classifier.joblib")
    marker = tmp_path / "pwned"
    (folder / "classifier.joblib").write_bytes(pickle.dumps(_Payload(marker)))
    rc, out, err = _analyze(folder, capsys)
    assert not marker.exists()
    assert rc == 0, err
    notes = [line for line in out.splitlines() if "refitted from samples.json" in line]
    assert len(notes) == 1 and "decision_tree" in notes[0]


def test_analyze_reads_no_model_file_outside_its_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = tmp_path / "pwned"
    (outside / "classifier.joblib").write_bytes(pickle.dumps(_Payload(marker)))
    folder = _artifacts(tmp_path / "a" / "b", "../../outside/classifier.joblib")
    rc, _, err = _analyze(folder, capsys)
    assert not marker.exists()
    assert rc == 2 and "only classifier.json" in err and "Traceback" not in err
    linked = _artifacts(tmp_path / "linked", "classifier.json", classifier="xgboost")
    (outside / "model.json").write_text("{}")
    (linked / "classifier.json").symlink_to(outside / "model.json")
    rc, _, err = _analyze(linked, capsys)
    assert rc == 2 and "symbolic link" in err


@pytest.mark.parametrize(
    ("file", "content", "fragment"),
    [
        ("samples.json", "{}", "samples.json is not a samples table"),
        ("samples.json", "[1, 2]", "not an object"),
        ("samples.json", '{"points": [[1]], "imputed_score": [1], "configs": [{}]}', "samples"),
        ("settings.json", "[]", "not an object"),
        ("settings.json", '{"format": 1, "space": []}', "at least one knob"),
        ("settings.json", '{"format": 1, "space": 3}', "unreadable"),
    ],
)
def test_malformed_artifacts_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, content: str, fragment: str
) -> None:
    folder = _artifacts(tmp_path / "artifacts", None)
    (folder / file).write_text(content)
    rc, _, err = _analyze(folder, capsys)
    assert rc == 2 and fragment in err and len(err.strip().splitlines()) == 1, err


def test_samples_csv_cells_are_never_formulas(tmp_path: Path) -> None:
    hostile = ("=HYPERLINK(1)", "+1+1", "-x", "@SUM(A1)", "plain", "-3.5")
    space = Space(
        (
            Knob("mode", "enum", default="plain", values=hostile),
            Knob("size", "float", low=-5.0, high=5.0, default=-3.5),
        )
    )
    tuner = LHSTuner(space, seed=0, budget=len(hostile))
    tuner.tell(
        [
            Observation(i, {"mode": value, "size": -3.5}, Status.SUCCEEDED, float(i))
            for i, value in enumerate(hostile)
        ]
    )
    save_artifacts(
        tmp_path, tuner, None, induction="zorder", bits=10, classifier="x", round_log=[]
    )
    with (tmp_path / "samples.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    modes = [row["config.mode"] for row in rows]
    assert modes == ["'=HYPERLINK(1)", "'+1+1", "'-x", "'@SUM(A1)", "plain", "-3.5"]
    assert {row["config.size"] for row in rows} == {"-3.5"}


# -- the dataset path and the table ---------------------------------------------------------
def test_a_fifo_as_dataset_path_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "table.csv"
    os.mkfifo(fifo)
    try:
        done = run_harness(
            tmp_path / "results",
            "system=dataset",
            f"dataset.path={fifo}",
            "dataset.target=y",
            "budget=3",
            timeout_s=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the harness blocked on the FIFO")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "not a regular file (it is a FIFO)" in errors[0]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("token.txt", "SECRET-TOKEN-123\nmore\n"),
        ("shadow.csv", "root:SECRET$6$hash:19000:0:99999:7:::\n"),
        (
            "bad.arff",
            "@relation r\n@attribute a {p,q}\n@attribute y numeric\n@data\nSECRET,1\n",
        ),
        ("kind.arff", "@relation r\n@attribute a SECRET\n@data\n1\n"),
        ("cells.csv", "a,y\n" + "".join(f"{i},{i}\n" for i in range(30)) + "SECRET,3\n"),
        ("target.csv", "a,y\n" + "".join(f"{i},{i}\n" for i in range(30)) + "3,SECRET\n"),
    ],
)
def test_a_parse_error_names_the_place_not_the_content(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        DatasetSystem(str(path), "y", cache_dir=None)
    assert "SECRET" not in str(caught.value)
    assert "line" in str(caught.value)


@pytest.mark.parametrize("value", [[1, 2], 5, "x", {"a": [1]}, {"a": {"b": 1}}])
def test_a_default_config_that_is_not_knob_values_is_a_config_error(
    tmp_path: Path, value: object
) -> None:
    with pytest.raises(ConfigError, match="default_config"):
        DatasetSystem(str(_table(tmp_path)), "y", cache_dir=None, default_config=value)  # type: ignore[arg-type]


def test_default_config_from_the_command_line_is_one_line(tmp_path: Path) -> None:
    done = run_harness(
        tmp_path / "results",
        "system=dataset",
        f"dataset.path={_table(tmp_path)}",
        "dataset.target=y",
        "dataset.default_config={nope:1}",
        "budget=3",
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "unknown knob 'nope'" in done.stderr


def test_a_large_table_reports_progress_while_it_loads(caplog: pytest.LogCaptureFixture) -> None:
    text = "a,y\n" + "1,2\n" * 200_001
    with caplog.at_level(logging.INFO, logger="systems.dataset.tables"):
        table = parse_csv(text, source="big.csv")
    assert len(table.rows) == 200_001
    assert any("200000 rows read" in r.getMessage() for r in caplog.records)
