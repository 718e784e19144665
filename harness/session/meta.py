"""What a new session records about itself: identity, versions, and its MLflow tags.

The store keeps this record (``session.json``) and the session's MLflow run carries the same
tags, so that a number in a figure can always be traced to the code (git revision), the
libraries that change results (:data:`RESULT_LIBRARIES`) and the system it was measured on.
"""

from __future__ import annotations

import functools
import logging
import subprocess
import time
from pathlib import Path
from typing import Any

from harness.errors import TrackingRunMissing
from harness.store.samples import Store
from harness.system import System, Workload
from harness.tracking import keys
from harness.tracking.store import ARTIFACTS_FOLDER
from harness.tracking.tracker import Tracker
from harness.tuner import Tuner

log = logging.getLogger("harness.session.session")

__all__ = ["RESULT_LIBRARIES", "library_versions", "open_tracking", "session_meta"]


#: The libraries whose versions change a session's numbers (models, samplers, numerics).
RESULT_LIBRARIES = (
    "numpy",
    "scipy",
    "scikit-learn",
    "xgboost",
    "xgboost-cpu",
    "bayesian-optimization",
    "optuna",
    "smac",
    "pandas",
)


def library_versions() -> dict[str, str]:
    """``harness.lib.<name>`` tags for the installed :data:`RESULT_LIBRARIES`."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in RESULT_LIBRARIES:
        try:
            found[f"{keys.PREFIX_LIBRARY}{name}"] = version(name)
        except PackageNotFoundError:
            continue
    return found


@functools.cache
def _git_revision() -> str:
    # once per process: a bench runs thousands of sessions from one checkout
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).parent,
            check=False,
        )
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def session_meta(
    session_id: str,
    folder: Path,
    system: System,
    workload: Workload,
    objective: Any,
    tuner_name: str,
    *,
    seed: int,
    experiment: str,
    config: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What a new session's store records about it (and what its MLflow run is tagged with)."""
    tags = {
        keys.TAG_SYSTEM: system.name,
        keys.TAG_WORKLOAD: workload.name,
        keys.TAG_TUNER: tuner_name,
        keys.TAG_SEED: str(seed),
        keys.TAG_GIT: _git_revision(),
        **library_versions(),
        keys.TAG_SESSION_ID: session_id,
        keys.TAG_SESSION_DIR: str(folder.resolve()),
        keys.TAG_OBJECTIVE: objective.metric,
        keys.TAG_DIRECTION: objective.direction,
        keys.TAG_SYSTEM_KIND: system.kind,
        **{f"harness.system.{k}": str(v) for k, v in system.describe().items()},
    }
    return {
        "session_id": session_id,
        "created": time.time(),
        "config": config or {},
        "experiment": experiment,
        "tags": tags,
        "params": params or {},
    }


def open_tracking(
    store: Store, tracker: Tracker, tuner: Tuner, workload: Workload, session_id: str
) -> set[int]:
    """Open the session's MLflow run from its record: the run of an earlier start when it still
    exists (the trials it already logged are returned), else a new run with the session's
    params and tags (the store on disk has every test: they are logged again)."""
    meta = store.read_meta()
    run_id = meta.get("mlflow_run_id")
    if run_id:
        try:
            return tracker.resume_session(run_id)
        except TrackingRunMissing as exc:
            log.warning("%s: logging this session as a new MLflow run", exc)
    # the config as given, plus what the objects resolved from it (defaults filled in)
    resolved = {
        **{f"{keys.PREFIX_RESOLVED}tuner.{k}": v for k, v in tuner.params().items()},
        **{f"{keys.PREFIX_RESOLVED}workload.{k}": v for k, v in workload.params().items()},
    }
    run_id = tracker.start_session(
        experiment=meta["experiment"],
        run_name=session_id,
        params={**meta.get("params", {}), **resolved},
        tags=meta.get("tags", {}),
        # derived from where the session is, never read back: a stored path is data, and
        # MLflow would write the run's artifacts wherever it pointed
        artifact_root=store.directory.resolve().parent.parent / ARTIFACTS_FOLDER,
        knobs=list(tuner.space.names),
    )
    if run_id:
        store.update_meta(mlflow_run_id=run_id)
    return set()
