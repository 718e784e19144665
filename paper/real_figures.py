"""What each real-system figure runs: its rows (system, workload, what was cut), its tuners,
and the claims its report judges. The driver is :mod:`paper.real_queue`, the report
:mod:`paper.real_panel`; the protocol and the session times are in results/real/README.md.

Each figure is one Hydra recipe, ``paper/conf/experiment/<figure>_real.yaml`` (budget, the default
re-measured every 10 tests, the confirmation, the session's name), with its sessions in
``results/real/<figure>/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FIGURES", "RealFigure", "Row"]

#: The paper's method first; our default mode beside it; its two baselines. GP-BO is run as the
#: paper ran it, with continuous parameters (gpbo_paper.yaml): `gpbo`'s typed parameters make
#: bayes_opt maximise EI by differential evolution, minutes per test on these knob sets.
TUNERS = ("classytune_paper", "classytune", "bestconfig", "gpbo_paper")
#: The expert settings of Fig. 7 are one test after the default (then confirmed like the rest).
EXPERTS = ("expert_manual", "expert_script")


@dataclass(frozen=True)
class Row:
    """One system and workload of the panel, as the paper names it, with what was cut."""

    system: str
    workload: str
    label: str  # the paper's name for the bar
    paper: str  # ClassyTune's improvement in the paper's Fig. 6 ("" when it has none)
    minutes: int  # one budget-100 session here, estimated (results/real/README.md)
    cuts: tuple[str, ...] = ()  # Hydra overrides that shorten the paper's protocol
    why: str = ""  # the cut in words, for the report

    def session(self, figure: str, tuner: str, seed: int) -> str:
        return f"{figure}-{self.system}-{self.workload}-{tuner}-s{seed}"


#: Six of the paper's systems first (MapReduce standing in for Hive-Hadoop, whose sessions take
#: ~4 h here), then the other real systems of the harness. The paper does not state its runs'
#: durations; ours are each workload's defaults unless a row cuts them.
FIG6_ROWS: tuple[Row, ...] = (
    Row(
        "mysql",
        "readwrite",
        "MySQL transactions (MariaDB, sysbench readWrite)",
        "+654%",
        25,
        why="MariaDB 10.11 for MySQL; 4 tables x 50k rows, 2 threads, 10 s per test",
    ),
    Row(
        "postgres",
        "readwrite",
        "PostgreSQL transactions (sysbench readWrite)",
        "+228%",
        25,
        why="4 tables x 50k rows, 2 threads, 10 s per test",
    ),
    Row(
        "tomcat",
        "explore",
        "Tomcat (throughput, wrk visitor walk)",
        "+76%",
        42,
        # A 2 s warm-up left the JIT cold: the default spread 8.9k-20k req/s (sd 24 %), 10 s
        # brought 11 of 12 runs within 23-27k (results/real/README.md, "Tomcat's warm-up").
        # Now the workload's default too; pinned here so the panel's sessions stay comparable.
        cuts=("workload.warmup_s=10",),
        why="our web application and wrk walk, not the paper's; 10 s warm-up, 10 s per test",
    ),
    Row(
        "spark",
        "pagerank",
        "Spark PageRank (job time)",
        "-58% time",
        35,
        why="local[N] on this machine, scale 1.0, not a HiBench cluster",
    ),
    Row(
        "mapreduce",
        "wordcount",
        "Hadoop MapReduce WordCount (job time)",
        "",
        25,
        why="LocalJobRunner; stands in for Hive-Hadoop, whose sessions take 3 h here",
    ),
    Row(
        "cassandra",
        "ycsb_a",
        "Cassandra (YCSB A throughput)",
        "+4%",
        85,
        cuts=("workload.recordcount=20000", "workload.duration_s=20", "workload.warmup_s=5"),
        why="one node; 20k records, 5 s warm-up, 20 s run (harness default: 100k, 10 s, 60 s)",
    ),
    Row("sqlite", "readwrite", "SQLite readWrite (not in the paper)", "", 10),
    Row(
        "hive",
        "join",
        "Hive-Hadoop Join (job time)",
        "-7% time",
        240,
        why="one host, 100k uservisits rows; about 2 min per test",
    ),
)


#: Fig. 7 and Fig. 10(a): the paper's databases under TPC-C (our TPC-C: 1 warehouse, 2 clients,
#: 10 s per test; MariaDB for MySQL).
TPCC_ROWS = (
    Row("mysql", "tpcc", "MySQL TPC-C (MariaDB)", "", 25, why="1 warehouse, 2 clients, 10 s"),
    Row("postgres", "tpcc", "PostgreSQL TPC-C", "", 25, why="1 warehouse, 2 clients, 10 s"),
)
#: Fig. 10(a): the same databases with the 30-knob sets (systems/<db>/knobs.yaml).
FIG10A_ROWS = (
    Row(
        "mysql",
        "tpcc",
        "MySQL TPC-C, 30 knobs (MariaDB)",
        ">6x (BestConfig, GP-BO ~4x)",
        30,
        why="1 warehouse, 2 clients, 10 s",
    ),
    Row(
        "postgres",
        "tpcc",
        "PostgreSQL TPC-C, 30 knobs",
        "",
        30,
        why="1 warehouse, 2 clients, 10 s",
    ),
)
KNOBS_30 = ("system.adapter.knob_set='30'",)


@dataclass(frozen=True)
class RealFigure:
    """One figure's queue: rows x seeds x tuners, and the pairs its verdicts judge (a >= b)."""

    name: str
    rows: tuple[Row, ...]
    tuners: tuple[str, ...]
    claims: tuple[tuple[str, str], ...]
    #: more overrides for some tuners (the expert settings are one test after the default)
    tuner_overrides: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: more overrides for every session of the figure (Fig. 10(a): the 30-knob sets)
    overrides: tuple[str, ...] = ()

    #: tuners whose sessions are short whatever the row (minutes), e.g. the expert settings
    tuner_minutes: Mapping[str, int] = field(default_factory=dict)

    @property
    def results_dir(self) -> Path:
        return Path("results/real") / self.name

    def minutes(self, row: Row, tuner: str) -> int:
        """One session's estimated minutes on this machine."""
        return self.tuner_minutes.get(tuner, row.minutes)


FIGURES: dict[str, RealFigure] = {
    "fig6": RealFigure(
        "fig6",
        FIG6_ROWS,
        TUNERS,
        claims=(
            ("classytune_paper", "bestconfig"),
            ("bestconfig", "gpbo_paper"),
            ("classytune_paper", "gpbo_paper"),
            ("classytune", "bestconfig"),
        ),
    ),
    "fig7": RealFigure(
        "fig7",
        TPCC_ROWS,
        (*EXPERTS, *TUNERS),
        claims=(
            ("classytune_paper", "expert_manual"),
            ("classytune_paper", "expert_script"),
            ("classytune_paper", "bestconfig"),
            ("classytune_paper", "gpbo_paper"),
            ("classytune", "expert_manual"),
        ),
        tuner_overrides={expert: ("budget=2",) for expert in EXPERTS},
        tuner_minutes={expert: 3 for expert in EXPERTS},  # 2 tests and 6 confirmation runs
    ),
    "fig10a": RealFigure(
        "fig10a",
        FIG10A_ROWS,
        TUNERS,
        claims=(
            ("classytune_paper", "bestconfig"),
            ("classytune_paper", "gpbo_paper"),
            ("classytune", "bestconfig"),
        ),
        overrides=KNOBS_30,
    ),
}
