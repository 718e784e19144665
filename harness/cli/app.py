"""``python -m harness``: the Hydra application (one session, or a sweep with ``-m``)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from harness import api
from harness.builder.validate import (
    check_counts,
    check_tuner_keys,
    check_workload_choices,
    ensure_results_dir,
)
from harness.cli import sweep_outcome
from harness.cli.report import brief, format_value, summary
from harness.cli.rerun import existing_session, resume_overrides
from harness.conf.schema import register_configs
from harness.errors import HarnessError
from harness.records import Observation
from harness.session.signals import (
    STOP_SIGNALS,
    SignalGuard,
    child_pids,
    installable,
    interrupt_exit_code,
    note_stop,
)
from harness.tracking.mlflow_tracker import take_credentials

log = logging.getLogger("harness")
#: Exit codes: 0 finished, 1 aborted, 2 bad input (before any test), 130 interrupted (129 when
#: by a hang-up: :func:`harness.session.signals.interrupt_exit_code`).
EXIT_CODES = {"ABORTED": 1, "INTERRUPTED": 130}
register_configs()


def _progress(total: int, enabled: bool, unit: str) -> Any:
    """A tqdm bar on stderr; replayed tests of a resumed session advance it too."""
    from tqdm import tqdm

    bar = tqdm(total=total, unit="test", disable=not enabled, dynamic_ncols=True, file=sys.stderr)

    def update(obs: Observation, best: float | None) -> None:
        bar.update(1)
        bar.set_postfix_str(f"best {format_value(best, unit)}, last {obs.status.value.lower()}")

    return bar, update


def _logs_above(bar: Any, enabled: bool) -> Any:
    """Route the console's log handlers through tqdm while the bar is shown."""
    import contextlib

    from tqdm.contrib.logging import logging_redirect_tqdm

    return logging_redirect_tqdm(tqdm_class=type(bar)) if enabled else contextlib.nullcontext()


def run(cfg: DictConfig) -> float | None:
    """Build and run one session; return the best objective value (for sweepers)."""
    resumable = bool(cfg.session.get("name")) and cfg.session.get("existing") == "resume"
    if not _in_worker():
        return _run(cfg, resumable)
    # A launcher's worker process: a stop forwarded by the sweep's process ends this job in
    # order while it prepares (recorded as not started); its session handles its own.
    try:
        with SignalGuard() as guard:
            return _run(cfg, resumable, guard)
    except KeyboardInterrupt:
        _not_started(resumable)
        return None


def _in_worker() -> bool:
    """Whether this job runs in a launcher's worker process (joblib), not in the process that
    launched the sweep (Hydra's basic launcher runs jobs in it)."""
    return _multirun() and _STOP.pid != os.getpid()


def _not_started(resumable: bool) -> None:
    log.warning("sweep interrupted: not starting this job")
    sweep_outcome.record(
        "INTERRUPTED", detail="not started (the sweep was interrupted)", resumable=resumable
    )


def _run(cfg: DictConfig, resumable: bool, guard: SignalGuard | None = None) -> float | None:
    sweep_outcome.record(
        sweep_outcome.RUNNING, session=cfg.session.get("name"), resumable=resumable
    )
    # Read after RUNNING is written: a stop either finds this job RUNNING (and signals it)
    # or wrote its marker before this line (:func:`harness.cli.sweep_outcome.running_pids`).
    if _STOP.is_set() or sweep_outcome.stop_requested():  # queued jobs of a stopped sweep
        _not_started(resumable)
        return None
    overrides = list(HydraConfig.get().overrides.task) if HydraConfig.initialized() else []
    found = existing_session(cfg)
    if found is not None:  # a rerun sweep: skip what finished, continue what stopped
        folder, finished = found
        if finished:
            print(f"session {folder.name} finished before ({folder}): skipped")
            sweep_outcome.record(sweep_outcome.SKIPPED, session=str(folder), resumable=True)
            return None
        log.info("session %s continues to %s tests (resume=%s)", folder.name, cfg.budget, folder)
        cfg = OmegaConf.merge(cfg, {"resume": str(folder)})  # type: ignore[assignment]
        overrides = resume_overrides(overrides, int(cfg.budget))
    session = api.prepare(cfg, overrides)
    bar, update = _progress(
        session.options.budget, session.options.progress, session.objective.unit
    )
    try:
        # Log lines go through tqdm.write while the bar is drawn, so they land above it
        # instead of being spliced into it.
        with _logs_above(bar, session.options.progress):
            result = api.run(session, on_progress=update)
        if guard is not None:
            guard.armed = False  # the session has recorded how it ended: a stop only logs
    finally:
        bar.close()
    _say(brief(result) if _multirun() else summary(result))  # a sweep ends with a table
    sweep_outcome.record(
        result.status,
        session=str(result.directory),
        tests=len(result.observations),
        budget=session.options.budget,
        detail=result.message,
        resumable=resumable,
    )
    if result.status == "INTERRUPTED":
        _STOP.set()
    if not _multirun() and result.status in EXIT_CODES:
        # scripts chaining sessions see what happened
        interrupted = result.status == "INTERRUPTED"
        sys.exit(interrupt_exit_code() if interrupted else EXIT_CODES[result.status])
    return result.value(result.best)


