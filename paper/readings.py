"""Measure the readings of the paper's Algorithm 1 on the development problems.

Runs ``tuner=classytune_paper`` with every combination of ``bounds`` (per_dimension |
nearest_setting), ``elbow`` (knee | gap) and ``ties`` (skip | zero), plus the paper's
baselines (BestConfig, GP-BO) and random/LHS, on synthetic10, synthetic30 and any
``harness/conf/system/moot_*.yaml``, one in-memory session per (tuner, system, seed) through
:mod:`harness.api`. Every paper-mode session reports both answers: the best of all tests (what
the harness reports) and Algorithm 1's own output (the best resampled test, ``answer:
algorithm``), and whether the resampling found a setting better than the initial sample's best
(the paper's claim). Development seeds only: seeds 0-9 and the ``surrogate_*`` systems are the
evaluation suite and are refused.

    nice -n 19 python -m paper.readings \
        --out results/classytune/paper_readings.md
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from harness import api
from harness.conf import CONFIG_DIR

BASELINES = ("bestconfig", "gpbo", "random", "lhs")
READINGS = {
    "bounds": ("per_dimension", "nearest_setting"),
    "elbow": ("knee", "gap"),
    "ties": ("skip", "zero"),
}
SHORT = {"per_dimension": "perdim", "nearest_setting": "nearest"}


def variants() -> dict[str, dict[str, str]]:
    """Label → ``tuner.<key>`` overrides, every combination of the readings."""
    out = {}
    for values in itertools.product(*READINGS.values()):
        options = dict(zip(READINGS, values, strict=True))
        out["/".join(SHORT.get(v, v) for v in values)] = options
    return out


#: system config → (system, workload, objective), built once: a recorded-data system's
#: constructor spends ~20 s on its fidelity check, the same for every session on it.
_BUILT: dict[str, tuple[Any, Any, Any]] = {}


def session(tuner: str, system: str, seed: int, budget: int, options: dict[str, Any]) -> dict:
    """One in-memory session, composed from the shipped configs; scores are larger-is-better.

    The first session on a system goes through :func:`harness.api.prepare`; later ones reuse
    its system, workload and objective (deterministic, noise-free adapters) with a tuner built
    from the composed ``tuner`` node (:func:`harness.api.run_objects`, the same loop)."""
    from hydra.utils import instantiate

    built: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="readings-") as folder:
        cfg = api.compose(
            [
                f"tuner={tuner}",
                f"system={system}",
                f"seed={seed}",
                f"budget={budget}",
                "tracking=none",
                "session.progress=false",
                f"results_dir={folder}",
            ]
        )
        for key, value in options.items():
            OmegaConf.update(cfg.tuner, key, value, force_add=True)
        if system not in _BUILT:
            prepared = api.prepare(cfg, store="memory")
            _BUILT[system] = (prepared.system, prepared.workload, prepared.objective)
            result = api.run(prepared)
            built["tuner"] = prepared.tuner
        else:
            adapter, workload, objective = _BUILT[system]
            factory = instantiate(cfg.tuner)

            def keep(**kwargs: Any) -> Any:
                built["tuner"] = factory(**kwargs)
                return built["tuner"]

            result = api.run_objects(
                keep,
                adapter,
                workload,
                budget=budget,
                results_dir=folder,
                seed=seed,
                objective=objective,
            )
    if result.status != "FINISHED" or result.best is None:
        raise SystemExit(f"{tuner} {options} on {system} seed {seed}: {result.message}")
    tuner_obj: Any = built["tuner"]
    row: dict[str, Any] = {"best": result.best.score, "tuner_s": result.tuner_seconds}
    if hasattr(tuner_obj, "searches"):
        n_initial = tuner_obj.plan[0]
        ok = [o for o in result.observations if o.ok]
        initial = max((float(o.score or 0.0) for o in ok if o.trial < n_initial), default=None)
        resampled = [float(o.score or 0.0) for o in ok if o.trial >= n_initial]
        log = [e for e in tuner_obj.round_log if "k" in e]
        row.update(
            initial=initial,
            algorithm=max(resampled) if resampled else None,
            k=float(np.mean([e["k"] for e in log])),
            knee=float(np.mean([e.get("knee", e["k"]) for e in log])),
            winners=float(np.mean([e["n_winners"] for e in log])),
            box=float(np.mean([e.get("box_width", np.nan) for e in log])),
        )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.readings", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102, 103, 104])
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--systems", nargs="+", default=None)
    parser.add_argument("--baselines", nargs="*", default=list(BASELINES))
    # GP-BO costs 2-20 minutes of tuner time per session on this shared 2-core machine: it
    # runs where the paper's comparison is made, not on every development problem.
    parser.add_argument("--gpbo-systems", nargs="*", default=["synthetic10", "synthetic30"])
    parser.add_argument("--cache", type=Path, help="JSON file of finished sessions (reused)")
    parser.add_argument("--out", type=Path, help="also write the report (markdown) here")
    args = parser.parse_args(argv)
    moot = sorted(p.stem for p in (CONFIG_DIR / "system").glob("moot_*.yaml"))
    systems = args.systems or ["synthetic10", "synthetic30", *moot]
    if any(s < 10 for s in args.seeds) or any(s.startswith("surrogate_") for s in systems):
        raise SystemExit("seeds 0-9 and the surrogate_* systems are the evaluation suite")
    cache: dict[str, Any] = {}
    if args.cache and args.cache.exists():
        cache = json.loads(args.cache.read_text())
    jobs = [(label, "classytune_paper", options) for label, options in variants().items()]
    jobs += [(name, name, {}) for name in args.baselines]
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for system in systems:
        for label, tuner, options in jobs:
            if tuner == "gpbo" and system not in args.gpbo_systems:
                continue
            rows = []
            for seed in args.seeds:
                key = (
                    f"{tuner}|{json.dumps(options, sort_keys=True)}|{system}|{seed}|{args.budget}"
                )
                if key not in cache:
                    cache[key] = session(tuner, system, seed, args.budget, options)
                    if args.cache:
                        args.cache.write_text(json.dumps(cache))
                rows.append(cache[key])
            results.setdefault(system, {})[label] = rows
            print(f"  done {label} on {system}", file=sys.stderr, flush=True)
    report = render(results, args, argv if argv is not None else sys.argv[1:])
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report + "\n")
    return 0


def _mean(values: list[Any], fmt: str = "{:.4g}") -> str:
    kept = [v for v in values if v is not None and np.isfinite(v)]
    return fmt.format(statistics.mean(kept)) if kept else "-"


def _improved(row: dict[str, Any]) -> bool:
    """Did the resampling find a setting better than the initial sample's best?"""
    return row["algorithm"] is not None and row["algorithm"] > row["initial"]


