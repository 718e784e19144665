"""The one front door: compose a config, prepare a session, run it.

Every way of running a tuning session goes through here: the CLI (``python -m harness`` and
``classytune-harness``), the bench (:mod:`paper.bench`), the scripts and the measurement tools.

    from harness import api

    cfg = api.compose(["system=synthetic10", "tuner=bestconfig", "budget=20"])
    result = api.run(cfg)                      # a session folder and an MLflow run, as the CLI
    result = api.run(cfg, store="memory")      # nothing written: for benchmarks

Code that already holds a system, a workload and a tuner (tests, notebooks, measurement
scripts) calls :func:`run_objects`; it runs the same :class:`~harness.session.session.Session` loop
with an in-memory store and no tracking. A Python function is tuned with :func:`tune`, through
that same loop:

    result = api.tune(lambda c: -(c["x"] - 0.3) ** 2, {"x": (0.0, 1.0)}, budget=20)
    result.best_config, result.best_value, result.to_dataframe()

Finished sessions read back as pandas tables with :func:`sessions` and :func:`tests`.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig

from harness.builder.function import (
    Direction,
    FunctionSystem,
    FunctionWorkload,
    TunedFunction,
    function_objective,
    function_options,
    space_from_shorthand,
)
from harness.builder.session import StoreKind, assemble_session, build_session
from harness.errors import ConfigError
from harness.objectives.objective import Objective
from harness.records import Observation
from harness.session.options import SessionOptions
from harness.session.results import observations_frame, sessions_frame, tests_frame
from harness.session.session import Session, SessionResult, TunerFactory
from harness.space import Config, Space
from harness.system import System, Workload
from harness.tracking.mlflow_tracker import NullTracker, Tracker, make_tracker
from harness.tuner import Tuner

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TuneResult",
    "compose",
    "prepare",
    "run",
    "run_objects",
    "sessions",
    "tests",
    "tune",
]

log = logging.getLogger("harness")

Progress = Callable[[Observation, float | None], None]


def compose(overrides: Sequence[str] = (), config_name: str = "config") -> DictConfig:
    """The config ``python -m harness <overrides>`` would run (Hydra's compose API).

    Uses the configs shipped in the package (``pkg://harness.conf``), so it works the same
    from a checkout and from an installed wheel, in any working folder.
    """
    from hydra import compose as hydra_compose
    from hydra import initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    from harness.builder.validate import check_workload_choices
    from harness.conf.schema import register_configs

    check_workload_choices(list(overrides))  # one line, not Hydra's search-path dump
    register_configs()
    if GlobalHydra.instance().is_initialized():  # e.g. called from inside a Hydra app
        return hydra_compose(config_name, overrides=list(overrides))
    with initialize_config_module("harness.conf", version_base="1.3"):
        return hydra_compose(config_name, overrides=list(overrides))


def prepare(
    cfg: DictConfig, overrides: Sequence[str] = (), *, store: StoreKind = "disk"
) -> Session:
    """Validate ``cfg`` and build its session (nothing runs yet).

    ``overrides`` are the command line's, which a resume checks; ``store="memory"`` keeps
    the session's tests in memory only (no session folder, no resume).
    """
    return build_session(cfg, list(overrides), store=store)


def run(
    target: DictConfig | Session,
    *,
    overrides: Sequence[str] = (),
    store: StoreKind = "disk",
    on_progress: Progress | None = None,
) -> SessionResult:
    """Run a session (built from a config, or prepared) until its budget is spent.

    A finished session's work folder is removed unless ``session.keep_workdir`` is set.
    """
    session = target if isinstance(target, Session) else prepare(target, overrides, store=store)
    log.info(
        "session %s: %s on %s/%s, budget %d, folder %s",
        session.session_id,
        session.tuner_name,
        session.system.name,
        session.workload.name,
        session.options.budget,
        session.store.directory,
    )
    from harness.hosts.connect import close_connections

    try:
        result = session.run(on_progress=on_progress)
        if result.status == "FINISHED" and not session.options.keep_workdir:
            session.remove_workdir()
    finally:
        for system in (session.system, *(worker.system for worker in session.pool)):
            close_connections(system)
    return result


def run_objects(
    tuner: Tuner | TunerFactory,
    system: System,
    workload: Workload,
    *,
    budget: int,
    results_dir: str | Path,
    seed: int = 0,
    objective: Objective | None = None,
    fixed: dict[str, Any] | None = None,
    on_progress: Progress | None = None,
    **options: Any,
) -> SessionResult:
    """Run a session of objects you built yourself: in memory, untracked, same loop.

    ``tuner`` is a built tuner or a factory ``(space=, seed=, budget=) -> Tuner``. The system
    is set up in ``results_dir/work/<session>`` and torn down at the end, as in any session;
    ``options`` are :class:`~harness.session.options.SessionOptions` fields (e.g.
    ``repeats=3``, ``start_timeout_s=60``, ``keep_workdir=True``).
    """
    factory: TunerFactory = (
        tuner
        if callable(tuner) and not isinstance(tuner, Tuner)
        else (
            lambda **_: tuner  # type: ignore[misc, return-value]
        )
    )
    session = assemble_session(
        factory,
        system,
        workload,
        objective=objective or Objective.for_workload(workload.metrics),
        options=SessionOptions(budget=budget, seed=seed, **{"progress": False, **options}),
        results_dir=Path(results_dir),
        fixed=fixed,
        store="memory",
    )
    return run(session, on_progress=on_progress)


def sessions(*folders: str | Path) -> pd.DataFrame:
    """One row per finished session found in ``folders`` (session or results folders):
    system, workload, tuner, seed, best, improvement and confirmed improvement over the
    default, tests, failed (:func:`harness.session.results.sessions_frame`)."""
    return sessions_frame(folders)


def tests(*folders: str | Path) -> pd.DataFrame:
    """One row per test of the sessions in ``folders``, with ``config.<knob>`` columns
    (:func:`harness.session.results.tests_frame`)."""
    return tests_frame(folders)


@dataclass(frozen=True)
class TuneResult:
    """What :func:`tune` found: the best configuration and its value, and the session."""

    session: SessionResult

    @property
    def best_config(self) -> Config | None:
        best = self.session.answer
        return dict(best.config) if best is not None else None

    @property
    def best_value(self) -> float | None:
        return self.session.value(self.session.answer)

    @property
    def improvement(self) -> float | None:
        """Over the default configuration (trial 0), as a fraction in the objective's sense."""
        return self.session.improvement()

    def to_dataframe(self) -> pd.DataFrame:
        """Every test: trial, status, value, best_so_far, ``config.<knob>``, ``result.<m>``."""
        return observations_frame(self.session.observations, self.session.objective)


def tune(
    fn: TunedFunction,
    space: Mapping[str, Any] | Space,
    *,
    budget: int,
    tuner: str | Tuner | TunerFactory = "classytune",
    seed: int = 0,
    direction: Direction = "max",
    metric: str = "value",
    results_dir: str | Path | None = None,
    tracking: str | bool = False,
    **options: Any,
) -> TuneResult:
    """Tune ``fn(config) -> float`` (or a dict of metrics, ``metric`` the tuned one) over
    ``space`` (a :class:`Space` or the shorthand of :mod:`harness.builder.function`).

    ``tuner`` is a tuner config's name (``harness/conf/tuner/<name>.yaml``), a tuner or a
    factory. In memory by default; with ``results_dir=`` the session is a folder there
    (``sessions/<id>``, resumable, readable by :func:`sessions` and the plots), and with
    ``tracking=True`` (MLflow in ``results_dir/mlflow.db``) or a tracking URI also an MLflow
    run. ``options`` are :class:`~harness.session.options.SessionOptions` fields.
    """
    knobs = space_from_shorthand(space)
    objective = function_objective(metric, direction)
    factory = _tuner_factory(tuner)
    session_options = function_options(budget, seed, **options)
    name = getattr(fn, "__name__", "function").strip("<>") or "function"
    with tempfile.TemporaryDirectory(prefix="harness-tune-") as scratch:
        folder = Path(results_dir) if results_dir is not None else Path(scratch)
        session = assemble_session(
            factory,
            FunctionSystem(knobs, name),
            FunctionWorkload(fn, metric, direction),
            objective=objective,
            options=session_options,
            results_dir=folder,
            store="disk" if results_dir is not None else "memory",
            tracker=_tracker(tracking, results_dir),
        )
        session.export_answer = None  # no native files: best_config is the answer
        return TuneResult(run(session))


def _tracker(tracking: str | bool, results_dir: str | Path | None) -> Tracker:
    """MLflow for a durable session that asked for it; nothing otherwise."""
    if tracking is False:
        return NullTracker()
    if results_dir is None:
        raise ConfigError("tracking= logs a session kept on disk: give results_dir= too")
    folder = Path(results_dir)
    uri = f"sqlite:///{folder.absolute() / 'mlflow.db'}" if tracking is True else str(tracking)
    folder.mkdir(parents=True, exist_ok=True)
    return make_tracker(True, uri, results_dir=folder)


def _tuner_factory(tuner: str | Tuner | TunerFactory) -> TunerFactory:
    """A tuner config's name, a built tuner or a factory, as a factory."""
    if isinstance(tuner, Tuner):
        return lambda **_: tuner
    if not isinstance(tuner, str):
        return tuner
    from hydra.utils import instantiate

    from harness.builder.validate import check_tuner_options
    from harness.tuner import tuner_name_of

    known = _tuner_names()
    if tuner not in known:
        raise ConfigError(f"unknown tuner {tuner!r}; the tuners are: {', '.join(known)}")
    try:
        factory = instantiate(compose([f"tuner={tuner}"]).tuner)
    except Exception as exc:  # a missing optional package, as Hydra wraps it
        cause = exc.__cause__ or exc
        raise ConfigError(f"cannot build the tuner {tuner!r}: {cause}") from None
    check_tuner_options(factory, tuner_name_of(factory))
    return factory  # type: ignore[no-any-return]


def _tuner_names() -> list[str]:
    """The tuner configs shipped in ``harness/conf/tuner/``."""
    from importlib.resources import files

    folder = files("harness.conf").joinpath("tuner")
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))
