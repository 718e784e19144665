"""The PostgreSQL adapter: a private cluster (initdb) on <SUT address>:<free port>, tuned through a
``tuning.conf`` that ``postgresql.conf`` includes with ``include_if_exists``.

Every connection, local socket included, authenticates with SCRAM against the instance's
fresh secret (``initdb -A scram-sha-256``): a local user who finds the port cannot log in as
the superuser (and run programs as ``postgres``). Clients get the secret through
``PGPASSWORD`` in their environment or a 0600 options file, never on a command line.
"""

from __future__ import annotations

import glob
import ipaddress
import logging
import math
import time
from collections.abc import Mapping
from pathlib import Path

from harness.errors import ConfigError, ExecutorError, HarnessError, SystemStartError
from harness.executor import Executor
from harness.hosts.machine import Machine
from harness.hosts.process import Deadline, run_step
from harness.space import Config, Knob, Space, Value, load_catalogue
from harness.system import native_header
from systems.dbserver.base import BENCH_DATABASE, ServerSystem
from systems.dbserver.conftext import pg_string
from systems.dbserver.host import find_binary, memory_overrides
from systems.dbserver.reuse import load_reloadable

__all__ = [
    "CATALOGUE",
    "MEMORY_FRACTIONS",
    "PostgresSystem",
    "format_value",
    "load_space",
    "render_tuning_conf",
]

log = logging.getLogger(__name__)

CATALOGUE = Path(__file__).with_name("knobs.yaml")
#: knob -> (fraction of RAM as the range maximum, lowest allowed maximum in the knob's unit).
#: shared_buffers up to 1/2 of RAM (pgtune suggests 1/4; beyond 1/2 the OS cache starves),
#: effective_cache_size up to 90 %, per-operation work_mem up to 1/32, maintenance 1/8.
MEMORY_FRACTIONS: dict[str, tuple[float, float]] = {
    "shared_buffers": (0.5, 256),
    "effective_cache_size": (0.9, 1024),
    "work_mem": (1 / 32, 65536),
    "maintenance_work_mem": (1 / 8, 256),
    "temp_buffers": (1 / 64, 65536),
}
_UNIT_BYTES = {
    "shared_buffers": 2**20,
    "effective_cache_size": 2**20,
    "work_mem": 2**10,
    "maintenance_work_mem": 2**20,
    "temp_buffers": 2**10,
}
#: units PostgreSQL accepts as a suffix of a value in postgresql.conf
_PG_UNITS = {"kB", "MB", "GB", "TB", "ms", "s", "min", "h", "d"}
_PG_DIRS = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)  # newest major first
_USER = "postgres"
#: How long a reload may take to reach new connections before the test restarts instead.
_RELOAD_WAIT_S = 10.0
DATABASE = BENCH_DATABASE


def load_space(knob_set: str = "10", machine: Machine | None = None) -> Space:
    """The catalogue's knob set with memory maxima scaled to ``machine`` (default: this one)."""
    space = load_catalogue(CATALOGUE, str(knob_set))
    machine = machine or Machine.detect()
    return space.with_overrides(memory_overrides(machine, MEMORY_FRACTIONS, space, _UNIT_BYTES))


def format_value(knob: Knob, value: Value) -> str:
    """A validated value as postgresql.conf wants it (units as suffixes, strings quoted and
    escaped: no value can end its line or open a new directive)."""
    if knob.type == "bool":
        return "on" if value else "off"
    if knob.type == "enum":
        return pg_string(value, f"knob {knob.name!r}")
    if knob.type == "int":
        return f"'{int(value)}{knob.unit}'" if knob.unit in _PG_UNITS else str(int(value))
    number = float(value)
    if not math.isfinite(number):
        raise ConfigError(f"knob {knob.name!r}: {value!r} is not a finite number")
    return f"{number:.6g}"


def render_tuning_conf(space: Space, config: Mapping[str, Value]) -> str:
    """The whole ``tuning.conf`` for ``config`` (validated against ``space`` first)."""
    valid = space.validate(config, partial=True)
    lines = ["# written by the harness for one tuning test; do not edit"]
    lines += [f"{name} = {format_value(space[name], value)}" for name, value in valid.items()]
    return "\n".join(lines) + "\n"


