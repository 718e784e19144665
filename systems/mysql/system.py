"""The MySQL adapter: a private MariaDB (locally) or Oracle MySQL 8 server on <SUT address>:<free
port>, configured by a ``my.cnf`` the harness writes for every test (``--defaults-file``).

Accounts: the data directory's installer leaves password-less ``root`` accounts (MariaDB adds
root@127.0.0.1, root@::1 and root@<hostname>). The first start therefore runs with networking
off; over the unix socket (in the 0700 instance folder) the harness drops every account but
root@localhost, gives it and the benchmark user the instance's fresh secret, and only then
restarts on TCP. Clients read the secret from 0600 option files, never from a command line.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.errors import ConfigError, ExecutorError, HarnessError
from harness.executor import Executor
from harness.hosts.machine import Machine
from harness.hosts.process import Deadline, StartFailed, wait_ready
from harness.space import Config, Knob, Space, Value, load_catalogue
from harness.system import Workload, native_header
from systems.dbserver.base import BENCH_DATABASE, ServerSystem
from systems.dbserver.conftext import mycnf_value
from systems.dbserver.host import find_binary, memory_overrides
from systems.dbserver.reuse import load_reloadable

__all__ = [
    "CATALOGUE",
    "MEMORY_FRACTIONS",
    "MySQLSystem",
    "format_value",
    "load_space",
    "render_mycnf",
    "same_setting",
    "sql_value",
]

log = logging.getLogger(__name__)

CATALOGUE = Path(__file__).with_name("knobs.yaml")
#: knob -> (fraction of RAM as the range maximum, lowest allowed maximum in the knob's unit).
#: The buffer pool may take up to 60 % of RAM (the usual guidance is 50-75 % on a dedicated
#: host, less here because the benchmark client shares the machine).
MEMORY_FRACTIONS: dict[str, tuple[float, float]] = {
    "innodb_buffer_pool_size": (0.6, 512),
    "tmp_table_size": (1 / 32, 64),
    "max_heap_table_size": (1 / 32, 64),
    "sort_buffer_size": (1 / 512, 8192),
    "join_buffer_size": (1 / 512, 8192),
}
_UNIT_BYTES = {
    "innodb_buffer_pool_size": 2**20,
    "tmp_table_size": 2**20,
    "max_heap_table_size": 2**20,
    "sort_buffer_size": 2**10,
    "join_buffer_size": 2**10,
}
_SUFFIX = {"MB": "M", "kB": "K", "GB": "G"}
_SIZE_BYTES = {"MB": 2**20, "kB": 2**10, "GB": 2**30}
_DIRS = ["/usr/sbin", "/usr/bin", "/usr/local/mysql/bin"]
_USER = "mysql"
DATABASE = BENCH_DATABASE
BENCH_USER = "bench"


def load_space(knob_set: str = "10", machine: Machine | None = None) -> Space:
    """The catalogue's knob set with memory maxima scaled to ``machine`` (default: this one)."""
    space = load_catalogue(CATALOGUE, str(knob_set))
    machine = machine or Machine.detect()
    return space.with_overrides(memory_overrides(machine, MEMORY_FRACTIONS, space, _UNIT_BYTES))


def format_value(knob: Knob, value: Value) -> str:
    """A validated value as my.cnf wants it (K/M/G suffixes, ON/OFF; text quoted and escaped:
    no value can end its line or open a new option)."""
    if knob.type == "bool":
        return "ON" if value else "OFF"
    if knob.type == "int":
        return f"{int(value)}{_SUFFIX.get(knob.unit, '')}"
    if knob.type == "float":
        number = float(value)
        if not math.isfinite(number):
            raise ConfigError(f"knob {knob.name!r}: {value!r} is not a finite number")
        return f"{number:.6g}"
    return mycnf_value(value, f"knob {knob.name!r}")


def sql_value(knob: Knob, value: Value) -> str:
    """A validated value as a ``SET GLOBAL`` expression: sizes in bytes, ON/OFF, numbers, or a
    quoted and escaped string."""
    if knob.type == "bool":
        return "ON" if value else "OFF"
    if knob.type == "int":
        return str(int(value) * _SIZE_BYTES.get(knob.unit, 1))
    if knob.type == "float":
        return format_value(knob, value)
    text = str(value)
    if text.lstrip("-").isdigit():
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def same_setting(asked: str, answer: str) -> bool:
    """Whether the server's ``@@GLOBAL`` answer is the value asked for (1/0 for ON/OFF,
    numbers compared as numbers, text without quotes and case)."""
    words = {"on": "1", "off": "0", "true": "1", "false": "0"}
    want = words.get(asked.strip("'").lower(), asked.strip("'"))
    got = words.get(answer.strip().lower(), answer.strip())
    try:
        return math.isclose(float(want), float(got), rel_tol=1e-6)
    except ValueError:
        return want.lower() == got.lower()


def render_mycnf(space: Space, config: Mapping[str, Value], base: Sequence[str]) -> str:
    """The whole my.cnf: the adapter's fixed ``base`` lines, then the validated knobs."""
    valid = space.validate(config, partial=True)
    lines = [
        "# written by the harness for one tuning test; do not edit",
        "[mysqld]",
        *base,
        "# tuned knobs",
    ]
    lines += [f"{name} = {format_value(space[name], value)}" for name, value in valid.items()]
    return "\n".join(lines) + "\n"


