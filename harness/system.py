"""The contracts between the session loop, the systems under tune and their workloads.

A tuning test is: ``system.reset()`` (restore the initial data) → ``system.apply(config)`` →
``system.start(timeout)`` (start or restart, and wait until ready) → ``workload.run(system,
timeout)`` → metrics → ``system.stop()``. The session turns the exceptions these raise into a
test status: :class:`~harness.errors.SystemStartError` → CRASHED,
:class:`~harness.errors.WorkloadTimeout` → TIMED_OUT, :class:`~harness.errors.WorkloadError` →
FAILED. Any other exception is a bug and stops the session (finished tests are kept).

Adapters must make ``apply``, ``reset`` and ``stop`` idempotent, and must not leave processes
behind after ``teardown`` (also when the session is interrupted); :mod:`harness.hosts.process` has
the shared readiness polling, process-group kill and command-failure mapping.

Capabilities are declared, never sniffed from signatures: :attr:`System.placement` says where an
adapter runs, and :data:`PLACEMENT_KEYWORD` the constructor keyword that hands it its host
(:class:`RunsOnHost`) or its cluster (:class:`RunsOnCluster`). By default every test restarts
the system; the database adapters may, when asked (their ``reload`` option), reload a running
server whose changed knobs are all reloadable (:mod:`systems.dbserver.reuse`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

from harness.errors import ConfigError
from harness.space import Config, Space

if TYPE_CHECKING:
    from harness.executor import Executor
    from harness.hosts.cluster import Cluster

__all__ = [
    "PLACEMENTS",
    "PLACEMENT_KEYWORD",
    "MetricSpec",
    "Placement",
    "RunsOnCluster",
    "RunsOnHost",
    "System",
    "SystemKind",
    "Workload",
    "native_header",
]

SystemKind = Literal["real", "surrogate", "synthetic", "remote"]
Placement = Literal["local", "host", "cluster"]
PLACEMENTS: tuple[Placement, ...] = ("local", "host", "cluster")
#: The constructor keyword through which an adapter of each remote-capable placement receives
#: where it runs (``local`` adapters take neither).
PLACEMENT_KEYWORD: Mapping[Placement, str] = {"host": "executor", "cluster": "cluster"}


@runtime_checkable
class RunsOnHost(Protocol):
    """An adapter with ``placement = "host"``: built with ``executor=`` (default: this
    machine), it runs every command and file operation of its system through it."""

    executor: Executor


@runtime_checkable
class RunsOnCluster(Protocol):
    """An adapter with ``placement = "cluster"``: built with ``cluster=`` (default: this
    machine alone), it drives the SUT nodes and the load host through it."""

    cluster: Cluster


@dataclass(frozen=True)
class MetricSpec:
    """A metric a workload reports: its name, whether larger is better, and its unit."""

    name: str
    direction: Literal["max", "min"]
    unit: str = ""


class Workload(ABC):
    """A benchmark run against a started system.

    ``metrics`` lists every metric ``run`` reports (all of them, every time), the first being
    the default objective. Parsing of a benchmark client's output should live in a pure
    function so that it can be tested on captured real output.
    """

    name: str = "workload"
    metrics: tuple[MetricSpec, ...] = ()
    #: Nominal run time of one test in seconds (used for progress estimates and timeouts).
    duration_s: float = 0.0

    def prepare(self, system: System, workdir: Path) -> None:  # noqa: B027 - optional hook
        """Once per session, before the first test (e.g. generate data, load tables)."""

    @abstractmethod
    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        """Run once and return every metric. Raise WorkloadError/WorkloadTimeout on failure."""

    def params(self) -> dict[str, Any]:
        """Settings logged with the session (MLflow params ``resolved.workload.<key>``)."""
        return {"name": self.name, "duration_s": self.duration_s}


class System(ABC):
    """A system under tune: its knob space and its lifecycle.

    Constructors do no I/O (no binary lookup, no command, no connection), so that an adapter
    can be built and unit-tested without its server; :meth:`preflight` checks the
    installation before the first test, and :meth:`setup` creates the instance.
    """

    name: str = "system"
    kind: SystemKind = "real"
    #: Where the adapter runs, declared so that ``hosts=`` never inspects signatures:
    #: ``local`` (this machine only), ``host`` (one host: the constructor takes
    #: ``executor=``, see :class:`RunsOnHost`), ``cluster`` (several hosts: it takes
    #: ``cluster=``, see :class:`RunsOnCluster`). The contract test checks the constructors.
    placement: ClassVar[Placement] = "local"
    #: A ``host`` adapter that can run its benchmark client on another host declares it: its
    #: constructor then takes ``load=`` (an executor), given the inventory's ``load`` host.
    #: Without it, a ``load`` host in the inventory is left unused (with a warning).
    takes_load_host: ClassVar[bool] = False

    def __init__(self, space: Space) -> None:
        self.space = space

    def preflight(self) -> None:  # noqa: B027 - optional hook
        """Check the installation (binaries, versions, the account to run as) before any test,
        raising a one-line :class:`~harness.errors.ConfigError` that names the fix; idempotent.
        The session calls it before it creates anything; ``setup`` may call it again."""

    def setup(self, workdir: Path, workload: Workload) -> None:
        """Once per session: create the instance, let the workload load data, snapshot it."""
        workdir.mkdir(parents=True, exist_ok=True)
        workload.prepare(self, workdir)

    def reset(self) -> None:  # noqa: B027 - optional hook
        """Restore the initial data state so every test starts from identical data."""

    @abstractmethod
    def apply(self, config: Config) -> Config | None:
        """Render ``config`` into the system's configuration (files, flags, pragmas).

        A system that can only run configurations near the one asked for (a table of
        recorded samples answers with its nearest recorded row) returns the configuration it
        actually runs; the test is then recorded under that one. Others return None."""

    def summary_lines(self) -> list[str]:
        """Lines about the system for the session summary (a recorded-data system: its
        default rule and best-known optimum); none by default."""
        return []

    def start(self, timeout_s: float) -> None:  # noqa: B027 - optional hook
        """(Re)start with the applied configuration and wait until ready; raise
        :class:`~harness.errors.SystemStartError` with the log tail if it does not come up."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Stop the system if it runs (idempotent)."""

    def teardown(self) -> None:
        """End of session: stop and release everything (idempotent)."""
        self.stop()

    def describe(self) -> Mapping[str, str]:
        """Tags for tracking: kind, versions, backend (override to add more)."""
        return {"system": self.name, "system_kind": self.kind}

    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """``{file name: text}``: ``config`` in the system's own syntax (my.cnf, site XML, ...)
        holding only the tuned knobs, each rendered exactly as :meth:`apply` renders it for a
        test, for :mod:`harness.cli.export`. Pure: no I/O, no started system. ``note`` (which
        session and test) goes into a header comment where the format has comments (see
        :func:`native_header`). File names are bare names, no folders. None by default
        (synthetic and recorded-data systems have no configuration files)."""
        return {}


