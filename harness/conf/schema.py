"""Structured config schemas (Hydra ConfigStore) so a typo fails at compose time.

The groups ``tuner/``, ``system/`` and ``workloads/<system>/`` hold YAML in ``conf/``; this
module types the top level and the group nodes. Tuner nodes stay open (each tuner has its own
parameters, and Hydra's struct mode still rejects unknown keys on the command line).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from harness.conf.choices import options_of, register_choices, user_folders, workloads_of
from harness.hosts.machine import install_dir
from harness.session.options import SessionPolicy

__all__ = ["HarnessConfig", "register_configs", "workloads_of"]


@dataclass
class SystemConf:
    """A system under tune: its adapter and knob pins/ranges (its workloads are the
    ``workloads/<system>/`` group)."""

    name: str = "???"
    adapter: Any = "???"
    #: Pin knobs to values (removed from the tuned space), e.g. +system.fixed.page_size=4096
    fixed: dict[str, Any] = field(default_factory=dict)
    #: Narrow ranges or change defaults, e.g. +system.ranges.cache_size.max=4096
    ranges: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    #: The module of its expert rules (``manual``/``script`` functions) for ``tuner=expert_*``,
    #: e.g. ``systems.mysql.expert`` (baselines/expert.py); none: that tuner refuses the system.
    expert_rules: str | None = None


@dataclass
class ObjectiveConf:
    """What to optimise: one metric, or a utility over several with constraints."""

    metric: str | None = None
    direction: str | None = None
    utility: str | None = None
    name: str | None = None  # label of a utility in summaries and MLflow
    per: str | None = None  # ratio: divide by a constant or metric, e.g. cores
    weights: dict[str, float] = field(default_factory=dict)
    constraints: list[str] = field(default_factory=list)
    constraint_mode: str = "infeasible"
    penalty: float = 0.0


@dataclass
class TrackingConf:
    """MLflow tracking (``tracking=none`` turns it off)."""

    enabled: bool = True
    uri: str = "sqlite:///${results_dir}/mlflow.db"
    experiment: str | None = None


@dataclass
class SessionConf(SessionPolicy):
    """Per-session behaviour (:class:`~harness.session.options.SessionPolicy`) and its name."""

    #: The session's folder name under results/sessions/ (default: system-workload-tuner-...).
    name: str | None = None


@dataclass
class DatasetConf:
    """A user's own recorded samples, for ``system=dataset``."""

    path: str | None = None
    target: str | None = None
    direction: str = "max"
    #: first | <row index> | median (an is_default column wins); see systems/dataset/README.md
    default_row: Any = None
    #: {knob: value, ...}: the default configuration, given (wins over default_row); typed
    #: Any so that a command-line dict merges into the null default and the adapter checks it
    default_config: Any = None


@dataclass
class HostsConf:
    """The host inventory (``hosts=<name>``, conf/hosts/); no hosts = run on this machine.

    ``common`` settings apply to every host; each host has ``name``, ``address`` and optionally
    ``port``, ``user``, ``key_file``, ``roles`` (sut, load), ``workdir``,
    ``strict_host_key_checking``, ``known_hosts``, ``connect_timeout_s``, ``link_timeout_s``,
    ``ram_mib`` and ``cores`` (the share of the host a session may use), ``connection``
    (harness.hosts.inventory.Host). Passwords are refused: use ssh config, agent or keys.
    """

    name: str = "none"
    common: dict[str, Any] = field(default_factory=dict)
    hosts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class HarnessConfig:
    """The top level of ``python -m harness``."""

    tuner: Any = "???"
    system: SystemConf = field(default_factory=SystemConf)
    #: The chosen workload's driver: ``name``, ``_target_`` and the driver's own settings
    #: (harness/conf/workloads/<system>/<workload>.yaml), e.g. ``workload.duration_s=20``.
    workload: dict[str, Any] = field(default_factory=dict)
    objective: ObjectiveConf = field(default_factory=ObjectiveConf)
    tracking: TrackingConf = field(default_factory=TrackingConf)
    session: SessionConf = field(default_factory=SessionConf)
    dataset: DatasetConf = field(default_factory=DatasetConf)
    hosts: HostsConf = field(default_factory=HostsConf)
    budget: int = 100
    seed: int = 0
    repeats: int = 1
    results_dir: str = "results"
    #: A session folder to continue (its stored config is used; budget may be raised).
    resume: str | None = None


def _workloads_of(system: str) -> str:
    return ", ".join(workloads_of(system)) or "none"


def _options_of(group: str) -> str:
    return ", ".join(options_of(group))


def register_configs(arguments: Sequence[str] = ()) -> None:
    """Register the schema; ``conf/config.yaml`` lists ``base_config`` first in its defaults,
    so every group option is validated against its typed node at compose time.

    Also generates the workload choices of every config folder, the package's and those the
    command line ``arguments`` add (:func:`harness.conf.choices.register_choices`), and
    registers ``${harness_workloads:<system>}`` (the workloads that system offers) and
    ``${harness_options:<group>}`` (a group's options over those folders), which ``--help``
    uses to list only what applies to the chosen system, and ``${harness_install:<name>}``
    (:func:`install_dir`).
    """
    register_choices(user_folders(arguments))
    if not OmegaConf.has_resolver("harness_workloads"):
        OmegaConf.register_new_resolver("harness_workloads", _workloads_of)
        OmegaConf.register_new_resolver("harness_options", _options_of)
        OmegaConf.register_new_resolver("harness_install", install_dir)
    store = ConfigStore.instance()
    store.store(name="base_config", node=HarnessConfig)
