"""Hive on Hadoop and HDFS/YARN clusters: Hadoop 3 from Maven (or a cluster's tarball),
daemons started node by node; Hadoop's own TestDFSIO and TeraSort jobs, HiveQL queries of
HiBench's SQL workloads over our own generated tables, our PageRank and KMeans jobs, and
HiBench's own scripts."""

from systems.hadoop.hdfs import HDFSYarnSystem
from systems.hadoop.hive import HiveHadoopSystem
from systems.hadoop.hive_sql import HiveQueryWorkload
from systems.hadoop.jobs import TeraSortWorkload, TestDFSIOWorkload
from systems.hadoop.mr_jobs import KMeansWorkload, PageRankWorkload
from systems.hadoop.system import HadoopSystem
from systems.hadoop.workload import DFSIOeWorkload, HiBenchWorkload

__all__ = [
    "DFSIOeWorkload",
    "HDFSYarnSystem",
    "HadoopSystem",
    "HiBenchWorkload",
    "HiveHadoopSystem",
    "HiveQueryWorkload",
    "KMeansWorkload",
    "PageRankWorkload",
    "TeraSortWorkload",
    "TestDFSIOWorkload",
]
