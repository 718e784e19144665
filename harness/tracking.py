"""MLflow tracking: one parent run per session, one child run per tuning test.

The client API (not the fluent active-run stack) is used throughout and children carry an
explicit ``mlflow.parentRunId`` tag, so logging works from any launcher process and a resumed
session appends to its original run. :class:`NullTracker` keeps the same interface when tracking
is off (``tracking=none``).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from harness import tracking_keys as keys
from harness.errors import TrackingError
from harness.records import Observation

__all__ = ["MlflowTracker", "NullTracker", "Tracker", "make_tracker"]

log = logging.getLogger(__name__)
_MAX_PARAM = 500


class Tracker:
    """Interface of the session's tracker; the base class tracks nothing."""

    uri = ""
    run_id: str | None = None

    def start_session(self, experiment: str, run_name: str, params: Mapping[str, Any],
                      tags: Mapping[str, str], artifact_root: Path) -> str | None:
        return None

    def resume_session(self, run_id: str) -> set[int]:
        """Reopen a session run; return the trials that already have a child run."""
        return set()

    def log_test(self, obs: Observation, objective_value: float | None) -> None: ...

    def log_step(self, step: int, metrics: Mapping[str, float]) -> None: ...

    def finish(self, status: str, metrics: Mapping[str, float], params: Mapping[str, Any],
               artifacts: Mapping[str, Path]) -> None: ...

    def where(self) -> str:
        return "tracking is off"


class NullTracker(Tracker):
    """Tracking disabled."""


