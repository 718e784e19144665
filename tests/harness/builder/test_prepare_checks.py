"""A command line that cannot run fails in ``prepare``: exit 2, one line on stderr, no session
folder. A missing optional package is simulated in the subprocess by a finder that refuses
it (a wrapper script), never by uninstalling it from the shared venv."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import install
from harness.builder import extras
from harness.builder.extras import missing_extra
from harness.builder.validate import unknown_option_message
from harness.install import install_command

ROOT = Path(__file__).resolve().parents[3]

#: Runs ``python -m harness`` with the packages named in argv[1] (comma-separated) missing.
WRAPPER = """
import sys

blocked = set(filter(None, sys.argv[1].split(",")))


class RefusePackages:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, RefusePackages())
sys.argv = ["harness", *sys.argv[2:]]
from harness.cli.app import main

main()
"""


def _harness(tmp_path: Path, *arguments: str, missing: str = "") -> subprocess.CompletedProcess:
    wrapper = tmp_path / "without.py"
    wrapper.write_text(WRAPPER)
    command = [sys.executable, str(wrapper), missing, *arguments]
    command += ["budget=3", f"results_dir={tmp_path / 'results'}", "session.progress=false"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def _one_line_and_nothing_created(done: subprocess.CompletedProcess, tmp_path: Path) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert not (tmp_path / "results" / "sessions").exists()
    assert not (tmp_path / "results" / "mlflow.db").exists()
    return lines[0]


@pytest.mark.parametrize(
    ("choice", "package", "extra"),
    [
        ("tuner=optuna_tpe", "optuna", "peers"),
        ("tuner=smac", "smac", "peers"),
        ("hosts=loopback", "fabric", "remote"),
    ],
)
def test_a_missing_extra_names_its_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, choice: str, package: str, extra: str
) -> None:
    done = _harness(tmp_path, choice, missing=package)
    line = _one_line_and_nothing_created(done, tmp_path)
    monkeypatch.chdir(ROOT)
    assert f"{choice} needs the optional extra '{extra}'" in line
    assert f"({package} is not installed)" in line
    assert line.endswith(install_command(extra))


def test_a_refused_option_value_fails_before_the_session(tmp_path: Path) -> None:
    line = _one_line_and_nothing_created(_harness(tmp_path, "tuner.rounds=-1"), tmp_path)
    assert line == "error: tuner 'classytune': rounds must be >= 1"


@pytest.mark.parametrize("override", ["tuner.rouns=3", "+tuner.rouns=3"])
def test_a_mistyped_option_gets_did_you_mean(tmp_path: Path, override: str) -> None:
    line = _one_line_and_nothing_created(_harness(tmp_path, override), tmp_path)
    assert "has no option 'rouns' (did you mean 'rounds'" in line


def test_the_editable_checkout_gets_its_own_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(install, "editable_root", lambda: tmp_path)
    monkeypatch.setattr(sys, "executable", str(tmp_path / ".venv" / "bin" / "python"))
    assert install_command("peers") == ".venv/bin/pip install -e '.[peers]'"
    monkeypatch.chdir("/")
    assert install_command("peers") == (f"{tmp_path}/.venv/bin/pip install -e '{tmp_path}[peers]'")


def test_an_installed_wheel_gets_the_published_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install, "editable_root", lambda: None)
    assert install_command("peers") == "pip install 'classytune-harness[peers]'"


def test_extras_are_read_from_the_project_and_the_source() -> None:
    assert extras.extra_of_module()["optuna"] == "peers"
    assert extras.extra_of_module()["fabric"] == "remote"
    assert extras.extra_of_module()["psycopg"] == "drivers"
    assert "optuna" in extras.imported_packages("baselines.optuna_peers.OptunaTuner")
    assert missing_extra("systems.sqlite.system.SQLiteSystem") is None


def test_a_long_option_list_is_not_printed() -> None:
    options = [f"option_{i}" for i in range(40)]
    message = unknown_option_message("tuner 'x'", "zzz", options)
    assert "option_0" not in message
    assert "--package tuner" in message


def test_the_printed_mlflow_command_starts_one_worker_and_says_how_to_get_the_ui(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.tracking import mlflow_tracker

    tracker = object.__new__(mlflow_tracker.MlflowTracker)
    tracker.run_id, tracker.uri, tracker.experiment_id = "r1", "sqlite:///m.db", "1"
    tracker._shown = "sqlite:///m.db"
    monkeypatch.setattr(mlflow_tracker, "_ui_installed", lambda: True)
    assert "mlflow ui --workers 1 --backend-store-uri sqlite:///m.db" in tracker.where()
    monkeypatch.setattr(mlflow_tracker, "_ui_installed", lambda: False)
    assert f"browse: {install_command('ui')}, then " in tracker.where()
