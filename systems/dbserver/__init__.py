"""What the PostgreSQL and MySQL adapters share: the private-server lifecycle (instance,
snapshot/restore, guaranteed stop) and the sysbench workload that drives both."""

from systems.dbserver.base import ServerSystem
from systems.dbserver.host import find_binary, free_port, memory_overrides
from systems.dbserver.sysbench import SysbenchOLTP

__all__ = ["ServerSystem", "SysbenchOLTP", "find_binary", "free_port", "memory_overrides"]