class MlflowTracker(Tracker):
    """Writes sessions and tests to an MLflow tracking store."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        _check_uri(uri)
        try:
            import mlflow
            from mlflow.tracking import MlflowClient

            self._mlflow = mlflow
            # Opening creates (or migrates) the schema; parallel sweep jobs (joblib launcher)
            # racing on one fresh SQLite file break it, so the opening is serialised.
            with _store_lock(uri):
                self.client = MlflowClient(tracking_uri=uri)
                self.client.search_experiments(max_results=1)
        except Exception as exc:
            raise TrackingError(f"cannot open MLflow tracking store {uri!r}: "
                                f"{str(exc).splitlines()[0][:300]}; fix tracking.uri or set "
                                "tracking=none") from None
        self.experiment_id = ""

    def start_session(self, experiment: str, run_name: str, params: Mapping[str, Any],
                      tags: Mapping[str, str], artifact_root: Path) -> str | None:
        self.experiment_id = self._experiment(experiment, artifact_root)
        run = self.client.create_run(self.experiment_id, run_name=run_name,
                                     tags={**tags, keys.TAG_KIND: "session"})
        self.run_id = run.info.run_id
        self._log_batch(self.run_id, params=params)
        return self.run_id

    def resume_session(self, run_id: str) -> set[int]:
        try:
            run = self.client.get_run(run_id)
        except Exception as exc:
            raise TrackingError(f"cannot reopen MLflow run {run_id} in {self.uri}: "
                                f"{str(exc).splitlines()[0][:200]}") from None
        self.run_id = run_id
        self.experiment_id = run.info.experiment_id
        self.client.update_run(run_id, status="RUNNING")
        children = self.client.search_runs(
            [self.experiment_id], filter_string=f"tags.`{keys.TAG_PARENT}` = '{run_id}'",
            max_results=50000)
        return {int(c.data.tags[keys.TAG_TRIAL]) for c in children
                if keys.TAG_TRIAL in c.data.tags}

    def log_test(self, obs: Observation, objective_value: float | None) -> None:
        try:
            self._log_test(obs, objective_value)
        except Exception as exc:
            log.warning("MLflow: could not log trial %d: %s", obs.trial, exc)

    def _log_test(self, obs: Observation, objective_value: float | None) -> None:
        assert self.run_id is not None
        tags = {keys.TAG_PARENT: self.run_id, keys.TAG_KIND: "test",
                keys.TAG_TRIAL: str(obs.trial), keys.TAG_STATUS: obs.status.value,
                keys.TAG_IS_DEFAULT: str(obs.is_default).lower()}
        if obs.message:
            tags[keys.TAG_MESSAGE] = obs.message[:4000]
        child = self.client.create_run(self.experiment_id, run_name=f"trial-{obs.trial:04d}",
                                       tags=tags)
        metrics = {f"{keys.PREFIX_METRIC}{k}": v for k, v in obs.metrics.items()}
        metrics[keys.METRIC_DURATION] = obs.duration_s
        if obs.score is not None:
            metrics[keys.METRIC_SCORE] = obs.score
        if objective_value is not None:
            metrics[keys.METRIC_OBJECTIVE] = objective_value
        self._log_batch(child.info.run_id, params=obs.config, metrics=metrics)
        self.client.set_terminated(child.info.run_id,
                                   "FINISHED" if obs.ok else "FAILED")

    def log_step(self, step: int, metrics: Mapping[str, float]) -> None:
        assert self.run_id is not None
        try:
            self._log_batch(self.run_id, metrics=metrics, step=step)
        except Exception as exc:
            log.warning("MLflow: could not log step %d: %s", step, exc)

    def finish(self, status: str, metrics: Mapping[str, float], params: Mapping[str, Any],
               artifacts: Mapping[str, Path]) -> None:
        if self.run_id is None:
            return
        self._log_batch(self.run_id, metrics=metrics, params=params)
        self.client.set_tag(self.run_id, keys.TAG_SESSION_STATUS, status)
        for name, path in artifacts.items():
            if path.is_dir():
                self.client.log_artifacts(self.run_id, str(path), artifact_path=name)
            elif path.exists():
                self.client.log_artifact(self.run_id, str(path), artifact_path=name)
        self.client.set_terminated(self.run_id, {"FINISHED": "FINISHED",
                                                 "INTERRUPTED": "KILLED"}.get(status, "FAILED"))

    def where(self) -> str:
        return (f"MLflow run {self.run_id} in {self.uri} "
                f"(browse: mlflow ui --backend-store-uri {self.uri})")

    # -- internals ------------------------------------------------------------------------
    def _experiment(self, name: str, artifact_root: Path) -> str:
        found = self.client.get_experiment_by_name(name)
        if found is not None:
            return str(found.experiment_id)
        location = (artifact_root / name.replace("/", "_")).resolve().as_uri()
        try:
            return str(self.client.create_experiment(name, artifact_location=location))
        except Exception:
            again = self.client.get_experiment_by_name(name)
            if again is None:
                raise
            return str(again.experiment_id)

    def _log_batch(self, run_id: str, params: Mapping[str, Any] | None = None,
                   metrics: Mapping[str, float] | None = None, step: int = 0) -> None:
        from mlflow.entities import Metric, Param

        now = int(time.time() * 1000)
        param_list = [Param(str(k), _short(v)) for k, v in (params or {}).items()]
        metric_list = [Metric(str(k), float(v), now, step) for k, v in (metrics or {}).items()]
        # log_batch takes at most 100 params / 1000 metrics per call
        for i in range(0, max(len(param_list), 1), 100):
            chunk = param_list[i:i + 100]
            self.client.log_batch(run_id, params=chunk,
                                  metrics=metric_list if i == 0 else [])


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= _MAX_PARAM else text[: _MAX_PARAM - 3] + "..."


@contextlib.contextmanager
def _store_lock(uri: str) -> Iterator[None]:
    """An exclusive lock file next to a SQLite store (no-op for other stores)."""
    if not uri.startswith("sqlite:///"):
        yield
        return
    lock_path = Path(uri[len("sqlite:///"):]).with_suffix(".init-lock")
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _check_uri(uri: str) -> None:
    """Fail early, in one line, on a sqlite store whose folder cannot be written."""
    if uri.startswith("sqlite:///"):
        path = Path(uri[len("sqlite:///"):])
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TrackingError(f"cannot create {path.parent} for the MLflow store {uri}: {exc}; "
                                "fix tracking.uri or set tracking=none") from None
        if not os.access(path.parent, os.W_OK):
            raise TrackingError(f"MLflow store folder {path.parent} is not writable; "
                                "fix tracking.uri or set tracking=none")
    elif uri.startswith(("file:", "/", ".")) and "MLFLOW_ALLOW_FILE_STORE" not in os.environ:
        raise TrackingError(f"tracking.uri {uri!r} is a file store, which current MLflow refuses; "
                            "use sqlite:///results/mlflow.db or an http(s):// tracking server")


def make_tracker(enabled: bool, uri: str) -> Tracker:
    """The tracker for a session: MLflow when enabled, else a no-op."""
    return MlflowTracker(uri) if enabled else NullTracker()
