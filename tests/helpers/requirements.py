"""Skip markers for tests that need an installed program or package: one place for the
conditions and the install hints, shared by the local and the over-SSH tests."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

NEEDS_PYSPARK = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None,
    reason="pyspark (Spark, and the Hadoop jars for MapReduce) not installed: "
    "pip install -e '.[spark]'",
)
NEEDS_MARIADB = pytest.mark.skipif(
    shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists(),
    reason="mariadb-server not installed (apt-get install mariadb-server sysbench)",
)
NEEDS_JAVAC = pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK (javac) on PATH")
NEEDS_TOMCAT = [
    pytest.mark.skipif(
        not Path("/usr/share/tomcat10/bin/catalina.sh").exists(),
        reason="tomcat10 not installed (apt-get install tomcat10)",
    ),
    pytest.mark.skipif(
        shutil.which("wrk") is None, reason="wrk not installed (apt-get install wrk)"
    ),
    NEEDS_JAVAC,
]

_INSTALLS = Path(__file__).resolve().parents[2] / ".installs"
NEEDS_CASSANDRA = pytest.mark.skipif(
    not (
        Path(os.environ.get("HARNESS_INSTALLS") or _INSTALLS) / "cassandra" / "bin" / "cassandra"
    ).exists()
    or not (
        Path(os.environ.get("HARNESS_INSTALLS") or _INSTALLS) / "ycsb" / "bin" / "ycsb.sh"
    ).exists(),
    reason="Cassandra/YCSB not installed from Maven: bash scripts/setup.sh --full",
)
NEEDS_HADOOP = pytest.mark.skipif(
    not (
        Path(os.environ.get("HARNESS_INSTALLS") or _INSTALLS) / "hadoop" / "bin" / "hadoop-launch"
    ).exists(),
    reason="Hadoop not installed from Maven: bash scripts/setup.sh --full",
)
NEEDS_HIVE = pytest.mark.skipif(
    not (
        Path(os.environ.get("HARNESS_INSTALLS") or _INSTALLS) / "hive" / "bin" / "hive-ql"
    ).exists()
    or not (Path(os.environ.get("HARNESS_INSTALLS") or _INSTALLS) / "hadoop" / "bin").exists(),
    reason="Hive or Hadoop not installed from Maven: bash scripts/setup.sh --full",
)
#: Tests too long for CI's time budget (minutes each on 2 cores), run by hand with
#: HARNESS_LONG_TESTS=1; their last measured outcome is written up in the docs they serve.
LONG = pytest.mark.skipif(
    not os.environ.get("HARNESS_LONG_TESTS"),
    reason="a long test (minutes on 2 cores): run with HARNESS_LONG_TESTS=1",
)
