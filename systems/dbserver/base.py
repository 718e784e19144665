"""Lifecycle shared by the PostgreSQL and MySQL adapters: a private server instance in the
session's work folder, a pristine data snapshot, and a guaranteed stop.

One session = ``setup`` (create the instance, start it with the default configuration, let the
workload load its data, stop, snapshot the stopped data directory) and then per test ``reset``
(restore the snapshot with a plain copy, timed) → ``apply`` → ``start`` → workload → ``stop``.

Cheaper tests (rules in :mod:`systems.dbserver.reuse`): ``reset`` copies nothing while only a
read-only workload ran since the last copy; with ``reload=True`` (off by default: a reload keeps
caches warm) and a read-only workload, ``stop`` leaves the server running between tests and
``start`` reloads it when every changed knob is reloadable (one static change: a restart).
``shutdown`` is the real stop, at teardown and at exit.

Every command goes through :class:`~harness.executor.Executor` as an argument list, and every
file is written with ``executor.write_text``, so the same adapter can drive a remote host.
When the harness runs as root, server processes and their files belong to the unprivileged
server user (``postgres`` / ``mysql``).

Safety: every instance gets a fresh random secret at setup, and its server accepts only
password-authenticated TCP connections (no ``trust``, no password-less root); the instance
folder (data, sockets, the secret file) is 0700 and owned by the server user. A server that
ignores a clean stop for ``stop_timeout_s`` (hung, or SIGSTOPped) is killed with its whole
process group, so no server process outlives its test.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import tempfile
import time
import weakref
from abc import abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, ExecutorError, HarnessError
from harness.executor import Executor, LocalExecutor
from harness.hosts.machine import Machine
from harness.hosts.process import kill_process_group, process_alive, process_state, stop_process
from harness.space import Config, Space
from harness.system import System, Workload
from systems.dbserver.reuse import changed_knobs, needs_restart, reads_only

__all__ = ["BENCH_DATABASE", "ServerSystem"]

#: The database the benchmark clients load and run against, on every server.
BENCH_DATABASE = "bench"

log = logging.getLogger(__name__)

_RUNNING: weakref.WeakSet[ServerSystem] = weakref.WeakSet()


def _stop_all_at_exit() -> None:
    """Last resort when the session's ``finally`` did not run (e.g. an unhandled signal path)."""
    for system in list(_RUNNING):
        try:
            system.shutdown()
        except Exception as exc:
            log.warning("atexit: could not stop %s: %s", system.name, exc)


atexit.register(_stop_all_at_exit)


