"""A real figure's panel: what each queued session measured, each tuner's mean over seeds, the
default's noise, and a verdict per claim that says whether a difference exceeds that noise.

    python -m paper.real_panel                  # results/real/fig6/REPORT.md and sessions.csv
    python -m paper.real_panel --figure fig7    # (also fig10a)

It reads the figure's packed sessions (``results/real/<figure>/sessions.jsonl``, written by
:mod:`paper.real_pack` as the queue finishes each session), not MLflow, so the committed pack is
the data. Per session:

- **improvement** (the bar): the confirmation's, i.e. the median of 3 re-measurements of the
  session's answer over the median of 3 of the default, taken alternately after the budget; 0
  when the answer is the default itself (nothing beat it, so nothing was confirmed);
- **best measured**: the best single test over trial 0, the paper's own reading (optimistic on a
  noisy machine: it is the maximum of many noisy draws);
- **default noise**: the relative standard deviation of the default's measurements in the
  session (trial 0, every 10th test's re-measurement and the 3 confirmation runs);
- **loaded tests**: tests whose 1-minute load average exceeded the session's median by more
  than ``LOAD_MARGIN`` and by more than ``LOAD_RATIO`` (one more busy process than usual on
  this 2-core machine, and half as many again for systems that load it heavily themselves),
  or, in sessions that ran in a control group of their own (from 2026-12-05), during whose
  runs other processes took more than ``OTHER_CPU_LIMIT`` of the machine's CPU
  (``other_cpu``, :mod:`harness.hosts.other_work`): the load average misses one niced job beside a
  system that keeps 7 processes runnable itself.

A claim "A >= B" on a system (each figure's claims are in :mod:`paper.real_figures`) is
judged on the means over seeds of the confirmed improvement; the difference counts as beyond
noise when it exceeds twice the system's pooled default noise (the spread of measuring one
configuration again), and as a tie otherwise. Each verdict also quotes the 95 % bootstrap
interval of that difference over the tuners' seeds (:func:`paper.stats.bootstrap_difference`).
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.confirm import CONFIRM_KEY, confirmation
from paper.real_figures import FIGURES, RealFigure
from paper.real_pack import PACK_FILE, PackedSession, pack_folder, read_pack
from paper.stats import bootstrap_difference

__all__ = [
    "COLLAPSE_RATIO",
    "LOAD_MARGIN",
    "LOAD_RATIO",
    "OTHER_CPU_LIMIT",
    "collapsed",
    "disturbed",
    "loaded",
    "panel",
    "session_row",
    "session_table",
    "verdicts",
]

#: A test ran under abnormal load when its 1-minute load average exceeds the session's median
#: by more than this (processes; the machine has 2 cores) and by this ratio: HDFS's own load
#: averages 6.4 with a 90th percentile of 8.1, where a fixed margin flagged a fifth of its tests.
LOAD_MARGIN = 1.0
LOAD_RATIO = 1.5
#: A test ran beside other work when other processes took more than this share of the machine's
#: CPU during its runs. Tomcat's default measured 0.000 on the idle machine in 4 of 4 runs, and
#: 0.017-0.058 beside one nice-19 busy loop, which still cut its median by 30 %
#: (results/real/fig6/other-cpu/): a niced job takes little CPU and much throughput.
OTHER_CPU_LIMIT = 0.01
#: A measurement "collapsed" below this share of the session's default median: Tomcat's default
#: now and then measures ~1.5k requests/s against ~20k, and its noise band is mostly those.
COLLAPSE_RATIO = 0.5
FIG6 = FIGURES["fig6"]


def loaded(loads: list[float | None]) -> list[bool]:
    """Which tests ran under abnormal load (see ``LOAD_MARGIN``); unknown loads are not."""
    known = [x for x in loads if x is not None]
    if not known:
        return [False] * len(loads)
    usual = statistics.median(known)
    limit = max(usual + LOAD_MARGIN, usual * LOAD_RATIO)
    return [x is not None and x > limit for x in loads]


def disturbed(tests: list[Observation]) -> list[bool]:
    """Which tests ran under abnormal load (:func:`loaded`) or beside other work: other
    processes took more than ``OTHER_CPU_LIMIT`` of the CPU (unknown in sessions without a
    control group), not counting kernel threads where their share is recorded (sessions
    after 2026-12-05 19:40 UTC): much of their work is the session's own
    (:mod:`harness.hosts.other_work`)."""
    by_load = loaded([t.extra.get("loadavg_1m") for t in tests])
    beside = [_other_processes(t) > OTHER_CPU_LIMIT for t in tests]
    return [a or b for a, b in zip(by_load, beside, strict=True)]


def _other_processes(test: Observation) -> float:
    """The share of the CPU other processes took during a test's runs (0 when unknown)."""
    other = test.extra.get("other_cpu")
    if other is None:
        return 0.0
    return other - test.extra.get("kernel_cpu", 0.0)