def _count(flags: list[bool]) -> str:
    return f"{sum(flags)}/{len(flags)}"


def summary(results: dict[str, dict[str, list[dict[str, Any]]]]) -> list[str]:
    """Per paper-mode reading, over every (system, seed): mean rank among the readings (1 =
    best final result), how often the resampling improved, how often it beat BestConfig."""
    from scipy.stats import rankdata

    labels = list(variants())
    ranks: dict[str, list[float]] = {label: [] for label in labels}
    for by_label in results.values():
        n_seeds = len(by_label[labels[0]])
        for i in range(n_seeds):
            order = rankdata([-by_label[label][i]["best"] for label in labels])
            for label, rank in zip(labels, order, strict=True):
                ranks[label].append(float(rank))
    lines = [
        "## All problems",
        "",
        "| reading | mean rank (of 8) | >init | >bc | alg = best |",
        "|---|---|---|---|---|",
    ]
    for label in labels:
        rows = [
            (r, by["bestconfig"][i] if "bestconfig" in by else None)
            for by in results.values()
            for i, r in enumerate(by[label])
        ]
        improved = _count([_improved(r) for r, _ in rows])
        beats_bc = _count([b is not None and r["best"] > b["best"] for r, b in rows])
        same = _count([r["algorithm"] == r["best"] for r, _ in rows])
        lines.append(
            f"| {label} | {statistics.mean(ranks[label]):.2f} | {improved} | {beats_bc} | {same} |"
        )
    return [*lines, ""]


def render(
    results: dict[str, dict[str, list[dict[str, Any]]]], args: argparse.Namespace, argv: list[str]
) -> str:
    lines = [
        f"Command: `nice -n 19 python -m paper.readings {' '.join(argv)}`",
        "",
        f"`tuner=classytune_paper` (one round, |S| = 100·d, half the budget initial), budget "
        f"{args.budget}, seeds {', '.join(map(str, args.seeds))}; rows = bounds/elbow/ties. "
        "Scores are larger-is-better (a minimised metric is negated). best = final best of all "
        "tests (the harness's report), mean and std over the seeds; alg = Algorithm 1's output "
        "(best resampled test, `answer: algorithm`); >init = sessions whose resampling found a "
        "setting better than the initial sample's best; >bc / >gp = sessions whose best beats "
        "BestConfig / GP-BO on the same seed; alg = best = sessions where Algorithm 1's output "
        "is the best of all tests; k / knee = clusters used / the chord knee before the "
        "structure check; box = mean box width per dimension (unit cube); tuner s = tuner "
        "computation per session.",
        "",
        *summary(results),
    ]
    for system, by_label in results.items():
        lines += [
            f"## {system}",
            "",
            "| tuner | best mean | best std | alg mean | >init | >bc | >gp | winners | k | knee "
            "| box | tuner s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for label, rows in by_label.items():
            best = [r["best"] for r in rows]

            def beats(
                other: str,
                rows: list[dict[str, Any]] = rows,
                by_label: dict[str, list[dict[str, Any]]] = by_label,
            ) -> str:
                if other not in by_label:
                    return "-"
                pairs = zip(rows, by_label[other], strict=True)
                return _count([a["best"] > b["best"] for a, b in pairs])

            paper = "algorithm" in rows[0]
            cells = [
                label,
                _mean(best),
                f"{statistics.pstdev(best):.3g}",
                _mean([r.get("algorithm") for r in rows]) if paper else "-",
                _count([_improved(r) for r in rows]) if paper else "-",
                beats("bestconfig"),
                beats("gpbo"),
                _mean([r.get("winners") for r in rows], "{:.0f}") if paper else "-",
                _mean([r.get("k") for r in rows], "{:.1f}") if paper else "-",
                _mean([r.get("knee") for r in rows], "{:.1f}") if paper else "-",
                _mean([r.get("box") for r in rows], "{:.3f}") if paper else "-",
                _mean([r["tuner_s"] for r in rows], "{:.2f}"),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