def native_header(
    space: Space, config: Mapping[str, object], note: str = "", start: str = "# ", end: str = ""
) -> list[str]:
    """Comment lines for an exported file: what wrote it and each knob's unit, each line
    ``start + text + end`` (``"# "``; ``"-- "`` for SQL; ``"<!-- "``/``" -->"`` for XML).
    Text is one printable line, and ``--`` is broken up inside an XML comment, where it may
    not appear, so no knob name or note can end the comment early."""

    def line(text: str) -> str:
        text = "".join(c if c.isprintable() else " " for c in text)
        while end and "--" in text:
            text = text.replace("--", "- -")
        return f"{start}{text}{end}"

    head = "best configuration exported by the ClassyTune harness"
    lines = [line(f"{head}: {note}" if note else head)]
    units = [
        f"{name} [{space[name].unit}]" for name in config if name in space and space[name].unit
    ]
    if units:
        lines.append(line("units: " + ", ".join(units)))
    return lines


def whole_number(value: Any, key: str, low: int = 1, high: int | None = None) -> int:
    """``value`` of the workload setting ``key`` as a whole number from ``low`` (to ``high``,
    when given): a count of threads, clients, rows. One line that names the setting and its
    range, never a silent cut."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not float(value).is_integer()
        or value < low
        or (high is not None and value > high)
    ):
        wanted = f"{low} or more" if high is None else f"from {low} to {high}"
        raise ConfigError(f"workload.{key}={value!r}: use a whole number, {wanted}")
    return int(value)
