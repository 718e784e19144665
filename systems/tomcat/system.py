"""Tomcat 10.1 (Debian ``tomcat10``) as a system under tune, on this machine or a remote host.

A private CATALINA_BASE in the session's folder *on the SUT host*
(``executor.session_dir(workdir)/tomcat/base``) holds our configuration, logs and the test web
application (``webapp.py``); Tomcat's binaries stay in CATALINA_HOME. Each test renders
server.xml, context.xml and the JVM options (``render.py``), starts Tomcat's JVM directly with
the options as separate arguments (``launch.py``: never through catalina.sh, which evaluates
JAVA_OPTS as shell code), waits for the home page to answer 200 (curl on the host) and stops it
by PID (SIGTERM, then SIGKILL). Tomcat listens on
the host's client address (``executor.address``) and runs as the user the executor logs in as
(it needs no root: the port is above 1024 and the base is ours). Every command and file goes
through the :class:`~harness.executor.Executor` (local, or SSH with ``hosts=``).
"""

from __future__ import annotations

import logging
import shlex
from pathlib import Path

from harness.errors import ConfigError, ExecutorError
from harness.executor import Executor, LocalExecutor, tail
from harness.hosts.process import (
    Deadline,
    StartFailed,
    process_alive,
    process_state,
    run_step,
    stop_process,
    wait_ready,
)
from harness.space import Config, load_catalogue
from harness.system import System, Workload, native_header
from systems.java_text import jvm_options
from systems.tomcat import launch, render, webapp

__all__ = ["TomcatSystem", "http_url", "start_failure"]

log = logging.getLogger(__name__)

CONF_FILES = ("catalina.properties", "logging.properties", "web.xml")
#: What the JVM needs from CATALINA_HOME (its classpath); catalina.sh itself is not used.
HOME_FILES = ("bin/bootstrap.jar", "bin/tomcat-juli.jar")
# Lines that mean Tomcat (or its JVM) gave up although the process may linger.
FAILURE_MARKERS = (
    "Could not create the Java Virtual Machine",
    "Failed to initialize",
    "Failed to start connector",
    "Server startup failed",
    "Invalid maximum heap size",
    "Error occurred during initialization of VM",
    "Unrecognized VM option",
    "Improperly specified VM option",
    'Exception in thread "main"',
)


def http_url(address: str, port: int) -> str:
    """``http://address:port`` (an IPv6 literal in brackets)."""
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{int(port)}"


def start_failure(log_text: str) -> str | None:
    """The first line of ``log_text`` that says Tomcat failed to start, or None."""
    for line in log_text.splitlines():
        if any(marker in line for marker in FAILURE_MARKERS):
            return line.strip()
    return None


