"""Scoring, ranking and reporting for the tuner benchmark (:mod:`paper.bench`).

Pure functions over the per-session result dicts that :func:`paper.bench.run_session` returns
(keys ``tuner``, ``system``, ``seed``, ``default``, ``best``, ``optimum`` as larger-is-better
scores, ``tests``, ``compute_s``, ``dim``), so they are unit-testable without running a tuner.

Recorded-data problems also carry ``noise`` (the table's measured noise, from repeated
configurations; None when none is repeated) and ``default_by_rule`` (the default's score
under each default rule). A problem whose default-to-optimum gap is within
:data:`NOISE_FACTOR` × its noise is not scored (its ranking would rank noise); one whose noise
is not measured is scored and flagged; and where the default rules give different defaults,
the report also shows the scores against each rule's default.

Each ranked group also carries its statistics (:mod:`paper.stats`): the Friedman test over its
(system, seed) blocks, Nemenyi's critical difference (the diagram is drawn by
:func:`paper.bench.draw_cd_figures`), the default tuner's head-to-head counts with a sign test,
and every tuner's computation time per dimension as median [range]. On the evaluation suite a
group is also split into faithful (held-out Kendall τ ≥ :data:`FAITHFUL_TAU`) and low-fidelity
surrogates, the τ read from the fidelity table of systems/dataset/README.md.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

from paper.stats import friedman, nemenyi_cd, sign_test_text

__all__ = [
    "FAITHFUL_TAU",
    "FOCUS_TUNER",
    "NOISE_FACTOR",
    "compute_by_dim",
    "compute_cell",
    "fidelity_split",
    "grouped_summaries",
    "mean_ranks",
    "noise_verdict",
    "normalised_score",
    "pairwise_counts",
    "plot_scores",
    "rank_average",
    "rank_table",
    "report_markdown",
    "report_sections",
    "summarise",
    "surrogate_taus",
]

Row = dict[str, Any]

#: A default-to-optimum gap within this many noise standard deviations is noise.
NOISE_FACTOR = 2.0
#: A surrogate is faithful when its held-out Kendall τ (measured against predicted values) is
#: at least this: below it, a tuner's rank on the surrogate says little about the real system.
FAITHFUL_TAU = 0.43
#: Where each built-in surrogate's fidelity is recorded: the table that
#: ``scripts/surrogate_fidelity.py --readme`` computes and writes between these markers.
FIDELITY_README = Path(__file__).resolve().parents[1] / "systems" / "dataset" / "README.md"
_FIDELITY_MARKERS = ("<!-- fidelity:begin -->", "<!-- fidelity:end -->")


def surrogate_taus(readme: Path = FIDELITY_README) -> dict[str, float]:
    """Each surrogate's held-out Kendall τ, read from the fidelity table of ``readme`` (the
    numbers each surrogate computes when it is built), so the report needs no model fit."""
    text = readme.read_text()
    begin, end = (text.index(m) for m in _FIDELITY_MARKERS)
    lines = [ln for ln in text[begin:end].splitlines() if ln.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    column = header.index("Kendall τ")
    taus = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        taus[cells[0]] = float(cells[column])
    return taus


def fidelity_split(systems: Iterable[str], taus: dict[str, float]) -> tuple[list[str], list[str]]:
    """The problems on faithful surrogates (τ ≥ :data:`FAITHFUL_TAU`) and on the others; a
    noisy problem (``surrogate_x~noise5``) goes with its surrogate, an unknown one with the
    low-fidelity problems (nothing vouches for it)."""
    faithful: list[str] = []
    low: list[str] = []
    for system in sorted(set(systems)):
        tau = taus.get(system.split("~", 1)[0], math.nan)
        (faithful if tau >= FAITHFUL_TAU else low).append(system)
    return faithful, low


def noise_verdict(row: Row) -> str:
    """``ok``, ``within noise`` or ``noise not measured`` for a recorded-data problem; ``""``
    for the others (synthetic systems know their optimum exactly)."""
    if "noise" not in row:
        return ""
    if row["noise"] is None:
        return "noise not measured"
    if row["default"] is None or row["optimum"] - row["default"] <= NOISE_FACTOR * row["noise"]:
        return "within noise"
    return "ok"


def normalised_score(best: float | None, default: float | None, optimum: float) -> float:
    """(best − default) / (optimum − default) on larger-is-better scores.

    Scores of minimised metrics are negated values, so the same formula mirrors them: 1 = the
    best-known optimum, 0 = no better than the default. A session without any successful test
    scores 0 (it found nothing better than the default). NaN when the default is unknown or
    already at (or past) the optimum, because then the ratio means nothing.
    """
    if default is None or not math.isfinite(default) or optimum - default <= 0:
        return math.nan
    if best is None:
        return 0.0
    return (best - default) / (optimum - default)


def rank_average(values: Sequence[float]) -> list[float]:
    """Ranks, 1 = largest value; tied values share the mean of their ranks; NaN ranks last
    (``scipy.stats.rankdata`` on the negated values, NaN as +inf)."""
    keyed = np.array([-v if math.isfinite(v) else math.inf for v in values], dtype=float)
    return [float(r) for r in rankdata(keyed, method="average")]


def rank_table(rows: Iterable[Row]) -> dict[str, list[float]]:
    """Per tuner, its rank on each (system, seed) block that every tuner in ``rows`` ran and
    that is scored, blocks in the same order for every tuner: the table the mean ranks, the
    Friedman test and the critical-difference diagram are computed from.

    Only problems that every tuner ran enter, so tuners compare on equal ground (a tuner that
    skipped a system does not gain or lose from it).
    """
    by_problem: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    tuners: set[str] = set()
    for r in rows:
        tuners.add(r["tuner"])
        by_problem[(r["system"], r["seed"])][r["tuner"]] = r["norm"]
    names = sorted(tuners)
    table: dict[str, list[float]] = {name: [] for name in names}
    for problem in sorted(by_problem):
        scores = by_problem[problem]
        if set(scores) != tuners or not any(math.isfinite(v) for v in scores.values()):
            continue  # not every tuner ran it, or it is not scored (e.g. gap within noise)
        for name, rank in zip(names, rank_average([scores[n] for n in names]), strict=True):
            table[name].append(rank)
    return table


def mean_ranks(rows: Iterable[Row]) -> dict[str, float]:
    """Mean rank per tuner over every (system, seed) problem of :func:`rank_table`, ranking
    by normalised score; NaN for a tuner without a ranked problem."""
    return {
        name: statistics.fmean(ranks) if ranks else math.nan
        for name, ranks in rank_table(rows).items()
    }


def _mean_std(values: list[float]) -> tuple[float, float]:
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return math.nan, math.nan
    return statistics.fmean(vals), statistics.stdev(vals) if len(vals) > 1 else 0.0


def summarise(rows: list[Row]) -> dict[str, Any]:
    """Per tuner: mean/std normalised score per system, overall mean, mean rank, overheads."""
    for r in rows:
        r["norm"] = normalised_score(r["best"], r["default"], r["optimum"])
        if noise_verdict(r) == "within noise":
            r["norm"] = math.nan  # not scored: the gap it would be scored on is noise
    systems = sorted({r["system"] for r in rows})
    table = rank_table(rows)
    ranks = {n: statistics.fmean(v) if v else math.nan for n, v in table.items()}
    per: dict[str, dict[str, Any]] = {}
    for name in sorted({r["tuner"] for r in rows}):
        mine = [r for r in rows if r["tuner"] == name]
        cells = {s: _mean_std([r["norm"] for r in mine if r["system"] == s]) for s in systems}
        # Overall mean = mean of the per-system means, so each objective weighs the same.
        overall = _mean_std([m for m, _ in cells.values() if math.isfinite(m)])[0]
        overhead: dict[int, list[tuple[float, float, str]]] = {}
        for r in mine:
            # Overhead on the synthetic systems only: d = 10 and d = 30 exactly, as asked.
            if not r["system"].startswith("synthetic"):
                continue
            overhead.setdefault(r["dim"], []).append(
                (r["compute_s"], r["compute_s"] / max(r["tests"], 1), r["system"])
            )
        per[name] = {
            "cells": cells,
            "overall": overall,
            "rank": ranks.get(name, math.nan),
            "overhead": overhead,
            "compute": compute_by_dim(mine),
        }
    return {
        "systems": systems,
        "tuners": per,
        "recorded": _recorded_checks(rows),
        "rank_table": table,
        "friedman": friedman(table),
    }


def compute_by_dim(rows: Iterable[Row]) -> dict[int, list[float]]:
    """Each session's tuner computation time (``compute_s``), by the problem's dimension:
    times are quoted as measured (median and range per dimension), never as a range spanned
    by two means, which hides how far single sessions land."""
    out: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        if r.get("compute_s") is not None:
            out[int(r["dim"])].append(float(r["compute_s"]))
    return {dim: sorted(times) for dim, times in sorted(out.items())}


def compute_cell(times: Sequence[float]) -> str:
    """``12.3 s [10.1 – 14.0] (n)``: median, range and count of sessions' computation times."""
    if not times:
        return "–"
    return f"{statistics.median(times):.3g} s [{min(times):.3g} – {max(times):.3g}] ({len(times)})"


