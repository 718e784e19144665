"""Finished sessions as pandas tables: one row per session, one row per test.

Read from session folders (``session.json``, ``observations.jsonl``, ``references.jsonl``) as
data, with the store's checks; nothing in a folder is imported or run, so a folder copied from
another machine is as safe to compare as one's own. Each session is rebuilt as the
:class:`~harness.session.options.SessionResult` the session itself returned, so the answer,
the improvement over the default and the confirmed improvement in a table are the summary's
own numbers, never a second computation that could disagree with it.

The objective's value of a test comes from its stored score (larger is better: the value for
``max``, its negative for ``min``), so a utility or a constrained objective reads back like a
plain metric.

    from harness.session.results import sessions_frame, tests_frame

    sessions_frame(["results/sessions"])   # any folder: every session folder below it
    tests_frame(["results/sessions/<id>"])  # trial, status, value, best_so_far, config.<knob>
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError, StoreError
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.confirm import confirmation
from harness.session.options import SessionResult
from harness.store.samples import SESSION_FILE, SampleStore

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SESSION_COLUMNS",
    "find_sessions",
    "load_result",
    "observations_frame",
    "session_row",
    "sessions_frame",
    "tests_frame",
]

#: The columns of :func:`sessions_frame`, in order (the comparison table shows most of them).
SESSION_COLUMNS = (
    "system",
    "workload",
    "tuner",
    "seed",
    "status",
    "objective",
    "default",
    "best",
    "improvement",
    "confirmed_improvement",
    "tests",
    "failed",
    "stopped_early",
    "session",
    "folder",
)
#: The statuses a session's ``failed`` counts: the test did not run to a measurement.
_FAILURES = (Status.FAILED, Status.CRASHED, Status.TIMED_OUT)
#: The tags ``session.json`` holds (written by :func:`harness.session.meta.session_meta`).
_TAG = "harness."


def find_sessions(paths: Iterable[str | Path]) -> list[Path]:
    """The session folders ``paths`` name: a session folder itself, or every session folder
    below a folder (a results folder, ``results/sessions``), in name order; no duplicates."""
    found: list[Path] = []
    for path in map(Path, paths):
        if (path / SESSION_FILE).is_file():
            candidates = [path]
        elif path.is_dir():
            candidates = sorted(p.parent for p in path.rglob(SESSION_FILE))
        else:
            raise StoreError(f"{path}: no such folder; pass a session or results folder")
        found += [c for c in candidates if c.resolve() not in {f.resolve() for f in found}]
    return found


def load_result(folder: str | Path) -> SessionResult:
    """The result a session folder holds, as the session returned it (read as data)."""
    store = SampleStore(folder)
    meta = store.read_meta()
    tags = meta.get("tags") or {}
    try:
        objective = Objective(
            str(tags.get(f"{_TAG}objective", "objective")),
            tags.get(f"{_TAG}direction", "max"),
        )
    except ConfigError as exc:
        raise StoreError(f"{store.directory / SESSION_FILE}: {exc}") from None
    answer = meta.get("answer_trial")
    return SessionResult(
        session_id=str(meta.get("session_id") or store.directory.name),
        directory=store.directory,
        objective=objective,
        observations=[_with_value(o, objective) for o in store.load()],
        references=[_with_value(o, objective) for o in store.load(reference=True)],
        status=str(meta.get("status") or "RUNNING"),
        tracking=str(meta.get("mlflow_run_id") or ""),
        answer_trial=answer if isinstance(answer, int) else None,
        extra={"meta": meta},
    )


def _with_value(obs: Observation, objective: Objective) -> Observation:
    """``obs`` with its objective value among its metrics (a utility's is not), from its
    score, so that the objective reads every stored test alike."""
    if obs.score is None or objective.metric in obs.metrics:
        return obs
    value = obs.score if objective.direction == "max" else -obs.score
    return replace(obs, metrics={**obs.metrics, objective.metric: value})


def session_row(result: SessionResult) -> dict[str, Any]:
    """One session's row of :func:`sessions_frame`."""
    tags = result.extra.get("meta", {}).get("tags", {})
    found = confirmation(result.objective, result.references)
    seed = tags.get(f"{_TAG}seed")
    return {
        "system": tags.get(f"{_TAG}system"),
        "workload": tags.get(f"{_TAG}workload"),
        "tuner": tags.get(f"{_TAG}tuner"),
        "seed": int(seed) if str(seed).lstrip("-").isdigit() else seed,
        "status": result.status,
        "objective": f"{result.objective.direction} {result.objective.metric}",
        "default": result.value(result.default),
        "best": result.value(result.answer),
        "improvement": _number(result.improvement()),
        "confirmed_improvement": None if found is None else _number(found.improvement),
        "tests": len(result.observations),
        "failed": sum(o.status in _FAILURES for o in result.observations),
        "stopped_early": sum(o.status is Status.STOPPED_EARLY for o in result.observations),
        "session": result.session_id,
        "folder": str(result.directory),
    }


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def sessions_frame(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per session found in ``paths`` (:data:`SESSION_COLUMNS`); improvements are
    fractions (+0.25 = 25 % better than the default, in the objective's direction)."""
    import pandas as pd

    rows = [session_row(load_result(folder)) for folder in find_sessions(paths)]
    return pd.DataFrame(rows, columns=list(SESSION_COLUMNS))


def tests_frame(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per test of every session found in ``paths``, with the session's labels."""
    import pandas as pd

    frames = []
    for folder in find_sessions(paths):
        result = load_result(folder)
        row = session_row(result)
        labels = {key: row[key] for key in ("session", "system", "workload", "tuner", "seed")}
        frames.append(observations_frame(result.observations, result.objective, labels))
    frames = [frame for frame in frames if not frame.empty]
    return pd.concat(frames, ignore_index=True) if frames else observations_frame([], None)


def observations_frame(
    observations: Sequence[Observation],
    objective: Objective | None,
    labels: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Tests as a table: ``trial``, ``status``, ``is_default``, ``value`` (the objective's,
    in its own direction), ``best_so_far``, ``duration_s``, ``config.<knob>`` (typed as
    stored), ``result.<metric>``, ``message``, then ``labels`` as constant columns."""
    import pandas as pd

    rows = [_test_row(obs, objective) for obs in observations]
    frame = pd.DataFrame(rows, columns=_test_columns(observations))
    succeeded = frame["value"].where(frame["status"] == Status.SUCCEEDED.value)
    frame["best_so_far"] = _best_so_far(succeeded.tolist(), objective)
    for key, value in (labels or {}).items():
        frame[key] = value
    return frame


def _test_columns(observations: Sequence[Observation]) -> list[str]:
    knobs = list(dict.fromkeys(k for o in observations for k in o.config))
    metrics = list(dict.fromkeys(m for o in observations for m in o.metrics))
    base = ["trial", "status", "is_default", "value", "duration_s"]
    return [*base, *(f"config.{k}" for k in knobs), *(f"result.{m}" for m in metrics), "message"]


def _test_row(obs: Observation, objective: Objective | None) -> dict[str, Any]:
    value = None
    if objective is not None and obs.status in (Status.SUCCEEDED, Status.INFEASIBLE):
        value = obs.metrics.get(objective.metric)
    return {
        "trial": obs.trial,
        "status": obs.status.value,
        "is_default": obs.is_default,
        "value": value,
        "duration_s": obs.duration_s,
        **{f"config.{k}": v for k, v in obs.config.items()},
        **{f"result.{m}": v for m, v in obs.metrics.items()},
        "message": obs.message,
    }


def _best_so_far(values: list[float | None], objective: Objective | None) -> list[float | None]:
    """The best successful value up to each test (None before the first success)."""
    best: float | None = None
    out: list[float | None] = []
    for value in values:
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            better = objective is None or best is None or objective.better(value, best)
            best = value if better else best
        out.append(best)
    return out
