"""Does a recorded-data surrogate rank configurations the way the real system does?

Takes the tests of a real session (an exported ``samples.csv`` with ``config.*`` and
``result.*`` columns, or the ``observations.jsonl`` of a session still running) and asks the
surrogate of the same system for its prediction of each tested configuration (knobs the
surrogate has but the session did not tune take the surrogate's default; values outside its
recorded ranges are clipped to them). It prints Kendall's τ and Spearman's ρ between predicted
and measured values over the successful tests, with a bootstrap interval for τ, and the spread
of both, so "the surrogate's τ≈0" can be told apart into "the recorded data has no signal" and
"the real system has none" (compare the measured spread with the re-measured defaults').

    python -m paper.surrogate_vs_real results/long/cassandra_ycsb_a_classytune_s0.csv \\
        surrogate_cassandra_ycsba throughput_ops
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from hydra.utils import instantiate
from scipy import stats

from harness import api
from harness.space import Config, Space

__all__ = ["compare", "read_tests", "surrogate_config"]


def surrogate_config(space: Space, row: pd.Series) -> Config:
    """The session's configuration in the surrogate's space (shared knobs, clipped)."""
    config = dict(space.default())
    for knob in space.knobs:
        column = f"config.{knob.name}"
        if column not in row or pd.isna(row[column]):
            continue
        value = row[column]
        if knob.type in ("int", "float"):
            value = min(max(float(value), float(knob.low or 0)), float(knob.high or 0))
            value = round(value) if knob.type == "int" else value
        config[knob.name] = value
    return config


def read_tests(path: Path) -> pd.DataFrame:
    """A session's tests as ``config.*`` / ``result.*`` columns: an exported ``samples.csv``,
    or the ``observations.jsonl`` of a session still running (``samples.csv`` comes at its
    end)."""
    if path.suffix != ".jsonl":
        return pd.read_csv(path)
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        obs = json.loads(line)
        rows.append(
            {
                "trial": obs["trial"],
                "status": obs["status"],
                **{f"config.{k}": v for k, v in obs["config"].items()},
                **{f"result.{k}": v for k, v in obs.get("metrics", {}).items()},
            }
        )
    return pd.DataFrame(rows)


def compare(samples: Path, surrogate: str, metric: str, boot: int = 2000) -> dict[str, float]:
    """τ, ρ and a 95 % bootstrap interval of τ between surrogate and real values."""
    table = read_tests(samples)
    ok = table[(table["status"] == "SUCCEEDED") & table[f"result.{metric}"].notna()]
    cfg = api.compose([f"system={surrogate}"])
    system = instantiate(cfg.system.adapter)
    shared = [k.name for k in system.space.knobs if f"config.{k.name}" in table.columns]
    predicted = np.array(
        [system.predict(surrogate_config(system.space, r)) for _, r in ok.iterrows()]
    )
    measured = ok[f"result.{metric}"].to_numpy(dtype=float)
    tau = float(stats.kendalltau(predicted, measured).statistic)
    rho = float(stats.spearmanr(predicted, measured).statistic)
    rng = np.random.default_rng(0)
    draws = []
    for _ in range(boot):
        pick = rng.integers(0, len(measured), len(measured))
        draws.append(stats.kendalltau(predicted[pick], measured[pick]).statistic)
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return {
        "tests": float(len(measured)),
        "shared_knobs": float(len(shared)),
        "tau": tau,
        "tau_low": float(low),
        "tau_high": float(high),
        "rho": rho,
        "predicted_spread": float(np.ptp(predicted)),
        "measured_spread": float(np.ptp(measured)),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "samples", type=Path, help="a real session's samples.csv or observations.jsonl"
    )
    parser.add_argument("surrogate", help="the surrogate system, e.g. surrogate_cassandra_ycsba")
    parser.add_argument("metric", help="the real session's metric, e.g. throughput_ops")
    args = parser.parse_args(argv)
    r = compare(args.samples, args.surrogate, args.metric)
    print(
        f"{args.samples.name} vs {args.surrogate}: {r['tests']:.0f} tests, "
        f"{r['shared_knobs']:.0f} shared knobs; Kendall tau {r['tau']:+.2f} "
        f"(95% bootstrap {r['tau_low']:+.2f} to {r['tau_high']:+.2f}), Spearman rho "
        f"{r['rho']:+.2f}; predicted spread {r['predicted_spread']:.0f}, measured spread "
        f"{r['measured_spread']:.0f} {args.metric}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
