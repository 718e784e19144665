"""What a session leaves behind when it ends: samples CSV, tuner artifacts, crash logs, metrics.

Each output is written on its own, so one that cannot be written (a full disk, a tuner whose
artifacts fail to save) costs only itself: the JSON-lines store already holds every test.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from harness.errors import StoreError
from harness.records import Status, is_full
from harness.session.confirm import confirmation
from harness.session.options import SessionResult
from harness.store.samples import Store, atomic_write
from harness.tracking import keys
from harness.tuner import Tuner

log = logging.getLogger(__name__)


def write_session_outputs(
    store: Store,
    tuner: Tuner | None,
    result: SessionResult,
    export_answer: Callable[[Path], object] | None = None,
) -> dict[str, Path]:
    """Write the session's end-of-run files; return them by MLflow artifact name.

    ``export_answer`` writes ``export/``, the answer in the system's own syntax, from the
    session folder (the builder passes :func:`harness.builder.export.export_session`)."""
    artifacts: dict[str, Path] = {}
    try:
        result.csv_path = store.export_csv(result.observations)
        if result.csv_path is not None:
            artifacts[keys.ARTIFACT_SAMPLES] = result.csv_path
    except StoreError as exc:  # e.g. a full disk: the JSON-lines store still has them
        log.error("%s", exc)
        result.message = (result.message + "; " if result.message else "") + str(exc)
    if not store.persistent:
        return artifacts  # an in-memory session writes no files
    if tuner is not None and hasattr(tuner, "save_artifacts"):
        folder = store.directory / "artifacts"
        try:
            folder.mkdir(exist_ok=True)
            tuner.save_artifacts(folder)
            artifacts[keys.ARTIFACT_TUNER] = folder
        except Exception as exc:
            log.warning("could not save the tuner's artifacts: %s", exc)
    if export_answer is not None:
        _export_best(store, result, export_answer)
    crashed = [o for o in result.observations if o.extra.get("log_tail")]
    if crashed:
        logs = store.directory / "crash_logs.txt"
        try:
            atomic_write(
                logs,
                "\n\n".join(
                    f"== trial {o.trial}: {o.message}\n{o.extra['log_tail']}" for o in crashed
                ),
            )
            artifacts[keys.ARTIFACT_LOGS] = logs
        except OSError as exc:
            log.warning("could not write %s: %s", logs, exc.strerror)
    return artifacts


def _export_best(
    store: Store, result: SessionResult, export_answer: Callable[[Path], object]
) -> None:
    """``export/``: the best configuration in the system's own syntax."""
    if result.answer is None:
        return  # nothing succeeded: nothing to apply
    try:
        if not isinstance(store.read_meta().get("config"), dict):
            return  # a session built from objects: no config to rebuild its adapter from
        export_answer(store.directory)
    except Exception as exc:  # costs only the export: every test is already on disk
        log.error("could not export the best configuration: %s", exc)


def session_metrics(result: SessionResult) -> dict[str, float]:
    """The session run's summary metrics (those a session without a default lacks are left out)."""
    confirmed = confirmation(result.objective, result.references)
    metrics: dict[str, float] = {
        keys.METRIC_TESTS: len(result.observations),
        keys.METRIC_FAILED_TESTS: sum(
            not o.ok and o.status is not Status.STOPPED_EARLY for o in result.observations
        ),
        keys.METRIC_STOPPED_EARLY_TESTS: sum(
            o.status is Status.STOPPED_EARLY for o in result.observations
        ),
        keys.METRIC_SCREENING_TESTS: sum(not is_full(o) for o in result.observations),
        keys.METRIC_TUNER_TOTAL: result.tuner_seconds,
    }
    for key, value in (
        (keys.METRIC_DEFAULT, result.value(result.default)),
        (keys.METRIC_BEST, result.value(result.answer)),  # the session's answer
        (keys.METRIC_IMPROVEMENT, result.improvement()),
        (keys.METRIC_IMPROVEMENT_NEAREST, result.improvement_vs_nearest()),
        (keys.METRIC_IMPROVEMENT_CONFIRMED, getattr(confirmed, "improvement", None)),
    ):
        if value is not None:
            metrics[key] = value
    for fraction, percent in (
        (keys.METRIC_IMPROVEMENT, keys.METRIC_IMPROVEMENT_PCT),
        (keys.METRIC_IMPROVEMENT_CONFIRMED, keys.METRIC_IMPROVEMENT_CONFIRMED_PCT),
    ):
        if fraction in metrics:
            metrics[percent] = 100.0 * metrics[fraction]
    return metrics