class TomcatSystem(System):
    """Tomcat with a private CATALINA_BASE, configured per test from the knob catalogue."""

    placement = "host"

    name = "tomcat"
    kind = "real"
    takes_load_host = True  # wrk runs on the inventory's load host (``load=``)

    def __init__(
        self,
        knob_set: str = "10",
        port: int = 0,
        catalina_home: str = "/usr/share/tomcat10",
        conf_dir: str = "/etc/tomcat10",
        stop_timeout_s: float = 15.0,
        extra_java_opts: str = "",
        executor: Executor | None = None,
        load: Executor | None = None,
    ) -> None:
        super().__init__(load_catalogue(render.CATALOGUE, str(knob_set)))
        self.knob_set = str(knob_set)
        self.catalogue = render.full_catalogue()
        self.port = int(port)
        self.catalina_home = catalina_home
        self.conf_dir = conf_dir
        self.stop_timeout_s = stop_timeout_s
        # Checked here, so a bad option is a one-line ConfigError before any test runs.
        self.extra_java_opts = jvm_options(extra_java_opts, "system.adapter.extra_java_opts")
        self.executor = executor or LocalExecutor()
        #: Where wrk runs: the inventory's load host, else the SUT host.
        self.load: Executor = load or self.executor
        #: wrk's folder on :attr:`load` (set at setup; the Tomcat folder when it is the SUT).
        self.client_folder: Path | None = None
        self.base: Path | None = None
        self.java = "java"  # the host's java, found in check_installed()
        self._java_opts: list[str] = []

    # -- paths (on the SUT host) ---------------------------------------------------------------
    def _base(self) -> Path:
        if self.base is None:
            raise ConfigError("Tomcat is not set up: call setup(workdir, workload) first")
        return self.base

    @property
    def folder(self) -> Path:
        """The session's Tomcat folder on the host (the base and the workload's files)."""
        return self._base().parent

    @property
    def address(self) -> str:
        """Where Tomcat listens and clients connect: the SUT host's address."""
        return self.executor.address

    @property
    def url(self) -> str:
        return http_url(self.address, self.port)

    @property
    def pid_file(self) -> Path:
        return self._base() / "tomcat.pid"

    @property
    def out_file(self) -> Path:
        return self._base() / "logs" / "catalina.out"

    # -- lifecycle ----------------------------------------------------------------------------
    def check_installed(self) -> None:
        """Raise ConfigError naming the fix when Tomcat, java, javac or curl is missing."""
        host = self.executor.host
        for relative in HOME_FILES:
            if not self.executor.exists(f"{self.catalina_home}/{relative}"):
                raise ConfigError(
                    f"on {host}: Tomcat not found at {self.catalina_home} (no "
                    f"{relative}): install it with `apt-get install tomcat10` or "
                    "set system.adapter.catalina_home"
                )
        for program, package in (
            ("java", "default-jdk-headless"),
            ("javac", "default-jdk-headless"),
            ("curl", "curl"),
        ):
            found = self.executor.which(program)
            if found is None:
                raise ConfigError(
                    f"on {host}: {program} not found: install it with `apt-get install {package}`"
                )
            if program == "java":
                self.java = found

    def preflight(self) -> None:
        if self.load is not self.executor and self.address in ("127.0.0.1", "localhost", "::1"):
            raise ConfigError(
                f"tomcat listens on {self.address}, which the load host {self.load.host} cannot "
                "reach; give the SUT host its network address in the inventory, or drop the "
                "load host"
            )
        if not getattr(self, "_installed", False):  # once per session: it starts a process
            self.check_installed()
            self._installed = True

    def setup(self, workdir: Path, workload: Workload) -> None:
        self.preflight()
        ex = self.executor
        # Locally the session's own work folder; remotely the same name under the host's workdir.
        base = ex.session_dir(Path(workdir)) / "tomcat" / "base"
        self.base = base
        ex.run(
            ["mkdir", "-p", *(str(base / d) for d in ("conf", "logs", "temp", "webapps", "work"))]
        )
        ex.run(["cp", *(f"{self.conf_dir}/{name}" for name in CONF_FILES), str(base / "conf")])
        webapp.build(ex, base / "webapps" / "ROOT", f"{self.catalina_home}/lib/servlet-api.jar")
        if self.port == 0:
            self.port = ex.free_port()
        self.client_folder = base.parent
        if self.load is not ex:  # wrk's script on the load host, in a folder of the session's
            self.client_folder = self.load.session_dir(Path(workdir)) / "tomcat-client"
            self.load.run(["mkdir", "-p", str(self.client_folder)])
        log.info("Tomcat base %s on host %s, listening on %s", base, ex.host, self.url)
        self.apply(self.space.default())
        super().setup(workdir, workload)

    def apply(self, config: Config) -> None:
        values = self.catalogue.complete(config)
        base = self._base()
        self.executor.write_text(
            base / "conf" / "server.xml", render.render_server_xml(values, self.port, self.address)
        )
        self.executor.write_text(base / "conf" / "context.xml", render.render_context_xml(values))
        self._java_opts = render.java_opts(values) + self.extra_java_opts

    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """``server.xml`` (its Connector on 127.0.0.1:8080, or the adapter's port),
        ``context.xml`` and ``setenv.sh`` (CATALINA_OPTS), rendered as for a test."""
        values = self.catalogue.complete(config)
        xml = native_header(self.space, config, note, start="<!-- ", end=" -->")
        server = render.render_server_xml(values, self.port or 8080).split("\n", 1)
        context = render.render_context_xml(values).split("\n", 1)
        opts = " ".join(render.java_opts(values))
        return {
            "server.xml": "\n".join([server[0], *xml, server[1]]),
            "context.xml": "\n".join([context[0], *xml, context[1]]),
            "setenv.sh": "\n".join(
                [*native_header(self.space, config, note), f"CATALINA_OPTS={shlex.quote(opts)}\n"]
            ),
        }

    def jvm_command(self) -> list[str]:
        """The java command of the current configuration (one argument per option)."""
        return launch.jvm_command(self.java, self.catalina_home, self._base(), self._java_opts)

    def _pid(self) -> int | None:
        # One read, no exists() first: remotely a read is a cheap SFTP call, a command is not.
        try:
            text = self.executor.read_text(self.pid_file).strip()
        except ExecutorError:
            return None
        return int(text) if text.isdigit() else None

    def _process(self, pid: int) -> tuple[bool, str]:
        """Whether ``pid`` is alive, and its command line."""
        state = process_state(self.executor, pid)
        return state.alive, state.args

    def _alive(self, pid: int) -> bool:
        return process_alive(self.executor, pid)

    def _ours(self, args: str) -> bool:
        """Whether a command line is a JVM of this base: a stale pid file (a resumed session,
        a reboot) must never make us signal whatever process now has that PID."""
        return f"-Dcatalina.base={self._base()}" in args

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of catalina.out (JVM errors and Tomcat's console log)."""
        try:
            return tail(self.executor.read_text(self.out_file), lines)
        except ExecutorError:
            return "(no catalina.out)"

    def _http_status(self, path: str = "/") -> int:
        result = self.executor.run(
            [
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--max-time",
                "2",
                self.url + path,
            ],
            check=False,
        )
        text = result.stdout.strip()
        return int(text) if text.isdigit() else 0

    def start(self, timeout_s: float) -> None:
        self.stop()
        base = self._base()
        self.executor.run(["sh", "-c", 'rm -rf "$0"/logs/* "$0"/work/*', str(base)])
        deadline = Deadline.after(timeout_s)
        run_step(
            self.executor,
            launch.launch_command(self.out_file, self.pid_file, self.jvm_command()),
            what="the Tomcat JVM launcher",
            phase="start",
            timeout_s=30,
            cwd=str(base),
            output_tail=lambda _out, _err: self.log_tail(),
        )
        waited = wait_ready(
            self._ready,
            what=f"Tomcat on {self.url}",
            deadline=deadline,
            poll_s=0.2,
            log_tail=self.log_tail,
            cleanup=self.stop,
        )
        log.info("Tomcat ready on %s after %.1fs", self.url, waited)

    def _ready(self) -> str | None:
        """None once the home page answers 200; StartFailed when the JVM exited or logged a
        failure."""
        status = self._http_status("/")
        if status == 200:
            return None
        pid = self._pid()
        try:
            output = self.executor.read_text(self.out_file)
        except ExecutorError:  # not written yet
            output = ""
        failure = start_failure(output)
        if failure or pid is None or not self._alive(pid):
            raise StartFailed(failure or "the Tomcat process exited")
        return f"the home page answers HTTP {status or 'nothing'}"

    def stop(self) -> None:
        if self.base is None:
            return
        pid = self._pid()
        alive, args = self._process(pid) if pid is not None else (False, "")
        if pid is not None and alive and not self._ours(args):
            log.warning(
                "pid %d in %s is not our Tomcat (%s); leaving it alone",
                pid,
                self.pid_file,
                args[:120],
            )
        elif pid is not None and alive:
            stop_process(self.executor, pid, grace_s=self.stop_timeout_s, what="Tomcat")
        self.executor.run(["rm", "-f", str(self.pid_file)], check=False)

    def describe(self) -> dict[str, str]:
        version = "unknown"
        try:
            out = self.executor.run(
                [f"{self.catalina_home}/bin/version.sh"],
                check=False,
                env={"CATALINA_HOME": self.catalina_home},
                timeout_s=30,
            )
            for line in out.stdout.splitlines():
                if line.startswith("Server number:"):
                    version = line.split(":", 1)[1].strip()
        except ExecutorError:
            pass
        return {
            **super().describe(),
            "tomcat_version": version,
            "knob_set": self.knob_set,
            "host": self.executor.host,
            "address": self.address,
            "backend": "tomcat10 (Debian), private CATALINA_BASE, wrk load",
        }
