"""What differs from node to node of a Hadoop cluster: its folders, addresses and ports.

Every node gets its own folder below the data root (``<data_root>/<address>``: conf, logs,
pids, HDFS and YARN dirs), so several nodes can share one machine, as the loopback inventories
do. Nodes that share a machine also share its port space, and several Hadoop servers bind every
address (the MapReduce shuffle) or derive their ports from fixed defaults, so each worker then
gets its own block of ports: worker ``i`` serves on the default port + ``i * port_step``.
DataNodes are addressed by the name they are configured with (``dfs.datanode.hostname``, used
by clients and other DataNodes), not by the source address of their connection to the
NameNode, which on loopback is always 127.0.0.1.
"""

from __future__ import annotations

from dataclasses import dataclass

from systems.hadoop.render import Layout

__all__ = ["PORT_STEP", "WorkerPorts", "node_properties"]

#: Port block of each worker when workers share a machine.
PORT_STEP = 10


@dataclass(frozen=True)
class WorkerPorts:
    """The ports one worker's DataNode and NodeManager listen on."""

    offset: int = 0

    @property
    def datanode(self) -> dict[str, int]:
        return {
            "dfs.datanode.address": 9866 + self.offset,
            "dfs.datanode.http.address": 9864 + self.offset,
            "dfs.datanode.ipc.address": 9867 + self.offset,
        }

    @property
    def nodemanager(self) -> dict[str, int]:
        return {
            "yarn.nodemanager.address": 8041 + self.offset,
            "yarn.nodemanager.localizer.address": 8040 + self.offset,
            "yarn.nodemanager.webapp.address": 8042 + self.offset,
            "mapreduce.shuffle.port": 13562 + self.offset,
        }

    def all(self) -> dict[str, int]:
        return {**self.datanode, **self.nodemanager}


def node_properties(
    layout: Layout, address: str, ports: WorkerPorts | None
) -> dict[str, dict[str, str]]:
    """Per-node settings of one node's site files; ``ports`` is None for a node that runs no
    DataNode or NodeManager (a master that is no worker, or a load host apart)."""
    root = layout.node_root(address)
    files: dict[str, dict[str, str]] = {
        "core-site": {"hadoop.tmp.dir": f"{root}/tmp"},
        "hdfs-site": {
            # Clients and DataNodes reach a DataNode by its configured name (see above).
            "dfs.client.use.datanode.hostname": "true",
            "dfs.datanode.use.datanode.hostname": "true",
            # A DataNode's connection comes from 127.0.0.1 on loopback, whatever its name.
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
        },
        "yarn-site": {},
    }
    if ports is None:
        return files
    files["hdfs-site"].update(
        {
            "dfs.datanode.data.dir": f"file://{root}/dfs/data",
            "dfs.datanode.hostname": address,
            **{key: f"{address}:{port}" for key, port in ports.datanode.items()},
        }
    )
    nm = ports.nodemanager
    # The shuffle handler runs inside the NodeManager and binds every address: its port must
    # differ between workers of one machine. It goes to mapred-site: mapred-default.xml,
    # loaded after yarn-site, would override a yarn-site value.
    shuffle = nm.pop("mapreduce.shuffle.port")
    files["mapred-site"] = {"mapreduce.shuffle.port": str(shuffle)}
    files["yarn-site"].update(
        {
            "yarn.nodemanager.hostname": address,
            "yarn.nodemanager.local-dirs": f"{root}/yarn/local",
            "yarn.nodemanager.log-dirs": f"{root}/yarn/logs",
            **{key: f"{address}:{port}" for key, port in nm.items()},
        }
    )
    return files
