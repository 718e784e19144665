"""Hadoop MapReduce via the LocalJobRunner (hadoop-client jars from pyspark); no HDFS/YARN/Hive."""

from systems.mapreduce.system import MapReduceSystem
from systems.mapreduce.workload import MapReduceJob

__all__ = ["MapReduceJob", "MapReduceSystem"]
