"""Optuna peers behind the harness protocol: TPE (``optuna_tpe``) and GP (``optuna_gp``) samplers.

These are what a user would likely reach for instead of a paper baseline. Optuna searches the
knobs in their own units with its own distributions: ``float``/``int`` knobs as
Float/IntDistribution (``log=True`` for log-scaled knobs), ``enum`` and ``bool`` knobs as
CategoricalDistribution. Every observation is told to the study: the default and any configuration
Optuna did not ask for are added as finished trials; failed tests are told as FAIL (Optuna's own
convention: samplers ignore them) rather than with an imputed score.

Optuna is an optional extra (``pip install .[peers]``); ``GPSampler`` also needs PyTorch.
"""

from __future__ import annotations

import logging
from typing import Any

from harness.records import Observation
from harness.space import Config, Knob, Space
from harness.tuner import Tuner

__all__ = ["OptunaTuner"]

log = logging.getLogger(__name__)

SAMPLERS = ("tpe", "gp")


def _import_optuna() -> Any:
    try:
        import optuna
    except ImportError as exc:
        raise ImportError("the optuna_* tuners need Optuna: pip install .[peers]") from exc
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _distribution(optuna: Any, knob: Knob) -> Any:
    dists = optuna.distributions
    if knob.type == "float":
        return dists.FloatDistribution(float(knob.low), float(knob.high), log=knob.log)  # type: ignore[arg-type]
    if knob.type == "int":
        return dists.IntDistribution(int(knob.low), int(knob.high), log=knob.log)  # type: ignore[arg-type]
    values = list(knob.values) if knob.type == "enum" else [False, True]
    return dists.CategoricalDistribution(values)


class OptunaTuner(Tuner):
    """Optuna ask/tell with a seeded TPE or GP sampler, one configuration per step."""

    name = "optuna"

    @classmethod
    def configured_name(cls, **options: Any) -> str:
        return f"optuna_{options.get('sampler', 'tpe')}"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        budget: int = 100,
        sampler: str = "tpe",
        n_startup_trials: int = 10,
    ) -> None:
        super().__init__(space, seed, budget)
        optuna = _import_optuna()
        if sampler not in SAMPLERS:
            raise ValueError(f"unknown Optuna sampler {sampler!r}; choose tpe or gp")
        if sampler == "gp":
            try:
                import torch  # noqa: F401 - GPSampler imports it lazily, fail early instead
            except ImportError as exc:
                raise ImportError(
                    "optuna_gp (Optuna's GPSampler) needs PyTorch: pip install torch"
                ) from exc
            chosen = optuna.samplers.GPSampler(seed=self.seed, n_startup_trials=n_startup_trials)
        else:
            chosen = optuna.samplers.TPESampler(seed=self.seed, n_startup_trials=n_startup_trials)
        self.sampler, self.n_startup_trials = sampler, int(n_startup_trials)
        self.name = self.configured_name(sampler=sampler)
        self._optuna = optuna
        self.study = optuna.create_study(direction="maximize", sampler=chosen)
        self._dists = {k.name: _distribution(optuna, k) for k in space.knobs}
        self._pending: dict[int, Any] = {}  # trial number -> optuna trial
        self.preferred_batch = 1

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "sampler": self.sampler,
            "n_startup_trials": self.n_startup_trials,
            "optuna_version": self._optuna.__version__,
        }

    def _propose(self, n: int) -> list[Config]:
        trial_number = max(self._asked, 1)  # trial 0 is the default, put first by the base
        configs = []
        for k in range(n):
            trial = self.study.ask(self._dists)
            self._pending[trial_number + k] = trial
            configs.append({name: trial.params[name] for name in self.space.names})
        return configs

    def _observe(self, obs: Observation) -> None:
        state = self._optuna.trial.TrialState
        trial = self._pending.pop(obs.trial, None)
        if trial is not None and trial.params == {n: obs.config[n] for n in trial.params}:
            if obs.ok:
                self.study.tell(trial, float(obs.score))  # type: ignore[arg-type]
            else:
                self.study.tell(trial, state=state.FAIL)
            return
        if trial is not None:  # the session measured something else under that number
            self.study.tell(trial, state=state.FAIL)
        self.study.add_trial(
            self._optuna.trial.create_trial(
                params={name: obs.config[name] for name in self.space.names},
                distributions=self._dists,
                value=float(obs.score) if obs.ok else None,  # type: ignore[arg-type]
                state=state.COMPLETE if obs.ok else state.FAIL,
            )
        )
