"""Apache Cassandra 5.0 on one or more nodes as a system under tune.

Every SUT node of the :class:`~harness.hosts.cluster.Cluster` runs one Cassandra from the same
install (``bin/cassandra``, ``bin/nodetool``, ``conf/``, ``lib/``: what ``scripts/setup.sh
--full`` builds from Maven Central, see ``systems/cassandra/java/server``) with a private base
folder: ``conf/`` (a copy of the install's conf with our cassandra.yaml and JVM options),
``data/``, ``commitlog/``, ``logs/``. The first ``seeds`` nodes are the seeds and start first.
Commands go through each node's executor, so the same code drives this machine, a local ring
on loopback addresses and SSH hosts. Node ``i`` serves local JMX on ``jmx_port + i``, so nodes
that share a host never collide.

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

from harness.errors import ConfigError, ExecutorError, SystemStartError
from harness.hosts.cluster import Cluster
from harness.hosts.machine import install_dir as harness_install_dir
from harness.hosts.process import (
    Deadline,
    run_step,
    signal_process,
    stop_process,
    wait_ready,
)
from harness.space import Config, load_catalogue
from harness.system import System, Workload, native_header
from systems.cassandra import commands, heap, render
from systems.cassandra.commands import NodePaths
from systems.cassandra.node import (
    check_free,
    check_install,
    prepare_base,
)
from systems.cassandra.probes import NodeProbes
from systems.java_text import jvm_options

__all__ = ["CassandraSystem"]

log = logging.getLogger(__name__)


class CassandraSystem(NodeProbes, System):
    """Cassandra on the SUT nodes of a cluster, configured per test from the knob catalogue."""

    placement = "cluster"

    name = "cassandra"
    kind = "remote"

    def __init__(
        self,
        knob_set: str = "10",
        install_dir: str | None = None,
        base_dir: str | None = None,
        cluster_name: str = "harness",
        native_transport_port: int = 9042,
        storage_port: int = 7000,
        jmx_port: int = 7199,
        jmx_host: str = "127.0.0.1",
        seeds: int = 1,
        heap_mb: int | None = None,
        lock_memory: bool = False,
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
        # None: what `scripts/setup.sh --full` installed (.installs/cassandra or $HARNESS_INSTALLS)
        self.install_dir = commands.check_path(
            install_dir or harness_install_dir("cassandra"), "system.adapter.install_dir"
        )
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
        # Cassandra mlockall()s its memory when allowed (root always is): every start then
        # touches the whole heap (17 s for 6 GiB here). Off unless asked for; see bin/cassandra.
        self.lock_memory = bool(lock_memory)
        # The heap, and the knobs Cassandra sizes from it: fitted now when given, else from
        # the SUT host's memory in preflight() (the constructor does no I/O).
        self.heap_mb: int | None = None
        if heap_mb:
            self.fit_heap(int(heap_mb))
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

    # -- setup --------------------------------------------------------------------------------
    def fit_heap(self, heap_mb: int | None = None) -> int:
        """Fix the nodes' heap (``heap_mb``, or Cassandra's rule for the first SUT host) and
        fit the catalogue's heap-derived defaults and bounds to it; once per system. The
        user's +system.ranges are applied after preflight, so they still win."""
        if self.heap_mb is None:
            self.heap_mb = heap.clamp_heap_mb(
                self.catalogue, heap_mb if heap_mb else heap.host_heap_mb(self.nodes)
            )
            self.space = self.space.with_overrides(heap.heap_overrides(self.space, self.heap_mb))
            self.catalogue = self.catalogue.with_overrides(
                heap.heap_overrides(self.catalogue, self.heap_mb)
            )
        return self.heap_mb

    def preflight(self) -> None:
        """Before the session creates anything: the install on every host, the nodes' ports,
        and the heap (from the SUT host's memory unless system.adapter.heap_mb is set)."""
        self.check_installed()
        self.check_ports()
        self.fit_heap()

    def check_installed(self) -> None:
        """ConfigError naming the host and the missing path when an install is incomplete."""
        for node in self.nodes:
            check_install(node, self.install_dir, self.java_home)

    def check_ports(self) -> None:
        """ConfigError before any test when a node's CQL, storage or JMX port is taken (by a
        Cassandra of someone else's, or a node of ours that outlived its session)."""
        for i, node in enumerate(self.nodes):
            check_free(
                node,
                (
                    (node.address, self.native_port, "system.adapter.native_transport_port"),
                    (node.address, self.ports["storage_port"], "system.adapter.storage_port"),
                    (
                        "127.0.0.1",
                        self.jmx_port(i),
                        f"system.adapter.jmx_port (+{i} on this node)",
                    ),
                ),
            )

    def setup(self, workdir: Path, workload: Workload) -> None:
        self.preflight()
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

    # -- per test -----------------------------------------------------------------------------
    def native_files(self, config: Config, note: str = "") -> dict[str, str]:
        """``cassandra.yaml`` (the tuned keys), ``jvm-server.options`` (heap) and
        ``jvm17-server.options`` (collector), values rendered as for a test."""
        inside = {k: v for k, v in config.items() if k in self.space}
        values = {**self.catalogue.complete(config), **self.space.validate(inside, partial=True)}
        header = native_header(self.space, config, note)
        return render.native_files(values, list(config), header)

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
        # The first start joins the nodes one by one, seeds first (Cassandra bootstraps one
        # joining node at a time). Once the data set is loaded every node has its tokens, so
        # later starts launch the whole ring at once and wait for each node after.
        together = self._snapshot and len(self.nodes) > 1
        if together:
            for i in range(len(self.nodes)):
                self._launch(i)
        for i, node in enumerate(self.nodes):  # seeds first: they lead the inventory
            if not together:
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
            self.install_dir,
            paths,
            self.java_home,
            self.extra_jvm_opts,
            jmx_port=self.jmx_port(i),
            lock_memory=self.lock_memory,
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
            "heap_mb": str(self.heap_mb),
            "install_dir": self.install_dir,
            "backend": f"Apache Cassandra ({self.install_dir}) on {len(self.nodes)} "
            f"node(s): {', '.join(n.host for n in self.nodes)}",
        }