def _recorded_checks(rows: list[Row]) -> dict[str, dict[str, Any]]:
    """Per recorded-data system: its noise verdict and, where the default rules give
    different defaults, each tuner's mean score against each rule's default."""
    out: dict[str, dict[str, Any]] = {}
    for system in sorted({r["system"] for r in rows if "noise" in r}):
        mine = [r for r in rows if r["system"] == system]
        first = mine[0]
        rules = {k: v for k, v in (first.get("default_by_rule") or {}).items() if v is not None}
        gap = first["optimum"] - (first["default"] or 0.0)
        by_rule: dict[str, dict[str, float]] = {}
        if len(set(rules.values())) > 1 and gap > 0:
            for rule, default in rules.items():
                by_rule[rule] = {
                    t: _mean_std(
                        [
                            normalised_score(r["best"], default, r["optimum"])
                            for r in mine
                            if r["tuner"] == t
                        ]
                    )[0]
                    for t in sorted({r["tuner"] for r in mine})
                }
        out[system] = {
            "verdict": noise_verdict(first),
            "noise": first["noise"],
            "gap": gap,
            "by_rule": by_rule,
        }
    return out


def _cell(mean: float, std: float) -> str:
    return "–" if math.isnan(mean) else f"{mean:.3f} ± {std:.3f}"