class ServerSystem(System):
    """A database server owned by the harness: created, started, reset and stopped here.

    Subclasses implement the product-specific steps (``_initialise``, ``_launch``, ``_halt``,
    ``_running``, ``render``) and name their clients' driver and account (``dialect``,
    ``sysbench_driver``, ``client_user``).
    """

    placement = "host"
    #: The unprivileged account the server runs as when the harness runs as root.
    server_user = ""
    #: Folder name of the instance inside the session's work folder.
    instance_name = "server"
    #: The benchmark clients' view: DB-API dialect (TPC-C), sysbench driver, and the account
    #: they log in as (its password is :attr:`secret`).
    dialect = ""
    sysbench_driver = ""
    client_user = ""

    def __init__(
        self,
        space: Space,
        executor: Executor | None = None,
        run_as: str | None = None,
        stop_timeout_s: float = 60.0,
        load: Executor | None = None,
        reload: bool = False,
    ) -> None:
        super().__init__(space)
        if not stop_timeout_s > 0:
            raise ConfigError(f"stop_timeout_s must be positive, got {stop_timeout_s}")
        self.executor: Executor = executor or LocalExecutor()
        #: Where the benchmark client runs: the inventory's load host, else the SUT host.
        self.load: Executor = load or self.executor
        #: The client's folder on :attr:`load` (set at setup): the instance folder, or a
        #: 0700 folder of the session's own on a separate load host.
        self.client_folder: Path | None = None
        #: The account server commands run as: given, or (at preflight) the server user when
        #: the executor is root, else ourselves (None).
        self.run_as = run_as
        self._run_as_given = run_as is not None
        #: Absolute paths of the server's programs, found at preflight.
        self.bin: dict[str, str] = {}
        self._checked = False
        #: The SUT host's facts, read at preflight when the host is remote.
        self.host_machine: Machine | None = None
        self.stop_timeout_s = float(stop_timeout_s)
        self.instance: Path | None = None
        self.port = 0
        self.config: Config = self.space.default()
        self.restore_times: list[float] = []
        #: Whether a test may reload a running server instead of restarting it (see the module).
        self.reload = bool(reload)
        #: Knobs this product applies without a restart (the catalogue's ``reloadable:``).
        self.reloadable: frozenset[str] = frozenset()
        #: The configuration the running server has (None while it is stopped).
        self.running_config: Config | None = None
        #: Whether the data directory still holds what the snapshot holds.
        self.data_pristine = False
        self.workload_reads_only = False
        self.restores_skipped = 0
        self.reloads = 0
        #: The instance's password (fresh per setup; hex, so it needs no quoting anywhere).
        self.secret = ""
        self._owns_tempdir = False

    @property
    def address(self) -> str:
        """Where the server listens and clients connect: the SUT host's address."""
        return self.executor.address

    @property
    def loopback(self) -> bool:
        return self.address in ("127.0.0.1", "localhost", "::1")

    # -- paths ------------------------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        return self._require_instance() / "data"

    @property
    def snapshot_dir(self) -> Path:
        return self._require_instance() / "snapshot"

    def _require_instance(self) -> Path:
        if self.instance is None:
            raise HarnessError(f"{self.name}: setup() has not run (no instance folder)")
        return self.instance

    def as_user(self, command: Sequence[str], **kwargs: Any) -> Any:
        """Run ``command`` as the server user (or as ourselves when not root)."""
        return self.executor.run(list(command), user=self.run_as or None, **kwargs)

    # -- session lifecycle ------------------------------------------------------------------
    def preflight(self) -> None:
        if self._checked:
            return
        if self.load is not self.executor and self.loopback:
            raise ConfigError(
                f"{self.name}: the server listens on {self.address}, which the load host "
                f"{self.load.host} cannot reach; give the SUT host its network address in "
                "the inventory, or drop the load host"
            )
        if not self._run_as_given:
            self.run_as = self.server_user if _is_root(self.executor) else None
        self._find_binaries()
        if not isinstance(self.executor, LocalExecutor):
            # Memory maxima were scaled to this machine in the constructor (no I/O over SSH
            # there); a server on another host gets that host's (Machine.of reads it there).
            self.host_machine = Machine.of(self.executor)  # sut_machine reuses it
            space = self._space_for(self.host_machine)
            if space is not None:
                self.space, self.config = space, space.default()
        self._checked = True

    def _space_for(self, machine: Machine) -> Space | None:
        """The knob space with memory ranges scaled to ``machine`` (None: keep the space, e.g.
        one the caller gave)."""
        return None

    @abstractmethod
    def _find_binaries(self) -> None:
        """Fill :attr:`bin` (a ConfigError naming the package when a program is missing)."""

    def setup(self, workdir: Path, workload: Workload) -> None:
        self.preflight()
        self.instance = self._instance_dir(Path(workdir))
        self.client_folder = self._client_dir(Path(workdir))
        self._stop_leftover()
        self.port = self.executor.free_port()
        self.secret = secrets.token_hex(16)
        log.info(
            "%s: creating instance in %s on %s:%d (host %s)",
            self.name,
            self.instance,
            self.address,
            self.port,
            self.executor.host,
        )
        self.workload_reads_only = reads_only(workload)
        self._initialise()
        self.apply(self.space.default())
        self.start(120.0)
        try:
            self._after_first_start()
            workload.prepare(self, Path(workdir))
            self._before_snapshot()
        finally:
            self.shutdown()
        started = time.perf_counter()
        self.as_user(["rm", "-rf", str(self.snapshot_dir)])
        self.as_user(["cp", "-a", "--reflink=auto", str(self.data_dir), str(self.snapshot_dir)])
        log.info(
            "%s: snapshot of the loaded data taken in %.2fs",
            self.name,
            time.perf_counter() - started,
        )
        self.data_pristine = True

    def _instance_dir(self, workdir: Path) -> Path:
        """``<workdir>/<instance_name>``, or a private temp folder when the server user cannot
        reach the work folder (e.g. a 0700 pytest tmp dir owned by root)."""
        # Absolute (server configs resolve relative paths against the data dir), and on a
        # remote host under the inventory's workdir.
        folder = self.executor.session_dir(workdir) / self.instance_name
        self.executor.run(["mkdir", "-p", str(folder)])
        # 0700: the data, the unix sockets and the secret file are the server user's only
        # (root, running the harness, still reaches them).
        self.executor.run(["chmod", "700", str(folder)])
        if self.run_as:
            self.executor.run(["chown", f"{self.run_as}:", str(folder)])
            probe = self.as_user(["test", "-w", str(folder)], check=False)
            if not probe.ok and isinstance(self.executor, LocalExecutor):
                # The one place outside the session's folder: a private (0700) temp folder
                # owned by the server user, removed at teardown.
                folder = Path(tempfile.mkdtemp(prefix=f"harness-{self.instance_name}-"))
                self.executor.run(["chown", f"{self.run_as}:", str(folder)])
                self._owns_tempdir = True
                log.info(
                    "%s: %s cannot enter %s; using %s", self.name, self.run_as, workdir, folder
                )
        return folder

    def _client_dir(self, workdir: Path) -> Path:
        """The benchmark client's folder: the instance folder on the SUT host, or on a
        separate load host a 0700 folder under that host's session folder."""
        if self.load is self.executor:
            return self._require_instance()
        folder = self.load.session_dir(workdir) / f"{self.instance_name}-client"
        self.load.run(["mkdir", "-p", str(folder)])
        self.load.run(["chmod", "700", str(folder)])
        return folder

    def write_secret_file(self, name: str, text: str) -> Path:
        """A 0600 file in the instance folder (for clients that read credentials from a file
        rather than a command line, which every local user can read in ``ps``)."""
        path = self._require_instance() / name
        self.executor.write_text(path, text, mode=0o600)
        return path

    def client_file(self, name: str) -> Path:
        """``name`` in the benchmark client's folder (on the load host when there is one)."""
        if self.client_folder is None:
            raise HarnessError(f"{self.name}: setup() has not run (no client folder)")
        return self.client_folder / name

    def write_client_secret_file(self, name: str, text: str) -> Path:
        """A 0600 file in the benchmark client's folder, on the host the client runs on (the
        load host when there is one): credentials the client reads from a file."""
        path = self.client_file(name)
        self.load.write_text(path, text, mode=0o600)
        return path

    def client_env(self) -> dict[str, str]:
        """Environment for client programs (credentials that must not be on a command line)."""
        return {}

    def _stop_leftover(self) -> None:
        """Kill a server a killed (-9) run of this session left in the instance folder: a
        resume would otherwise wipe its files under it and leave it running forever."""
        pid = self._leftover_pid()
        if pid is None:
            return
        # only a process whose command line names this instance: a recycled PID is not ours
        state = process_state(self.executor, pid)
        if state.alive and str(self._require_instance()) in state.args:
            log.warning("%s: stopping server pid %d left by an earlier run", self.name, pid)
            kill_process_group(self.executor, pid, user=self.run_as or None)

    def _leftover_pid(self) -> int | None:
        """The PID a previous server of this instance recorded, if any (read, not trusted)."""
        return None

    def stop_pid(self, pid: int, *, terminate: bool = True, grace_s: float | None = None) -> None:
        """Stop the server ``pid``: SIGTERM (``terminate=False`` when a clean stop was already
        asked for and waited on: then ``grace_s=0``), ``stop_timeout_s`` of grace, then SIGKILL
        of its process group."""
        stop_process(
            self.executor,
            pid,
            grace_s=self.stop_timeout_s if grace_s is None else grace_s,
            what=f"{self.name} server",
            user=self.run_as or None,
            terminate=terminate,
        )

    def pid_alive(self, pid: int) -> bool:
        """Whether ``pid`` runs and is not a zombie."""
        return process_alive(self.executor, pid)

    def reset(self) -> None:
        """Stop, then replace the data directory with a fresh copy of the snapshot; nothing
        while the data still is the snapshot's (only a read-only workload ran since)."""
        if self.data_pristine:
            self.restores_skipped += 1
            log.debug("%s: data unchanged since the last restore: no copy", self.name)
            return
        self.shutdown()
        started = time.perf_counter()
        self.as_user(["rm", "-rf", str(self.data_dir)])
        # A plain copy (reflink where the file system offers it): hard links would let the
        # server write into the snapshot.
        self.as_user(["cp", "-a", "--reflink=auto", str(self.snapshot_dir), str(self.data_dir)])
        elapsed = time.perf_counter() - started
        self.restore_times.append(elapsed)
        self.data_pristine = True
        log.info("%s: data directory restored in %.2fs", self.name, elapsed)

    def start(self, timeout_s: float) -> None:
        """Reload the running server when allowed and enough, else (re)start it and wait."""
        # whatever happens next, only a read-only workload keeps the data the snapshot's
        self.data_pristine = self.data_pristine and self.workload_reads_only
        if self._reloaded():
            return
        self.shutdown()
        _RUNNING.add(self)
        try:
            self._launch(timeout_s)
        except HarnessError:
            self.data_pristine = False  # a failed start may have recovered or resized files
            raise
        self.running_config = dict(self.config)

    def _reloaded(self) -> bool:
        """Whether the running server took the new configuration by a reload (False: it
        needs a restart, reloading is off, or the reload did not take)."""
        running = self.running_config
        if not self.reload or running is None or not self._running():
            return False
        changed = changed_knobs(running, self.config)
        if needs_restart(changed, self.reloadable):
            return False
        try:
            self._reload({name: self.config[name] for name in sorted(changed)})
        except HarnessError as exc:
            log.warning("%s: reload failed (%s); restarting instead", self.name, exc)
            return False
        self.running_config = dict(self.config)
        self.reloads += 1
        return True

    def stop(self) -> None:
        """The end of a test: leave the server running when the next test may reload it
        (``reload`` on, and the data survives the test), else shut it down."""
        if self.reload and self.data_pristine and self.instance is not None and self._running():
            return
        self.shutdown()

    def shutdown(self) -> None:
        """Stop the server (cleanly, or killed after ``stop_timeout_s``)."""
        if self.instance is None:
            return
        if self._running():
            self._halt()
        self.running_config = None
        _RUNNING.discard(self)

    def teardown(self) -> None:
        try:
            self.shutdown()
        finally:
            if self._owns_tempdir and self.instance is not None:
                self.executor.run(["rm", "-rf", str(self.instance)], check=False)
                self.instance = None

    def describe(self) -> dict[str, str]:
        mean = (sum(self.restore_times) / len(self.restore_times)) if self.restore_times else 0.0
        return {
            **super().describe(),
            "port": str(self.port),
            "host": self.executor.host,
            "address": self.address,
            "load_host": self.load.host,
            "restore_s_mean": f"{mean:.3f}",
            "restores_skipped": str(self.restores_skipped),
            "reload": str(self.reload).lower(),
            "reloads": str(self.reloads),
        }

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's log (for SystemStartError and artifacts)."""
        path = self.log_path()
        try:
            text = self.executor.read_text(path)
        except ExecutorError:
            return f"(no server log at {path})"
        return "\n".join(text.rstrip().splitlines()[-lines:])

    # -- product-specific steps -------------------------------------------------------------
    @abstractmethod
    def log_path(self) -> Path:
        """The server's log file."""

    @abstractmethod
    def _initialise(self) -> None:
        """Create an empty instance (data directory, base config, users, bench database)."""

    @abstractmethod
    def _after_first_start(self) -> None:
        """Create the benchmark database and its user (once, before the workload loads)."""

    def _before_snapshot(self) -> None:
        """Shrink/settle the loaded instance before it is stopped and copied."""

    @abstractmethod
    def _launch(self, timeout_s: float) -> None:
        """Start the server and wait until it accepts connections, or SystemStartError."""

    @abstractmethod
    def _reload(self, changed: Config) -> None:
        """Give the running server the ``changed`` (reloadable) knobs without a restart and
        check it answers with them; HarnessError when it does not (the test then restarts)."""

    @abstractmethod
    def _halt(self) -> None:
        """Stop the running server and wait for it to exit."""

    @abstractmethod
    def _running(self) -> bool:
        """Whether a server process of this instance is alive."""

    # -- the benchmark clients' connection -------------------------------------------------
    def dbapi_target(self) -> dict[str, Any]:
        """Connection details for DB-API clients (the TPC-C driver)."""
        return {
            "dialect": self.dialect,
            "host": self.address,
            "port": self.port,
            "user": self.client_user,
            "password": self.secret,
            "database": BENCH_DATABASE,
        }

    def sysbench_args(self) -> list[str]:
        """sysbench options selecting the driver and this server; the password is in a 0600
        options file in the client's folder on the load host (never on a command line)."""
        driver = self.sysbench_driver
        return [
            f"--db-driver={driver}",
            f"--{driver}-host={self.address}",
            f"--{driver}-port={self.port}",
            f"--{driver}-user={self.client_user}",
            f"--{driver}-db={BENCH_DATABASE}",
            f"--config-file={self.client_file('sysbench.options')}",
        ]


def _is_root(executor: Executor) -> bool:
    if isinstance(executor, LocalExecutor):
        return os.geteuid() == 0
    result = executor.run(["id", "-u"], check=False)
    return result.stdout.strip() == "0"
