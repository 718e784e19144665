"""Spark 4.x local mode (pyspark) with HiBench-like jobs; a fresh JVM and session per test."""

from systems.spark.system import SparkSystem
from systems.spark.workload import SparkJob

__all__ = ["SparkJob", "SparkSystem"]