def collapsed(objective: Objective, value: float, typical: float) -> bool:
    """A measurement at less than ``COLLAPSE_RATIO`` of the typical default's throughput (or
    taking more than 1 / ``COLLAPSE_RATIO`` of its time)."""
    # multiplied, not divided: a throughput or a job time of 0 is a measurement too
    if objective.direction == "max":
        return value < COLLAPSE_RATIO * typical
    return value * COLLAPSE_RATIO > typical


def _rsd(values: list[float]) -> float:
    """Relative standard deviation (sd over |median|); NaN for fewer than 2 values."""
    if len(values) < 2:
        return math.nan
    return statistics.stdev(values) / abs(statistics.median(values))


def _queued_tuner(session: str, tags: dict[str, str]) -> str:
    """The tuner config the queue ran the session with, read from its name
    (``<figure>-<system>-<workload>-<tuner>-s<seed>``), else the session's tuner tag. Sessions
    tagged before 2026-12-04 carry the class's name, "gpbo" for ``gpbo_paper`` too."""
    system, workload = re.escape(tags["harness.system"]), re.escape(tags["harness.workload"])
    named = re.fullmatch(rf"[^-]+-{system}-{workload}-(.+)-s{tags['harness.seed']}", session)
    return named.group(1) if named else tags["harness.tuner"]


def session_row(session: PackedSession | Path) -> dict[str, Any] | None:
    """What one finished session measured, packed or in its folder (None while it is not
    finished)."""
    if isinstance(session, Path):
        session = pack_folder(session)
    if not session.finished:
        return None
    tags = session.meta["tags"]
    objective = Objective(tags["harness.objective"], tags["harness.direction"])
    tests, refs = session.tests(), session.remeasurements()
    ok = [t for t in tests if t.status is Status.SUCCEEDED]
    trial0 = next(t for t in tests if t.trial == 0)
    default0 = objective.value(trial0.metrics)
    defaults = [default0] + [
        objective.value(r.metrics)
        for r in refs
        if r.is_default and r.status is Status.SUCCEEDED and r.extra.get(CONFIRM_KEY) != "best"
    ]
    best = max(ok, key=lambda t: t.score if t.score is not None else -math.inf)
    best_value = objective.value(best.metrics)
    confirmed = confirmation(objective, refs)
    flags = disturbed([*tests, *refs])
    median_default = statistics.median(defaults)
    others = [t for t in ok if not t.is_default] + [
        r for r in refs if r.status is Status.SUCCEEDED and r.extra.get(CONFIRM_KEY) == "best"
    ]

    def collapses(values: list[float]) -> int:
        return sum(collapsed(objective, v, median_default) for v in values)

    return {
        "system": tags["harness.system"],
        "workload": tags["harness.workload"],
        "tuner": _queued_tuner(session.name, tags),
        "seed": int(tags["harness.seed"]),
        "metric": objective.metric,
        "direction": objective.direction,
        "tests": len(tests),
        "failed_tests": len(tests) - len(ok),
        "default_trial0": default0,
        "default_median": median_default,
        "default_measurements": len(defaults),
        "default_rsd": _rsd(defaults),
        "best_value": best_value,
        "best_trial": best.trial,
        "best_improvement": objective.improvement(best_value, default0),
        "improvement": confirmed.improvement if confirmed else 0.0,
        "confirm_low": confirmed.low if confirmed else math.nan,
        "confirm_high": confirmed.high if confirmed else math.nan,
        "answer_is_default": confirmed is None,
        "loaded_tests": sum(flags),
        "best_loaded": flags[tests.index(best)],
        "median_load": _median_of(tests, "loadavg_1m"),
        "median_other_cpu": _median_of(tests, "other_cpu"),
        "median_kernel_cpu": _median_of(tests, "kernel_cpu"),
        **_other_work_counts([*tests, *refs]),
        "max_steal": max(
            [x for t in tests if (x := t.extra.get("steal")) is not None], default=math.nan
        ),
        "default_collapses": collapses(defaults),
        "other_collapses": collapses([objective.value(t.metrics) for t in others]),
        "other_measurements": len(others),
        "hours": sum(t.duration_s for t in [*tests, *refs]) / 3600,
    }  # fmt: skip


