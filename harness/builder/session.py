"""Turn a composed Hydra config into a ready :class:`~harness.session.session.Session`.

Everything that can be wrong with the input (unknown workload, a knob pin out of range, a bad
objective, an unwritable results folder, an unreachable tracking store) fails here, before the
first test, with a one-line :class:`~harness.errors.HarnessError`.
"""

from __future__ import annotations

import inspect
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import fields
from functools import partial
from pathlib import Path
from typing import Any, Literal

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from harness.builder.export import export_session
from harness.builder.extras import check_extras
from harness.builder.validate import (
    RESUME_OVERRIDABLE,
    check_range_overrides,
    check_resume_overrides,
    check_tuner_inputs,
    check_tuner_options,
    check_tuner_values,
    check_unknown_keys,
    check_workload_numbers,
    check_workload_options,
    dotted_knobs,
    ensure_results_dir,
    is_range_change,
    override_key,
    target_signature,
    validate_session_name,
)
from harness.errors import ConfigError, HarnessError
from harness.hosts.pool import Worker
from harness.objectives.objective import Objective
from harness.session.meta import session_meta
from harness.session.options import SessionPolicy
from harness.session.session import Session, SessionOptions, TunerFactory
from harness.space import Config
from harness.store.memory import MemoryStore
from harness.store.samples import SampleStore, Store
from harness.store.stored_config import (
    check_stored_targets,
    command_line_config_dirs,
    refuse_links,
    results_dir_of,
)
from harness.system import System, Workload
from harness.tracking.mlflow_tracker import (
    NullTracker,
    Tracker,
    make_tracker,
    redact_uri,
    take_credentials,
)
from harness.tracking.uri import check_stored_tracking
from harness.tuner import tuner_name_of

__all__ = [
    "RESUME_OVERRIDABLE",
    "StoreKind",
    "assemble_session",
    "build_session",
    "check_resume_overrides",
    "ensure_results_dir",
    "load_resumed_config",
    "make_objective",
    "validate_session_name",
]


#: Where a session keeps its tests: a session folder (resumable) or this process's memory.
StoreKind = Literal["disk", "memory"]

log = logging.getLogger(__name__)


def _instantiate(node: Any, what: str) -> Any:
    try:
        return instantiate(node)
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, HarnessError):
            raise cause from None
        detail = str(cause or exc).splitlines()[0] if str(cause or exc) else type(cause).__name__
        raise ConfigError(f"cannot build the {what}: {detail}") from None


def make_workload(cfg: DictConfig) -> Workload:
    """The chosen workload's driver (``cfg.workload``: its name, ``_target_`` and settings)."""
    node = _container(cfg.workload)
    name = str(node.get("name") or "workload")
    if not _takes_name(node):  # HiBench drivers take the HiBench workload's name
        node.pop("name", None)
    check_workload_options(node, name)
    check_workload_numbers(node, name)
    workload = _instantiate(node, f"workload {name!r}")
    workload.name = name
    return workload  # type: ignore[no-any-return]


def _takes_name(node: dict[str, Any]) -> bool:
    signature = target_signature(node)
    return signature is not None and "name" in signature.parameters


def make_objective(cfg: DictConfig, workload: Workload, constants: dict[str, float]) -> Any:
    """The session's objective: one metric, or a utility/constraints
    (harness.objectives.utility)."""
    spec = _container(cfg.objective)
    from harness.objectives.utility import build_objective

    return build_objective(spec, workload.metrics, constants)


