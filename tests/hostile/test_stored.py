"""A session folder is data (issue 54): what ``resume=`` and ``python -m harness.cli.export`` read
from one someone else wrote can build only the project's own targets, cannot send writes
outside the folder, and gives one line instead of a traceback when it is malformed.

Each test reproduces a finding of the second hostile round; on the code before the fix the
crafted ``_target_`` ran (a marker file appeared), the re-measure command failed and the
malformed stores gave tracebacks.
"""

from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.builder.export import export_session
from harness.errors import ConfigError
from harness.store.stored_config import check_stored_targets
from tests.helpers.hostile import ROOT, harness_argv, run_harness

DATA = ROOT / "systems" / "dataset" / "data" / "moot" / "Apache_AllMeasurements.csv"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished synthetic session (3 tests), copied by each test that changes it."""
    results = tmp_path_factory.mktemp("finished")
    done = run_harness(
        results, "system=synthetic10", "tuner=random", "budget=3", "session.name=base"
    )
    assert done.returncode == 0, done.stderr
    return results / "sessions" / "base"


def _copy(finished: Path, tmp_path: Path, name: str = "copy") -> Path:
    """A copy of the finished session as ``<tmp>/results/sessions/<name>``."""
    folder = tmp_path / "results" / "sessions" / name
    shutil.copytree(finished, folder, ignore=shutil.ignore_patterns("session.lock", "export"))
    _edit_meta(folder, lambda meta: meta.update(session_id=name))
    return folder


def _edit_meta(folder: Path, change: object) -> None:
    path = folder / "session.json"
    meta = json.loads(path.read_text())
    change(meta)  # type: ignore[operator]
    path.write_text(json.dumps(meta))


def _export(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli.export", str(folder), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _one_line(done: subprocess.CompletedProcess[str], text: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and text in errors[0], done.stderr


def _plant(folder: Path, key: str, node: dict[str, object]) -> None:
    """Put ``node`` at dotted ``key`` of the stored config."""

    def change(meta: dict[str, object]) -> None:
        tree = meta["config"]
        *parents, last = key.split(".")
        for part in parents:
            tree = tree[part]  # type: ignore[index]
        tree[last] = node  # type: ignore[index]

    _edit_meta(folder, change)


# -- stored targets are data ----------------------------------------------------------------
@pytest.mark.parametrize("command", ["export", "resume"])
@pytest.mark.parametrize(
    ("key", "target"),
    [
        ("system.adapter", "shutil.copyfile"),  # any callable outside the project
        (
            "system.adapter",
            "harness.store.samples.shutil.copyfile",
        ),  # reached through a project module
        ("tuner.classifier", "shutil.copyfile"),  # nested anywhere in the tree
        (
            "workload",
            "harness.builder.export.export_config",
        ),  # a project function no config builds
    ],
)
def test_a_stored_target_outside_the_project_never_runs(
    finished: Path, tmp_path: Path, command: str, key: str, target: str
) -> None:
    folder = _copy(finished, tmp_path)
    marker = tmp_path / "ran"
    _plant(folder, key, {"_target_": target, "_args_": [str(DATA), str(marker)]})
    if command == "export":
        done = _export(folder)
    else:
        done = run_harness(tmp_path / "results", f"resume={folder}")
    _one_line(done, f"{target!r} is not a target this project builds")
    assert not marker.exists()
    assert not (folder / "export").exists()


def test_a_sibling_of_a_shipped_target_is_built_and_a_config_dir_adds_its_own(
    tmp_path: Path,
) -> None:
    from omegaconf import OmegaConf

    origin = tmp_path / "session.json"
    sibling = OmegaConf.create({"c": {"_target_": "classytune.classifiers.random_forest"}})
    check_stored_targets(sibling, origin)  # a factory beside the shipped xgboost one
    mine = OmegaConf.create({"system": {"adapter": {"_target_": "mypackage.MySystem"}}})
    with pytest.raises(ConfigError, match=r"mypackage\.MySystem"):
        check_stored_targets(mine, origin)
    own = tmp_path / "conf" / "system"
    own.mkdir(parents=True)
    (own / "mine.yaml").write_text("adapter:\n  _target_: mypackage.MySystem\n")
    check_stored_targets(mine, origin, [tmp_path / "conf"])
    helper = OmegaConf.create({"t": {"_target_": "classytune.classifiers._seed"}})
    with pytest.raises(ConfigError, match="_seed"):  # private: never a sibling
        check_stored_targets(helper, origin)


# -- paths in a session folder --------------------------------------------------------------
def test_a_resume_works_in_the_folder_that_holds_the_session_not_where_the_json_says(
    finished: Path, tmp_path: Path
) -> None:
    folder = _copy(finished, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    _edit_meta(folder, lambda meta: meta["config"].update(results_dir=str(elsewhere)))
    done = run_harness(tmp_path / "results", f"resume={folder}", "budget=4")
    assert done.returncode == 0, done.stderr
    assert not elsewhere.exists()
    assert (folder / "observations.jsonl").read_text().count("\n") == 4


@pytest.mark.parametrize("link", ["export", "samples.csv", ".session.json.tmp", "artifacts"])
def test_a_session_folder_holding_a_link_is_refused(
    finished: Path, tmp_path: Path, link: str
) -> None:
    folder = _copy(finished, tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (folder / link).unlink(missing_ok=True)
    (folder / link).symlink_to(victim)
    _one_line(_export(folder), "is a symbolic link")
    _one_line(run_harness(tmp_path / "results", f"resume={folder}", "budget=4"), "symbolic link")
    assert victim.read_text() == "precious"


def test_export_replaces_a_link_in_its_own_out_folder_and_writes_private_files(
    finished: Path, tmp_path: Path
) -> None:
    folder = _copy(finished, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (out / "best.yaml").symlink_to(victim)
    result = export_session(folder, out=out)
    assert victim.read_text() == "precious"
    assert not (out / "best.yaml").is_symlink()
    for path in result.files:
        assert path.stat().st_mode & 0o077 == 0, path
    linked = tmp_path / "linked"
    linked.symlink_to(out)
    with pytest.raises(ConfigError, match="symbolic link"):
        export_session(folder, out=linked)


# -- malformed stores are one line ----------------------------------------------------------
@pytest.mark.parametrize("text", ["[1, 2]", '"text"', "null"])
def test_a_session_json_that_is_not_an_object_is_one_line(
    finished: Path, tmp_path: Path, text: str
) -> None:
    folder = _copy(finished, tmp_path)
    (folder / "session.json").write_text(text)
    _one_line(_export(folder), "not a session record")
    _one_line(run_harness(tmp_path / "results", f"resume={folder}"), "not a session record")


@pytest.mark.parametrize(
    ("field", "value"),
    [("score", 10**400), ("metrics", {"ops": 10**400}), ("config", {"buffer_pool_mb": 10**400})],
)
def test_a_stored_number_beyond_a_float_is_one_line(
    finished: Path, tmp_path: Path, field: str, value: object
) -> None:
    folder = _copy(finished, tmp_path)
    path = folder / "observations.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record[field] = value if field != "config" else {**record["config"], **value}  # type: ignore[dict-item]
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    _one_line(_export(folder), "observations.jsonl:2 is corrupt")
    _one_line(run_harness(tmp_path / "results", f"resume={folder}"), "observations.jsonl:2")


# -- what the export prints and writes ------------------------------------------------------
def _measure_again(command: str, results: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    argv[0] = sys.executable
    argv += [f"results_dir={results}", "tracking=none", "session.progress=false"]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_the_printed_measure_again_command_runs_and_measures_the_answer(tmp_path: Path) -> None:
    table = tmp_path / "apache.csv"
    shutil.copyfile(DATA, table)
    results = tmp_path / "results"
    done = run_harness(
        results,
        "system=dataset",
        f"dataset.path={table}",
        "dataset.target=Performance-",
        "tuner=random",
        "budget=6",
        "session.name=d",
    )
    assert done.returncode == 0, done.stderr
    exported = _export(results / "sessions" / "d")
    assert exported.returncode == 0, exported.stderr
    command = exported.stdout.splitlines()[-1].removeprefix("measure it again: ")
    again = _measure_again(command, tmp_path / "again")
    assert again.returncode == 0, again.stderr
    best = json.loads((results / "sessions" / "d" / "export" / "best.json").read_text())
    (session,) = (tmp_path / "again" / "sessions").iterdir()
    (test,) = [json.loads(line) for line in (session / "observations.jsonl").open()]
    assert test["config"] == best["config"]
    assert test["metrics"] == best["metrics"]


def test_samples_csv_text_cannot_become_a_spreadsheet_formula(
    finished: Path, tmp_path: Path
) -> None:
    from harness.records import Observation, Status
    from harness.store.samples import export_csv

    formula = '=HYPERLINK("http://example.invalid","x")'
    rows = [
        Observation(0, {"mode": formula, "n": -3}, Status.FAILED, None, message="@SUM(A1)"),
        Observation(1, {"mode": "plain", "n": 2}, Status.SUCCEEDED, -1.5, {"ops": -1.5}),
    ]
    path = tmp_path / "samples.csv"
    export_csv(rows, path)
    with path.open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert table[0]["config.mode"] == "'" + formula
    assert table[0]["message"] == "'@SUM(A1)"
    assert table[0]["config.n"] == "-3"  # numbers stay numbers
    assert table[1]["score"] == "-1.5"
    assert os.stat(path).st_mode & 0o077 == 0


@pytest.mark.parametrize(
    "uri", ["http://collector.invalid:5000", "https://u:p@collector.invalid/?token={tmp}"]
)
def test_a_stored_tracking_server_needs_the_command_line(
    finished: Path, tmp_path: Path, uri: str
) -> None:
    folder = _copy(finished, tmp_path)

    def track(meta: dict[str, object]) -> None:
        meta["config"]["tracking"].update(enabled=True, uri=uri.format(tmp=tmp_path))  # type: ignore[index]

    _edit_meta(folder, track)
    results = tmp_path / "results"
    argv = [a for a in harness_argv(results, f"resume={folder}") if a != "tracking=none"]
    refused = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    _one_line(refused, "tracking store")
    assert "u:p" not in refused.stderr
    done = run_harness(results, f"resume={folder}", "budget=4", "tracking=none")
    assert done.returncode == 0, done.stderr


def test_a_stored_string_that_would_build_a_node_is_refused(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    planted = "${oc.create:'{_target_: shutil.copyfile, _args_: [a, b]}'}"
    cfg = OmegaConf.create({"system": {"adapter": {"options": planted}}})
    with pytest.raises(ConfigError, match=r"system\.adapter\.options"):
        check_stored_targets(cfg, tmp_path / "session.json")
    fine = OmegaConf.create({"uri": "sqlite:///${results_dir}/m.db", "u": "${oc.env:USER,x}"})
    check_stored_targets(fine, tmp_path / "session.json")


def test_a_stored_artifact_root_is_not_where_a_resume_writes(tmp_path: Path) -> None:
    results = tmp_path / "results"
    first = run_harness(
        results, "system=synthetic10", "budget=2", "session.name=t", "tracking.enabled=true"
    )
    assert first.returncode == 0, first.stderr
    folder = results / "sessions" / "t"
    elsewhere = tmp_path / "elsewhere"

    def plant(meta: dict[str, object]) -> None:
        meta["artifact_root"] = str(elsewhere)
        meta.pop("mlflow_run_id", None)  # a new run, whose experiment takes the root
        meta["experiment"] = "planted"

    _edit_meta(folder, plant)
    done = run_harness(results, f"resume={folder}", "budget=3", "tracking.enabled=true")
    assert done.returncode == 0, done.stderr
    assert not elsewhere.exists()
    assert any((results / "mlartifacts").iterdir())