class MySQLSystem(ServerSystem):
    """A private MariaDB/MySQL server owned by the harness (see :mod:`systems.dbserver.base`)."""

    name = "mysql"
    server_user = _USER
    instance_name = "mysql"
    dialect = sysbench_driver = "mysql"
    client_user = BENCH_USER
    takes_load_host = True  # sysbench and the TPC-C driver run on the load host (``load=``)

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
        self.version = ""
        self.mariadb = True
        self._pid: int | None = None
        #: True during the first start of an instance: socket only, until accounts are safe.
        self._bootstrap = False

    def _space_for(self, machine: Machine) -> Space | None:
        return load_space(self.knob_set, machine) if self._own_space else None

    def _find_binaries(self) -> None:
        client = "mariadb-client (or mysql-client)"
        self.bin["server"] = find_binary(
            self.executor, ["mariadbd", "mysqld"], _DIRS, "mariadb-server (or mysql-server)"
        )
        self.bin["client"] = find_binary(self.executor, ["mariadb", "mysql"], _DIRS, client)
        self.bin["admin"] = find_binary(
            self.executor, ["mariadb-admin", "mysqladmin"], _DIRS, client
        )
        version = self.executor.run([self.bin["server"], "--version"], timeout_s=30).stdout
        self.version = version.strip()
        self.mariadb = "mariadb" in version.lower()
        if self.mariadb:
            self.bin["install_db"] = find_binary(
                self.executor, ["mariadb-install-db", "mysql_install_db"], _DIRS, "mariadb-server"
            )

    # -- paths ------------------------------------------------------------------------------
    def log_path(self) -> Path:
        return self._require_instance() / "error.log"

    @property
    def cnf_path(self) -> Path:
        return self._require_instance() / "my.cnf"

    @property
    def socket_path(self) -> Path:
        return self._require_instance() / "mysqld.sock"

    def base_lines(self) -> list[str]:
        """Settings the adapter owns: paths, the private port, no remote access."""
        instance = self._require_instance()

        def path(value: Path) -> str:
            return mycnf_value(value, "the instance folder")

        lines = [
            f"datadir = {path(self.data_dir)}",
            f"socket = {path(self.socket_path)}",
            f"port = {int(self.port)}",
            f"bind-address = {mycnf_value(self.address, 'the SUT address')}",
            f"pid-file = {path(instance / 'mysqld.pid')}",
            f"log-error = {path(self.log_path())}",
            "skip-name-resolve",
        ]
        if self._bootstrap:
            lines.append("skip-networking")
        if not self.mariadb:
            # MySQL 8 turns on the binary log and the X plugin (port 33060) by default; both
            # off keeps it comparable to MariaDB here and avoids a fixed-port clash.
            lines += ["skip-log-bin", "mysqlx = OFF"]
        return lines

    # -- lifecycle ----------------------------------------------------------------------------
    def _initialise(self) -> None:
        self.as_user(["rm", "-rf", str(self.data_dir)])
        if self.mariadb:
            command = [
                self.bin["install_db"],
                "--no-defaults",
                f"--datadir={self.data_dir}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
            ]
        else:
            command = [
                self.bin["server"],
                "--no-defaults",
                "--initialize-insecure",
                f"--datadir={self.data_dir}",
            ]
        self.as_user(command, timeout_s=300)

    def setup(self, workdir: Path, workload: Workload) -> None:
        self._bootstrap = True  # the first start listens on the socket only
        try:
            super().setup(workdir, workload)
        finally:
            self._bootstrap = False

    def _after_first_start(self) -> None:
        self._secure_accounts()
        # MySQL 8 defaults to caching_sha2_password, which PyMySQL can only use with extra
        # packages or TLS; the native method works with every client here.
        auth = "IDENTIFIED BY" if self.mariadb else "IDENTIFIED WITH mysql_native_password BY"
        # A remote SUT is reached over its network by the load host, whose address the
        # server sees; '%' admits it (the instance is private and bound to the SUT address).
        client = "127.0.0.1" if self.loopback else "%"
        self.sql(
            f"CREATE DATABASE {DATABASE}; "
            f"CREATE USER '{BENCH_USER}'@'{client}' {auth} '{self.secret}'; "
            f"GRANT ALL ON {DATABASE}.* TO '{BENCH_USER}'@'{client}'"
        )
        # sysbench reads it on the host it runs on: the load host when there is one.
        self.write_client_secret_file("sysbench.options", f"mysql-password={self.secret}\n")
        # now that only authenticated accounts exist, listen on TCP for the workload
        self._bootstrap = False
        self.apply(self.config)
        self.shutdown()  # a restart, never a reload: the listening options are not knobs
        self.start(120.0)

    def _secure_accounts(self) -> None:
        """Keep root@localhost only, with the instance's secret (over the socket, once)."""
        accounts = self.sql("SELECT user, host FROM mysql.user", password=False)
        drop = [
            f"'{user}'@'{host}'"
            for user, _, host in (line.partition("\t") for line in accounts.splitlines())
            if (user in ("root", "") and host != "localhost") or user == ""
        ]
        statements = [f"DROP USER {account}" for account in drop]
        statements.append(f"ALTER USER 'root'@'localhost' IDENTIFIED BY '{self.secret}'")
        self.sql("; ".join(statements), password=False)
        socket = mycnf_value(self.socket_path, "the instance folder")
        self.write_secret_file(
            "client.cnf", f"[client]\nuser = root\npassword = {self.secret}\nsocket = {socket}\n"
        )

    def apply(self, config: Config) -> None:
        merged = {**self.space.default(), **self.space.validate(config, partial=True)}
        self.executor.write_text(
            self.cnf_path, render_mycnf(self.space, merged, self.base_lines())
        )
        self.config = merged

    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """``my.cnf``: the ``[mysqld]`` section of the tuned knobs, rendered as for a test."""
        body = render_mycnf(self.space, config, []).split("\n", 1)[1]  # minus the test banner
        return {"my.cnf": "\n".join([*native_header(self.space, config, note), body])}

    def _launch(self, timeout_s: float) -> None:
        self.as_user(["truncate", "-s", "0", str(self.log_path())], check=False)
        # The server does not daemonise itself: a fixed sh snippet starts it in the
        # background with its output detached, and prints its pid (values stay arguments).
        started = self.as_user(
            [
                "sh",
                "-c",
                '"$0" "$@" </dev/null >/dev/null 2>&1 & echo $!',
                self.bin["server"],
                f"--defaults-file={self.cnf_path}",
            ],
            timeout_s=30,
        )
        self._pid = int(started.stdout.strip())
        wait_ready(
            self._ready,
            what="mysqld",
            deadline=Deadline.after(timeout_s),
            poll_s=0.1,
            log_tail=self.log_tail,
            cleanup=self._halt,
        )

    def _ready(self) -> str | None:
        """None once the server accepts connections; StartFailed when mysqld exited."""
        if self._pid is None or not self._alive(self._pid):
            self._pid = None
            tail = self.log_tail()
            errors = [line for line in tail.splitlines() if "ERROR" in line]
            raise StartFailed(
                "it exited during start-up with this configuration: "
                f"{errors[0] if errors else (tail.splitlines() or ['-'])[-1]}"
            )
        # ping answers 0 once the server accepts connections, also when access is denied
        ping = self.executor.run(
            [
                self.bin["admin"],
                "--no-defaults",
                f"--socket={self.socket_path}",
                "-uroot",
                "--connect-timeout=2",
                "ping",
            ],
            check=False,
            timeout_s=10,
        )
        return None if ping.ok else "mysqladmin ping gets no answer"

    def _reload(self, changed: Config) -> None:
        """``SET GLOBAL`` each changed (dynamic) knob, then read them all back: a value the
        server adjusted (e.g. innodb_io_capacity above innodb_io_capacity_max) means the
        running server is not the configuration under test."""
        if not changed:
            self.sql("SELECT 1")  # nothing to change: only that it still answers
            return
        names = sorted(changed)
        asked = [sql_value(self.space[name], changed[name]) for name in names]
        assignments = [
            f"SET GLOBAL {name} = {value}" for name, value in zip(names, asked, strict=True)
        ]
        reads = ", ".join(f"@@GLOBAL.{name}" for name in names)
        answer = self.sql("; ".join([*assignments, f"SELECT {reads}"])).split("\t")
        kept = [
            f"{name} = {got} (asked {want})"
            for name, want, got in zip(names, asked, answer, strict=False)
            if not same_setting(want, got)
        ]
        if kept or len(answer) != len(names):
            raise HarnessError(f"mysql: SET GLOBAL did not take: {', '.join(kept) or answer}")

    def _leftover_pid(self) -> int | None:
        try:
            text = self.executor.read_text(self._require_instance() / "mysqld.pid").strip()
        except ExecutorError:
            return None
        return int(text) if text.isdigit() else None

    def _alive(self, pid: int) -> bool:
        return self.pid_alive(pid)

    def _halt(self) -> None:
        pid = self._pid
        if pid is None:
            return
        # a clean InnoDB shutdown flushes the buffer pool: stop_timeout_s of grace
        self.stop_pid(pid)
        self._pid = None

    def _running(self) -> bool:
        return self._pid is not None and self._alive(self._pid)

    # -- clients ------------------------------------------------------------------------------
    def sql(self, statements: str, password: bool = True) -> str:
        """Run SQL as root over the private socket and return the tab-separated output
        (``password=False`` only while the fresh instance's root has none yet)."""
        options = (
            ["--no-defaults", f"--socket={self.socket_path}", "-uroot"]
            if not password
            else [f"--defaults-file={self._require_instance() / 'client.cnf'}"]
        )
        result = self.executor.run(
            [self.bin["client"], *options, "-N", "-B", "-e", statements], timeout_s=120
        )
        return str(result.stdout).strip()

    def describe(self) -> dict[str, str]:
        return {**super().describe(), "knob_set": self.knob_set, "version": self.version}
