"""Best-known optimum of every built-in surrogate, written to systems/dataset/optima.yaml.

Usage (from the repository root; ~1 min on 2 cores, fitted models are cached):
    python -m paper.surrogate_optima [--points 200000] [--seed 0]

For each surrogate: a Latin hypercube of --points configurations, then a local refinement of
the best ones (systems/dataset/optimum.py). The entry records the model key, so a later change
of data or model settings makes the committed value stale (known_optimum() then re-searches).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

import yaml

from systems.dataset.builtin import builtin_names, load_builtin
from systems.dataset.optimum import OPTIMA_FILE, load_optima, search_optimum


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.surrogate_optima", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--points", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("names", nargs="*", help="surrogates (default: all built-in)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    # Searching a subset updates those entries and keeps the others.
    entries: dict[str, Any] = load_optima() if args.names else {}
    for name in args.names or builtin_names():
        started = time.perf_counter()
        system, _ = load_builtin(name)
        assert system.model is not None, f"{name}: the built-ins use the surrogate backend"
        config, value = search_optimum(
            system.model, system.space, system.direction, n_points=args.points, seed=args.seed
        )
        recorded = system.dataset.values[~system.dataset.failed]
        best_recorded = float(recorded.max() if system.direction == "max" else recorded.min())
        default_value = system.predict(system.space.default())
        entries[name] = {
            "value": round(value, 6),
            "direction": system.direction,
            "metric": system.target,
            "model_key": system.model_key,
            "best_recorded": best_recorded,
            "default_predicted": round(default_value, 6),
            "search": {"points": args.points, "seed": args.seed},
            "config": {k: (v.item() if hasattr(v, "item") else v) for k, v in config.items()},
        }
        print(
            f"{name}: optimum {value:.2f} (best recorded {best_recorded:.2f}, default "
            f"predicted {default_value:.2f}) in {time.perf_counter() - started:.1f} s"
        )
    header = (
        "# Best-known optimum of each built-in surrogate (a search of the surrogate "
        "itself).\n# Produced by: python -m paper.surrogate_optima --points "
        f"{args.points} --seed {args.seed}"
        + (" " + " ".join(args.names) if args.names else "")
        + "\n"
    )
    OPTIMA_FILE.write_text(header + yaml.safe_dump(entries, sort_keys=True, width=99))
    print(f"wrote {OPTIMA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
