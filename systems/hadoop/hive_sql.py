"""HiveQL workloads: HiBench's SQL Join and Aggregation over tables of our own generator.

``prepare`` (once per session) generates ``rankings`` and ``uservisits`` (``datagen.py``,
seeded, sized by ``visits``), copies them into HDFS and declares them as external text tables
in the session's metastore. Each test runs one Hive client with the query as an ``INSERT
OVERWRITE`` into a result table (as HiBench does), then counts the result's rows, which Hive
answers from the statistics it gathered while writing (no job): a query that wrote nothing is
a failed test, not a fast one. ``duration_s`` is the query statement's own time as our runner
reports it (a Hive tarball's client, which does not, gets the client's wall time).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, WorkloadError
from harness.executor import tail
from harness.system import MetricSpec, System, whole_number
from systems.hadoop import datagen
from systems.hadoop.hive import HiveHadoopSystem
from systems.hadoop.jobs import HadoopJob
from systems.hadoop.parse import hiveql_timings

__all__ = ["QUERIES", "HiveQueryWorkload"]

log = logging.getLogger(__name__)

INPUT = "/harness/hive/input"

_TABLES = f"""\
DROP TABLE IF EXISTS rankings;
CREATE EXTERNAL TABLE rankings (pageURL STRING, pageRank INT, avgDuration INT)
ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE
LOCATION '{INPUT}/rankings';
DROP TABLE IF EXISTS uservisits;
CREATE EXTERNAL TABLE uservisits (sourceIP STRING, destURL STRING, visitDate DATE,
  adRevenue DOUBLE, userAgent STRING, countryCode STRING, languageCode STRING,
  searchWord STRING, duration INT)
ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE
LOCATION '{INPUT}/uservisits';
"""

#: name -> (result table, its columns, the query that fills it): HiBench's sql/join and
#: sql/aggregation.
QUERIES: dict[str, tuple[str, str, str]] = {
    "join": (
        "rankings_uservisits_join",
        "(sourceIP STRING, avgPageRank DOUBLE, totalRevenue DOUBLE) STORED AS SEQUENCEFILE",
        "SELECT NUV.sourceIP, AVG(R.pageRank), SUM(NUV.adRevenue) AS totalRevenue\n"
        "FROM rankings R JOIN (\n"
        "  SELECT sourceIP, destURL, adRevenue FROM uservisits UV\n"
        "  WHERE datediff(UV.visitDate, '1999-01-01') >= 0\n"
        "    AND datediff(UV.visitDate, '2000-01-01') <= 0) NUV\n"
        "ON (R.pageURL = NUV.destURL)\n"
        "GROUP BY NUV.sourceIP ORDER BY totalRevenue DESC",
    ),
    "aggregation": (
        "uservisits_aggre",
        "(sourceIP STRING, sumAdRevenue DOUBLE) STORED AS SEQUENCEFILE",
        "SELECT sourceIP, SUM(adRevenue) FROM uservisits GROUP BY sourceIP",
    ),
}


def _hive(system: System) -> HiveHadoopSystem:
    if not isinstance(system, HiveHadoopSystem):
        raise ConfigError(f"HiveQL workloads need system=hive, not {system.name!r}")
    return system


class HiveQueryWorkload(HadoopJob):
    """One HiBench SQL query (``join`` or ``aggregation``) in Hive, over ``visits`` generated
    visits of ``pages`` pages (default: a tenth as many pages as visits)."""

    metrics = (
        MetricSpec("duration_s", "min", "s"),
        MetricSpec("rows_per_s", "max", "rows/s"),
        MetricSpec("client_s", "min", "s"),
    )
    elapsed_target = "client_s"

    def __init__(
        self,
        query: str = "join",
        visits: int = 100_000,
        pages: int | None = None,
        seed: int = 0,
        duration_s: float = 120.0,
    ) -> None:
        if query not in QUERIES:
            raise ConfigError(f"workload.query {query!r}: use one of {', '.join(QUERIES)}")
        self.query = query
        self.visits = whole_number(visits, "visits", 100, 10**9)
        pages = pages if pages is not None else max(10, self.visits // 10)
        self.pages = whole_number(pages, "pages", 10, 10**8)
        self.seed = whole_number(seed, "seed", 0, 2**31 - 1)
        self.duration_s = float(duration_s)

    @property
    def label(self) -> str:
        return f"Hive {self.query}"

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "query": self.query,
            "visits": self.visits,
            "pages": self.pages,
            "seed": self.seed,
        }

    def script(self) -> str:
        """The per-test HiveQL: the result table afresh, the query into it, its row count."""
        table, columns, query = QUERIES[self.query]
        return (
            f"DROP TABLE IF EXISTS {table};\n"
            f"CREATE TABLE {table} {columns};\n"
            f"INSERT OVERWRITE TABLE {table}\n{query};\n"
            f"SELECT COUNT(*) FROM {table};\n"
        )

    #: The statement number of the timed query in :meth:`script`.
    QUERY_STATEMENT = 3

    def prepare(self, system: System, workdir: Path) -> None:
        hive = _hive(system)
        log.info("%s: generating %d visits of %d pages", self.label, self.visits, self.pages)
        rankings = datagen.rankings(self.pages, self.seed)
        self._upload(hive, rankings, "rankings.txt", f"{INPUT}/rankings")
        visits = datagen.uservisits(self.visits, self.pages, self.seed)
        self._upload(hive, visits, "uservisits.txt", f"{INPUT}/uservisits")
        self._hiveql(hive, _TABLES, "tables", "Hive tables (DDL)", None)

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        hive = _hive(system)
        output, seconds = self._hiveql(hive, self.script(), self.query, self.label, timeout_s)
        rows = self._row_count(output)
        if rows <= 0:
            raise WorkloadError(f"{self.label} wrote no rows", tail(output, 30))
        hive.check_daemons()
        timed = hiveql_timings(output).get(self.QUERY_STATEMENT, seconds)
        return {"duration_s": timed, "rows_per_s": self.visits / timed, "client_s": seconds}

    def _hiveql(
        self, hive: HiveHadoopSystem, text: str, name: str, what: str, timeout_s: float | None
    ) -> tuple[str, float]:
        script = f"{hive.hive_root}/{name}.hql"
        hive.load.write_text(script, text)
        env = {**hive.hive_env(), "HADOOP_ROOT_LOGGER": "WARN,console"}
        return self._job(hive, [], what, timeout_s, command=hive.hive_command(script), env=env)

    @staticmethod
    def _row_count(output: str) -> int:
        """The last bare integer line of the client's output: the COUNT(*)."""
        for line in reversed(output.splitlines()):
            if line.strip().isdigit():
                return int(line.strip())
        raise WorkloadError("the Hive client printed no row count", tail(output, 30))
