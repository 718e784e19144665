"""MLflow tracking: one parent run per session, one child run per tuning test.

The client API (not the fluent active-run stack) is used throughout and children carry an
explicit ``mlflow.parentRunId`` tag, so logging works from any launcher process and a resumed
session appends to its original run. :class:`NullTracker` keeps the same interface when tracking
is off (``tracking=none``).

Tracking never holds up the tests and never loses them silently:

* once the session run exists, every write goes through an ordered outbox that one background
  thread drains. When the store does not answer (a dead server, a locked SQLite file) the
  records wait there, one warning says so, the backlog is retried every ``retry_every_s`` and
  at :meth:`Tracker.close`, and whatever is still unsent then is reported in one line. The
  session's store on disk stays the source of truth: a resume re-logs the missing tests.
* every write is idempotent, so a retry or a resume never duplicates a child run or a step;
* the best configuration is mutable (tags ``harness.best.<knob>`` and ``best_config.json``),
  because MLflow params are write-once and the best changes when a session is resumed;
* credentials never reach a param, a tag or a message: ``user:password@`` in an http(s) URI
  moves into ``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD`` for this process, a
  ``?token=`` in one is refused, and every text shown or logged passes through
  :func:`redact_uri`; a SQLite store is private and kill-safe (:mod:`harness.tracking.store`).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import TrackingError, TrackingRunMissing
from harness.hosts.process import this_python
from harness.install import install_command
from harness.records import Observation
from harness.tracking import keys
from harness.tracking.batch import clean_tags, log_batch, now_ms
from harness.tracking.outbox import FLUSH_LIMIT_S, Outbox, reason, summary
from harness.tracking.store import (
    ARTIFACTS_FOLDER,
    check_artifact_folder,
    make_artifact_folder,
    store_ready,
)
from harness.tracking.tracker import NullTracker, Tracker
from harness.tracking.uri import (
    HTTP_DEFAULTS,
    check_uri,
    redact_uri,
    sqlite_path,
    take_credentials,
)
from harness.tracking.view import (
    CLASSIC_KIND,
    EXPERIMENT_KIND_TAG,
    best_run_note,
    runs_page,
    runs_view,
    view_tag,
)

__all__ = [
    "MlflowTracker",
    "NullTracker",
    "Tracker",
    "make_tracker",
    "redact_uri",
    "take_credentials",
]

log = logging.getLogger(__name__)


def _ui_installed() -> bool:
    """Whether MLflow's UI server is here (the ``ui`` extra), not only its client."""
    return importlib.util.find_spec("flask") is not None


_TERMINAL = frozenset({"FINISHED", "FAILED", "KILLED"})
_RUN_STATUS = {"FINISHED": "FINISHED", "INTERRUPTED": "KILLED", "ABORTED": "FAILED"}


