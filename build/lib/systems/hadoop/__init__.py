"""Hive on Hadoop and HDFS/YARN clusters (Hadoop 3 sbin scripts, HiBench workloads)."""

from systems.hadoop.hdfs import HDFSYarnSystem
from systems.hadoop.hive import HiveHadoopSystem
from systems.hadoop.system import HadoopSystem
from systems.hadoop.workload import DFSIOWorkload, HiBenchWorkload

__all__ = [
    "DFSIOWorkload",
    "HDFSYarnSystem",
    "HadoopSystem",
    "HiBenchWorkload",
    "HiveHadoopSystem",
]
