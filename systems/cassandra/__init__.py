"""Apache Cassandra 5.0 on the SUT nodes of a cluster, under YCSB workload A from the load host."""

from systems.cassandra.system import CassandraSystem
from systems.cassandra.workload import YCSBWorkload

__all__ = ["CassandraSystem", "YCSBWorkload"]
