"""What became of each job of a sweep, said once the sweep ends, wherever the jobs ran.

A launcher's own view of a job is not enough: a Slurm job cancelled with ``scancel`` gets
SIGTERM, its session stops and records INTERRUPTED, and the job then *returns* — so submitit
and Hydra count it as completed and the sweep used to end with exit code 0, silently. And a job
that dies hard (a node down, SIGKILL, out of time) records nothing at all.

So each job writes its outcome next to its Hydra output folder (on the shared file system a
cluster sweep needs anyway): ``RUNNING`` when it starts, its session's status when it ends
(:func:`record`). When the sweep ends, the launching process reads every job's outcome
(:func:`report`), prints one line per job that did not finish, with the command that continues
it, a comparison table of its finished sessions (:mod:`harness.cli.compare`), and gives
the sweep an exit code: 0 when every job finished (or had finished before),
130 when some were interrupted, 1 when some aborted, failed, died or never started. A job
still ``RUNNING`` after its sweep ended is a job that died without a word.

The launching process learns the sweep's folder and, for Hydra's basic sweeper, how many jobs
it has from :class:`SweepOutcome`, a Hydra callback (``hydra.callbacks`` in ``config.yaml``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from harness.errors import ConfigError, HarnessError

__all__ = [
    "MAX_SWEEP_JOBS",
    "OUTCOME_FILE",
    "STOP_FILE",
    "SweepOutcome",
    "check_sweep_size",
    "record",
    "report",
    "request_stop",
    "running_pids",
    "stop_requested",
    "sweep_size",
]

#: Written by each job in its Hydra output folder.
OUTCOME_FILE = "harness_outcome.json"
#: The most jobs one sweep may have (5 tuners x 20 systems x 10 seeds is 1,000).
MAX_SWEEP_JOBS = 10_000
#: Written in the sweep's folder when the sweep is stopped: a job that starts later (a launcher's
#: worker process that was still starting when the signal came) reads it and runs nothing.
STOP_FILE = ".harness_stop"
#: Statuses a job may end with, besides a session's FINISHED | ABORTED | INTERRUPTED.
SKIPPED = "SKIPPED"  # its session had finished in an earlier run of the sweep
ERROR = "ERROR"  # bad input: the job ran nothing
RUNNING = "RUNNING"  # written at the start; still there at the end = the job died
_EXIT = {"FINISHED": 0, SKIPPED: 0, "INTERRUPTED": 130}


@dataclass
class _Sweep:
    """The sweep the launching process runs (set by :class:`SweepOutcome`)."""

    folder: Path | None = None
    expected: int | None = None
    started: float = 0.0  # outcomes older than this are an earlier sweep's, in the same folder


_SWEEP = _Sweep()


def record(status: str, **facts: Any) -> None:
    """Write this job's outcome (a sweep's job only; a single run says it on its own)."""
    if not HydraConfig.initialized() or HydraConfig.get().mode != RunMode.MULTIRUN:
        return
    hydra = HydraConfig.get()
    folder = Path(hydra.runtime.output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    outcome = {
        "job": int(hydra.job.num),
        "overrides": list(hydra.overrides.task),
        "status": status,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "slurm_job": _slurm_job(),
        **facts,
    }
    partial = folder / f".{OUTCOME_FILE}.tmp"
    partial.write_text(json.dumps(outcome, default=str))
    partial.replace(folder / OUTCOME_FILE)  # whole or absent, never half written


def _slurm_job() -> str | None:
    """This job's Slurm id as ``squeue``/``scancel`` name it (``12_3`` in an array)."""
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    if array and task:
        return f"{array}_{task}"
    return os.environ.get("SLURM_JOB_ID")


def _expected_jobs(config: DictConfig) -> int | None:
    """How many jobs Hydra's basic sweeper makes of the command line (None for others)."""
    if "basic_sweeper" not in str(config.hydra.sweeper.get("_target_", "")):
        return None
    return sweep_size(list(config.hydra.overrides.task))


