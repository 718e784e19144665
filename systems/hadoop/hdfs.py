"""HDFS and YARN as a system under tune (no Hive): the Hadoop lifecycle, four site files."""

from __future__ import annotations

from typing import Any

from harness.hosts.cluster import Cluster
from systems.hadoop import render
from systems.hadoop.native import NativeSites
from systems.hadoop.system import HadoopSystem

__all__ = ["HDFSYarnSystem"]


class HDFSYarnSystem(NativeSites, HadoopSystem):
    """HDFS and YARN (core, hdfs, yarn and mapred site files) under HiBench's DFSIOe or
    MapReduce workloads; no Hive."""

    name = "hdfs"
    sites = render.HADOOP_SITES

    def __init__(
        self, knob_set: str = "hdfs", cluster: Cluster | None = None, **kwargs: Any
    ) -> None:
        super().__init__(knob_set, cluster=cluster, **kwargs)