_SUITE_LABELS = {
    "eval": "evaluation suite (no setting was chosen on it)",
    "dev": "development suite (settings are chosen here)",
    "other": "other systems",
}


def _group_label(suite: str, noise: float) -> str:
    level = "no noise" if noise == 0 else f"{100 * noise:g} % measurement noise"
    return f"{_SUITE_LABELS.get(suite, suite)}, {level}"


def grouped_summaries(
    rows: list[Row], jobs: Sequence[tuple[str, str, int, int]]
) -> list[tuple[str, dict[str, Any]]]:
    """One :func:`summarise` per (suite, noise level), evaluation suite first; each summary
    also says how many of its planned (system, seed) problems could be ranked (every tuner
    finished) and which were dropped."""
    from paper import suites

    planned: dict[tuple[str, float], set[tuple[str, int]]] = defaultdict(set)
    tuners: set[str] = set()
    for tuner, system, seed, _ in jobs:
        planned[(suites.suite_of(system), suites.noise_of(system))].add((system, seed))
        tuners.add(tuner)
    order = {"eval": 0, "dev": 1}
    groups = []
    for key in sorted(planned, key=lambda k: (order.get(k[0], 2), k[1])):
        label = _group_label(*key)
        for sublabel, problems in _fidelity_groups(key[0], planned[key]):
            summary = _planned_summary(rows, problems, tuners)
            if summary is not None:
                groups.append((label + sublabel, summary))
    return groups


