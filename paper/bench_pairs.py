"""Head-to-head view of a benchmark cache: where one tuner wins and loses against its peers.

The bench's report ranks every tuner at once; a reader who wants to know *where* the default
tuner misses asks narrower questions, answered here from the same cache (no session is run):

* paired wins / losses / ties of one tuner against each peer, per (suite, noise) group, over the
  (system, seed) problems both finished, with the sign test's p (ties left out);
* the overall mean normalised score with each system left out in turn, which shows whether a
  lead rests on one system;
* each system's improvement over its default, mean [min-max] over seeds: the measure of the
  paper's Fig. 6 (within the budget), for judging its claims on a bench's problems.

    python -m paper.bench_pairs --cache results/bench/eval/cache.json \\
        --tuner classytune --against smac rfr gbrt lhs --budget 100

``--seeds N`` keeps seeds 0..N-1 only, so a panel run on fewer seeds than the cache holds for
some tuners compares like with like.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from paper.bench_score import noise_verdict, normalised_score
from paper.stats import sign_test_text

__all__ = ["gains_by_group", "head_to_head", "leave_one_out", "main", "scores_by_group"]

#: (tuner, system, seed) -> normalised score, per noise group name.
Scores = dict[str, dict[tuple[str, str, int], float]]


def _group(system: str) -> str:
    """The noise group of a bench system name (``surrogate_tomcat~noise5`` → ``noise5``)."""
    return system.split("~", 1)[1] if "~" in system else "no noise"


def _noise_level(group: str) -> float:
    """Sort key: "no noise" first, then noise5, noise15, ..."""
    digits = "".join(ch for ch in group if ch.isdigit())
    return float(digits) if digits else 0.0


def rows_of_one_run(cache: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One session per job (tuner, system, seed, budget): the one cached first. A cache being
    refilled after a code change holds a job under two code digests, and pairing both would
    compare code versions; the cache keeps insertion order, so the first is the complete
    earlier run until the refill replaces the file. The others are counted on stderr."""
    rows: dict[tuple[str, str, int, int], dict[str, Any]] = {}
    for row in cache.values():
        rows.setdefault((row["tuner"], row["system"], int(row["seed"]), int(row["budget"])), row)
    left = len(cache) - len(rows)
    if left:
        print(f"note: {left} later sessions of jobs cached twice left out", file=sys.stderr)
    return list(rows.values())


def _finished(
    rows: Iterable[dict[str, Any]], budget: int | None, seeds: int | None
) -> Iterable[dict[str, Any]]:
    """The rows of finished sessions of that budget (all budgets: None) and seeds < ``seeds``."""
    for row in rows:
        if "best" not in row:
            continue  # a failed session has "error" and no score
        if budget is not None and row["budget"] != budget:
            continue
        if seeds is not None and int(row["seed"]) >= seeds:
            continue
        yield row


def scores_by_group(
    rows: Iterable[dict[str, Any]], budget: int | None = None, seeds: int | None = None
) -> Scores:
    """Normalised scores of the finished sessions, split by noise group.

    Raises ValueError when two cached sessions are the same job (same tuner, system, seed and
    budget under different code digests): mixing them would compare code versions.
    """
    groups: Scores = defaultdict(dict)
    for row in _finished(rows, budget, seeds):
        key = (row["tuner"], row["system"], int(row["seed"]))
        group = groups[_group(row["system"])]
        if key in group:
            raise ValueError(f"two cached sessions for {key}: clear stale entries first")
        # as the bench's report: a problem whose gap to the optimum is the table's noise is
        # not scored (NaN pairs are skipped)
        within = noise_verdict(row) == "within noise"
        score = normalised_score(row["best"], row["default"], row["optimum"])
        group[key] = math.nan if within else score
    return dict(groups)


def gains_by_group(
    rows: Iterable[dict[str, Any]], budget: int | None = None, seeds: int | None = None
) -> Scores:
    """Improvement of the best test over the default, (best − default) / |default|, by group.

    Both are larger-is-better scores (a minimised metric's are negated), so +0.10 is 10 %
    more throughput or 10 % less time, as Fig. 6 reads. A session without any successful
    test gains 0; NaN when the default is unknown or 0.
    """
    groups: Scores = defaultdict(dict)
    for row in _finished(rows, budget, seeds):
        default, best = row["default"], row["best"]
        if default is None or not math.isfinite(default) or default == 0:
            gain = math.nan
        else:
            gain = 0.0 if best is None else (best - default) / abs(default)
        groups[_group(row["system"])][(row["tuner"], row["system"], int(row["seed"]))] = gain
    return dict(groups)


def _gain_cell(values: list[float]) -> str:
    """``+12.3% [10.1–14.0] (3)``: mean, range and count of the finite gains."""
    got = [v for v in values if math.isfinite(v)]
    if not got:
        return "–"
    if len(got) == 1:
        return f"{got[0]:+.1%} (1)"
    return f"{statistics.fmean(got):+.1%} [{min(got):+.1%} – {max(got):+.1%}] ({len(got)})"