def _other_work_counts(tests: list[Observation]) -> dict[str, int]:
    """How many measurements recorded other work, and how many of them had more than the
    limit of it with and without the kernel threads: what the ``kernel_cpu`` rule changes."""
    other = [t for t in tests if t.extra.get("other_cpu") is not None]
    split = [t for t in other if t.extra.get("kernel_cpu") is not None]
    return {
        "other_cpu_recorded": len(other),
        "other_cpu_over": sum(t.extra["other_cpu"] > OTHER_CPU_LIMIT for t in other),
        "kernel_cpu_recorded": len(split),
        "kernel_cpu_over": sum(t.extra["other_cpu"] > OTHER_CPU_LIMIT for t in split),
        "beside_over": sum(_other_processes(t) > OTHER_CPU_LIMIT for t in split),
        "kernel_covers_other": sum(t.extra["kernel_cpu"] >= t.extra["other_cpu"] for t in split),
    }


def _median_of(tests: list[Observation], key: str) -> float:
    """The median of a per-test record over the tests that have it; NaN if none has."""
    return statistics.median(
        [x for t in tests if (x := t.extra.get(key)) is not None] or [math.nan]
    )


def session_table(results_dir: Path = FIG6.results_dir) -> pd.DataFrame:
    """One row per finished session in the figure's pack, ``results_dir/sessions.jsonl``."""
    rows = [session_row(s) for s in read_pack(results_dir / PACK_FILE)]
    return pd.DataFrame([row for row in rows if row is not None])


def pooled_rsd(rsd: pd.Series) -> float:
    """The sessions' relative sds of the default pooled (root mean square); NaN if none."""
    values = rsd.dropna()
    return math.sqrt(float((values**2).mean())) if len(values) else math.nan


def panel(sessions: pd.DataFrame) -> pd.DataFrame:
    """Per (system, workload, tuner): seeds, mean/min/max confirmed and best-measured
    improvement, loaded tests; with the system's pooled default noise."""
    keys = ["system", "workload", "tuner"]
    out = (
        sessions.groupby(keys)
        .agg(
            seeds=("seed", "nunique"),
            improvement=("improvement", "mean"),
            low=("improvement", "min"),
            high=("improvement", "max"),
            best_improvement=("best_improvement", "mean"),
            loaded_tests=("loaded_tests", "sum"),
            best_loaded=("best_loaded", "sum"),
            per_seed=("improvement", list),
        )
        .reset_index()
    )
    noise = sessions.groupby(["system", "workload"])["default_rsd"].apply(pooled_rsd)
    out["default_noise"] = [
        noise[(s, w)] for s, w in zip(out["system"], out["workload"], strict=True)
    ]
    return out