def _make_systems(cfg: DictConfig) -> list[System]:
    """The adapter, on this machine or on the inventory's hosts (``hosts=<name>``); with
    ``session.parallel=<n>``, one adapter per SUT host for the first ``n`` of them."""
    parallel = int(cfg.session.get("parallel", 1))
    hosts = cfg.get("hosts")
    if not hosts or not hosts.get("hosts"):
        if parallel > 1:
            raise ConfigError(
                f"session.parallel={parallel} runs tests on several SUT hosts at once: give "
                "an inventory with hosts=<name> (docs/remote.md), or drop session.parallel"
            )
        return [_instantiate(cfg.system.adapter, f"system {cfg.system.name!r}")]
    from harness.hosts.connect import adapter_kwargs, check_placement, connect_inventory
    from harness.hosts.inventory import Inventory

    tree = _container(hosts)
    inventory = Inventory.from_config(
        str(tree.get("name", "hosts")), tree.get("hosts") or [], tree.get("common") or {}
    )
    target = str(cfg.system.adapter._target_)
    # before any connection: a system that cannot run remotely fails without touching a host
    placement = check_placement(cfg.system.name, target, inventory.name)
    if parallel > 1 and (placement != "host" or len(inventory.sut) < parallel):
        raise ConfigError(
            f"session.parallel={parallel} needs a single-host system and {parallel} SUT hosts; "
            f"system {cfg.system.name!r} is placed on a {placement} and inventory "
            f"{inventory.name!r} has {len(inventory.sut)} SUT host(s)"
        )
    cluster = connect_inventory(inventory)
    try:
        kwargs = adapter_kwargs(cfg.system.name, target, cluster, inventory.name, parallel)
        if parallel > 1:  # each test's client on its own host: a shared one would be the limit
            if kwargs.pop("load", None) is not None:
                log.warning("session.parallel: clients run on each SUT host, not the load host")
            each = [{**kwargs, "executor": node} for node in cluster.sut[:parallel]]
        else:
            each = [kwargs]
    except HarnessError:
        cluster.close()
        raise
    try:
        # Built as a partial and called with the executors: instantiate(**kwargs) would merge
        # them into the config, and OmegaConf cannot hold a Cluster (a dataclass of executors).
        make = instantiate(cfg.system.adapter, _partial_=True)
        return [make(**one) for one in each]
    except HarnessError:
        cluster.close()
        raise
    except Exception as exc:  # the adapter's own error, as instantiate used to wrap it
        cluster.close()
        cause = exc.__cause__ if isinstance(exc, InstantiationException) else exc
        if isinstance(cause, HarnessError):
            raise cause from None
        raise ConfigError(
            f"cannot build the system {cfg.system.name!r} on inventory "
            f"{inventory.name!r}: {cause or exc}"
        ) from None


def _pool(cfg: DictConfig, system: System, others: list[System]) -> list[Worker]:
    """The extra hosts of ``session.parallel``, each with its own workload object; their
    knob spaces must equal the first host's (same memory, same ranges), or the tuner's
    configurations would not mean the same on every host."""
    pool = []
    for other in others:
        _pins_and_ranges(cfg, other)
        if other.space != system.space:
            where = getattr(getattr(other, "executor", None), "host", "?")
            raise ConfigError(
                f"session.parallel: host {where} gives {cfg.system.name} other knob ranges "
                "than the first SUT host (different memory or cores?); a pool needs alike hosts"
            )
        pool.append(Worker(other, make_workload(cfg)))
    return pool


def _pins_and_ranges(cfg: DictConfig, system: System) -> Config:
    ranges = dotted_knobs(_container(cfg.system.ranges), is_range_change)
    if ranges:
        check_range_overrides(ranges)
        system.space = system.space.with_overrides(ranges)
    return system.space.validate(dotted_knobs(_container(cfg.system.fixed)), partial=True)


def _container(node: Any) -> dict[str, Any]:
    """A plain dict of a config node (keys as strings)."""
    tree = OmegaConf.to_container(node, resolve=True)
    assert isinstance(tree, dict)
    return {str(k): v for k, v in tree.items()}


def _results_dir(cfg: DictConfig) -> Path:
    return ensure_results_dir(Path(cfg.results_dir))


def _is_tracking(key: str) -> bool:
    return key == "tracking" or key.startswith("tracking.")


def load_resumed_config(resume: str) -> DictConfig:
    """The stored config of the session in folder ``resume``, checked as data: only targets
    this project (or a ``--config-dir`` on this command line) builds, and its results folder
    is the one that holds the session (:mod:`harness.store.stored_config`)."""
    folder = Path(resume)
    refuse_links(folder)
    meta = SampleStore(folder).read_meta()
    config = meta.get("config")
    if not isinstance(config, dict):
        raise ConfigError(
            f"{folder / 'session.json'} holds no composed config; only sessions started by "
            "python -m harness or harness.api.run can be resumed"
        )
    cfg = OmegaConf.create(config)
    assert isinstance(cfg, DictConfig)
    check_stored_targets(cfg, folder / "session.json", command_line_config_dirs())
    cfg.results_dir = str(results_dir_of(folder))
    return cfg