class _NoLockedTracebacks(logging.Filter):
    """MLflow logs a full traceback for every write that finds its SQLite file locked; the
    outbox retries those writes and reports an outage itself, once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "database is locked" not in record.getMessage()


class MlflowTracker(Tracker):
    """Writes sessions and tests to an MLflow tracking store (see the module docstring)."""

    def __init__(
        self, uri: str, *, results_dir: Path | None = None, retry_every_s: float = 30.0
    ) -> None:
        self.uri = take_credentials(uri)
        self._shown = redact_uri(self.uri)
        if self.uri.startswith(("http://", "https://")):
            for name, value in HTTP_DEFAULTS.items():
                os.environ.setdefault(name, value)
        results = Path(results_dir) if results_dir else Path.cwd() / "results"
        check_artifact_folder(results / ARTIFACTS_FOLDER)
        check_uri(self.uri, results)
        if sqlite_path(self.uri) is not None:
            db_log = logging.getLogger("mlflow.store.db.utils")
            if not any(isinstance(f, _NoLockedTracebacks) for f in db_log.filters):
                db_log.addFilter(_NoLockedTracebacks())
        try:
            from mlflow.tracking import MlflowClient

            with store_ready(sqlite_path(self.uri)):
                self.client = MlflowClient(tracking_uri=self.uri)
                self.client.search_experiments(max_results=1)
        except TrackingError:
            raise
        except Exception as exc:
            raise TrackingError(
                f"cannot open the MLflow tracking store {self._shown}: "
                f"{reason(exc)}; fix tracking.uri (or start the server) or "
                "set tracking=none"
            ) from None
        self.experiment_id = ""
        self._outbox = Outbox(self._shown, retry_every_s)
        self._steps: set[tuple[str, int]] = set()  # (metric, step) pairs the run has
        self._children: dict[int, str] = {}  # trial -> its child run, written by the outbox

    def start_session(
        self,
        experiment: str,
        run_name: str,
        params: Mapping[str, Any],
        tags: Mapping[str, str],
        artifact_root: Path,
        knobs: Sequence[str] = (),
    ) -> str | None:
        make_artifact_folder(artifact_root)
        try:
            self.experiment_id = self._experiment(experiment, artifact_root)
            run = self.client.create_run(
                self.experiment_id,
                run_name=run_name,
                tags={**clean_tags(tags), keys.TAG_KIND: "session"},
            )
        except Exception as exc:
            raise TrackingError(
                f"cannot create the session run in {self._shown}: "
                f"{reason(exc)}; fix tracking.uri or set tracking=none"
            ) from None
        run_id = self.run_id = run.info.run_id
        clean = dict(params)
        self._outbox.put("session params", lambda _: log_batch(self.client, run_id, params=clean))
        self._outbox.put("the runs view", lambda _: self._send_view(list(knobs)))
        return run_id

    def resume_session(self, run_id: str) -> set[int]:
        try:
            run = self.client.get_run(run_id)
        except Exception as exc:
            if getattr(exc, "error_code", None) == "RESOURCE_DOES_NOT_EXIST":
                raise TrackingRunMissing(f"no MLflow run {run_id} in {self._shown}") from None
            raise TrackingError(
                f"cannot reopen MLflow run {run_id} in {self._shown}: "
                f"{reason(exc)}; fix tracking.uri or set tracking=none"
            ) from None
        try:
            self.experiment_id = run.info.experiment_id
            self.client.update_run(run_id, status="RUNNING")
            children = self._search(f"tags.`{keys.TAG_PARENT}` = '{run_id}'")
            # A resumed session replays its tests and logs their steps again
            self._steps = {
                (key, m.step)
                for key in run.data.metrics
                for m in self.client.get_metric_history(run_id, key)
            }
        except Exception as exc:
            raise TrackingError(
                f"cannot reopen MLflow run {run_id} in {self._shown}: "
                f"{reason(exc)}; fix tracking.uri or set tracking=none"
            ) from None
        self.run_id = run_id
        complete: set[int] = set()
        # terminated children first, so that a trial's half-written duplicate is never reused
        for child in sorted(children, key=lambda c: c.info.status not in _TERMINAL):
            trial = child.data.tags.get(keys.TAG_TRIAL)
            if trial is None or not trial.isdigit():
                continue
            self._children.setdefault(int(trial), child.info.run_id)
            if child.info.status in _TERMINAL:
                complete.add(int(trial))
        return complete

    def log_test(self, obs: Observation, objective_value: float | None) -> None:
        assert self.run_id is not None, "start_session or resume_session first"
        tags = {
            keys.TAG_PARENT: self.run_id,
            keys.TAG_KIND: "test",
            keys.TAG_TRIAL: str(obs.trial),
            keys.TAG_STATUS: obs.status.value,
            keys.TAG_IS_DEFAULT: str(obs.is_default).lower(),
        }
        if obs.message:
            tags[keys.TAG_MESSAGE] = obs.message
        metrics = {f"{keys.PREFIX_METRIC}{k}": v for k, v in obs.metrics.items()}
        metrics[keys.METRIC_DURATION] = obs.duration_s
        if obs.score is not None:
            metrics[keys.METRIC_SCORE] = obs.score
        if objective_value is not None:
            metrics[keys.METRIC_OBJECTIVE] = objective_value
        if isinstance(bound := obs.extra.get("censored", {}).get("bound"), int | float):
            metrics[keys.METRIC_CENSORED_BOUND] = float(bound)
        if isinstance(fidelity := obs.extra.get("fidelity"), int | float):
            metrics[keys.METRIC_FIDELITY] = float(fidelity)
        stamp = now_ms()  # fixed now, so that a retry writes the very same points
        # The test's own wall-clock span (older stored tests lack their start: ended now)
        started = obs.extra.get("started_at")
        start_ms = int(started * 1000) if started else stamp - int(obs.duration_s * 1000)
        span = (start_ms, start_ms + int(obs.duration_s * 1000))
        self._outbox.put(
            f"trial {obs.trial}",
            lambda attempts: self._send_test(
                obs.trial, tags, dict(obs.config), metrics, obs.ok, span, attempts
            ),
        )

    def log_step(self, step: int, metrics: Mapping[str, float]) -> None:
        assert self.run_id is not None, "start_session or resume_session first"
        new = {k: float(v) for k, v in metrics.items() if (k, step) not in self._steps}
        if not new:
            return
        self._steps.update((k, step) for k in new)
        run_id, stamp = self.run_id, now_ms()
        self._outbox.put(
            f"step {step}",
            lambda _: log_batch(self.client, run_id, metrics=new, step=step, stamp=stamp),
        )

    def finish(
        self,
        status: str,
        metrics: Mapping[str, float],
        params: Mapping[str, Any],
        artifacts: Mapping[str, Path],
        best: Observation | None = None,
        best_value: float | None = None,
    ) -> None:
        if self.run_id is None:
            return
        run_id, stamp = self.run_id, now_ms()
        summary = {k: float(v) for k, v in metrics.items()}
        best_config = {k.removeprefix(keys.PREFIX_CONFIG): v for k, v in params.items()}
        # Separate records, so that one failing (a missing file) does not keep the others
        # (the status) from being written.
        put = self._outbox.put
        put(
            "the session's summary metrics",
            lambda _: log_batch(self.client, run_id, metrics=summary, stamp=stamp),
        )
        put("the best configuration", lambda _: self._send_best(run_id, best_config))
        if best is not None:
            trial = best.trial
            put("the best test's run", lambda _: self._send_best_run(run_id, trial, best_value))
        for name, path in artifacts.items():
            put(f"artifact {name}", self._artifact_sender(run_id, name, path))
        put("the session status", lambda _: self._send_status(run_id, status))
        self.close()

    def close(self) -> None:
        unsent = self._outbox.flush(FLUSH_LIMIT_S)
        missing = self._outbox.lost + unsent
        self._outbox.lost = []
        if missing:
            log.warning(
                "MLflow: %d tracking record(s) were not written to %s (%s); the "
                "session store on disk keeps every test: resume the session to log "
                "the missing tests",
                len(missing),
                self._shown,
                summary(missing),
            )

    def where(self) -> str:
        if self.run_id is None:
            return f"MLflow store {self._shown}"
        page = runs_page(self.experiment_id)
        if self.uri.startswith(("http://", "https://")):
            return f"MLflow run {self.run_id}: {self._shown.rstrip('/')}/{page}"
        # One worker: the UI serves one reader, and four took half a minute to start on 2 cores.
        ui = [this_python(), "-m", "mlflow", "ui", "--workers", "1"]
        browse = shlex.join([*ui, "--backend-store-uri", self._shown])
        if not _ui_installed():  # the core install has MLflow's client only
            browse = f"{install_command('ui')}, then {browse}"
        return (
            f"MLflow run {self.run_id} in {self._shown} (browse: {browse}, "
            f"then open http://127.0.0.1:5000/{page})"
        )

    # -- what the outbox sends (each idempotent) -------------------------------------------
    def _send_test(
        self,
        trial: int,
        tags: dict[str, str],
        params: dict[str, Any],
        metrics: dict[str, float],
        ok: bool,
        span: tuple[int, int],
        attempts: int,
    ) -> None:
        assert self.run_id is not None
        child = self._children.get(trial)
        if child is None and attempts:  # the run may exist although its answer was lost
            child = self._child_of(trial)
        if child is None:
            child = self.client.create_run(
                self.experiment_id,
                run_name=f"trial-{trial:04d}",
                tags=clean_tags(tags),
                start_time=span[0],
            ).info.run_id
            self._children[trial] = child
            log_batch(self.client, child, params=params, metrics=metrics, stamp=span[1])
        else:  # reuse it: write only what it lacks (params are write-once)
            data = self.client.get_run(child).data
            log_batch(
                self.client,
                child,
                params={k: v for k, v in params.items() if k not in data.params},
                metrics={k: v for k, v in metrics.items() if k not in data.metrics},
                tags=tags,
                stamp=span[1],
            )
        self.client.set_terminated(child, "FINISHED" if ok else "FAILED", end_time=span[1])

    def _send_best_run(self, run_id: str, trial: int, value: float | None) -> None:
        child = self._children.get(trial) or self._child_of(trial)
        if child is None:  # its run was never written (an outage): the tags stay unset
            return
        for old in self._search(
            f"tags.`{keys.TAG_PARENT}` = '{run_id}' and tags.`{keys.TAG_IS_BEST}` = 'true'"
        ):
            if old.info.run_id != child:  # the best of an earlier stop of this session
                self.client.delete_tag(old.info.run_id, keys.TAG_IS_BEST)
        self.client.set_tag(child, keys.TAG_IS_BEST, "true")
        note = best_run_note(self.experiment_id, child, trial, value)
        log_batch(
            self.client,
            run_id,
            tags={keys.TAG_BEST_RUN: child, keys.TAG_BEST_TRIAL: trial, keys.TAG_NOTE: note},
        )

    def _send_view(self, knobs: list[str]) -> None:
        experiment = self.client.get_experiment(self.experiment_id)
        if EXPERIMENT_KIND_TAG not in experiment.tags:  # a kind the user chose stays
            self.client.set_experiment_tag(self.experiment_id, EXPERIMENT_KIND_TAG, CLASSIC_KIND)
        self.client.set_experiment_tag(self.experiment_id, view_tag(), runs_view(knobs))

    def _send_best(self, run_id: str, best: Mapping[str, Any]) -> None:
        tags = {f"{keys.PREFIX_BEST}{k}": v for k, v in best.items()}
        stale = {
            k for k in self.client.get_run(run_id).data.tags if k.startswith(keys.PREFIX_BEST)
        } - set(tags)
        log_batch(self.client, run_id, tags=tags)
        for key in stale:  # a knob the new best no longer pins
            self.client.delete_tag(run_id, key)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / keys.ARTIFACT_BEST_CONFIG
            path.write_text(json.dumps(dict(best), indent=2, sort_keys=True, default=str))
            self.client.log_artifact(run_id, str(path))

    def _artifact_sender(self, run_id: str, name: str, path: Path) -> Callable[[int], None]:
        def send(_: int) -> None:
            if path.is_dir():
                self.client.log_artifacts(run_id, str(path), artifact_path=name)
            elif path.exists():
                self.client.log_artifact(run_id, str(path), artifact_path=name)

        return send

    def _send_status(self, run_id: str, status: str) -> None:
        self.client.set_tag(run_id, keys.TAG_SESSION_STATUS, status)
        self.client.set_terminated(run_id, _RUN_STATUS.get(status, "FAILED"))

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

    def _child_of(self, trial: int) -> str | None:
        found = self._search(
            f"tags.`{keys.TAG_PARENT}` = '{self.run_id}' and tags.`{keys.TAG_TRIAL}` = '{trial}'"
        )
        return str(found[0].info.run_id) if found else None

    def _search(self, filter_string: str) -> list[Any]:
        runs: list[Any] = []
        token: str | None = None
        while True:
            page = self.client.search_runs(
                [self.experiment_id],
                filter_string=filter_string,
                max_results=1000,
                page_token=token,
            )
            runs.extend(page)
            token = page.token
            if not token:
                return runs


def make_tracker(
    enabled: bool, uri: str, *, results_dir: Path | None = None, retry_every_s: float = 30.0
) -> Tracker:
    """The tracker for a session: MLflow when enabled, else a no-op.

    ``results_dir`` (default ``./results``) is the only place where a SQLite store's folder
    may be created; ``retry_every_s`` paces the retries of a store that stopped answering.
    """
    if not enabled:
        return NullTracker()
    return MlflowTracker(uri, results_dir=results_dir, retry_every_s=retry_every_s)