def _fidelity_groups(
    suite: str, problems: set[tuple[str, int]]
) -> list[tuple[str, set[tuple[str, int]]]]:
    """The group itself and, on the evaluation suite when it has both kinds, its problems on
    faithful and on low-fidelity surrogates apart: a claim should hold where the surrogates
    can be trusted."""
    whole: list[tuple[str, set[tuple[str, int]]]] = [("", problems)]
    if suite != "eval":
        return whole
    taus = surrogate_taus()
    faithful, low = fidelity_split((s for s, _ in problems), taus)
    if not faithful or not low:
        return whole  # one side only: the group itself is that side

    def names(systems: list[str]) -> str:
        bases = sorted({s.split("~", 1)[0].removeprefix("surrogate_") for s in systems})
        return ", ".join(bases)

    return [
        *whole,
        (
            f"; faithful surrogates (held-out τ ≥ {FAITHFUL_TAU:g}: {names(faithful)})",
            {p for p in problems if p[0] in faithful},
        ),
        (
            f"; low-fidelity surrogates (τ < {FAITHFUL_TAU:g}: {names(low)})",
            {p for p in problems if p[0] in low},
        ),
    ]


def _planned_summary(
    rows: list[Row], problems: set[tuple[str, int]], tuners: set[str]
) -> dict[str, Any] | None:
    """:func:`summarise` of the rows on ``problems``, with how many of them could be ranked
    (every tuner finished) and which were dropped; None when no row is on them."""
    mine = [r for r in rows if (r["system"], r["seed"]) in problems]
    if not mine:
        return None
    summary = summarise(mine)
    done: dict[tuple[str, int], set[str]] = defaultdict(set)
    for r in mine:
        done[(r["system"], r["seed"])].add(r["tuner"])
    summary["dropped"] = sorted(
        f"{s} seed {k} ({', '.join(sorted(tuners - done[(s, k)]))})"
        for s, k in problems
        if tuners - done[(s, k)]
    )
    summary["problems"] = len(problems)
    return summary


def report_sections(
    groups: Sequence[tuple[str, dict[str, Any]]], command: str, notes: str = ""
) -> str:
    """The REPORT.md text with one section per (suite, noise) group of
    :func:`grouped_summaries`; a single group is the plain :func:`report_markdown`."""
    if len(groups) == 1:
        return report_markdown(groups[0][1], command, notes, title=groups[0][0])
    lines = ["# Tuner benchmark", "", "Command:", "", "```", command, "```", ""]
    if notes:
        lines += [notes, ""]
    for label, summary in groups:
        body = report_markdown(summary, command, "", title=label).split("\n")
        # Drop the per-section title block (title, command fence) and shift headings down.
        start = body.index("```", body.index("```") + 1) + 1
        while start < len(body) and not body[start]:
            start += 1
        lines += [f"## {label[0].upper()}{label[1:]}", ""]
        lines += [f"#{line}" if line.startswith("## ") else line for line in body[start:]]
    return "\n".join(lines) + "\n"