def build_session(
    cfg: DictConfig, overrides: list[str] | None = None, *, store: StoreKind = "disk"
) -> Session:
    """Validate ``cfg`` completely and assemble a session (new, or resumed if ``cfg.resume``).

    ``overrides`` are the command line's (Hydra's task overrides): a resume honours only
    those in :data:`RESUME_OVERRIDABLE` and refuses the rest. ``store="memory"`` keeps the
    tests in memory (no session folder; cannot be resumed).
    """
    resume_dir = cfg.get("resume")
    if resume_dir and store == "memory":
        raise ConfigError("resume= continues a session folder; it needs the disk store")
    budget_override: int | None = None
    if resume_dir:
        cfg, budget_override = _resumed_config(cfg, list(overrides or []))
    else:
        check_unknown_keys(cfg)
        if cfg.session.name:
            validate_session_name(str(cfg.session.name))
    check_extras(_components(cfg))  # a missing optional package: one line, nothing created
    # .get: a session stored before a key existed resumes with its default
    policy = {f.name: cfg.session.get(f.name, f.default) for f in fields(SessionPolicy)}
    options = SessionOptions(
        budget=int(cfg.budget), seed=int(cfg.seed), repeats=int(cfg.repeats), **policy
    )
    results = _results_dir(cfg)
    system, *others = _make_systems(cfg)
    for one in (system, *others):
        one.name = cfg.system.name
        one.preflight()  # a missing binary or package: one line, before anything is created
    fixed = _pins_and_ranges(cfg, system)
    pool = _pool(cfg, system, others)
    workload = make_workload(cfg)
    from harness.hosts.machine import sut_machine
    from harness.objectives.utility import machine_constants

    # The SUT host's memory and cores (read there with hosts=), not the harness machine's.
    machine = sut_machine(system)
    objective = make_objective(cfg, workload, machine_constants(machine))
    tuner_factory = _tuner_factory(cfg, system, machine)
    check_tuner_values(tuner_factory, _tuned_space(system, fixed), options)
    tracker = make_tracker(bool(cfg.tracking.enabled), str(cfg.tracking.uri), results_dir=results)
    existing: Store | None = None
    meta: dict[str, Any] | None = None
    if resume_dir:
        existing, session_id = _reopened_store(resume_dir, cfg, budget_override)
    else:
        tuner_name = tuner_name_of(tuner_factory)
        session_id = cfg.session.name or new_session_id(
            cfg.system.name, workload.name, tuner_name, int(cfg.seed)
        )
        meta = _new_session_meta(
            cfg, results / "sessions" / session_id, system, workload, objective, tuner_name
        )
        # what defined the system and workload, for the export's "measure it again" command
        # (tracking is left out: a URI may carry credentials)
        meta["overrides"] = [o for o in overrides or [] if not _is_tracking(override_key(o))]
        # each knob's unit, so that every export format states it without rebuilding the system
        meta["units"] = {knob.name: knob.unit for knob in system.space.knobs if knob.unit}
    return assemble_session(
        tuner_factory,
        system,
        workload,
        objective=objective,
        options=options,
        results_dir=results,
        fixed=fixed,
        store=existing or store,
        session_id=session_id,
        tracker=tracker,
        meta=meta,
        pool=pool,
    )


def _resumed_config(given: DictConfig, overrides: list[str]) -> tuple[DictConfig, int | None]:
    """The stored config of ``given.resume``, with what a resume may change from the command
    line (how it reports and where it logs, never what it measures), and a new budget if any."""
    cfg = load_resumed_config(given.resume)
    budget_override = check_resume_overrides(overrides, cfg)
    keys_given = {override_key(o) for o in overrides}
    if budget_override is not None:
        cfg.budget = budget_override
    if any(k == "results_dir" for k in keys_given) and (
        Path(given.results_dir).resolve() != Path(cfg.results_dir).resolve()
    ):
        raise ConfigError(
            f"this session's results are in {cfg.results_dir}, not "
            f"{given.results_dir}; resume without results_dir="
        )
    if any(_is_tracking(k) for k in keys_given):
        cfg.tracking = given.tracking
    else:
        check_stored_tracking(cfg)
    for key in ("progress", "keep_workdir", "confirm"):
        if f"session.{key}" in keys_given:
            cfg.session[key] = given.session[key]
    return cfg, budget_override


#: What reaches the hosts of an inventory (its imports name the ``remote`` extra's packages).
SSH_EXECUTOR = "harness.hosts.ssh.SSHExecutor"


def _components(cfg: DictConfig) -> dict[str, str]:
    """``tuner=optuna_tpe`` → its ``_target_``, for the tuner, system and workload chosen (and
    the SSH executor when an inventory names hosts)."""
    from hydra.core.hydra_config import HydraConfig

    choices = HydraConfig.get().runtime.choices if HydraConfig.initialized() else {}
    nodes = {"tuner": cfg.get("tuner"), "system": cfg.system.get("adapter")}
    nodes["workload"] = cfg.get("workload")
    found = {
        f"{group}={choices.get(group) or node.get('name') or '?'}": str(node._target_)
        for group, node in nodes.items()
        if isinstance(node, DictConfig) and node.get("_target_")
    }
    hosts = cfg.get("hosts")
    if hosts and hosts.get("hosts"):  # other machines: reached over SSH
        found[f"hosts={choices.get('hosts') or hosts.get('name')}"] = SSH_EXECUTOR
    return found


