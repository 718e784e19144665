"""Hive on Hadoop as a system under tune: the Hadoop lifecycle plus hive-site.xml."""

from __future__ import annotations

from typing import Any

from harness.remote.cluster import Cluster
from systems.hadoop import render
from systems.hadoop.system import HadoopSystem

__all__ = ["HiveHadoopSystem"]


class HiveHadoopSystem(HadoopSystem):
    """Hive on Hadoop (MapReduce on YARN over HDFS), HiBench SQL/websearch/ml/micro workloads;
    writes all five site files (hive-site.xml into a private HIVE_CONF_DIR on the load host)."""

    name = "hive"
    sites = render.SITES

    def __init__(
        self,
        knob_set: str = "10",
        hive_home: str | None = None,
        cluster: Cluster | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(knob_set, cluster=cluster, **kwargs)
        self.hive_home = (
            render.check_path(hive_home, "system.adapter.hive_home") if hive_home else None
        )

    @property
    def hive_conf_dir(self) -> str:
        return f"{self.root_of(self.load)}/hive-conf"

    def _check_installs(self) -> None:
        super()._check_installs()
        if self.hive_home:
            self._missing(
                self.load,
                f"{self.hive_home}/bin/hive",
                "hive_home",
                "a Hive 3 install, or null for the Hive that HiBench unpacks",
            )

    def _prepare_load(self) -> None:
        super()._prepare_load()
        self.load.run(["mkdir", "-p", self.hive_conf_dir], timeout_s=60)

    def _write_hive_site(self, text: str) -> None:
        self.load.write_text(f"{self.hive_conf_dir}/hive-site.xml", text)

    def hibench_env(self) -> dict[str, str]:
        return {**super().hibench_env(), "HIVE_CONF_DIR": self.hive_conf_dir}

    def hive_home_for_hibench(self) -> str | None:
        return self.hive_home
