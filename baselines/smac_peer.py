"""SMAC3 peer behind the harness protocol (``smac``): the hyper-parameter-optimisation facade
(random-forest surrogate, log-EI, Sobol initial design) through SMAC's ask/tell interface.

Knobs map to ConfigSpace hyper-parameters in their own units: ``float`` as Float, ``int`` as
Integer (``log`` kept), ``enum``/``bool`` as Categorical. An ``int`` knob with a bound beyond
:data:`EXACT_INT` (2**53, where float64 stops holding every integer: recorded byte sizes reach
2**64 and more) maps to a Float (log if the knob is), because ConfigSpace's Integer keeps its
bounds in int64 and overflows (``OverflowError``/``TypeError``) past 2**63; its values are
rounded back to a whole number inside the knob's range (:func:`_whole`).

SMAC minimises, so a test's cost is ``-score``. The facade models and acquires in log space:
its forest (``log_y=True``) averages ``exp`` of its training targets, and its acquisition is
log-EI (``EI(log=True)``), which takes the predictions as the log of a cost. Both expect the
targets of the facade's log-scaling run-history encoder. This peer used to pass SMAC's plain
encoder (raw costs) instead: costs of ~60 (negative scores: a latency) lost all precision in
``exp`` and EI came out below 0 (SMAC raises "Expected Improvement is smaller than 0"), costs
above ~700 overflowed, and costs of -1000s (large positive scores: a throughput) gave
``exp`` = 0, a forest predicting ``log(0)`` and EI 0 or NaN everywhere (the search silently
degraded to random picks). The peer therefore keeps the facade's own pairing, log-EI with a
log-scaling encoder. That encoder min-max scales the costs onto (0, 1] before the log, so their
sign and magnitude do not matter and no shift is needed; it differs from SMAC's
``RunHistoryLogScaledEncoder`` only in the gap it keeps below the best cost, which is relative
to the costs' magnitude (:func:`_log_scaled_encoder`). Plain EI with the plain encoder (and a
forest without ``log_y``) would be consistent too, but would no longer be the facade SMAC ships.

A failed test is told with SMAC's CRASHED status and the harness's imputed score
(:meth:`harness.tuner.Tuner.scores`, below the worst success) as its cost; as later tests widen
the range of scores, the told costs of earlier failures are updated before each ask, so a
failure never ranks above a success. The default configuration (trial 0, supplied by the
harness) is told to SMAC like any other test. SMAC writes its run history to a temporary
directory, removed when the tuner is garbage-collected.

SMAC is asked under joblib's sequential backend (its 10-tree forest otherwise runs on threads,
which cost more than they save: same proposals, less tuner time). A session is reproducible
within a process; across processes only with ``PYTHONHASHSEED`` fixed, because SMAC's local
search collects its start points in a ``set`` of configurations, ordered by string hashes.

SMAC is an optional extra (``pip install smac``; it pulls ConfigSpace, dask, pynisher).
"""

from __future__ import annotations

import logging
import math
import tempfile
from pathlib import Path
from typing import Any

import joblib

from harness.records import Observation
from harness.space import Config, Knob, Space, Value
from harness.tuner import Tuner

__all__ = ["EXACT_INT", "SMACTuner"]

log = logging.getLogger(__name__)

#: Largest bound an ``int`` knob may have to become a ConfigSpace Integer: every integer up to
#: 2**53 is a float64 (ConfigSpace computes in float64 vectors), and a range within it cannot
#: overflow ConfigSpace's int64 arithmetic.
EXACT_INT = 2**53


def _as_float(knob: Knob) -> bool:
    """Whether ``knob`` maps to a Float hyper-parameter (floats, and ints too wide for Integer)."""
    if knob.type == "float":
        return True
    if knob.type != "int":
        return False
    return max(abs(float(knob.low)), abs(float(knob.high))) > EXACT_INT  # type: ignore[arg-type]


def _hyperparameter(knob: Knob) -> Any:
    from ConfigSpace import Categorical, Float, Integer

    if _as_float(knob):
        return Float(
            knob.name,
            (float(knob.low), float(knob.high)),  # type: ignore[arg-type]
            default=float(knob.default),
            log=knob.log,
        )
    if knob.type == "int":
        return Integer(
            knob.name,
            # A knob's int bounds may be fractional (inferred from data); Integer takes ints.
            (math.ceil(knob.low), math.floor(knob.high)),  # type: ignore[arg-type]
            default=int(knob.default),
            log=knob.log,
        )
    values = [str(v) for v in (knob.values if knob.type == "enum" else (False, True))]
    return Categorical(knob.name, values, default=str(knob.default))


