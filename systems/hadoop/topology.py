"""Which node of a Hadoop cluster is what, where its folder is, and which ports it serves on.

The first SUT host is the master (NameNode, ResourceManager); the workers (DataNode and
NodeManager each) are every SUT host, or all but the master with ``master_is_worker=false``;
the load host runs the clients. Every node has its own folder below the data root, and workers
that share a machine get ports of their own (:mod:`systems.hadoop.nodes`).
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import ConfigError
from harness.executor import Executor, LocalExecutor
from harness.hosts.cluster import Cluster
from systems.hadoop import daemons, render
from systems.hadoop.nodes import PORT_STEP, WorkerPorts
from systems.ports import check_free

__all__ = ["HadoopTopology"]


class HadoopTopology:
    """The cluster's roles and places, shared by the Hadoop systems (set by their
    constructors; the layout by ``setup``)."""

    cluster: Cluster
    hadoop_home: str
    namenode_port: int
    master_is_worker: bool
    start_mode: str
    layout: render.Layout | None
    _data_root: str | None
    name: str

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

    def root_of(self, node: Executor) -> str:
        """The node's own folder below the data root."""
        return self._layout().node_root(node.address)

    def conf_of(self, node: Executor) -> str:
        return f"{self.root_of(node)}/conf"

    @property
    def conf_dir(self) -> str:
        """The master's configuration folder (the health probes run there)."""
        return self.conf_of(self.master)

    @property
    def hibench_conf_dir(self) -> str:
        return f"{self.root_of(self.load)}/hibench-conf"

    @property
    def log_dir(self) -> str:
        return f"{self.root_of(self.master)}/logs"

    @property
    def _load_apart(self) -> bool:
        """Whether the load host is not one of the SUT nodes (it then needs files too). A load
        host at a SUT node's address is that node's machine: it shares the node's folder and
        files (which hold every client setting)."""
        return not any(
            self.load is node or self.load.address == node.address for node in self.cluster.sut
        )

    def _nodes(self) -> list[Executor]:
        """Every SUT node, then the load host if it is not one of them."""
        return [*self.cluster.sut, *([self.load] if self._load_apart else [])]

    def _worker_nodes(self) -> list[Executor]:
        nodes = list(self.cluster.sut if self.master_is_worker else self.cluster.sut[1:])
        if not nodes:
            raise ConfigError(
                "system.adapter.master_is_worker=false needs at least two SUT "
                "hosts (the master runs no DataNode/NodeManager then)"
            )
        addresses = [n.address for n in nodes]
        if len(set(addresses)) < len(addresses):
            raise ConfigError(
                f"SUT hosts share an address ({', '.join(addresses)}): give every Hadoop "
                "node its own address in the inventory"
            )
        return nodes

    def _ports(self, node: Executor) -> WorkerPorts | None:
        """The worker's ports; None for a node that runs no DataNode/NodeManager. Workers of
        one machine (local executors) get blocks of their own: they share its port space."""
        workers = self._worker_nodes()
        if not any(node is w for w in workers):
            return None
        shared = len(workers) > 1 and all(isinstance(w, LocalExecutor) for w in workers)
        index = next(i for i, w in enumerate(workers) if w is node)
        return WorkerPorts(index * PORT_STEP if shared else 0)

    def _resolve_layout(self, workdir: Path) -> render.Layout:
        root = self._data_root or render.check_path(
            str(Path(self.master.session_dir(workdir)) / "hadoop"),
            "the session folder on the master (set system.adapter.data_root instead)",
        )
        self.layout = render.Layout(
            self.master.address,
            tuple(n.address for n in self._worker_nodes()),
            self.hadoop_home,
            root,
            self.namenode_port,
            maven=self.master.exists(f"{self.hadoop_home}/bin/hadoop-launch"),
        )
        return self.layout

    def _daemons(self) -> list[daemons.Daemon]:
        pairs = [(n, self.root_of(n)) for n in self._worker_nodes()]
        return daemons.cluster_daemons((self.master, self.root_of(self.master)), pairs)

    def _check_ports(self) -> None:
        """A port already taken is a one-line error before the first test, not a daemon that
        dies in its log (daemons mode only: the sbin scripts choose their own)."""
        if self.start_mode != "daemons":
            return
        master = self.master.address
        check_free(
            self.master,
            [
                (master, self.namenode_port, "system.adapter.namenode_port"),
                (master, 9870, "site_properties.hdfs-site.dfs.namenode.http-address"),
                *(
                    (master, p, "site_properties.yarn-site")
                    for p in (8030, 8031, 8032, 8033, 8088)
                ),
            ],
        )
        for node in self._worker_nodes():
            ports = self._ports(node)
            assert ports is not None
            check_free(
                node, [(node.address, p, f"site_properties.*.{k}") for k, p in ports.all().items()]
            )