def _judge(a: str, b: str, rows: pd.DataFrame) -> str:
    by = rows.set_index("tuner")
    if a not in by.index or b not in by.index or min(by.at[a, "seeds"], by.at[b, "seeds"]) < 2:
        return f"{a} vs {b}: not judged (fewer than 2 seeds of each)"
    diff = float(by.at[a, "improvement"] - by.at[b, "improvement"])
    band = 2 * float(by.at[a, "default_noise"])
    size = f"{100 * diff:+.1f} points (noise band ±{100 * band:.1f}; {_interval(a, b, by)})"
    if not math.isfinite(band) or abs(diff) <= band:
        return f"{a} ≈ {b}: {size}, within the noise"
    return f"{a} {'>' if diff > 0 else '<'} {b}: {size}, beyond the noise; {_seeds(a, b, by)}"


def _interval(a: str, b: str, by: pd.DataFrame) -> str:
    """The 95 % bootstrap interval of the difference of the two tuners' mean confirmed
    improvements over their seeds: beside the noise band (the default's spread), it shows the
    spread of the tuners' own seeds; it does not change the verdict."""
    low, high = bootstrap_difference(by.at[a, "per_seed"], by.at[b, "per_seed"])
    if not math.isfinite(low):
        return "95% bootstrap interval –"
    return f"95% bootstrap interval {100 * low:+.1f} to {100 * high:+.1f}"


def _seeds(a: str, b: str, by: pd.DataFrame) -> str:
    """Whether every seed of the winner beat every seed of the loser: with 2 seeds the band,
    which is the default's noise, does not see how far apart the tuner's own seeds land."""
    win, lose = (a, b) if by.at[a, "improvement"] > by.at[b, "improvement"] else (b, a)
    worst, best = float(by.at[win, "low"]), float(by.at[lose, "high"])
    if worst > best:
        return f"every seed of {win} above every seed of {lose}"
    return f"but the seeds overlap ({win}'s worst {_pct(worst)}, {lose}'s best {_pct(best)})"


def verdicts(
    table: pd.DataFrame, claims: tuple[tuple[str, str], ...] = FIG6.claims
) -> dict[tuple[str, str], list[str]]:
    """Per system, each claim ``a >= b`` of the figure, judged on the panel ``table``. Fig. 6's:
    the paper's ordering ClassyTune >= BestConfig >= GP-BO, judged with the paper's method
    (classytune_paper), and our default mode against BestConfig beside it."""
    return {
        (str(system), str(workload)): [_judge(a, b, rows) for a, b in claims]
        for (system, workload), rows in table.groupby(["system", "workload"])
    }


