"""A multirun sweep on a real (single-node) Slurm through hydra-submitit-launcher, every job
landing in one MLflow store (issue #20 item 5). The cluster is started and stopped here
(:mod:`tests.slurm`); the test skips where slurm-wlm and munge are not installed."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import slurm

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[slurm.SlurmCluster]:
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    if not slurm.available():
        pytest.skip("slurm-wlm and munge are not installed (scripts/setup.sh --full), or not root")
    made = slurm.start(tmp_path_factory.mktemp("slurm"))
    try:
        yield made
    finally:
        made.stop()
        deadline = time.monotonic() + 15  # a job step may still be exiting
        while True:
            left = subprocess.run(
                ["pgrep", "-af", made.folder], capture_output=True, text=True
            ).stdout.strip()
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert not left, f"Slurm processes left running: {left}"


def test_a_sweep_of_four_sessions_runs_as_slurm_jobs_into_one_store(
    cluster: slurm.SlurmCluster, tmp_path: Path
) -> None:
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"

    def sweep(number: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "harness",
                "-m",
                "hydra/launcher=submitit_slurm",
                "hydra.launcher.timeout_min=10",
                "hydra.launcher.cpus_per_task=1",
                "hydra.launcher.mem_gb=1",
                f"hydra.sweep.dir={tmp_path / f'multirun{number}'}",
                "tuner=random,lhs",
                "seed=0,1",
                "system=synthetic10",
                "budget=10",
                f"results_dir={tmp_path}",
                "session.progress=false",
                "session.name=${hydra:runtime.choices.tuner}-s${seed}",
                "session.existing=resume",
                f"tracking.uri={uri}",
            ],
            cwd=ROOT,
            env=cluster.env(),
            capture_output=True,
            text=True,
            timeout=600,
        )

    done = sweep(1)
    assert done.returncode == 0, done.stderr[-3000:]
    # The jobs ran on Slurm: the controller completed four of them, each with exit status 0
    # (it logs a completion just after the job wrote the result the launcher waits for).
    log_file = Path(cluster.folder) / "log" / "slurmctld.log"
    deadline = time.monotonic() + 60
    while log_file.read_text().count("WEXITSTATUS 0") < 4 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert log_file.read_text().count("WEXITSTATUS 0") == 4, log_file.read_text()[-3000:]
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs(
        [e.experiment_id for e in client.search_experiments()],
        filter_string="tags.`harness.kind` = 'session'",
    )
    assert len(runs) == 4 and all(r.info.status == "FINISHED" for r in runs)
    # A rerun of the sweep skips the four finished sessions: no new session run.
    again = sweep(2)
    assert again.returncode == 0, again.stderr[-3000:]
    logs = "".join(p.read_text() for p in (tmp_path / "multirun2").rglob("*_log.out"))
    assert logs.count("finished before") == 4, logs[-3000:]
    rerun = client.search_runs(
        [e.experiment_id for e in client.search_experiments()],
        filter_string="tags.`harness.kind` = 'session'",
    )
    assert len(rerun) == 4
    assert sorted((r.data.tags["harness.tuner"], r.data.tags["harness.seed"]) for r in runs) == [
        ("lhs", "0"),
        ("lhs", "1"),
        ("random", "0"),
        ("random", "1"),
    ]
