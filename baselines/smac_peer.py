"""SMAC3 peer behind the harness protocol (``smac``): the hyper-parameter-optimisation facade
(random-forest surrogate, log-EI, Sobol initial design) through SMAC's ask/tell interface.

Knobs map to ConfigSpace hyper-parameters in their own units: ``float``/``int`` as Float/Integer
(``log`` kept), ``enum``/``bool`` as Categorical. SMAC minimises, so the cost is ``-score`` (with
SMAC's plain run-history encoder: the facade's log-scaling one needs positive costs); a failed
test is told with SMAC's CRASHED status and the harness's imputed score as its cost. The default
configuration (trial 0, supplied by the harness) is told to SMAC like any other test. SMAC writes
its run history to a temporary directory, removed when the tuner is garbage-collected.

SMAC is an optional extra (``pip install smac``; it pulls ConfigSpace, dask, pynisher).
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from harness.records import Observation
from harness.space import Config, Knob, Space
from harness.tuner import Tuner

__all__ = ["SMACTuner"]

log = logging.getLogger(__name__)


def _hyperparameter(knob: Knob) -> Any:
    from ConfigSpace import Categorical, Float, Integer

    if knob.type == "float":
        return Float(
            knob.name,
            (float(knob.low), float(knob.high)),  # type: ignore[arg-type]
            default=float(knob.default),
            log=knob.log,
        )
    if knob.type == "int":
        return Integer(
            knob.name,
            (int(knob.low), int(knob.high)),  # type: ignore[arg-type]
            default=int(knob.default),
            log=knob.log,
        )
    values = [str(v) for v in (knob.values if knob.type == "enum" else (False, True))]
    return Categorical(knob.name, values, default=str(knob.default))


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
        # The facade's default encoder log-scales costs, which needs positive costs; -score is
        # negative, so the plain encoder is used.
        from smac.runhistory.encoder import RunHistoryEncoder

        self.smac = HyperparameterOptimizationFacade(
            scenario,
            target_function=_never_called,
            overwrite=True,
            logging_level=40,
            runhistory_encoder=RunHistoryEncoder(scenario),
        )
        self._pending: dict[int, Any] = {}  # trial number -> SMAC TrialInfo
        # SMAC needs a seed on every told trial; observations it did not ask for (the default)
        # wait here until its first ask shows which seed its intensifier uses.
        self._seed_of_trials: int | None = None
        self._unseeded: list[Observation] = []
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
            config[knob.name] = knob.check(
                str(value)
                if knob.type in ("enum", "bool")
                else value.item()
                if hasattr(value, "item")
                else value
            )
        return config

    def _propose(self, n: int) -> list[Config]:
        trial_number = max(self._asked, 1)
        configs = []
        for k in range(n):
            info = self.smac.ask()
            self._pending[trial_number + k] = info
            if self._seed_of_trials is None:
                self._seed_of_trials = info.seed
                for obs in self._unseeded:
                    self._observe(obs)
                self._unseeded.clear()
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
            values = {
                k.name: (
                    str(obs.config[k.name]) if k.type in ("enum", "bool") else obs.config[k.name]
                )
                for k in self.space.knobs
            }
            info = TrialInfo(
                config=Configuration(self.config_space, values=values), seed=self._seed_of_trials
            )
        if obs.ok:
            value = TrialValue(cost=-float(obs.score))  # type: ignore[arg-type]
        else:
            # The harness's imputed score (below the worst success) as a finite crash cost.
            where = [i for i, o in enumerate(self.history) if o.trial == obs.trial]
            penalty = float(self.scores()[where[-1]]) if where else 0.0
            value = TrialValue(cost=-penalty, status=StatusType.CRASHED)
        self.smac.tell(info, value, save=False)


def _never_called(config: Any, seed: int = 0) -> float:  # pragma: no cover - ask/tell only
    raise RuntimeError("SMAC's target function is not used: the harness runs the tests")
