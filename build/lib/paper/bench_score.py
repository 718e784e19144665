"""Scoring, ranking and reporting for the tuner benchmark (:mod:`paper.bench`).

Pure functions over the per-session result dicts that :func:`paper.bench.run_session` returns
(keys ``tuner``, ``system``, ``seed``, ``default``, ``best``, ``optimum`` as larger-is-better
scores, ``tests``, ``compute_s``, ``dim``), so they are unit-testable without running a tuner.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "mean_ranks",
    "normalised_score",
    "plot_scores",
    "rank_average",
    "report_markdown",
    "summarise",
]

Row = dict[str, Any]


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
        if set(scores) != tuners:
            continue
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
    return {"systems": systems, "tuners": per}


def _cell(mean: float, std: float) -> str:
    return "–" if math.isnan(mean) else f"{mean:.3f} ± {std:.3f}"


def report_markdown(summary: dict[str, Any], command: str, notes: str = "") -> str:
    """The REPORT.md text: command, score table sorted by mean rank, overhead table."""
    systems, tuners = summary["systems"], summary["tuners"]
    order = sorted(
        tuners,
        key=lambda n: (
            math.inf if math.isnan(tuners[n]["rank"]) else tuners[n]["rank"],
            -tuners[n]["overall"],
        ),
    )
    lines = ["# Tuner benchmark", "", "Command:", "", "```", command, "```", ""]
    if notes:
        lines += [notes, ""]
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
    dims = sorted({d for t in tuners.values() for d in t["overhead"]})
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