def _say(text: str) -> None:
    """Print on stdout, unless it is gone: a terminal that hung up (SIGHUP) answers every
    write with EIO, and the session, already recorded, must still end with its exit code."""
    with contextlib.suppress(OSError):
        print(text)


def _multirun() -> bool:
    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


@hydra.main(config_path="pkg://harness.conf", config_name="config", version_base="1.3")
def _hydra_main(cfg: DictConfig) -> float | None:
    try:
        return run(cfg)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if _multirun():
            sweep_outcome.record(sweep_outcome.ERROR, detail=str(exc))
            return None  # one bad job must not end the whole sweep
        sys.exit(2)


class _Stop:
    """Ctrl-C outside a session: in a single run it interrupts at once; in a sweep the first
    one stops the sweep gracefully — it is forwarded to the launcher's workers, whose running
    sessions stop and record INTERRUPTED, and queued jobs are skipped — the second forces."""

    def __init__(self) -> None:
        self._set = False
        self.sweep = False
        self.pid: int | None = None  # the process that runs main(), which launches a sweep

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True

    def handle(self, signum: int, frame: object) -> None:
        note_stop(signum)
        if not self.sweep or self._set:
            raise KeyboardInterrupt
        self._set = True
        with contextlib.suppress(OSError):  # a hung-up terminal cannot be written to
            print(
                "stopping the sweep: running sessions stop and keep their tests "
                "(Ctrl-C again to force)",
                file=sys.stderr,
            )
        sweep_outcome.request_stop()
        # Only workers inside a job: one still starting has no handler, and would die.
        for child in set(child_pids(os.getpid())) & sweep_outcome.running_pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signum)


_STOP = _Stop()


def _without_credentials(argument: str) -> str:
    """A ``tracking.uri=`` override with its user:password moved into MLflow's variables."""
    key, sep, value = argument.partition("=")
    if sep and key.lstrip("+") == "tracking.uri":
        return f"{key}={take_credentials(value)}"
    return argument


def _last_value(arguments: list[str], key: str) -> str | None:
    """The value the command line gives ``key`` (the last ``key=`` wins, as in Hydra)."""
    found = None
    for argument in arguments:
        name, sep, value = argument.partition("=")
        if sep and name.lstrip("+") == key:
            found = value
    return found


def main() -> None:
    """``python -m harness``: private files, Ctrl-C that always works, and exit codes."""
    # Results, logs and secrets are the user's: nothing we create is readable by others.
    os.umask(0o077)
    _STOP.pid = os.getpid()
    _STOP.sweep = any(a in ("-m", "--multirun") for a in sys.argv[1:])
    try:
        # before Hydra writes the command line into the run folder (.hydra/*.yaml)
        sys.argv[1:] = [_without_credentials(a) for a in sys.argv[1:]]
        # Hydra creates its run folder under results_dir before any of our code runs, and
        # answers an unwritable or full one with a traceback
        ensure_results_dir(Path(_last_value(sys.argv[1:], "results_dir") or "results"))
        register_configs(sys.argv[1:])  # a --config-dir's systems and workloads, too
        check_workload_choices(sys.argv[1:])
        check_counts(sys.argv[1:])
        check_tuner_keys(sys.argv[1:])
        if _STOP.sweep:
            sweep_outcome.check_sweep_size(sys.argv[1:])
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    # Installed explicitly: a process started in the background of a script inherits SIGINT
    # as ignored, and a session must still stop on it (each session installs its own
    # handler while it runs; this one covers the time between sessions).
    # SIGHUP (a closed terminal) too, unless nohup asked to ignore it.
    for signum in STOP_SIGNALS:
        if installable(signum):
            signal.signal(signum, _STOP.handle)
    code: int | str | None = 0
    try:
        _hydra_main()
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):
            print("interrupted", file=sys.stderr)
        code = interrupt_exit_code()
    except SystemExit as exc:  # Hydra's own error exit (e.g. a launcher that lost a job)
        code = exc.code
    # A sweep ends by saying what became of every job (a cancelled Slurm job returns as if
    # it had finished; one that died hard says nothing): harness.cli.sweep_outcome.
    swept: int | None = None
    with contextlib.suppress(OSError):  # stdout gone with a hung-up terminal
        swept = sweep_outcome.report()
    if _STOP.is_set():
        code = interrupt_exit_code()  # a sweep stopped by a signal: its sessions INTERRUPTED
    elif swept and code in (0, None):
        code = swept
    if code not in (0, None):
        sys.exit(code)