def sweep_size(arguments: list[str]) -> int:
    """How many jobs the basic sweeper makes of ``arguments``: the product of every swept
    key's number of values, counted without listing them (Hydra's own expansion of
    ``seed=range(0,1000000000)`` would build the billion overrides first). A ``glob(...)``
    counts one: its options are known only once the config groups are listed."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import ChoiceSweep, RangeSweep

    size = 1
    for override in OverridesParser.create().parse_overrides(arguments):
        if not override.is_sweep_override():
            continue
        value = override.value()
        if isinstance(value, ChoiceSweep):
            size *= len(value.list)
        elif isinstance(value, RangeSweep) and value.step:
            span = (float(value.stop) - float(value.start)) / float(value.step)  # type: ignore[arg-type]
            size *= max(0, math.ceil(span))
    return size


def check_sweep_size(arguments: list[str]) -> None:
    """A sweep of more than :data:`MAX_SWEEP_JOBS` jobs is refused in one line, before Hydra
    lists them: such a number is a typo (a range's bound), never a plan. Flags and what Hydra
    cannot parse are left to Hydra, which says them better."""
    overrides = []
    for argument in arguments:
        if argument.startswith("-") or "=" not in argument:
            continue  # a flag, or a flag's value (--config-dir DIR)
        try:
            sweep_size([argument])
        except Exception:  # Hydra's parser errors
            continue
        overrides.append(argument)
    size = sweep_size(overrides)
    if size > MAX_SWEEP_JOBS:
        raise ConfigError(
            f"this sweep has {size} jobs, more than the {MAX_SWEEP_JOBS} a sweep may have; "
            "check its ranges and lists (e.g. seed=range(0,10)), or split it into sweeps"
        )


class SweepOutcome(Callback):
    """Tells the launching process where its sweep's jobs write their outcomes."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        _SWEEP.folder = Path(str(config.hydra.sweep.dir))
        _SWEEP.started = time.time() - 2.0  # a file system's timestamps may lag a little
        with contextlib.suppress(OSError):  # an earlier, stopped run's marker
            (_SWEEP.folder / STOP_FILE).unlink(missing_ok=True)
        try:
            _SWEEP.expected = _expected_jobs(config)
        except Exception:  # a sweep syntax the parser here does not know: list what is found
            _SWEEP.expected = None


def request_stop() -> None:
    """Tell the jobs not started yet that the sweep is stopped (the launching process)."""
    if _SWEEP.folder is not None:
        try:
            _SWEEP.folder.mkdir(parents=True, exist_ok=True)
            (_SWEEP.folder / STOP_FILE).write_text(f"{os.getpid()}\n")
        except OSError:
            pass  # the jobs already running are told by a signal; queued ones then start


def stop_requested() -> bool:
    """Whether this sweep job's sweep was stopped before the job began (a job's process)."""
    if not HydraConfig.initialized() or HydraConfig.get().mode != RunMode.MULTIRUN:
        return False
    return (Path(str(HydraConfig.get().sweep.dir)) / STOP_FILE).exists()


def running_pids() -> set[int]:
    """The processes on this machine whose job of this sweep is in its session now (their
    outcome says RUNNING): the ones a stop is forwarded to. A launcher's worker that has not
    begun a job has no handler yet, and a signal would kill it (a loky worker dying so makes
    joblib raise TerminatedWorkerError with a traceback); it reads :data:`STOP_FILE` instead."""
    if _SWEEP.folder is None:
        return set()
    here = socket.gethostname()
    return {
        int(outcome.get("pid", 0))
        for outcome in _read(_SWEEP.folder, _SWEEP.started).values()
        if outcome.get("status") == RUNNING and outcome.get("host") == here
    } - {0}


def _read(folder: Path, since: float) -> dict[int, dict[str, Any]]:
    """This sweep's outcomes (a rerun in the same folder finds the last run's too)."""
    jobs: dict[int, dict[str, Any]] = {}
    for path in sorted(folder.rglob(OUTCOME_FILE)):
        try:
            if path.stat().st_mtime < since:
                continue
            outcome = json.loads(path.read_text())
            jobs[int(outcome["job"])] = outcome
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an unreadable outcome counts as none
    return jobs


def _running(outcome: dict[str, Any]) -> str:
    """What a job that recorded no end is: dead, or (a launcher that gave up waiting on
    another job) still running; only a process on this machine can be looked at."""
    where = outcome.get("host")
    if where != socket.gethostname():
        return (
            "NO END RECORDED (it died: killed, node down or out of time; "
            f"or it still runs on {where})"
        )
    try:
        pid = int(outcome.get("pid", 0))
        if pid <= 0:
            raise ValueError(pid)  # 0 or less would name a process group
        os.kill(pid, 0)
    except (ProcessLookupError, ValueError):
        return "DIED (no end recorded: killed, node down or out of time)"
    except PermissionError:
        pass  # someone else's process under that pid: alive
    return f"STILL RUNNING (pid {outcome.get('pid')}; the sweep stopped waiting for it)"


def _line(number: int, outcome: dict[str, Any] | None) -> str:
    if outcome is None:
        return f"  job {number}: no outcome: it never started, or died before its session began"
    session = outcome.get("session")
    label = Path(session).name if session else " ".join(outcome.get("overrides", []))
    if outcome.get("slurm_job"):
        label = f"{label}, Slurm job {outcome['slurm_job']}"
    status = outcome["status"]
    if status == RUNNING:
        status = _running(outcome)
    if outcome.get("detail"):
        status = f"{status}: {outcome['detail']}"
    elif outcome.get("tests") is not None:
        status = f"{status} after {outcome['tests']}/{outcome.get('budget')} tests"
    return f"  job {number} ({label}): {status}"


def _compare(sessions: list[str | None], stream: Any) -> None:
    """The comparison table of the sweep's finished sessions (:mod:`harness.cli.compare`)."""
    folders = [Path(session) for session in sessions if session]
    if not folders:
        return
    from harness.cli.compare import comparison
    from harness.session.results import sessions_frame

    try:
        print(comparison(sessions_frame(folders)), file=stream)
    except HarnessError as exc:  # a session folder gone or unreadable: the sweep still ends
        print(f"  no comparison: {exc}", file=stream)


def report(stream: Any = None) -> int | None:
    """Print what became of the sweep's jobs; the sweep's exit code (None: no sweep here)."""
    if _SWEEP.folder is None:
        return None
    stream = stream or sys.stdout
    jobs = _read(_SWEEP.folder, _SWEEP.started)
    numbers = sorted(set(jobs) | set(range(_SWEEP.expected or 0)))
    statuses = {n: jobs.get(n, {}).get("status", "") for n in numbers}
    unfinished = [n for n in numbers if statuses[n] not in ("FINISHED", SKIPPED)]
    finished = len(numbers) - len(unfinished)
    print(f"sweep {_SWEEP.folder}: {finished} of {len(numbers)} job(s) finished", file=stream)
    for number in unfinished:
        print(_line(number, jobs.get(number)), file=stream)
    stopped = [n for n in unfinished if statuses[n] != ERROR]
    if stopped:
        resumable = all(jobs.get(n, {}).get("resumable") for n in numbers)
        print(
            "  rerun the same command: finished sessions are skipped, the others continue"
            if resumable
            else "  to rerun a sweep losing nothing, name each job's session and let reruns "
            "continue them: 'session.name=${hydra:runtime.choices.tuner}-s${seed}' "
            "session.existing=resume (docs/remote.md)",
            file=stream,
        )
    _compare(
        [jobs[n].get("session") for n in numbers if statuses[n] in ("FINISHED", SKIPPED)], stream
    )
    codes = {_EXIT.get(status, 1) for status in statuses.values()}
    # an abort, a death or a job that never started outranks an interruption
    return 1 if 1 in codes else max(codes, default=0)
