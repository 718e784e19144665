"""Hadoop clusters as systems under tune: Hive on Hadoop, and HDFS/YARN.

The adapter drives an *existing* Hadoop 3 install on every node (and HiBench, plus Hive for
``hive``, on the load host); it installs nothing. Per session it creates, under ``data_root``
on every node, a private configuration folder (a copy of ``$HADOOP_HOME/etc/hadoop`` with our
site files, ``workers`` and a ``hadoop-env.sh`` that puts logs and pids under the data root),
formats a NameNode there if it has none, starts HDFS and YARN and lets HiBench generate its
input. Per test it renders the site files from the configuration, writes them to every node,
restarts the daemons with the standard ``sbin`` scripts on the master (which reach the workers
by ssh, as Hadoop always does) and waits until the NameNode has left safe mode and every
DataNode and NodeManager is live. All commands go through the cluster's executors.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, ExecutorError, KnobError
from harness.executor import CommandResult, CommandTimeout, Executor, tail
from harness.process import Deadline, run_step, wait_ready
from harness.remote.cluster import Cluster
from harness.space import Config, load_catalogue
from harness.system import System, Workload
from systems.hadoop import commands, health, render
from systems.hadoop.hibench import HARNESS_CONF, HiBenchHost, harness_conf, hibench_hadoop_conf

__all__ = ["HadoopSystem"]

log = logging.getLogger(__name__)


class HadoopSystem(System, HiBenchHost):
    """Shared lifecycle of the Hadoop systems; subclasses choose the site files and knobs."""

    placement = "cluster"

    kind = "remote"
    sites: tuple[str, ...] = render.HADOOP_SITES

    def __init__(
        self,
        knob_set: str = "10",
        hadoop_home: str = "/opt/hadoop",
        hibench_home: str = "/opt/HiBench",
        java_home: str | None = None,
        data_root: str | None = None,
        namenode_port: int = 8020,
        master_is_worker: bool = True,
        format_namenode: bool = True,
        memory_policy: str = "clamp",
        report_dir: str | None = None,
        site_properties: Mapping[str, Mapping[str, Any]] | None = None,
        setup_start_timeout_s: float = 600.0,
        poll_s: float = 2.0,
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
        self.hadoop_home = render.check_path(hadoop_home, "system.adapter.hadoop_home")
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
        self.report_dir = render.check_path(
            report_dir or f"{self.hibench_home}/report", "system.adapter.report_dir"
        )
        self._custom_report_dir = report_dir is not None
        self.site_properties = {str(k): dict(v) for k, v in (site_properties or {}).items()}
        self.setup_start_timeout_s = float(setup_start_timeout_s)
        self.poll_s = float(poll_s)
        self.cluster = cluster or Cluster.local()
        self.layout: render.Layout | None = None
        self._may_run = False  # start scripts were run and not stopped cleanly since
        self.values: Config = {}
        self.clamped: dict[str, tuple[Any, Any]] = {}

    # -- where things are ------------------------------------------------------------------
    @property
    def master(self) -> Executor:
        return self.cluster.sut[0]

    @property
    def load(self) -> Executor:
        return self.cluster.load

    def _layout(self) -> render.Layout:
        if self.layout is None:
            raise ConfigError(
                f"system {self.name} is not set up: call setup(workdir, workload) first"
            )
        return self.layout

    @property
    def data_root(self) -> str:
        return self._layout().data_root

    @property
    def conf_dir(self) -> str:
        return f"{self.data_root}/conf"

    @property
    def hibench_conf_dir(self) -> str:
        return f"{self.data_root}/hibench-conf"

    @property
    def log_dir(self) -> str:
        return f"{self.data_root}/logs"

    @property
    def _load_apart(self) -> bool:
        """Whether the load host is not one of the SUT nodes (it then needs files too)."""
        return not any(self.load is node for node in self.cluster.sut)

    def _nodes(self) -> list[Executor]:
        """Every SUT node, then the load host if it is not one of them."""
        return [*self.cluster.sut, *([self.load] if self._load_apart else [])]

    def _workers(self) -> tuple[str, ...]:
        nodes = self.cluster.sut if self.master_is_worker else self.cluster.sut[1:]
        if not nodes:
            raise ConfigError(
                "system.adapter.master_is_worker=false needs at least two SUT "
                "hosts (the master runs no DataNode/NodeManager then)"
            )
        addresses = list(dict.fromkeys(n.address for n in nodes))
        if len(addresses) < len(nodes):
            log.warning("SUT hosts share addresses; %d distinct worker(s)", len(addresses))
        return tuple(addresses)

    def _resolve_layout(self, workdir: Path) -> render.Layout:
        root = self._data_root or render.check_path(
            str(Path(self.master.session_dir(workdir)) / "hadoop"),
            "the session folder on the master (set system.adapter.data_root instead)",
        )
        self.layout = render.Layout(
            self.master.address, self._workers(), self.hadoop_home, root, self.namenode_port
        )
        return self.layout

    # -- lifecycle -------------------------------------------------------------------------
    def setup(self, workdir: Path, workload: Workload) -> None:
        layout = self._resolve_layout(workdir)
        self._check_installs()
        self._prepare_nodes()
        self.apply(self.space.default())
        self._format_if_new(layout)
        self.start(self.setup_start_timeout_s)
        super().setup(workdir, workload)  # HiBench prepare.sh, on the running cluster

    def _missing(self, node: Executor, path: str, key: str, hint: str) -> None:
        if not node.exists(path):
            raise ConfigError(
                f"{self.name}: {path} not found on host {node.host}: set "
                f"system.adapter.{key} to {hint}"
            )

    def _check_installs(self) -> None:
        hint = "the Hadoop 3 install (the folder with bin/hdfs and sbin/start-dfs.sh)"
        for node in self._nodes():
            self._missing(node, f"{self.hadoop_home}/bin/hdfs", "hadoop_home", hint)
        self._missing(self.master, f"{self.hadoop_home}/sbin/start-dfs.sh", "hadoop_home", hint)
        self._missing(
            self.master, f"{self.hadoop_home}/etc/hadoop/hadoop-env.sh", "hadoop_home", hint
        )
        self._missing(
            self.load,
            f"{self.hibench_home}/bin/workloads",
            "hibench_home",
            "a HiBench checkout built for Hadoop (mvn -Phadoopbench ... package)",
        )
        self._missing(
            self.load,
            f"{self.hibench_home}/conf/hibench.conf",
            "hibench_home",
            "a HiBench checkout built for Hadoop (mvn -Phadoopbench ... package)",
        )
        if self.java_home:
            for node in self._nodes():
                self._missing(
                    node,
                    f"{self.java_home}/bin/java",
                    "java_home",
                    "a JDK 8 or 11 folder, or null to keep hadoop-env.sh's",
                )

    def _on_nodes(self, command: Sequence[str], what: str) -> None:
        for node in self._nodes():
            try:
                node.run(command, timeout_s=120)
            except ExecutorError as exc:
                raise ConfigError(
                    f"{self.name}: cannot {what} on host {node.host} (data_root "
                    f"{self.data_root}): {exc}"
                ) from None

    def _write_everywhere(self, path: str, text: str, mode: int = 0o644) -> None:
        self.cluster.write_all(path, text, mode)
        if self._load_apart:
            self.load.write_text(path, text, mode)

    def _prepare_nodes(self) -> None:
        """Private conf folder on every node: the install's files, then our hadoop-env.sh."""
        self._on_nodes(
            ["mkdir", "-p", self.conf_dir, self.log_dir, f"{self.data_root}/pids"],
            "create the data folders",
        )
        self._on_nodes(
            ["cp", "-R", f"{self.hadoop_home}/etc/hadoop/.", self.conf_dir],
            f"copy {self.hadoop_home}/etc/hadoop",
        )
        env_sh = render.hadoop_env_sh(
            self.master.read_text(f"{self.conf_dir}/hadoop-env.sh"), self.data_root, self.java_home
        )
        self._write_everywhere(f"{self.conf_dir}/hadoop-env.sh", env_sh, 0o755)
        self._prepare_load()

    def _prepare_load(self) -> None:
        """HiBench's own *.conf files (but hadoop.conf, which we render) into our folder."""
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

    def apply(self, config: Config) -> None:
        layout = self._layout()
        values, self.clamped = render.reconcile(
            self.catalogue.complete(config), len(layout.workers), self.memory_policy
        )
        for name, (asked, used) in self.clamped.items():
            log.info("%s: %s=%s clamped to %s (memory_policy=clamp)", self.name, name, asked, used)
        files = render.render_sites(values, layout, self.sites, self.site_properties)
        for name, text in files.items():
            if name == "hive-site.xml":
                self._write_hive_site(text)
            else:
                self._write_everywhere(f"{self.conf_dir}/{name}", text)
        self._write_everywhere(f"{self.conf_dir}/workers", render.workers_file(layout.workers))
        self.values = values

    def _write_hive_site(self, text: str) -> None:
        raise KnobError(f"system {self.name} does not write hive-site.xml")

    def _env(self) -> dict[str, str]:
        return commands.hadoop_env(self.conf_dir, self.java_home)

    def _run_master(self, command: Sequence[str], timeout_s: float) -> CommandResult:
        return self.master.run(
            command, env=self._env(), timeout_s=max(timeout_s, 1.0), check=False
        )

    def start(self, timeout_s: float) -> None:
        deadline = Deadline.after(timeout_s)
        self.stop()
        self._may_run = True
        for command in commands.start_commands(self.hadoop_home):
            run_step(
                self.master,
                command,
                what=command[0].rsplit("/", 1)[-1],
                phase="start",
                timeout_s=max(deadline.remaining(), 1.0),
                env=self._env(),
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
        """:meth:`health` with a command time limit that fits the start deadline."""
        try:
            return self.health(min(max(deadline.remaining(), 10.0), 60.0))
        except CommandTimeout:
            return "a health command timed out"

    def health(self, timeout_s: float) -> str | None:
        """None when HDFS is out of safe mode with every DataNode live and every NodeManager
        RUNNING; otherwise what is missing."""
        return health.cluster_problem(
            lambda command: self._run_master(command, timeout_s),
            self.hadoop_home,
            self.conf_dir,
            len(self._layout().workers),
        )

    def _daemon_logs(self, lines: int = 20) -> str:
        """Tails of the NameNode's and ResourceManager's logs on the master."""
        return health.daemon_logs(self.master, self.log_dir, lines) if self.layout else ""

    def stop(self) -> None:
        if self.layout is None or not self._may_run:
            return
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
        self._may_run = not clean

    # -- HiBench ---------------------------------------------------------------------------
    def hibench_env(self) -> dict[str, str]:
        """Environment of HiBench's scripts on the load host."""
        return {**self._env(), "HIBENCH_CONF_FOLDER": self.hibench_conf_dir}

    def hive_home_for_hibench(self) -> str | None:
        return None

    def write_hibench_conf(self, scale_profile: str) -> None:
        """hadoop.conf and our overrides, with the parallelism of the applied configuration."""
        layout = self._layout()
        values = self.values or self.catalogue.default()
        folder = self.hibench_conf_dir
        self.load.write_text(
            f"{folder}/hadoop.conf",
            hibench_hadoop_conf(self.hadoop_home, self.conf_dir, layout.default_fs),
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
            "backend": f"Hadoop 3 ({', '.join(self.sites)}) + HiBench, sbin scripts",
        }