def _whole(knob: Knob, value: float) -> int:
    """A Float hyper-parameter's ``value`` as a whole number the int ``knob`` accepts.

    :meth:`Knob.check` compares the value as a float64 with the knob's bounds, so the integer
    returned must survive that round trip: ``round`` of a float64 does (above 2**52 every
    float64 is whole), and a bound that float64 cannot hold is approached from inside.
    """
    low, high = knob.low, knob.high
    number = min(max(round(value), math.ceil(low)), math.floor(high))  # type: ignore[arg-type]
    as_float = float(number)
    if as_float > high:  # type: ignore[operator]
        as_float = math.nextafter(as_float, -math.inf)
    elif as_float < low:  # type: ignore[operator]
        as_float = math.nextafter(as_float, math.inf)
    return int(as_float)


def _log_scaled_encoder(scenario: Any) -> Any:
    """SMAC's log-scaling run-history encoder with a gap below the best cost that never
    vanishes.

    SMAC maps a cost ``c`` to ``log((c - floor) / (max - floor))`` with ``floor`` as far below
    the minimum as the 5th percentile is above it, minus 1e-10. When the best costs tie (a
    plateau of a recorded-data system) only the 1e-10 is left, which rounds away once costs
    exceed ~1e6 in magnitude: the best cost then becomes ``log(0) = -inf`` and the forest's
    predictions NaN. Here the 1e-10 is relative to the costs' magnitude (the same below 1).
    """
    import numpy as np
    from smac.constants import VERY_SMALL_NUMBER
    from smac.runhistory.encoder import RunHistoryLogScaledEncoder

    class LogScaledEncoder(RunHistoryLogScaledEncoder):  # type: ignore[misc]
        def transform_response_values(self, values: np.ndarray) -> np.ndarray:
            low, high = self._min_y, self._max_y
            margin = VERY_SMALL_NUMBER * np.maximum(1.0, np.maximum(np.abs(low), np.abs(high)))
            floor = low - (self._percentile - low) - margin
            return np.log((values - floor) / (high - floor))  # type: ignore[no-any-return]

    return LogScaledEncoder(scenario)


