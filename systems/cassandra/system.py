"""Apache Cassandra 4.1 on one or more nodes as a system under tune.

Every SUT node of the :class:`~harness.remote.cluster.Cluster` runs one Cassandra from the same
install (the binary tarball layout: ``bin/cassandra``, ``bin/nodetool``, ``conf/``) with a
private base folder: ``conf/`` (a copy of the install's conf with our cassandra.yaml and JVM
options), ``data/``, ``commitlog/``, ``logs/``. The first ``seeds`` nodes are the seeds and start
first. Commands go through each node's executor, so the same code drives this machine and SSH
hosts.

Reset: the YCSB data set is loaded once (setup), every node is drained and stopped, and its
data folder is copied aside. Before each test the nodes are stopped and the copy is put back
(commitlog, caches and hints emptied), so every test starts from byte-identical sstables. This is
faster than reloading with YCSB (minutes for a million records) and removes compaction state
as a source of noise; the cost is one copy of the data set per node on disk.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, ExecutorError, SystemStartError, WorkloadError
from harness.executor import CommandTimeout, Executor, tail
from harness.process import (
    Deadline,
    StartFailed,
    process_alive,
    run_step,
    signal_process,
    stop_process,
    wait_ready,
)
from harness.remote.cluster import Cluster
from harness.space import Config, load_catalogue
from harness.system import System, Workload
from systems.cassandra import commands, render
from systems.cassandra.commands import NodePaths
from systems.cassandra.node import check_install, logs_tail, logs_text, prepare_base, read_pid
from systems.java_text import jvm_options

__all__ = ["CassandraSystem"]

log = logging.getLogger(__name__)


class CassandraSystem(System):
    """Cassandra on the SUT nodes of a cluster, configured per test from the knob catalogue."""

    placement = "cluster"

    name = "cassandra"
    kind = "remote"

    def __init__(
        self,
        knob_set: str = "10",
        install_dir: str = "/opt/cassandra",
        base_dir: str | None = None,
        cluster_name: str = "harness",
        native_transport_port: int = 9042,
        storage_port: int = 7000,
        jmx_port: int = 7199,
        jmx_host: str = "127.0.0.1",
        seeds: int = 1,
        java_home: str | None = None,
        extra_jvm_opts: str = "",
        yaml_template: str | None = None,
        yaml_overrides: Mapping[str, Any] | None = None,
        setup_timeout_s: float = 900.0,
        stop_timeout_s: float = 60.0,
        poll_s: float = 2.0,
        keep_data: bool = False,
        cluster: Cluster | None = None,
    ) -> None:
        super().__init__(load_catalogue(render.CATALOGUE, str(knob_set)))
        self.knob_set = str(knob_set)
        self.catalogue = render.full_catalogue()
        self.install_dir = commands.check_path(install_dir, "system.adapter.install_dir")
        self.base_dir = (
            commands.check_path(base_dir, "system.adapter.base_dir") if base_dir else None
        )
        self.java_home = (
            commands.check_path(java_home, "system.adapter.java_home") if java_home else None
        )
        self.jmx_host = commands.check_host(jmx_host, "system.adapter.jmx_host")
        self.cluster_name = str(cluster_name)
        self.ports = {
            "native_transport_port": int(native_transport_port),
            "storage_port": int(storage_port),
            "jmx_port": int(jmx_port),
        }
        for key, port in self.ports.items():
            if not 0 < port < 65536:
                raise ConfigError(f"system.adapter.{key}={port} is not a TCP port")
        self.cluster = cluster or Cluster.local()
        for i, node in enumerate(self.cluster.sut):
            commands.check_host(node.address, f"address of SUT host {node.host}")
            commands.check_host(node.host, f"name of SUT host {i}")
        if not 1 <= int(seeds) <= len(self.cluster.sut):
            raise ConfigError(
                f"system.adapter.seeds={seeds}: between 1 and the "
                f"{len(self.cluster.sut)} SUT host(s)"
            )
        self.seeds = int(seeds)
        # Checked here too (see commands.start_command), so a bad option is a one-line
        # ConfigError before any test runs.
        self.extra_jvm_opts = " ".join(
            jvm_options(extra_jvm_opts, "system.adapter.extra_jvm_opts", shell_inert=True)
        )
        self.yaml_template = Path(yaml_template) if yaml_template else render.TEMPLATE
        self.yaml_overrides = render.plain(yaml_overrides or {})
        self.setup_timeout_s = float(setup_timeout_s)
        self.stop_timeout_s = float(stop_timeout_s)
        self.poll_s = float(poll_s)
        self.keep_data = bool(keep_data)
        self.paths: list[NodePaths] = []
        self._jvm_originals: list[dict[str, str]] = []
        self._snapshot = False

    # -- layout -------------------------------------------------------------------------------
    @property
    def nodes(self) -> tuple[Executor, ...]:
        return self.cluster.sut

    @property
    def client_hosts(self) -> str:
        """The contact points for clients (YCSB's ``hosts``)."""
        return ",".join(node.address for node in self.nodes)

    @property
    def native_port(self) -> int:
        return self.ports["native_transport_port"]

    def _layout(self, i: int) -> render.NodeLayout:
        paths = self.paths[i]
        return render.NodeLayout(
            cluster_name=self.cluster_name,
            listen_address=self.nodes[i].address,
            seeds=tuple(node.address for node in self.nodes[: self.seeds]),
            data_dir=paths.data,
            commitlog_dir=paths.commitlog,
            saved_caches_dir=paths.saved_caches,
            hints_dir=paths.hints,
            native_transport_port=self.native_port,
            storage_port=self.ports["storage_port"],
        )

    def _nodetool(self, i: int, *args: str, timeout_s: float = 60.0, check: bool = False) -> Any:
        command = commands.nodetool_command(
            self.install_dir,
            self.paths[i],
            *args,
            jmx_host=self.jmx_host,
            jmx_port=self.ports["jmx_port"],
            java_home=self.java_home,
        )
        return self.nodes[i].run(command, timeout_s=timeout_s, check=check)

    def _probe(self, i: int, *args: str) -> str | None:
        """nodetool's output, or None while the node does not answer (JMX not up yet)."""
        try:
            result = self._nodetool(i, *args, timeout_s=60.0)
        except CommandTimeout:
            return None
        return result.stdout if result.ok else None

    # -- setup --------------------------------------------------------------------------------
    def check_installed(self) -> None:
        """ConfigError naming the host and the missing path when an install is incomplete."""
        for node in self.nodes:
            check_install(node, self.install_dir, self.java_home)

    def setup(self, workdir: Path, workload: Workload) -> None:
        self.check_installed()
        self.paths = []
        self._jvm_originals = []
        for node in self.nodes:
            root = (
                Path(self.base_dir)
                if self.base_dir
                else node.session_dir(Path(workdir)) / "cassandra"
            )
            paths = NodePaths(f"{root}/{node.host}")
            self._jvm_originals.append(prepare_base(node, self.install_dir, paths))
            self.paths.append(paths)
            log.info("Cassandra node %s (%s): base %s", node.host, node.address, paths.base)
        self.apply(self.space.default())
        try:
            self.start(self.setup_timeout_s)
            super().setup(workdir, workload)  # the workload creates the schema and loads data
            self._take_snapshot()
        except BaseException:
            self.stop()
            raise

    def _take_snapshot(self) -> None:
        """Flush and drain every node, stop them, and copy each data folder aside."""
        for i in range(len(self.nodes)):
            for step in ("flush", "drain"):
                result = self._nodetool(i, step, timeout_s=self.setup_timeout_s)
                if not result.ok:
                    raise ExecutorError(f"nodetool {step} failed: {result.describe()}")
        self.stop()
        for i, node in enumerate(self.nodes):
            for command in commands.snapshot_commands(self.paths[i]):
                node.run(command, timeout_s=self.setup_timeout_s)
        self._snapshot = True
        log.info("Cassandra data set snapshot taken on %d node(s)", len(self.nodes))

    def cql(self, statements: str, timeout_s: float = 120.0) -> str:
        """Run CQL with the install's cqlsh on the first node (schema changes)."""
        command = commands.cqlsh_command(
            self.install_dir, self.nodes[0].address, self.native_port, statements, int(timeout_s)
        )
        result = self.nodes[0].run(command, timeout_s=timeout_s + 30, check=False)
        if not result.ok:
            raise WorkloadError(f"cqlsh failed {result.describe()}", tail(result.stdout))
        return result.stdout

    # -- per test -----------------------------------------------------------------------------
    def reset(self) -> None:
        if not self._snapshot:
            return
        self.stop()
        for i, node in enumerate(self.nodes):
            for command in commands.reset_commands(self.paths[i]):
                node.run(command, timeout_s=self.setup_timeout_s)

    def apply(self, config: Config) -> None:
        if not self.paths:
            raise ConfigError("Cassandra is not set up: call setup(workdir, workload) first")
        # Knobs of the session's space are checked against it (its ranges may have been widened
        # with system.ranges); the others take the catalogue's defaults.
        inside = {k: v for k, v in config.items() if k in self.space}
        values = {
            **self.catalogue.complete({k: v for k, v in config.items() if k not in inside}),
            **self.space.validate(inside, partial=True),
        }
        template = self.yaml_template.read_text()
        for i, node in enumerate(self.nodes):
            conf = self.paths[i].conf
            node.write_text(
                f"{conf}/cassandra.yaml",
                render.render_cassandra_yaml(
                    template, values, self._layout(i), self.yaml_overrides
                ),
            )
            for name, original in self._jvm_originals[i].items():
                text = (
                    render.render_jvm_server_options(original, values)
                    if name == "jvm-server.options"
                    else render.render_jvm_gc_options(original, values)
                )
                node.write_text(f"{conf}/{name}", text)

    def start(self, timeout_s: float) -> None:
        self.stop()
        deadline = Deadline.after(timeout_s)
        started = time.monotonic()
        for i, node in enumerate(self.nodes):  # seeds first: they lead the inventory
            self._launch(i)
            wait_ready(
                functools.partial(self._node_ready, i),
                what=f"Cassandra on host {node.host}",
                deadline=deadline,
                poll_s=self.poll_s,
                log_tail=functools.partial(self.log_tail, i),
                cleanup=self.stop,
            )
        self._wait_ring(deadline)
        log.info(
            "Cassandra ready on %d node(s) after %.1fs",
            len(self.nodes),
            time.monotonic() - started,
        )

    def _launch(self, i: int) -> None:
        """Run bin/cassandra on node ``i`` with fresh logs; if it fails, every node is stopped
        and the SystemStartError carries the node's log tail."""
        node, paths = self.nodes[i], self.paths[i]
        node.run(["rm", "-rf", paths.logs])
        node.run(["mkdir", "-p", paths.logs])
        command = commands.start_command(
            self.install_dir, paths, self.java_home, self.extra_jvm_opts
        )
        try:
            run_step(
                node,
                command,
                what=f"bin/cassandra on host {node.host}",
                phase="start",
                timeout_s=120,
                output_tail=lambda _out, _err: self.log_tail(i),
            )
        except SystemStartError:
            self.stop()
            raise

    def _node_ready(self, i: int) -> str | None:
        """None once the node's CQL transport runs; StartFailed when it died or logged a
        failure."""
        pid = self._pid(i)
        if pid is None or not self._alive(i, pid):
            raise StartFailed("the Cassandra process exited during startup")
        failure = commands.start_failure(self._logs(i))
        if failure:
            raise StartFailed(failure)
        probe = self._probe(i, "statusbinary")
        if probe is not None and commands.parse_statusbinary(probe):
            return None
        return "CQL native transport not running"

    def _wait_ring(self, deadline: Deadline) -> None:
        """Until the first node sees every SUT node Up/Normal."""
        addresses = tuple(node.address for node in self.nodes)
        if not all(commands.is_ip(a) for a in addresses):
            addresses = ()  # inventory names: nodetool shows IPs, so compare the count only
        last = [""]

        def ring_ready() -> str | None:
            text = self._probe(0, "status")
            last[0] = text or "(nodetool status did not answer)"
            members = commands.parse_nodetool_status(text or "")
            return commands.ring_problem(members, len(self.nodes), addresses)

        wait_ready(
            ring_ready,
            what="Cassandra ring",
            deadline=deadline,
            poll_s=self.poll_s,
            log_tail=lambda: tail(last[0], 30),
            cleanup=self.stop,
        )

    def _logs(self, i: int) -> str:
        return logs_text(self.nodes[i], self.paths[i])

    def log_tail(self, i: int = 0, lines: int = 40) -> str:
        """The last lines of a node's launcher output and system.log."""
        return logs_tail(self.nodes[i], self.paths[i], lines)

    def _pid(self, i: int) -> int | None:
        return read_pid(self.nodes[i], self.paths[i])

    def _alive(self, i: int, pid: int) -> bool:
        return process_alive(self.nodes[i], pid)

    def stop(self) -> None:
        """SIGTERM every running node (last first), wait, SIGKILL what ignores it."""
        running = [
            (i, pid)
            for i in reversed(range(len(self.paths)))
            if (pid := self._pid(i)) is not None and self._alive(i, pid)
        ]
        for i, pid in running:  # all at once: the nodes shut down in parallel
            signal_process(self.nodes[i], pid, "TERM")
        for i, pid in running:
            stop_process(
                self.nodes[i],
                pid,
                grace_s=self.stop_timeout_s,
                what=f"Cassandra on {self.nodes[i].host}",
                terminate=False,
            )
        for i in range(len(self.paths)):
            self.nodes[i].run(["rm", "-f", self.paths[i].pid_file], check=False)

    def teardown(self) -> None:
        self.stop()
        if self.keep_data:
            return
        for i, node in enumerate(self.nodes[: len(self.paths)]):
            paths = self.paths[i]
            node.run(["rm", "-rf", *paths.state_dirs(), paths.pristine], check=False)
        self._snapshot = False

    def describe(self) -> dict[str, str]:
        return {
            **super().describe(),
            "knob_set": self.knob_set,
            "nodes": str(len(self.nodes)),
            "install_dir": self.install_dir,
            "backend": f"Apache Cassandra ({self.install_dir}) on {len(self.nodes)} "
            f"node(s): {', '.join(n.host for n in self.nodes)}",
        }