class PostgresSystem(ServerSystem):
    """A private PostgreSQL cluster owned by the harness (see :mod:`systems.dbserver.base`)."""

    name = "postgres"
    server_user = _USER
    instance_name = "postgres"
    dialect = "postgres"
    sysbench_driver = "pgsql"
    client_user = _USER
    takes_load_host = True  # pgbench runs on the inventory's load host (``load=``)

    def __init__(
        self,
        knob_set: str = "10",
        executor: Executor | None = None,
        run_as: str | None = None,
        space: Space | None = None,
        stop_timeout_s: float = 60.0,
        load: Executor | None = None,
        reload: bool = False,
    ) -> None:
        super().__init__(
            space or load_space(knob_set), executor, run_as, stop_timeout_s, load, reload
        )
        self.reloadable = load_reloadable(CATALOGUE, self.space)
        self.knob_set = str(knob_set)
        self._own_space = space is None  # ours to rescale to the SUT host at preflight

    def _space_for(self, machine: Machine) -> Space | None:
        return load_space(self.knob_set, machine) if self._own_space else None

    def _find_binaries(self) -> None:
        # Debian ships initdb, pg_ctl and pgbench in postgresql-<major>, psql in the client.
        for name in ("initdb", "pg_ctl"):
            self.bin[name] = find_binary(self.executor, [name], _PG_DIRS, "postgresql")
        # pgbench is the benchmark client: on the load host when there is one.
        self.bin["pgbench"] = find_binary(self.load, ["pgbench"], _PG_DIRS, "postgresql")
        self.bin["psql"] = find_binary(self.executor, ["psql"], _PG_DIRS, "postgresql-client")

    # -- paths ------------------------------------------------------------------------------
    def log_path(self) -> Path:
        return self._require_instance() / "server.log"

    @property
    def tuning_path(self) -> Path:
        return self._require_instance() / "tuning.conf"

    # -- lifecycle ----------------------------------------------------------------------------
    def _initialise(self) -> None:
        # pg_ctl starts the server through /bin/sh with the data and log paths inside double
        # quotes, where ", $, ` and \ keep their meaning: such a path would be evaluated.
        unsafe = sorted(set('"$`\\') & set(str(self.instance)))
        if unsafe:
            raise ConfigError(
                f"postgres: the instance folder {self.instance} contains "
                f"{' '.join(unsafe)}, which pg_ctl would pass to a shell; use a "
                "results_dir (or host workdir) without them"
            )
        self.as_user(["rm", "-rf", str(self.data_dir)])
        pwfile = self.write_secret_file("initdb.pw", self.secret + "\n")
        if self.run_as:
            self.executor.run(["chown", f"{self.run_as}:", str(pwfile)])
        try:
            self.as_user(
                [
                    self.bin["initdb"],
                    "-D",
                    str(self.data_dir),
                    "-U",
                    _USER,
                    "--auth=scram-sha-256",
                    f"--pwfile={pwfile}",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ],
                timeout_s=120,
            )
        finally:
            self.executor.run(["rm", "-f", str(pwfile)], check=False)
        conf = self.data_dir / "postgresql.conf"
        base = self.executor.read_text(conf)
        base += (
            "\n# added by the harness: private instance, tuned via tuning.conf\n"
            f"listen_addresses = {pg_string(self.address, 'the SUT address')}\n"
            f"port = {int(self.port)}\n"
            "unix_socket_directories = "
            f"{pg_string(self.instance, 'the instance folder')}\n"
            "unix_socket_permissions = 0700\n"
            f"include_if_exists = {pg_string(self.tuning_path, 'the instance folder')}\n"
        )
        self.executor.write_text(conf, base)
        if not self.loopback:
            # initdb admits loopback only; the load host connects over the SUT's network,
            # with the password like everyone else.
            hba = self.data_dir / "pg_hba.conf"
            self.executor.write_text(
                hba,
                self.executor.read_text(hba) + "\n# added by the harness (remote SUT)\n"
                "host all all samenet scram-sha-256\n" + self._load_host_rule(),
            )
        # sysbench reads it on the host it runs on: the load host when there is one.
        self.write_client_secret_file("sysbench.options", f"pgsql-password={self.secret}\n")

    def _load_host_rule(self) -> str:
        """A pg_hba line admitting a separate load host by its IP (password still required);
        a load host named by host name is admitted only through ``samenet``."""
        if self.load is self.executor:
            return ""
        try:
            address = ipaddress.ip_address(self.load.address)
        except ValueError:
            return ""
        return f"host all all {address}/{address.max_prefixlen} scram-sha-256\n"

    def _after_first_start(self) -> None:
        self.psql(f"CREATE DATABASE {DATABASE}", database="postgres")

    def _before_snapshot(self) -> None:
        # Fresh planner statistics in the snapshot, and a checkpoint so the stop is quick.
        self.psql("VACUUM ANALYZE")
        self.psql("CHECKPOINT")

    def apply(self, config: Config) -> None:
        merged = {**self.space.default(), **self.space.validate(config, partial=True)}
        self.executor.write_text(self.tuning_path, render_tuning_conf(self.space, merged))
        self.config = merged

    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """``postgresql.conf`` lines of the tuned knobs, rendered as for a test."""
        body = render_tuning_conf(self.space, config).split("\n", 1)[1]  # minus the banner
        return {"postgresql.conf": "\n".join([*native_header(self.space, config, note), body])}

    def _launch(self, timeout_s: float) -> None:
        self.as_user(["truncate", "-s", "0", str(self.log_path())], check=False)
        command = [
            self.bin["pg_ctl"],
            "-D",
            str(self.data_dir),
            "-l",
            str(self.log_path()),
            "-w",
            "-t",
            str(max(1, int(timeout_s))),
            "start",
        ]
        try:
            result = run_step(
                self.executor,
                command,
                what="postgres start (pg_ctl -w)",
                phase="start",
                timeout_s=timeout_s + 10,
                check=False,
                user=self.run_as or None,
                output_tail=lambda _out, _err: self.log_tail(),
            )
        except SystemStartError:
            self._halt()  # a postmaster that came up late must not hold the port
            raise
        if not result.ok:
            tail = self.log_tail()
            raise SystemStartError(
                f"postgres refused to start with this configuration (pg_ctl exited "
                f"{result.exit_code}); last log line: {tail.splitlines()[-1] if tail else '-'}",
                tail,
            )

    def _halt(self) -> None:
        pid = self._postmaster_pid()
        grace = self.stop_timeout_s
        self.as_user(
            [
                self.bin["pg_ctl"],
                "-D",
                str(self.data_dir),
                "-m",
                "fast",
                "-w",
                "-t",
                str(max(1, int(grace))),
                "stop",
            ],
            check=False,
            timeout_s=grace + 30,
        )
        if pid is not None:
            # hung or SIGSTOPped: pg_ctl gave up, and a surviving postmaster would hold the
            # port and make the next test fail as if its configuration had crashed
            self.stop_pid(pid, terminate=False, grace_s=0)

    def _reload(self, changed: Config) -> None:
        """``pg_reload_conf()`` (``tuning.conf`` is already written), wait until a new
        connection has the reloaded files, and refuse a reload that left a setting waiting
        for a restart or a line the server rejected."""
        if not changed:
            self.psql("SELECT 1")  # nothing to change: only that it still answers
            return
        loaded = self.psql("SELECT pg_conf_load_time(), pg_reload_conf()").split("|")[0]
        deadline = Deadline.after(_RELOAD_WAIT_S)
        while self.psql(f"SELECT pg_conf_load_time() > {pg_string(loaded, 'a time')}") != "t":
            if deadline.expired():
                raise HarnessError(f"postgres: no reload within {_RELOAD_WAIT_S:g}s")
            time.sleep(0.02)
        refused = self.psql(
            "SELECT string_agg(name, ', ') FROM ("
            "SELECT name FROM pg_settings WHERE pending_restart UNION "
            "SELECT coalesce(name, error) FROM pg_file_settings WHERE error IS NOT NULL) r"
        )
        if refused:
            raise HarnessError(f"postgres: the reload did not take {refused}")

    def _leftover_pid(self) -> int | None:
        return self._postmaster_pid()

    def _postmaster_pid(self) -> int | None:
        """The postmaster's PID from postmaster.pid (its first line), if readable."""
        try:
            first = self.executor.read_text(self.data_dir / "postmaster.pid").split("\n")[0]
        except ExecutorError:
            return None
        return int(first) if first.strip().isdigit() else None

    def _running(self) -> bool:
        if not self.executor.exists(self.data_dir / "postmaster.pid"):
            return False
        result = self.as_user(
            [self.bin["pg_ctl"], "-D", str(self.data_dir), "status"], check=False, timeout_s=30
        )
        return result.exit_code == 0

    # -- clients ------------------------------------------------------------------------------
    def psql(self, sql: str, database: str = DATABASE) -> str:
        """Run one SQL command as the superuser and return its unaligned output."""
        result = self.executor.run(
            [
                self.bin["psql"],
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                self.address,
                "-p",
                str(self.port),
                "-U",
                _USER,
                "-d",
                database,
                "-c",
                sql,
            ],
            timeout_s=120,
            env=self.client_env(),
        )
        return str(result.stdout).strip()

    def client_env(self) -> dict[str, str]:
        return {"PGPASSWORD": self.secret}

    def pgbench_args(self) -> list[str]:
        """Connection options for pgbench (the database name goes last on its command line)."""
        return ["-h", self.address, "-p", str(self.port), "-U", _USER]

    def describe(self) -> dict[str, str]:
        return {
            **super().describe(),
            "knob_set": self.knob_set,
            "bin": self.bin.get("pg_ctl", "?"),
        }
