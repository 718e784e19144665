"""Multirun sweeps in parallel on this machine (Hydra's joblib launcher), into one MLflow store."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytest.importorskip("hydra_plugins.hydra_joblib_launcher")


def test_joblib_sweep_runs_jobs_in_parallel_into_one_store(tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "-m",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            "tuner=random,lhs",
            "seed=0,1",
            "system=synthetic10",
            "budget=30",
            f"results_dir={tmp_path}",
            "session.progress=false",
            f"tracking.uri={uri}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "error" not in done.stderr.lower(), done.stderr[-3000:]
    client = MlflowClient(tracking_uri=uri)
    experiments = [e.experiment_id for e in client.search_experiments()]
    runs = client.search_runs(experiments, max_results=1000)
    sessions = [r for r in runs if r.data.tags.get("harness.kind") == "session"]
    assert len(sessions) == 4 and all(r.info.status == "FINISHED" for r in sessions)
    assert len(runs) == 4 + 4 * 30
    # Two jobs at a time: some pair of sessions was running at the same moment.
    spans = sorted((r.info.start_time, r.info.end_time) for r in sessions)
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))


def test_submitit_local_sweep_lands_in_one_store(tmp_path: Path) -> None:
    """submitit_local is the Slurm launcher's code path without the scheduler (docs/remote.md)."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "-m",
            "hydra/launcher=submitit_local",
            "tuner=random,lhs",
            "system=synthetic10",
            "budget=10",
            f"results_dir={tmp_path}",
            "session.progress=false",
            f"tracking.uri={uri}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs(
        [e.experiment_id for e in client.search_experiments()],
        filter_string="tags.`harness.kind` = 'session'",
    )
    assert sorted(r.data.tags["harness.tuner"] for r in runs) == ["lhs", "random"]
