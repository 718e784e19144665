"""Read harness sessions back from an MLflow store into pandas DataFrames.

One row per session run (tags ``harness.*``, metrics such as ``improvement`` and
``tuner_seconds_total``, every ``params.tuner.*`` setting); the per-test samples come from the
run's ``samples/samples.csv`` artifact, or from the session folder when the artifact is gone.

Reading never creates a store: MLflow makes an empty SQLite database (~1 MB of tables) for any
URI it opens, so a store whose file does not exist is reported as having no runs instead.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from harness.tracking import keys

__all__ = [
    "NoRunsError",
    "load_pools",
    "load_samples",
    "load_sessions",
    "load_tuner_artifacts",
    "sqlite_store_missing",
]

log = logging.getLogger(__name__)

_TAGS = {
    "system": keys.TAG_SYSTEM,
    "system_kind": keys.TAG_SYSTEM_KIND,
    "workload": keys.TAG_WORKLOAD,
    "tuner": keys.TAG_TUNER,
    "seed": keys.TAG_SEED,
    "session_dir": keys.TAG_SESSION_DIR,
    "direction": keys.TAG_DIRECTION,
    "objective": keys.TAG_OBJECTIVE,
    "status": keys.TAG_SESSION_STATUS,
}
_METRICS = (
    keys.METRIC_DEFAULT,
    keys.METRIC_BEST,
    keys.METRIC_IMPROVEMENT,
    keys.METRIC_TUNER_TOTAL,
    keys.METRIC_TESTS,
    keys.METRIC_FAILED_TESTS,
)


class NoRunsError(RuntimeError):
    """The store holds no finished session for a figure."""


def sqlite_store_missing(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI when it does not exist, else None (other
    stores, and existing files, are MLflow's to open)."""
    prefix = "sqlite:///"
    if not uri.startswith(prefix):
        return None
    path = Path(uri[len(prefix) :])
    return None if path.exists() else path


def load_sessions(uri: str, experiment: str | None = None) -> pd.DataFrame:
    """Finished session runs in ``uri`` (optionally one MLflow experiment) as a DataFrame.

    Columns: run_id, experiment, the names of ``_TAGS``, the metrics of ``_METRICS`` and
    ``tuner.<param>`` for every tuner setting. Empty (with those columns) when nothing matches.
    Raises NoRunsError for a SQLite store whose file does not exist (opening would create it).
    """
    missing = sqlite_store_missing(uri)
    if missing is not None:
        raise NoRunsError(f"no MLflow store at {missing}")
    import mlflow
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiments = list(client.search_experiments())
    if experiment is not None:
        experiments = [e for e in experiments if e.name == experiment]
    columns = ["run_id", "experiment", *_TAGS, *_METRICS]
    if not experiments:
        return pd.DataFrame(columns=columns)
    names = {e.experiment_id: e.name for e in experiments}
    mlflow.set_tracking_uri(uri)
    raw = mlflow.search_runs(
        experiment_ids=list(names),
        filter_string=f"tags.`{keys.TAG_KIND}` = 'session'",
        max_results=50000,
    )
    if not isinstance(raw, pd.DataFrame) or raw.empty:
        return pd.DataFrame(columns=columns)
    out = pd.DataFrame({"run_id": raw["run_id"], "experiment": raw["experiment_id"].map(names)})
    for col, tag in _TAGS.items():
        out[col] = raw.get(f"tags.{tag}")
    for metric in _METRICS:
        out[metric] = pd.to_numeric(raw.get(f"metrics.{metric}"), errors="coerce")
    for col in raw.columns:
        if col.startswith("params.tuner."):
            out[col[len("params.") :]] = raw[col]
    out["seed"] = pd.to_numeric(out["seed"], errors="coerce").astype("Int64")
    out = out[out["status"] == "FINISHED"]  # killed or aborted sessions have no samples
    return out.reset_index(drop=True)


def load_samples(uri: str, run_id: str, session_dir: str | None = None) -> pd.DataFrame:
    """The ``samples.csv`` of one session: the MLflow artifact, else the session folder."""
    import mlflow

    try:
        path = mlflow.artifacts.download_artifacts(
            run_id=run_id, artifact_path=f"{keys.ARTIFACT_SAMPLES}/samples.csv", tracking_uri=uri
        )
        return pd.read_csv(path)
    except Exception as exc:
        if session_dir and (Path(session_dir) / "samples.csv").exists():
            return pd.read_csv(Path(session_dir) / "samples.csv")
        raise NoRunsError(
            f"session {run_id} has no samples.csv artifact nor session folder ({exc})"
        ) from None


def load_tuner_artifacts(uri: str, run_id: str, session_dir: str | None = None) -> Path:
    """The folder of a session's tuner artifacts (ClassyTune's model, samples, settings): the
    MLflow artifact ``tuner/`` downloaded, else ``<session_dir>/artifacts``."""
    import mlflow

    try:
        return Path(
            mlflow.artifacts.download_artifacts(
                run_id=run_id, artifact_path=keys.ARTIFACT_TUNER, tracking_uri=uri
            )
        )
    except Exception as exc:
        folder = Path(session_dir) / "artifacts" if session_dir else None
        if folder is not None and folder.is_dir():
            return folder
        raise NoRunsError(f"session {run_id} has no tuner artifacts ({exc})") from None


def load_pools(uri: str, experiment: str = "pools") -> pd.DataFrame:
    """Every sample of every session in ``experiment``, tagged with system, kind and seed."""
    sessions = load_sessions(uri, experiment)
    frames = []
    for row in sessions.itertuples():
        samples = load_samples(uri, str(row.run_id), row.session_dir)
        samples.insert(0, "system", row.system)
        samples.insert(1, "system_kind", row.system_kind)
        samples.insert(2, "seed", row.seed)
        frames.append(samples)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