def _pct(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{100 * x:+.1f}%"


def _collapses(sessions: pd.DataFrame, system: object, workload: object) -> str:
    """How often the default, and every other configuration, measured under half its usual."""
    mine = sessions[(sessions["system"] == system) & (sessions["workload"] == workload)]
    maximise = mine["direction"].iloc[0] == "max"
    bound = f"under {COLLAPSE_RATIO:g}" if maximise else f"over {1 / COLLAPSE_RATIO:g}"
    return (
        f"Collapses (a measurement {bound} x the session's default median): the default's "
        f"{int(mine['default_collapses'].sum())} of {int(mine['default_measurements'].sum())} "
        f"measurements, other configurations' {int(mine['other_collapses'].sum())} of "
        f"{int(mine['other_measurements'].sum())}."
    )


def _other_work(sessions: pd.DataFrame, system: object, workload: object) -> str:
    """How often other processes took more than the limit, and what kernel threads explain."""
    mine = sessions[(sessions["system"] == system) & (sessions["workload"] == workload)]
    total = {c: int(mine[c].fillna(0).sum()) for c in _OTHER_WORK_COLUMNS}
    if not total["other_cpu_recorded"]:
        return "Other work: not recorded (sessions run without a control group of their own)."
    text = (
        f"Other work over {100 * OTHER_CPU_LIMIT:g}% of the CPU: {total['other_cpu_over']} of "
        f"{total['other_cpu_recorded']} measurements that record it."
    )
    if total["kernel_cpu_recorded"]:
        text += (
            f" Of the {total['kernel_cpu_recorded']} that record kernel threads apart, "
            f"{total['kernel_cpu_over']} are over it and {total['beside_over']} once kernel "
            f"threads are taken out; in {total['kernel_covers_other']} the kernel threads' "
            "share is at least the whole of the other work."
        )
    return text


_OTHER_WORK_COLUMNS = tuple(_other_work_counts([]))  # the sessions.csv columns


def report(sessions: pd.DataFrame, figure: RealFigure) -> str:
    """The panel as Markdown: a table per system, its verdicts, what was cut."""
    flag = "" if figure.name == "fig6" else f" --figure {figure.name}"
    lines = [
        f"# {figure.name} on the real systems",
        "",
        f"Produced by `python -m paper.real_queue run{flag}` (the sessions) and "
        f"`python -m paper.real_panel{flag}` (this file). Protocol: results/real/README.md.",
        "Improvement: confirmed (median of 3 re-measurements of the answer over median of 3 of "
        "the default, alternating, after the 100 tests); for job times, the time saved. "
        f"Loaded tests: 1-min load average > session median + {LOAD_MARGIN:g} and "
        f"> {LOAD_RATIO:g} x median, or other processes took > {100 * OTHER_CPU_LIMIT:g}% of the "
        "CPU during the runs (sessions in a control group of their own; kernel threads not "
        "counted where recorded). Verdicts: a difference "
        "of the means counts when it exceeds twice the default's noise and each tuner has at "
        "least 2 seeds; such a verdict also says whether the two tuners' seeds overlap. "
        "Beside the band, each verdict gives the 95% percentile bootstrap interval of the "
        "difference (each tuner's seeds resampled, 10 000 resamples, fixed seed); with 2-3 "
        "seeds it spans the seeds' spread only, and it does not change the verdict.",
        "",
    ]
    if sessions.empty:
        return "\n".join([*lines, "No session has finished yet."]) + "\n"
    table = panel(sessions)
    judged = verdicts(table, figure.claims)
    labels = {(r.system, r.workload): r for r in figure.rows}
    for (system, workload), rows in table.groupby(["system", "workload"], sort=False):
        row = labels.get((str(system), str(workload)))
        lines += [
            f"## {row.label if row else f'{system} / {workload}'}",
            "",
            f"Paper (ClassyTune): {row.paper or 'no number'}. "
            f"Protocol and cuts: {row.why or 'none'}."
            if row
            else "",
            f"Default noise (pooled relative sd of its re-measurements): "
            f"{100 * float(rows['default_noise'].iloc[0]):.1f}%. "
            + _collapses(sessions, system, workload)
            + " "
            + _other_work(sessions, system, workload),
            "",
            "| tuner | seeds | confirmed improvement, mean (min – max) | best single test over "
            "trial 0, mean | loaded tests (bests among them) |",
            "|---|---|---|---|---|",
        ]
        order = {t: i for i, t in enumerate(figure.tuners)}
        for _, r in rows.sort_values("tuner", key=lambda s: s.map(order)).iterrows():
            lines.append(
                f"| {r['tuner']} | {r['seeds']} | {_pct(r['improvement'])} ({_pct(r['low'])} – "
                f"{_pct(r['high'])}) | {_pct(r['best_improvement'])} | {r['loaded_tests']} "
                f"({r['best_loaded']}) |"
            )
        lines += ["", *[f"- {v}" for v in judged[(str(system), str(workload))]], ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paper.real_panel", description=__doc__)
    parser.add_argument("--figure", choices=sorted(FIGURES), default="fig6")
    parser.add_argument("--results-dir", type=Path, help="default: results/real/<figure>")
    args = parser.parse_args(argv)
    figure = FIGURES[args.figure]
    results_dir: Path = args.results_dir or figure.results_dir
    sessions = session_table(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    sessions.to_csv(results_dir / "sessions.csv", index=False)
    text = report(sessions, figure)
    (results_dir / "REPORT.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
