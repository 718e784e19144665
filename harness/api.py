"""The one front door: compose a config, prepare a session, run it.

Every way of running a tuning session goes through here: the CLI (``python -m harness`` and
``classytune-harness``), the bench (:mod:`paper.bench`), the scripts and the measurement tools.

    from harness import api

    cfg = api.compose(["system=synthetic10", "tuner=bestconfig", "budget=20"])
    result = api.run(cfg)                      # a session folder and an MLflow run, as the CLI
    result = api.run(cfg, store="memory")      # nothing written: for benchmarks

Code that already holds a system, a workload and a tuner (tests, notebooks, measurement
scripts) calls :func:`run_objects`; it runs the same :class:`~harness.session.session.Session` loop
with an in-memory store and no tracking.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from harness.builder.session import StoreKind, assemble_session, build_session
from harness.objectives.objective import Objective
from harness.records import Observation
from harness.session.options import SessionOptions
from harness.session.session import Session, SessionResult, TunerFactory
from harness.system import System, Workload
from harness.tuner import Tuner

__all__ = ["compose", "prepare", "run", "run_objects"]

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