def _tuned_space(system: System, fixed: Config) -> Any:
    """The knobs the tuner searches: the system's, less those pinned (all, if all are)."""
    free = [name for name in system.space.names if name not in fixed]
    return system.space.subspace(free) if fixed and free else system.space


def _tuner_factory(cfg: DictConfig, system: System, machine: Any) -> partial[Any]:
    """The tuner's factory, its options checked; given the SUT machine if its rules read it."""
    factory = _instantiate(cfg.tuner, "tuner")
    if not isinstance(factory, partial):
        raise ConfigError(
            "tuner configs need `_partial_: true` (the session passes space, seed and budget)"
        )
    check_tuner_options(factory, tuner_name_of(factory))
    check_tuner_inputs(factory, system.space, str(cfg.system.name))  # e.g. warm starts
    if "machine" in inspect.signature(factory.func).parameters:
        factory = partial(factory, machine=machine)  # rules that read the host
    return factory


def _reopened_store(
    resume_dir: str, cfg: DictConfig, budget_override: int | None
) -> tuple[Store, str]:
    """The resumed session's store, locked before anything is written (a running session
    keeps its folder), and its id."""
    existing = SampleStore(resume_dir)
    session_id = validate_session_name(str(existing.read_meta().get("session_id", "")))
    existing.lock()
    if budget_override is not None:
        existing.update_meta(config=OmegaConf.to_container(cfg, resolve=False))
    return existing, session_id


def _new_session_meta(
    cfg: DictConfig,
    folder: Path,
    system: System,
    workload: Workload,
    objective: Objective,
    tuner_name: str,
) -> dict[str, Any]:
    """What a new session records about itself: the composed config (credentials taken out
    of a tracking URI), its params for MLflow, and where its artifacts go."""
    stored = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(stored, dict)
    uri = stored["tracking"].get("uri")
    if isinstance(uri, str) and "${" not in uri:  # an ${oc.env:...} stays as written
        stored["tracking"]["uri"] = take_credentials(uri)
    return session_meta(
        str(folder.name),
        folder,
        system,
        workload,
        objective,
        tuner_name,
        seed=int(cfg.seed),
        experiment=cfg.tracking.experiment or f"{cfg.system.name}/{workload.name}",
        config={str(k): v for k, v in stored.items()},
        params={
            k: redact_uri(v) if isinstance(v, str) else v
            for k, v in dotted_knobs(_container(cfg)).items()
        },
    )


def new_session_id(system: str, workload: str, tuner: str, seed: int) -> str:
    """``<system>-<workload>-<tuner>-s<seed>-<time>-<random>``: unique, sortable, readable."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return f"{system}-{workload}-{tuner}-s{seed}-{stamp}-{secrets.token_hex(2)}"


def assemble_session(
    tuner_factory: TunerFactory,
    system: System,
    workload: Workload,
    *,
    objective: Objective,
    options: SessionOptions,
    results_dir: Path,
    fixed: Config | None = None,
    store: StoreKind | Store = "memory",
    session_id: str | None = None,
    tracker: Tracker | None = None,
    meta: dict[str, Any] | None = None,
    pool: Sequence[Worker] = (),
) -> Session:
    """The one place a :class:`~harness.session.session.Session` is built, from ready objects.

    :func:`build_session` calls it for a composed config; :func:`harness.api.run_objects`
    for objects a caller built (in memory, untracked). A new store is created with ``meta``
    (or a minimal record of the session); a given store (a resume) is used as it is.
    """
    tuner_name = tuner_name_of(tuner_factory)
    session_id = session_id or new_session_id(system.name, workload.name, tuner_name, options.seed)
    if isinstance(store, str):  # a new session: its store must not exist yet
        folder = results_dir / "sessions" / session_id
        store = MemoryStore(folder) if store == "memory" else SampleStore(folder)
        store.create(
            meta
            or session_meta(
                session_id,
                store.directory,
                system,
                workload,
                objective,
                tuner_name,
                seed=options.seed,
                experiment=f"{system.name}/{workload.name}",
            )
        )
    return Session(
        session_id=session_id,
        store=store,
        tuner_factory=tuner_factory,
        system=system,
        workload=workload,
        objective=objective,
        tracker=tracker or NullTracker(),
        options=options,
        fixed=fixed,
        # Absolute: adapters hand this path to servers and scripts that run in other folders.
        workdir=(results_dir / "work" / session_id).absolute(),
        pool=pool,
        export_answer=export_session,
    )
