"""Time one GP-BO suggestion with and without bayes_opt's kernel-transform wrapper.

``gpbo_paper`` (every knob continuous) gives its GP the plain Matern kernel, because bayes_opt's
wrapper only applies the identity there but loops over the parameters in Python on every kernel
call (baselines/gpbo.py). This prints the seconds of one suggestion step both ways, measured
alternately on the same history, their ratio, and whether the two suggestions are the same::

    python -m paper.gpbo_step                    # d = 30, n = 30 and 90 tests, 2 rounds
    python -m paper.gpbo_step --n 60 --rounds 3 --n-smart 10
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

import numpy as np

from baselines import gpbo
from harness.records import Observation, Status
from harness.space import Config
from systems.synthetic import SyntheticSystem


def _tuner_with_history(n: int, n_random: int, n_smart: int) -> gpbo.GPBOTuner:
    """A continuous GP-BO tuner on synthetic30 that has been told ``n`` random tests."""
    system = SyntheticSystem("30")
    space = system.space
    tuner = gpbo.GPBOTuner(
        space, seed=0, budget=n + 1, n_initial=n, typed=False, n_random=n_random, n_smart=n_smart
    )
    rng = np.random.default_rng(0)
    configs = space.decode_many(rng.random((n, space.dim)))
    tuner.tell(
        [
            Observation(i, c, Status.SUCCEEDED, system.noise_free_metrics(c)["throughput"])
            for i, c in enumerate(configs)
        ]
    )
    return tuner


def _step(n: int, n_random: int, n_smart: int, wrapped: bool) -> tuple[float, Config]:
    """Seconds of one suggestion step (GP fit + EI maximisation) and what it suggested."""
    tuner = _tuner_with_history(n, n_random, n_smart)
    real = gpbo.unwrap_identity_kernel
    if wrapped:
        gpbo.unwrap_identity_kernel = lambda optimizer: None  # type: ignore[assignment]
    try:
        started = time.process_time()
        config = tuner._suggest()
        return time.process_time() - started, config
    finally:
        gpbo.unwrap_identity_kernel = real  # type: ignore[assignment]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.gpbo_step", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--n", type=int, nargs="+", default=[30, 90], help="tests told first")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--n-random", type=int, default=10_000, help="bayes_opt's default")
    parser.add_argument("--n-smart", type=int, default=10, help="bayes_opt's default")
    args = parser.parse_args(argv)
    print("d = 30 (synthetic30), CPU seconds of one suggestion step; medians over rounds")
    print("| tests told | bayes_opt's wrapped kernel | plain kernel | ratio | same suggestion |")
    print("|---|---|---|---|---|")
    for n in args.n:
        times: dict[bool, list[float]] = {True: [], False: []}
        same = True
        for _ in range(args.rounds):
            suggested = {}
            for wrapped in (True, False):  # alternate, so drift hits both alike
                seconds, suggested[wrapped] = _step(n, args.n_random, args.n_smart, wrapped)
                times[wrapped].append(seconds)
            same = same and suggested[True] == suggested[False]
        slow, fast = statistics.median(times[True]), statistics.median(times[False])
        print(f"| {n} | {slow:.1f} s | {fast:.1f} s | {slow / fast:.1f}x | {same} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
