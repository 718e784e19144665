"""docs/architecture.md's "Adding a system", followed to the letter by a user outside the package.

A tiny system in a package of its own (on ``PYTHONPATH``) and its configs in a ``--config-dir``:
exactly the files the walkthrough lists, no selector file and no ``default.yaml``. The harness
lists it in ``--help``, refuses a workload it lacks in one line, and runs a 3-test session as a
subprocess, as a user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: The adapter package: an adapter, a knob catalogue as data, a workload.
PACKAGE = {
    "__init__.py": '''"""A toy fan: airflow from two knobs (the walkthrough's example system)."""

from toyfan.system import Breeze, FanSystem

__all__ = ["Breeze", "FanSystem"]
''',
    "knobs.yaml": """knobs:
- name: blade_deg
  type: int
  min: 5
  max: 60
  default: 20
  unit: deg
  description: blade pitch
- name: mode
  type: enum
  values: [eco, turbo]
  default: eco
  description: motor mode
""",
    "system.py": '''"""The toy fan's adapter and workload: airflow peaks at a 35 degree pitch."""

from pathlib import Path

from harness.space import Config, load_catalogue
from harness.system import MetricSpec, System, Workload


class FanSystem(System):
    """Holds the applied configuration; nothing to start or stop."""

    name = "toyfan"
    kind = "synthetic"

    def __init__(self, knob_set: str | None = None) -> None:
        super().__init__(load_catalogue(Path(__file__).with_name("knobs.yaml"), knob_set))
        self.config: Config = self.space.default()

    def apply(self, config: Config) -> None:
        self.config = dict(config)


class Breeze(Workload):
    """One reading of the airflow."""

    metrics = (MetricSpec("airflow", "max", "m3/h"),)

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        assert isinstance(system, FanSystem)
        pitch = float(system.config["blade_deg"])
        boost = 1.5 if system.config["mode"] == "turbo" else 1.0
        return {"airflow": boost * (100.0 - (pitch - 35.0) ** 2 / 10.0)}
''',
}

#: The configs in the user's --config-dir: the system and its one workload.
CONFIGS = {
    "system/toyfan.yaml": """name: toyfan
description: a toy fan (docs/architecture.md, Adding a system)
adapter:
  _target_: toyfan.FanSystem
  knob_set: null
""",
    "workloads/toyfan/breeze.yaml": """name: breeze
_target_: toyfan.Breeze
""",
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def user(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The user's folder (configs in ``conf/``) and an environment that imports ``toyfan``."""
    _write(tmp_path / "code" / "toyfan", PACKAGE)
    _write(tmp_path / "conf", CONFIGS)
    path = os.pathsep.join([str(tmp_path / "code"), str(ROOT)])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    return tmp_path, {**env, "PYTHONPATH": path}


def _harness(where: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "harness", "--config-dir", str(where / "conf"), *args]
    return subprocess.run(
        argv, cwd=where, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_users_system_runs_a_session_from_its_config_dir(
    user: tuple[Path, dict[str, str]],
) -> None:
    where, env = user
    done = _harness(where, env, "system=toyfan", "budget=3", "tracking=none", "seed=1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "FINISHED" in done.stdout
    (session,) = (where / "results" / "sessions").iterdir()
    assert session.name.startswith("toyfan-breeze-")  # its only workload is its default
    assert len((session / "observations.jsonl").read_text().splitlines()) == 3


def test_help_lists_it_and_a_workload_it_lacks_is_one_line(
    user: tuple[Path, dict[str, str]],
) -> None:
    where, env = user
    shown = _harness(where, env, "system=toyfan", "--help")
    assert shown.returncode == 0, shown.stderr[-3000:]
    systems = next(line for line in shown.stdout.splitlines() if line.startswith("system:"))
    assert "toyfan" in systems and "sqlite" in systems
    assert "workload:   breeze (of system=toyfan" in shown.stdout
    refused = _harness(where, env, "system=toyfan", "workload=gale")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "error: system 'toyfan' has no workload 'gale'; it offers: breeze (e.g. workload=breeze)"
    )


def test_a_system_without_a_workload_is_one_line(user: tuple[Path, dict[str, str]]) -> None:
    where, env = user
    bare = CONFIGS["system/toyfan.yaml"].replace("name: toyfan", "name: bare")
    _write(where / "conf", {"system/bare.yaml": bare})
    refused = _harness(where, env, "system=bare", "tracking=none")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "error: system 'bare' has no workload: add workloads/bare/<name>.yaml "
        "(name, _target_ and its settings) beside its system config"
    )
    assert not (where / "results" / "sessions").exists()  # nothing was created