def report_markdown(
    summary: dict[str, Any], command: str, notes: str = "", title: str = ""
) -> str:
    """The REPORT.md text: command, score table sorted by mean rank, overhead table."""
    systems, tuners = summary["systems"], summary["tuners"]
    order = sorted(
        tuners,
        key=lambda n: (
            math.inf if math.isnan(tuners[n]["rank"]) else tuners[n]["rank"],
            -tuners[n]["overall"],
        ),
    )
    heading = f"# Tuner benchmark: {title}" if title else "# Tuner benchmark"
    lines = [heading, "", "Command:", "", "```", command, "```", ""]
    if notes:
        lines += [notes, ""]
    if "problems" in summary:
        dropped = summary["dropped"]
        lines += [
            f"Ranked over {summary['problems'] - len(dropped)} of {summary['problems']} "
            "(system, seed) problems"
            + (
                f"; dropped {len(dropped)} where a tuner did not finish: "
                + "; ".join(dropped[:10])
                + (" …" if len(dropped) > 10 else "")
                if dropped
                else ""
            )
            + ".",
            "",
        ]
    lines += [
        "Normalised score per session = (best found − default) / (best known − default) "
        "on larger-is-better scores (1 = best-known optimum, 0 = default; above 1 = beat "
        "the best-known optimum). Cells: mean ± std over seeds. Overall = mean of the "
        "per-system means; rank = mean rank over (system, seed) problems (1 = best, ties "
        "share ranks).",
        "",
        "| tuner | mean rank | overall | " + " | ".join(systems) + " |",
        "|---|---|---|" + "---|" * len(systems),
    ]
    for name in order:
        t = tuners[name]
        cells = " | ".join(_cell(*t["cells"][s]) for s in systems)
        lines.append(f"| {name} | {t['rank']:.2f} | {t['overall']:.3f} | {cells} |")
    lines += _rank_statistics(summary)
    lines += _head_to_head_markdown(summary.get("rank_table", {}), order)
    lines += _compute_markdown(order, tuners)
    lines += _recorded_markdown(summary.get("recorded", {}))
    dims = sorted({d for t in tuners.values() for d in t["overhead"]})
    if not dims:  # overhead is measured on the synthetic systems only
        return "\n".join(lines) + "\n"
    lines += [
        "",
        "## Tuner overhead (own computation time, ask + tell, test time excluded)",
        "",
        "Mean ± std over the sessions on synthetic10 (d=10) and synthetic30 (d=30) at the "
        "run's budget n; wall time on a shared 2-core machine with other jobs, so noisy.",
        "",
        "| tuner | "
        + " | ".join(f"d={d} per session (s) | d={d} per suggestion (ms)" for d in dims)
        + " |",
        "|---|" + "---|---|" * len(dims),
    ]
    for name in order:
        parts = []
        for d in dims:
            got = tuners[name]["overhead"].get(d, [])
            sess, per = _mean_std([g[0] for g in got]), _mean_std([g[1] * 1e3 for g in got])
            parts.append("–" if not got else f"{sess[0]:.2f} ± {sess[1]:.2f}")
            parts.append("–" if not got else f"{per[0]:.1f}")
        lines.append(f"| {name} | " + " | ".join(parts) + " |")
    return "\n".join(lines) + "\n"


def _rank_statistics(summary: dict[str, Any]) -> list[str]:
    """The Friedman line and Nemenyi's critical difference under the rank table, and the
    critical-difference diagram when one was drawn (``cd_figure``, a path beside the report)."""
    test = summary.get("friedman")
    if test is None:
        return []
    cd = nemenyi_cd(test.k, test.blocks)
    lines = ["", test.text()]
    if math.isfinite(cd):
        lines.append(
            f"Nemenyi critical difference at α = 0.05: {cd:.2f} ranks (two tuners whose mean "
            "ranks differ by less cannot be told apart"
            + (
                f"; diagram: [{summary['cd_figure']}]({summary['cd_figure']})"
                if summary.get("cd_figure")
                else ""
            )
            + ")."
        )
    return lines


#: The tuner whose head-to-head counts a report gives: the package's default.
FOCUS_TUNER = "classytune"


def pairwise_counts(table: dict[str, list[float]], tuner: str, peer: str) -> tuple[int, int, int]:
    """Wins, losses and ties of ``tuner`` against ``peer`` over the blocks of a
    :func:`rank_table` (a lower rank in a block is a win)."""
    pairs = list(zip(table[tuner], table[peer], strict=True))
    wins = sum(mine < theirs for mine, theirs in pairs)
    losses = sum(mine > theirs for mine, theirs in pairs)
    return wins, losses, len(pairs) - wins - losses