class SMACTuner(Tuner):
    """SMAC3's HPO facade, one configuration per step, seeded."""

    name = "smac"

    def __init__(self, space: Space, seed: int = 0, budget: int = 100) -> None:
        super().__init__(space, seed, budget)
        try:
            from ConfigSpace import ConfigurationSpace
            from smac import HyperparameterOptimizationFacade, Scenario
        except ImportError as exc:
            raise ImportError("the smac tuner needs SMAC3: pip install smac") from exc
        self.config_space = ConfigurationSpace(seed=self.seed)
        self.config_space.add([_hyperparameter(k) for k in space.knobs])
        self._workdir = tempfile.TemporaryDirectory(prefix="smac-")
        scenario = Scenario(
            self.config_space,
            deterministic=True,
            n_trials=max(budget, 2),
            seed=self.seed,
            output_directory=Path(self._workdir.name),
        )
        self.smac = HyperparameterOptimizationFacade(
            scenario,
            target_function=_never_called,
            overwrite=True,
            logging_level=40,
            runhistory_encoder=_log_scaled_encoder(scenario),
        )
        self._pending: dict[int, Any] = {}  # trial number -> SMAC TrialInfo
        # SMAC needs a seed on every told trial; observations it did not ask for (the default)
        # wait here until its first ask shows which seed its intensifier uses.
        self._seed_of_trials: int | None = None
        self._unseeded: list[Observation] = []
        # Failed tests told to SMAC: trial number -> (TrialInfo, cost told), re-costed by
        # _update_failures as the imputed score moves.
        self._failed: dict[int, tuple[Any, float]] = {}
        self.preferred_batch = 1

    def params(self) -> dict[str, object]:
        import smac

        return {
            **super().params(),
            "facade": "HyperparameterOptimizationFacade",
            "smac_version": smac.version,
        }

    def _to_config(self, values: dict[str, Any]) -> Config:
        config: Config = {}
        for knob in self.space.knobs:
            value = values[knob.name]
            value = value.item() if hasattr(value, "item") else value  # numpy scalar -> Python
            if knob.type in ("enum", "bool"):
                value = str(value)
            elif knob.type == "int" and _as_float(knob):
                value = _whole(knob, value)
            config[knob.name] = knob.check(value)
        return config

    def _to_values(self, config: Config) -> dict[str, Any]:
        """A harness configuration as ConfigSpace values (inverse of :meth:`_to_config`)."""
        values: dict[str, Value] = {}
        for knob in self.space.knobs:
            value = config[knob.name]
            if knob.type in ("enum", "bool"):
                value = str(value)
            elif _as_float(knob):
                value = float(value)
            values[knob.name] = value
        return values

    def _ask(self) -> Any:
        """SMAC's next trial, or None once it has proposed every setting of the space."""
        from smac.main.exceptions import ConfigurationSpaceExhaustedException

        try:
            # SMAC's forest fits and predicts its 10 trees on all cores through joblib
            # (threads); for so few trees the threads cost more than they save (and
            # oversubscribe parallel sweeps), and the trees do not depend on it.
            with joblib.parallel_config(backend="sequential"):
                return self.smac.ask()
        except (ConfigurationSpaceExhaustedException, StopIteration):
            # after the first, SMAC's trial generator has ended: StopIteration from then on
            return None

    def _propose(self, n: int) -> list[Config]:
        self._update_failures()
        trial_number = max(self._asked, 1)
        configs = []
        for k in range(n):
            info = self._ask()
            if info is None:  # SMAC has proposed every setting of a tiny space: test again
                configs.append(self.space.decode(self.rng.random(self.space.dim)))
                continue
            self._pending[trial_number + k] = info
            if self._seed_of_trials is None:
                self._seed_of_trials = info.seed
                for obs in self._unseeded:
                    self._observe(obs)
                self._unseeded.clear()
                self._update_failures()
            configs.append(self._to_config(dict(info.config)))
        return configs

    def _observe(self, obs: Observation) -> None:
        from ConfigSpace import Configuration
        from smac.runhistory.dataclasses import TrialInfo, TrialValue
        from smac.runhistory.enumerations import StatusType

        info = self._pending.pop(obs.trial, None)
        if info is None or self._to_config(dict(info.config)) != obs.config:
            if self._seed_of_trials is None:
                self._unseeded.append(obs)
                return
            info = TrialInfo(
                config=Configuration(self.config_space, values=self._to_values(obs.config)),
                seed=self._seed_of_trials,
            )
        if obs.ok:
            value = TrialValue(cost=-float(obs.score))  # type: ignore[arg-type]
        else:
            cost = self._failure_cost(obs.trial)
            self._failed[obs.trial] = (info, cost)
            value = TrialValue(cost=cost, status=StatusType.CRASHED)
        self.smac.tell(info, value, save=False)

    def _failure_costs(self) -> dict[int, float]:
        """The harness's imputed scores of the failed tests (as of now), as SMAC costs."""
        scores = self.scores()
        return {o.trial: -float(s) for o, s in zip(self.history, scores, strict=True) if not o.ok}

    def _failure_cost(self, trial: int) -> float:
        return self._failure_costs().get(trial, 0.0)

    def _update_failures(self) -> None:
        """Re-tell failures whose imputed cost moved: the imputation sits below the worst
        success *so far*, so a cost frozen when the failure was told would, after worse
        successes, rank the failed configuration above them."""
        from smac.runhistory.enumerations import StatusType

        if not self._failed:
            return
        costs = self._failure_costs()
        for trial, (info, told) in self._failed.items():
            cost = costs.get(trial, told)
            if cost != told:
                # force_update replaces the trial's value (SMAC's own tell uses it to overwrite
                # a RUNNING entry) and recomputes the configuration's cost, which the next
                # model fit reads. SMAC's incumbent is not revisited (its intensifier updates
                # it on tell only); the harness's best() never depends on it.
                self.smac.runhistory.add(
                    config=info.config,
                    cost=cost,
                    status=StatusType.CRASHED,
                    seed=info.seed,
                    instance=info.instance,
                    budget=info.budget,
                    force_update=True,
                )
                self._failed[trial] = (info, cost)


def _never_called(config: Any, seed: int = 0) -> float:  # pragma: no cover - ask/tell only
    raise RuntimeError("SMAC's target function is not used: the harness runs the tests")
