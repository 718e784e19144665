"""Interim read of a running evaluation-suite run: the new default ``classytune`` against the
committed run's tuners, on the (problem, seed) pairs the new run has finished.

The evaluation run (``scripts/bench_eval_suite.sh``) is pinned to ``results/bench/eval/REVISION``
and recomputes every tuner when the revision is raised, which takes many hours. While it runs,
this compares the sessions it has finished for ``--tuner`` (cache entries that are not in the
committed cache, ``git show <ref>:results/bench/eval/cache.json``) with every tuner of the
committed cache (the earlier revision) on the same (problem, seed) pairs: mean normalised
score and head-to-head wins/losses. The other tuners' code did not change between the two
revisions, but the two sets of sessions come from two revisions of the core: an interim
read, not the report (which is ``python -m paper.bench`` on one revision).

    python -m paper.eval_interim --out results/bench/eval/interim_classytune.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paper.bench_score import normalised_score

ROOT = Path(__file__).resolve().parent.parent

CACHE = "results/bench/eval/cache.json"
#: The peers shown per system and per noise level.
PEERS = ["classytune", "smac", "gbrt", "rfr", "optuna_tpe", "gpbo_paper"]
Pair = tuple[str, int]  # problem (system with its noise), seed


def _problem(row: dict[str, Any]) -> str:
    return str(row["system"])  # the problem name, with its ~noise<percent> suffix


def _scores(rows: list[dict[str, Any]], budget: int) -> dict[str, dict[Pair, float]]:
    """tuner -> (problem, seed) -> normalised score, for finished sessions of ``budget``."""
    out: dict[str, dict[Pair, float]] = defaultdict(dict)
    for row in rows:
        if "error" in row or row.get("budget") != budget:
            continue
        score = normalised_score(row["best"], row["default"], row["optimum"])
        out[row["tuner"]][(_problem(row), row["seed"])] = score
    return out


def report(new: dict[Pair, float], old: dict[str, dict[Pair, float]], label: str) -> str:
    """Markdown: each tuner against the new run's ``label`` on the shared pairs."""
    lines = [
        f"| tuner | pairs | mean score (tuner) | mean score (new {label}) | "
        f"new {label} wins / losses |",
        "|---|---|---|---|---|",
    ]
    for tuner in sorted(old):
        shared = sorted(set(new) & set(old[tuner]))
        if not shared:
            continue
        theirs = [old[tuner][p] for p in shared]
        ours = [new[p] for p in shared]
        wins = sum(a > b + 1e-9 for a, b in zip(ours, theirs, strict=True))
        losses = sum(a < b - 1e-9 for a, b in zip(ours, theirs, strict=True))
        lines.append(
            f"| {tuner} | {len(shared)} | {statistics.fmean(theirs):.3f} | "
            f"{statistics.fmean(ours):.3f} | {wins} / {losses} |"
        )
    return "\n".join(lines) + "\n"


def _system(pair: Pair) -> str:
    return pair[0].split("~", 1)[0]


def _noise(pair: Pair) -> str:
    return pair[0].split("~", 1)[1] if "~" in pair[0] else "noise0"


def by_group(
    new: dict[Pair, float],
    old: dict[str, dict[Pair, float]],
    label: str,
    peers: list[str],
    group: Callable[[Pair], str] = _system,
) -> str:
    """Markdown: per group of pairs (a system, or a noise level), the mean over the pairs the
    new run finished of the new ``label`` and of each peer that has every one of them."""
    systems = sorted({group(pair) for pair in new})
    header = [f"new {label}", *peers]
    lines = [
        "| group | pairs | " + " | ".join(header) + " |",
        "|---|---|" + "---|" * len(header),
    ]
    for system in systems:
        pairs = [p for p in new if group(p) == system]
        cells = [f"{statistics.fmean(new[p] for p in pairs):.3f}"]
        for peer in peers:
            have = old.get(peer, {})
            complete = all(p in have for p in pairs)
            cells.append(f"{statistics.fmean(have[p] for p in pairs):.3f}" if complete else "-")
        lines.append(f"| {system} | {len(pairs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuner", default="classytune")
    parser.add_argument("--ref", default="9fb68d8", help="commit whose cache is the old run")
    parser.add_argument("--old-ref-cache", default="HEAD", help="git ref holding that cache")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    committed = json.loads(
        subprocess.run(
            ["git", "show", f"{args.old_ref_cache}:{CACHE}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    current = json.loads((ROOT / CACHE).read_text())
    fresh = [row for key, row in current.items() if key not in committed]
    new = _scores([r for r in fresh if r["tuner"] == args.tuner], args.budget)[args.tuner]
    old = _scores(list(committed.values()), args.budget)
    command = "python -m paper.eval_interim " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    text = (
        f"Command: `{command}`\n\nInterim: the new `{args.tuner}` (sessions of the running "
        f"evaluation run, not in the cache committed at {args.old_ref_cache}) against every "
        f"tuner of that committed cache (the run of {args.ref}), on the {len(new)} "
        "(problem, seed) pairs the new run has finished; score = normalised score (1 = the "
        "best known, 0 = the default; noisy problems scored on noise-free truth).\n\n"
        + report(new, old, args.tuner)
        + "\nPer system (its noise levels together; `-`: the peer lacks some of the pairs):\n\n"
        + by_group(new, old, args.tuner, PEERS)
        + "\nPer noise level (every system):\n\n"
        + by_group(new, old, args.tuner, PEERS, _noise)
    )
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