def gains_table(gains: dict[tuple[str, str, int], float], names: Sequence[str]) -> list[str]:
    """Markdown rows: per system, each tuner's improvement over the default over its seeds."""
    lines = ["| system | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for system in sorted({s for (_, s, _) in gains}):
        cells = [
            _gain_cell([v for (t, s, _), v in gains.items() if t == name and s == system])
            for name in names
        ]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return lines


def head_to_head(
    scores: dict[tuple[str, str, int], float], tuner: str, peer: str
) -> tuple[int, int, int]:
    """Wins, losses and ties of ``tuner`` against ``peer`` over the problems both scored."""
    wins = losses = ties = 0
    for (name, system, seed), mine in scores.items():
        theirs = scores.get((peer, system, seed))
        if name != tuner or theirs is None or math.isnan(mine) or math.isnan(theirs):
            continue
        wins += mine > theirs
        losses += mine < theirs
        ties += mine == theirs
    return wins, losses, ties


def _overall(
    scores: dict[tuple[str, str, int], float], tuner: str, systems: Sequence[str]
) -> float:
    """The bench's overall score: the mean over systems of the mean over seeds."""
    means = []
    for system in systems:
        got = [v for (t, s, _), v in scores.items() if t == tuner and s == system]
        got = [v for v in got if not math.isnan(v)]
        if got:
            means.append(statistics.fmean(got))
    return statistics.fmean(means) if means else math.nan


def leave_one_out(
    scores: dict[tuple[str, str, int], float], tuners: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Per left-out system ("" = none left out): each tuner's overall score without it."""
    systems = sorted({s for (_, s, _) in scores})
    table: dict[str, dict[str, float]] = {}
    for left_out in ["", *systems]:
        kept = [s for s in systems if s != left_out]
        table[left_out] = {t: _overall(scores, t, kept) for t in tuners}
    return table


def report(scores: Scores, tuner: str, peers: Sequence[str], gains: Scores | None = None) -> str:
    """Markdown: head-to-head, leave-one-out and (with ``gains``) gains tables per noise group."""
    lines = [f"# {tuner} head to head", ""]
    for group in sorted(scores, key=_noise_level):
        got = scores[group]
        lines += [
            f"## {group}",
            "",
            "Sign test: two-sided exact binomial p of the wins against the losses; ties are "
            "left out (they favour neither tuner).",
            "",
            "| against | wins | losses | ties | sign test p |",
            "|---|---|---|---|---|",
        ]
        for peer in peers:
            wins, losses, ties = head_to_head(got, tuner, peer)
            lines.append(
                f"| {peer} | {wins} | {losses} | {ties} | {sign_test_text(wins, losses)} |"
            )
        names = [tuner, *peers]
        lines += [
            "",
            "Overall score (mean over systems of the mean over seeds) with one system left out:",
            "",
            "| left out | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names),
        ]
        for left_out, overall in leave_one_out(got, names).items():
            best = max(overall.values())
            cells = [
                f"**{overall[n]:.3f}**" if overall[n] == best else f"{overall[n]:.3f}"
                for n in names
            ]
            lines.append(f"| {left_out or '(none)'} | " + " | ".join(cells) + " |")
        if gains is not None and group in gains:
            lines += [
                "",
                "Improvement over the default within the budget (Fig. 6's measure), mean "
                "[min – max] (seeds):",
                "",
                *gains_table(gains[group], names),
            ]
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.bench_pairs", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--cache", type=Path, required=True, help="a paper.bench cache.json")
    parser.add_argument("--tuner", default="classytune")
    parser.add_argument("--against", nargs="+", required=True, help="the peers")
    parser.add_argument("--budget", type=int, default=None, help="only sessions of this budget")
    parser.add_argument("--seeds", type=int, default=None, help="only seeds 0..N-1")
    parser.add_argument(
        "--groups", nargs="+", metavar="GROUP", help='only these noise groups ("none", "noise5")'
    )
    parser.add_argument(
        "--gains", action="store_true", help="add each system's improvement over its default"
    )
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    args = parser.parse_args(argv)
    if not args.cache.exists():
        parser.error(f"{args.cache} does not exist: run python -m paper.bench first")
    rows = rows_of_one_run(json.loads(args.cache.read_text()))
    try:
        scores = scores_by_group(rows, args.budget, args.seeds)
    except ValueError as error:
        parser.error(str(error))
    if args.groups:
        wanted = {"no noise" if g == "none" else g for g in args.groups}
        if not wanted & set(scores):
            parser.error(f"no sessions in groups {sorted(wanted)}; the cache has {sorted(scores)}")
        scores = {g: v for g, v in scores.items() if g in wanted}
    gains = gains_by_group(rows, args.budget, args.seeds) if args.gains else None
    text = report(scores, args.tuner, args.against, gains)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
