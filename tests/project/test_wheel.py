"""The built wheel works on its own: configs ship inside it and its console script runs.

The wheel is built from the checkout, installed (without dependencies) into a fresh venv, and
run from a folder outside the checkout. The fresh venv borrows the dependencies (Hydra, MLflow,
numpy...) from the test's own environment through a ``.pth`` line — after its own
site-packages, so the wheel's ``harness`` is the one imported, never the checkout's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

#: What the wheel is not built from (environments, caches, run outputs).
NOT_SOURCE = (".git", ".venv", "results", "build", "dist", "*.egg-info", "__pycache__", ".*cache*")


def _run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    # a fresh user's environment: no tracking store inherited from other tests (MLflow's
    # set_tracking_uri exports MLFLOW_TRACKING_URI to the whole process)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("MLFLOW_")
    }
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; returns its bin/ folder."""
    base = tmp_path_factory.mktemp("wheel")
    # a copy of the sources: building in the checkout would leave build/ and egg-info there;
    # built in pip's isolated environment, with the setuptools pyproject.toml asks for
    source = base / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "-q",
            "-w",
            str(base / "dist"),
        ],
        cwd=base,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (base / "dist").glob("classytune_harness-*.whl")
    venv.create(base / "venv", with_pip=False)
    python = base / "venv" / "bin" / "python"
    done = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        cwd=base,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    site = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base
    )
    # the dependencies of this environment, searched after the wheel's own site-packages
    Path(site.stdout.strip(), "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return python.parent


def test_the_wheel_holds_the_configs_and_its_own_code(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import json, harness, harness.conf, baselines, classytune, systems, paper; "
        "print(json.dumps({'harness': harness.__file__, 'conf': str(harness.conf.CONFIG_DIR), "
        "'tuners': sorted(p.stem for p in (harness.conf.CONFIG_DIR / 'tuner').glob('*.yaml'))}))"
    )
    done = _run([str(installed / "python"), "-c", probe], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    where = json.loads(done.stdout)
    venv_root = str(installed.parent)
    assert where["harness"].startswith(venv_root) and not where["harness"].startswith(str(ROOT))
    assert where["conf"].startswith(venv_root)
    assert {"classytune", "bestconfig", "gpbo", "random"} <= set(where["tuners"])


def test_the_console_script_runs_a_session_outside_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    done = _run(
        [str(installed / "classytune-harness"), "system=synthetic10", "budget=5"], cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "FINISHED" in done.stdout
    sessions = list((tmp_path / "results" / "sessions").iterdir())
    assert len(sessions) == 1
    lines = (sessions[0] / "observations.jsonl").read_text().splitlines()
    assert len(lines) == 5
    assert (tmp_path / "results" / "mlflow.db").exists()  # the default tracking store


def test_the_console_script_answers_help(installed: Path, tmp_path: Path) -> None:
    done = _run([str(installed / "classytune-harness"), "--help"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tuner" in done.stdout and "system" in done.stdout


def test_the_wheel_finds_the_paper_recipes_and_generates_workload_choices(
    installed: Path, tmp_path: Path
) -> None:
    # the recipes are package data of paper.conf, on the search path as pkg://paper.conf; the
    # workload choices and a one-workload system's default are generated from the wheel's files
    probe = (
        "import json; from harness import api; "
        "fig6 = api.compose(['+experiment=fig6']); "
        "moot = api.compose(['system=moot_apache']); "
        "mysql = api.compose(['system=mysql', 'workload=readonly']); "
        "print(json.dumps([fig6.tracking.experiment, moot.workload.name, mysql.workload.name]))"
    )
    done = _run([str(installed / "python"), "-c", probe], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == ["fig6", "surrogate", "readonly"]
    shown = _run([str(installed / "classytune-harness"), "--help"], cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "fig6, fig6_real" in shown.stdout  # +experiment's options, from the wheel's paper.conf
