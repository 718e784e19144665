"""Hive on Hadoop as a system under tune: the Hadoop lifecycle plus Hive's client and metastore.

Hive has no daemon here: each query is one Hive client process on the load host (its embedded
metastore on Derby in the session folder, its queries compiled to MapReduce jobs on the
cluster's YARN), started afresh per test, so a restart of the cluster restarts all of Hive. The
client is ``bin/hive-ql`` of the Maven install (our runner; Central has no hive-cli 4.1) or a
tarball's ``bin/hive``; both take ``-f <file> --hiveconf k=v``. ``hive-site.xml`` (the Hive knobs
plus the metastore, warehouse and scratch settings below) goes to a private ``HIVE_CONF_DIR``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from harness.executor import Executor
from harness.hosts.cluster import Cluster
from harness.hosts.machine import install_dir as harness_install_dir
from systems.hadoop import render
from systems.hadoop.native import NativeSites
from systems.hadoop.system import HadoopSystem

__all__ = ["WAREHOUSE", "HiveHadoopSystem"]

#: HDFS folders of Hive's tables and of its per-query scratch files.
WAREHOUSE = "/harness/hive/warehouse"
SCRATCH = "/harness/hive/scratch"
#: The one jar Hive's MapReduce tasks need that neither hive-exec (the job jar) nor Hadoop 3.4's
#: own lib/ holds; shipped with every job through hive.aux.jars.path.
TASK_JARS = ("commons-collections-3.2.2.jar",)


class HiveHadoopSystem(NativeSites, HadoopSystem):
    """Hive 4 on Hadoop (MapReduce on YARN over HDFS): all five site files, the Hive client on
    the load host; HiveQL workloads of our own (``hive_sql``) or HiBench's."""

    name = "hive"
    sites = render.SITES

    def __init__(
        self,
        knob_set: str = "10",
        hive_home: str | None = None,
        cluster: Cluster | None = None,
        hive_heap_mb: int = 1024,
        **kwargs: Any,
    ) -> None:
        super().__init__(knob_set, cluster=cluster, **kwargs)
        self.hive_home = render.check_path(
            hive_home or harness_install_dir("hive"), "system.adapter.hive_home"
        )
        self.hive_heap_mb = int(hive_heap_mb)

    @property
    def hive_root(self) -> str:
        """Hive's folder on the load host: conf, metastore, local scratch, scripts."""
        return f"{self.root_of(self.load)}/hive"

    @property
    def hive_conf_dir(self) -> str:
        return f"{self.root_of(self.load)}/hive-conf"

    @functools.cached_property
    def maven_hive(self) -> bool:
        """An install of systems/hadoop/java/hive (our runner), not a Hive tarball. Looked up
        once: every test renders hive-site.xml and starts a client, over SSH on a cluster."""
        return self.load.exists(f"{self.hive_home}/bin/hive-ql")

    def _check_installs(self) -> None:
        super()._check_installs()
        if not self.maven_hive:
            self._missing(
                self.load,
                f"{self.hive_home}/bin/hive",
                "hive_home",
                "a Hive 4 install (`bash scripts/setup.sh --full` builds one from Maven Central "
                "into .installs/hive, the default)",
            )

    def _node_properties(self, layout: render.Layout, node: Executor) -> dict[str, dict[str, str]]:
        return {**super()._node_properties(layout, node), "hive-site": self._hive_base()}

    def _hive_base(self) -> dict[str, str]:
        """hive-site settings that make Hive work here (no knobs among them)."""
        root = self.hive_root
        props = {
            # The embedded metastore, on Derby, private to the session (one client at a time).
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={root}/metastore_db;"
            "create=true",
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            # Central has no schematool for 4.1: DataNucleus creates the schema on first use.
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.metastore.warehouse.dir": WAREHOUSE,
            "hive.exec.scratchdir": SCRATCH,
            "hive.exec.local.scratchdir": f"{root}/local",
            "hive.downloaded.resources.dir": f"{root}/local/resources",
            "hive.querylog.location": f"{root}/local/querylog",
            # Async logging needs the LMAX disruptor, which Hive's child JVMs do not have.
            "hive.async.log.enabled": "false",
            # A map join's local task (building the small table's hash table) runs in the
            # client's JVM: as a child JVM (`hadoop jar hive-exec`) it needs Hive's log4j2
            # set-up on Hadoop's log4j classpath, and costs a JVM start per query.
            "hive.exec.submit.local.task.via.child": "false",
        }
        if self.maven_hive:
            jars = ",".join(f"file://{self.hive_home}/lib/{jar}" for jar in TASK_JARS)
            props["hive.aux.jars.path"] = jars
        return props

    def _write_hive_site(self, text: str) -> None:
        self.load.run(["mkdir", "-p", self.hive_conf_dir, f"{self.hive_root}/local"], timeout_s=60)
        self.load.write_text(f"{self.hive_conf_dir}/hive-site.xml", text)

    def hive_command(self, script: str, overrides: Mapping[str, str] | None = None) -> list[str]:
        """The Hive client's command line for a HiveQL file on the load host."""
        program = "hive-ql" if self.maven_hive else "hive"
        command = [f"{self.hive_home}/bin/{program}", "-f", script]
        for key, value in (overrides or {}).items():
            command += ["--hiveconf", f"{key}={value}"]
        return command

    def hive_env(self) -> dict[str, str]:
        """The Hive client's environment: Hadoop's client environment plus Hive's folders."""
        return {
            **self.client_env(),
            "HADOOP_HOME": self.hadoop_home,
            "HIVE_CONF_DIR": self.hive_conf_dir,
            "HADOOP_HEAPSIZE_MAX": str(self.hive_heap_mb),
            # Derby writes derby.log into the working folder unless told otherwise.
            "HADOOP_OPTS": f"-Dderby.stream.error.file={self.hive_root}/derby.log",
        }

    def hibench_env(self) -> dict[str, str]:
        return {**super().hibench_env(), "HIVE_CONF_DIR": self.hive_conf_dir}

    def hive_home_for_hibench(self) -> str | None:
        # HiBench's scripts call bin/hive: with our Maven install, the Hive HiBench unpacks.
        return None if self.maven_hive else self.hive_home
