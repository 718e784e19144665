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
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "NOISE_FACTOR",
    "grouped_summaries",
    "mean_ranks",
    "noise_verdict",
    "normalised_score",
    "plot_scores",
    "rank_average",
    "report_markdown",
    "report_sections",
    "summarise",
]

Row = dict[str, Any]

#: A default-to-optimum gap within this many noise standard deviations is noise.
NOISE_FACTOR = 2.0


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
    """Ranks, 1 = largest value; tied values share the mean of their ranks; NaN ranks last."""
    keyed = [(-v if math.isfinite(v) else math.inf, i) for i, v in enumerate(values)]
    order = sorted(keyed)
    ranks = [0.0] * len(values)
    pos = 0
    while pos < len(order):
        end = pos
        while end + 1 < len(order) and order[end + 1][0] == order[pos][0]:
            end += 1
        shared = (pos + end) / 2 + 1  # mean of the 1-based ranks pos+1 .. end+1
        for k in range(pos, end + 1):
            ranks[order[k][1]] = shared
        pos = end + 1
    return ranks


def mean_ranks(rows: Iterable[Row]) -> dict[str, float]:
    """Mean rank per tuner over every (system, seed) problem, ranking by normalised score.

    Only problems that every tuner in ``rows`` ran enter the mean, so tuners compare on equal
    ground (a tuner that skipped a system does not gain or lose from it).
    """
    by_problem: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    tuners: set[str] = set()
    for r in rows:
        tuners.add(r["tuner"])
        by_problem[(r["system"], r["seed"])][r["tuner"]] = r["norm"]
    ranks: dict[str, list[float]] = defaultdict(list)
    for scores in by_problem.values():
        if set(scores) != tuners or not any(math.isfinite(v) for v in scores.values()):
            continue  # not every tuner ran it, or it is not scored (e.g. gap within noise)
        names = sorted(scores)
        for name, rank in zip(names, rank_average([scores[n] for n in names]), strict=True):
            ranks[name].append(rank)
    return {name: statistics.fmean(r) if r else math.nan for name, r in ranks.items()} | {
        name: math.nan for name in tuners if name not in ranks
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
    ranks = mean_ranks(rows)
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
        }
    return {"systems": systems, "tuners": per, "recorded": _recorded_checks(rows)}


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
        problems = planned[key]
        mine = [r for r in rows if (r["system"], r["seed"]) in problems]
        if not mine:
            continue
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
        groups.append((_group_label(*key), summary))
    return groups


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
