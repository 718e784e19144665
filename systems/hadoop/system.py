"""Hadoop clusters as systems under tune: Hive on Hadoop, and HDFS/YARN.

The adapter drives a Hadoop 3 install on every node: the Maven-built one of
``scripts/setup.sh --full`` (``.installs/hadoop``) or a cluster's own tarball. Per session it
creates, below ``data_root`` on every node, the node's own folder (``<data_root>/<address>``: a
configuration folder copied from the install's ``etc/hadoop`` with our site files and a
``hadoop-env.sh`` that puts logs and pid files there, HDFS and YARN dirs), formats a NameNode if
there is none and starts the cluster. Per test it renders each node's site files from the
configuration, restarts the daemons node by node (:mod:`systems.hadoop.daemons`; or with the
``sbin`` scripts, ``start_mode=sbin``) and waits until the NameNode has left safe mode and every
DataNode and NodeManager is live. All commands go through the cluster's executors.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, ExecutorError, KnobError, WorkloadError
from harness.executor import CommandResult, CommandTimeout, Executor, tail
from harness.hosts.cluster import Cluster
from harness.hosts.machine import install_dir as harness_install_dir
from harness.hosts.process import Deadline, StartFailed, run_step, wait_ready
from harness.space import Config, load_catalogue
from harness.system import System, Workload
from systems.hadoop import commands, daemons, health, render
from systems.hadoop.hibench import HARNESS_CONF, HiBenchHost, harness_conf, hibench_hadoop_conf
from systems.hadoop.nodes import node_properties
from systems.hadoop.topology import HadoopTopology

__all__ = ["HadoopSystem"]

log = logging.getLogger(__name__)


class HadoopSystem(HadoopTopology, System, HiBenchHost):
    """Shared lifecycle of the Hadoop systems; subclasses choose the site files and knobs."""

    placement = "cluster"

    kind = "remote"
    sites: tuple[str, ...] = render.HADOOP_SITES

    def __init__(
        self,
        knob_set: str = "10",
        hadoop_home: str | None = None,
        hibench_home: str = "/opt/HiBench",
        java_home: str | None = None,
        data_root: str | None = None,
        namenode_port: int = 8020,
        master_is_worker: bool = True,
        format_namenode: bool = True,
        memory_policy: str = "clamp",
        disk_headroom: float | None = 5.0,
        report_dir: str | None = None,
        site_properties: Mapping[str, Mapping[str, Any]] | None = None,
        setup_start_timeout_s: float = 600.0,
        poll_s: float = 2.0,
        start_mode: str = "daemons",
        daemon_heap_mb: int | None = 1024,
        cluster: Cluster | None = None,
    ) -> None:
        super().__init__(load_catalogue(render.CATALOGUE, str(knob_set)))
        self.knob_set = str(knob_set)
        foreign = [k for k in self.space.names if render.site_of(k) not in self.sites]
        if foreign:
            raise ConfigError(
                f"system {self.name}: knob set {knob_set!r} has knobs of files "
                f"this system does not write ({', '.join(foreign[:3])}...); "
                "choose another system.adapter.knob_set"
            )
        # Render every knob of our files: the tested ones and the defaults of the rest.
        full = render.full_catalogue()
        self.catalogue = full.subspace([k for k in full.names if render.site_of(k) in self.sites])
        self.hadoop_home = render.check_path(
            hadoop_home or harness_install_dir("hadoop"), "system.adapter.hadoop_home"
        )
        self.hibench_home = render.check_path(hibench_home, "system.adapter.hibench_home")
        self.java_home = (
            render.check_path(java_home, "system.adapter.java_home") if java_home else None
        )
        self._data_root = (
            render.check_path(data_root, "system.adapter.data_root") if data_root else None
        )
        self.namenode_port = int(namenode_port)
        self.master_is_worker = bool(master_is_worker)
        self.format_namenode = bool(format_namenode)
        if memory_policy not in ("clamp", "reject"):
            raise ConfigError(
                f"system.adapter.memory_policy {memory_policy!r}: use clamp or reject"
            )
        self.memory_policy: render.MemoryPolicy = "clamp" if memory_policy == "clamp" else "reject"
        self.disk_headroom = None if disk_headroom is None else float(disk_headroom)
        self.floor: float | None = None  # the disk-health threshold's floor on these disks
        self.report_dir = render.check_path(
            report_dir or f"{self.hibench_home}/report", "system.adapter.report_dir"
        )
        self._custom_report_dir = report_dir is not None
        self.site_properties = {str(k): dict(v) for k, v in (site_properties or {}).items()}
        self.setup_start_timeout_s = float(setup_start_timeout_s)
        if start_mode not in ("daemons", "sbin"):
            raise ConfigError(f"system.adapter.start_mode {start_mode!r}: use daemons or sbin")
        self.start_mode = start_mode
        self.daemon_heap_mb = int(daemon_heap_mb) if daemon_heap_mb else None
        self.poll_s = float(poll_s)
        self.cluster = cluster or Cluster.local()
        self.layout: render.Layout | None = None
        self._may_run = False  # start scripts were run and not stopped cleanly since
        self._ident: str | None = None  # the daemons' user (their pid files are named so)
        self.values: Config = {}
        self.clamped: dict[str, tuple[Any, Any]] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def preflight(self) -> None:
        self._check_installs()
        self._check_ports()

    def setup(self, workdir: Path, workload: Workload) -> None:
        layout = self._resolve_layout(workdir)
        self._check_installs()
        self._prepare_nodes()
        self.floor = health.disk_floor(
            [(n, self.root_of(n)) for n in self._nodes()], self.disk_headroom
        )
        self.apply(self.space.default())
        self._format_if_new(layout)
        self.start(self.setup_start_timeout_s)
        try:
            super().setup(workdir, workload)  # the workload's input, on the running cluster
        except BaseException:
            self.stop()  # no daemon outlives a setup that failed
            raise

    def _missing(self, node: Executor, path: str, key: str, hint: str) -> None:
        if not node.exists(path):
            raise ConfigError(
                f"{self.name}: {path} not found on host {node.host}: set "
                f"system.adapter.{key} to {hint}"
            )

    def _check_installs(self) -> None:
        hint = (
            "a Hadoop 3 install (the folder with bin/hdfs); `bash scripts/setup.sh --full` "
            "builds one from Maven Central into .installs/hadoop"
        )
        for node in self._nodes():
            self._missing(node, f"{self.hadoop_home}/bin/hdfs", "hadoop_home", hint)
        self._missing(
            self.master, f"{self.hadoop_home}/etc/hadoop/hadoop-env.sh", "hadoop_home", hint
        )
        if self.start_mode == "sbin":
            self._missing(
                self.master, f"{self.hadoop_home}/sbin/start-dfs.sh", "hadoop_home", hint
            )
        if self.java_home:
            for node in self._nodes():
                self._missing(
                    node,
                    f"{self.java_home}/bin/java",
                    "java_home",
                    "a JDK folder, or null to keep hadoop-env.sh's (or the java on PATH)",
                )

    def check_hibench(self) -> None:
        """HiBench on the load host (HiBench workloads only)."""
        hint = "a HiBench checkout built for Hadoop (mvn -Phadoopbench ... package)"
        for path in ("bin/workloads", "conf/hibench.conf"):
            self._missing(self.load, f"{self.hibench_home}/{path}", "hibench_home", hint)

    def _on_node(self, node: Executor, command: Sequence[str], what: str) -> None:
        try:
            node.run(command, timeout_s=120)
        except ExecutorError as exc:
            raise ConfigError(
                f"{self.name}: cannot {what} on host {node.host} (data_root "
                f"{self.data_root}): {exc}"
            ) from None

    def _prepare_nodes(self) -> None:
        """Each node's folder: the install's etc/hadoop, then our hadoop-env.sh block."""
        original = self.master.read_text(f"{self.hadoop_home}/etc/hadoop/hadoop-env.sh")
        for node in self._nodes():
            root, conf = self.root_of(node), self.conf_of(node)
            self._on_node(node, ["mkdir", "-p", conf, f"{root}/logs", f"{root}/pids"], "mkdir")
            self._on_node(
                node,
                ["cp", "-R", f"{self.hadoop_home}/etc/hadoop/.", conf],
                f"copy {self.hadoop_home}/etc/hadoop",
            )
            env_sh = render.hadoop_env_sh(original, root, self.java_home, self.daemon_heap_mb)
            node.write_text(f"{conf}/hadoop-env.sh", env_sh, 0o755)
        self._prepare_load()

    def _prepare_load(self) -> None:
        """HiBench's own *.conf files (but hadoop.conf, which we render) into our folder."""
        if not self.load.exists(f"{self.hibench_home}/conf"):
            return  # no HiBench here: only HiBench workloads need it (they check)
        folder = self.hibench_conf_dir
        self.load.run(["mkdir", "-p", folder], timeout_s=60)
        listing = self.load.run(["ls", "-1", f"{self.hibench_home}/conf"], timeout_s=60)
        for name in listing.stdout.split():
            if name.endswith(".conf") and name not in ("hadoop.conf", HARNESS_CONF):
                text = self.load.read_text(f"{self.hibench_home}/conf/{name}")
                self.load.write_text(f"{folder}/{name}", text)

    def _format_if_new(self, layout: render.Layout) -> None:
        if self.master.exists(f"{layout.name_dir}/current/VERSION"):
            return
        if not self.format_namenode:
            raise ConfigError(
                f"{self.name}: no NameNode in {layout.name_dir} on host "
                f"{self.master.host}; set system.adapter.format_namenode=true "
                "to format one there"
            )
        log.info("formatting a new NameNode in %s on %s", layout.name_dir, self.master.host)
        result = self.master.run(
            commands.format_namenode(self.hadoop_home, self.conf_dir),
            env=self._env(),
            timeout_s=300,
            check=False,
        )
        if not result.ok:
            raise ConfigError(f"{self.name}: formatting the NameNode failed: {result.describe()}")

    def apply(self, config: Config) -> Config | None:
        layout = self._layout()
        values, self.clamped = render.reconcile(
            self.catalogue.complete(config), len(layout.workers), self.memory_policy, self.floor
        )
        for name, (asked, used) in self.clamped.items():
            log.info("%s: %s=%s clamped to %s (render.reconcile)", self.name, name, asked, used)
        hive_site = None
        for node in self._nodes():
            per_node = self._node_properties(layout, node)
            files = render.render_sites(values, layout, self.sites, self.site_properties, per_node)
            hive_site = files.pop("hive-site.xml", None)  # the same on every node
            for name, text in files.items():
                node.write_text(f"{self.conf_of(node)}/{name}", text)
            node.write_text(f"{self.conf_of(node)}/workers", render.workers_file(layout.workers))
        if hive_site is not None:
            self._write_hive_site(hive_site)  # where Hive runs: the load host
        self.values = values
        return {k: values[k] for k in config} if self.clamped else None  # the config run

    def _node_properties(self, layout: render.Layout, node: Executor) -> dict[str, dict[str, str]]:
        """Settings of one node's site files besides the knobs: its folders and addresses."""
        return node_properties(layout, node.address, self._ports(node))

    def _write_hive_site(self, text: str) -> None:
        raise KnobError(f"system {self.name} does not write hive-site.xml")

    def _env(self, node: Executor | None = None) -> dict[str, str]:
        return commands.hadoop_env(self.conf_of(node or self.master), self.java_home)

    def client_env(self) -> dict[str, str]:
        """Environment of Hadoop's client tools on the load host."""
        return self._env(self.load)

    def _run_master(self, command: Sequence[str], timeout_s: float) -> CommandResult:
        return self.master.run(
            command, env=self._env(), timeout_s=max(timeout_s, 1.0), check=False
        )

    def start(self, timeout_s: float) -> None:
        deadline = Deadline.after(timeout_s)
        self.stop()
        self._may_run = True
        if self.start_mode == "sbin":
            steps = [
                (self.master, c, c[0].rsplit("/", 1)[-1], self._env())
                for c in commands.start_commands(self.hadoop_home)
            ]
        else:
            steps = [
                (
                    d.node,
                    daemons.daemon_command(self.hadoop_home, d, "start"),
                    d.label(),
                    self._env(d.node),
                )
                for d in self._daemons()
            ]
        for node, command, what, env in steps:
            run_step(
                node,
                command,
                what=what,
                phase="start",
                timeout_s=max(deadline.remaining(), 1.0),
                env=env,
                output_tail=self._start_tail,
            )
        wait_ready(
            lambda: self._health_within(deadline),
            what=f"HDFS/YARN on {self.master.host}",
            deadline=deadline,
            poll_s=self.poll_s,
            log_tail=self._daemon_logs,
        )

    def _start_tail(self, stdout: str, stderr: str) -> str:
        return tail(f"{stdout}\n{stderr}", 15) + "\n" + self._daemon_logs()

    def _health_within(self, deadline: Deadline) -> str | None:
        """:meth:`health` with a command time limit that fits the start deadline; a daemon
        that exited ends the wait at once, with the line of its log that says why."""
        dead = self._dead_daemons()
        if dead:
            raise StartFailed(self._death_notice(dead, "during start"))
        try:
            return self.health(min(max(deadline.remaining(), 10.0), 60.0))
        except CommandTimeout:
            return "a health command timed out"
        except health.NodeUnhealthy as exc:
            logs = [daemons.log_tail(d, 80) for d in self._daemons() if d.name == "nodemanager"]
            raise StartFailed(f"{self.name}: {health.unhealthy_notice(exc, logs)}") from None

    def health(self, timeout_s: float) -> str | None:
        """None when HDFS is out of safe mode with every DataNode live and every NodeManager
        RUNNING; otherwise what is missing."""
        return health.cluster_problem(
            lambda command: self._run_master(command, timeout_s),
            self.hadoop_home,
            self.conf_dir,
            len(self._layout().workers),
        )

    def _dead_daemons(self) -> list[daemons.Daemon]:
        if self.start_mode != "daemons":
            return []
        if self._ident is None:
            self._ident = self.master.run(["id", "-un"], timeout_s=30).stdout.strip()
        return [d for d in self._daemons() if daemons.running_pid(d, self._ident) is None]

    def _death_notice(self, dead: list[daemons.Daemon], when: str) -> str:
        first = daemons.log_tail(dead[0], 60)
        why = daemons.why_stopped(first)
        labels = ", ".join(d.label() for d in dead)
        return f"{self.name}: {labels} stopped {when}" + (f": {why}" if why else "")

    def check_daemons(self) -> None:
        """WorkloadError naming every daemon that is no longer running (one died or was
        killed during the test: its measurement does not count)."""
        dead = self._dead_daemons()
        if dead:
            logs = "\n".join(daemons.log_tail(d, 30) for d in dead)
            raise WorkloadError(self._death_notice(dead, "during the test"), logs)

    def _daemon_logs(self, lines: int = 20) -> str:
        """Tails of the NameNode's and ResourceManager's logs on the master."""
        return health.daemon_logs(self.master, self.log_dir, lines) if self.layout else ""

    def stop(self) -> None:
        if self.layout is None or not self._may_run:
            return
        if self.start_mode == "sbin":
            self._may_run = not self._stop_sbin()
            return
        clean = daemons.stop_all(
            self.hadoop_home, list(reversed(self._daemons())), lambda d: self._env(d.node)
        )
        for node in self._worker_nodes():
            daemons.end_leftovers(node, self.root_of(node))
        self._may_run = not clean

    def _stop_sbin(self) -> bool:
        clean = True
        for command in commands.stop_commands(self.hadoop_home):
            try:
                result = self._run_master(command, 300.0)
            except ExecutorError as exc:
                log.warning("%s on %s: %s", command[0], self.master.host, exc)
                clean = False
                continue
            if not result.ok:
                log.warning("%s", result.describe())
                clean = False
        return clean

    # -- HiBench ---------------------------------------------------------------------------
    def hibench_env(self) -> dict[str, str]:
        """Environment of HiBench's scripts on the load host."""
        return {**self._env(self.load), "HIBENCH_CONF_FOLDER": self.hibench_conf_dir}

    def hive_home_for_hibench(self) -> str | None:
        return None

    def write_hibench_conf(self, scale_profile: str) -> None:
        """hadoop.conf and our overrides, with the parallelism of the applied configuration."""
        layout = self._layout()
        values = self.values or self.catalogue.default()
        folder = self.hibench_conf_dir
        self.load.write_text(
            f"{folder}/hadoop.conf",
            hibench_hadoop_conf(self.hadoop_home, self.conf_of(self.load), layout.default_fs),
        )
        self.load.write_text(
            f"{folder}/{HARNESS_CONF}",
            harness_conf(
                scale_profile,
                int(values.get("mapreduce.job.maps", 2)),
                int(values.get("mapreduce.job.reduces", 1)),
                [layout.master],
                list(layout.workers),
                self.report_dir if self._custom_report_dir else None,
                self.hive_home_for_hibench(),
            ),
        )

    def describe(self) -> dict[str, str]:
        return {
            **super().describe(),
            "knob_set": self.knob_set,
            "sut_hosts": ",".join(n.host for n in self.cluster.sut),
            "load_host": self.load.host,
            "backend": f"Hadoop 3 ({', '.join(self.sites)}), {self.start_mode} start",
        }