def _head_to_head_markdown(table: dict[str, list[float]], order: Sequence[str]) -> list[str]:
    """The default tuner's wins, losses and ties against each peer over the ranked blocks,
    each with its two-sided sign-test p (ties left out: they favour neither)."""
    if FOCUS_TUNER not in table or not table[FOCUS_TUNER]:
        return []
    lines = [
        "",
        f"Head to head: {FOCUS_TUNER} against each tuner over the same ranked blocks; sign "
        "test = two-sided exact binomial p of the wins against the losses, ties left out.",
        "",
        "| against | wins | losses | ties | sign test p |",
        "|---|---|---|---|---|",
    ]
    for peer in order:
        if peer == FOCUS_TUNER:
            continue
        wins, losses, ties = pairwise_counts(table, FOCUS_TUNER, peer)
        lines.append(f"| {peer} | {wins} | {losses} | {ties} | {sign_test_text(wins, losses)} |")
    return lines


def _compute_markdown(order: Sequence[str], tuners: dict[str, Any]) -> list[str]:
    """Each tuner's computation time per session by problem dimension, as measured."""
    dims = sorted({d for t in tuners.values() for d in t.get("compute", {})})
    if not dims:
        return []
    lines = [
        "",
        "Tuner computation time per session (ask + tell, test time excluded) by problem "
        "dimension d: median [min – max] (sessions), as measured on a shared machine.",
        "",
        "| tuner | " + " | ".join(f"d={d}" for d in dims) + " |",
        "|---|" + "---|" * len(dims),
    ]
    for name in order:
        times = tuners[name].get("compute", {})
        lines.append(
            f"| {name} | " + " | ".join(compute_cell(times.get(d, [])) for d in dims) + " |"
        )
    return lines


def _recorded_markdown(checks: dict[str, dict[str, Any]]) -> list[str]:
    if not checks:
        return []
    lines = [
        "",
        "## Recorded-data problems: noise and default rules",
        "",
        f"A problem whose default-to-optimum gap is within {NOISE_FACTOR:g} × the table's "
        "measured noise (spread of repeated configurations) is not scored; 'noise not "
        "measured' (no configuration recorded twice) is scored but cannot be checked.",
        "",
        "| system | gap (score units) | noise sd | verdict |",
        "|---|---|---|---|",
    ]
    for system, c in checks.items():
        noise = "–" if c["noise"] is None else f"{c['noise']:.4g}"
        lines.append(f"| {system} | {c['gap']:.4g} | {noise} | {c['verdict']} |")
    for system, c in checks.items():
        if not c["by_rule"]:
            continue
        rules = list(c["by_rule"])
        lines += [
            "",
            f"Scores on {system} against the default of each rule (same sessions; the "
            "reference changes, not the tuners' start):",
            "",
            "| tuner | " + " | ".join(rules) + " |",
            "|---|" + "---|" * len(rules),
        ]
        for tuner in c["by_rule"][rules[0]]:
            cells = " | ".join(f"{c['by_rule'][r][tuner]:.3f}" for r in rules)
            lines.append(f"| {tuner} | {cells} |")
    return lines


def plot_scores(summary: dict[str, Any], path: Path, title: str) -> None:
    """Bar chart of overall mean normalised score per tuner (Agg backend, PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tuners = summary["tuners"]
    names = sorted(tuners, key=lambda n: -tuners[n]["overall"])
    means = [tuners[n]["overall"] for n in names]
    # Spread across systems: std of the per-system means.
    spread = [_mean_std([m for m, _ in tuners[n]["cells"].values()])[1] for n in names]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(names)), 4.0))
    colours = ["tab:red" if n.startswith("classytune") else "tab:blue" for n in names]
    ax.bar(names, means, yerr=spread, color=colours, capsize=3)
    ax.set_ylabel("mean normalised score (1 = best known)\nbars: std across systems", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
