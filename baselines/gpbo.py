"""GP-based Bayesian optimisation with expected improvement, as the ClassyTune paper ran it:
the ``bayesian-optimization`` package (``bayes_opt``, v3 API), one suggestion per step.

Session shape: trial 0 is the default, the next ``n_initial`` tests are a Latin-hypercube design
of [0, 1]^d, and every later test is the argmax of expected improvement (``xi``) under a
Gaussian process (bayes_opt's Matern-5/2 kernel, normalised targets) fitted to every test so far.
The EI maximiser's effort is bayes_opt's default (``n_random`` = 10000 random points, then
``n_smart`` = 10 L-BFGS-B starts, or differential evolution when a parameter is discrete); it
dominates the step time and grows with the dimension and the number of tests.

How knob types are handled (each knob is one bayes_opt parameter):

* ``float`` knobs and log-scaled ``int`` knobs are continuous parameters on their encoded
  coordinate in [0, 1] (:meth:`harness.space.Knob.encode`), so a log-scaled knob is searched on
  a log scale. The suggestion is decoded (a log int is rounded), and the *snapped* coordinate of
  the value actually tested is registered, so the GP never sees a point that was not measured.
* linear ``int`` knobs are bayes_opt integer parameters on their own range: the kernel sees the
  rounded value and the acquisition optimiser searches integers (bayes_opt's typed-parameter
  support, after Garrido-Merchán and Hernández-Lobato 2020).
* ``enum`` and ``bool`` knobs are categorical parameters (one-hot inside the kernel).

With ``typed: false`` every knob is a continuous parameter on its encoded coordinate instead
(decode snaps ints/enums/bools to their cells, and the snapped coordinate is registered), which
lets bayes_opt use L-BFGS-B instead of differential evolution: faster, but the GP then models
a piecewise-constant function as a smooth one.

Failed tests are registered with the imputed score of :meth:`harness.tuner.Tuner.scores` (below
the worst success), so the GP learns to avoid crash regions. Because that imputed value moves as
results arrive, the optimiser is rebuilt from the whole history at every step; that costs one
GP fit per step, which bayes_opt does anyway.

When every parameter is continuous (``typed: false``, as ``gpbo_paper`` runs), the GP gets
bayes_opt's Matern kernel without bayes_opt's parameter-transform wrapper: that transform is
the identity for continuous parameters, so the GP computes the same numbers, but the wrapper
loops over the parameters in Python on every kernel call, and the L-BFGS-B EI maximiser calls
the kernel d + 1 times per numerical gradient. At d = 28 that loop was most of a budget-100
session's CPU time (py-spy); the suggestions are unchanged (tests/baselines/test_gpbo.py).

If the suggestion decodes to a configuration that was already measured (possible after
snapping), a uniform random point is tested instead so the budget is not spent on repeats; the
step log records it. Every step's fit + acquisition time goes to :attr:`GPBOTuner.step_log`
(the base class's ``compute_log`` has the per-ask/tell totals), for Fig. 10b.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.space import Config, Knob, Space
from harness.tuner import Tuner

__all__ = ["GPBOTuner", "StepRecord"]

log = logging.getLogger(__name__)

#: Widest ``int`` range searched as integers: bayes_opt draws integer parameters in int64, and
#: float64 holds every integer only up to 2**53 (recorded byte sizes reach 2**64).
EXACT_INT = 2**53


@dataclass(frozen=True)
class StepRecord:
    """Computation of one GP-BO suggestion: GP fit + EI maximisation seconds."""

    trial: int
    seconds: float
    n_train: int
    fallback: bool


def _ei_class() -> type:
    from bayes_opt import acquisition

    class ExpectedImprovementSized(acquisition.ExpectedImprovement):  # type: ignore[misc]
        """bayes_opt's EI with the acquisition optimiser's effort as parameters."""

        def __init__(self, xi: float, n_random: int, n_smart: int, random_state: Any) -> None:
            super().__init__(xi=xi, random_state=random_state)
            self.sizes = {"n_random": n_random, "n_smart": n_smart}

        def suggest(
            self,
            gp: Any,
            target_space: Any,
            n_random: int = 0,
            n_smart: int = 0,
            fit_gp: bool = True,
            random_state: Any = None,
        ) -> Any:
            return super().suggest(
                gp=gp,
                target_space=target_space,
                fit_gp=fit_gp,
                random_state=random_state,
                **self.sizes,
            )

    return ExpectedImprovementSized


def _make_ei(xi: float, n_random: int, n_smart: int, state: Any) -> Any:
    return _ei_class()(xi, n_random, n_smart, state)


def unwrap_identity_kernel(optimizer: Any) -> None:
    """Give ``optimizer``'s GP its kernel without bayes_opt's transform wrapper.

    Only for an optimiser whose parameters are all continuous: the wrapper's transform is then
    the identity (each continuous parameter's ``kernel_transform`` returns its column), so the
    GP's numbers are the same. bayes_opt builds its GP with ``Matern(nu=2.5)``; the same kernel
    is set here, unwrapped.
    """
    from sklearn.gaussian_process.kernels import Matern

    optimizer._gp.set_params(kernel=Matern(nu=2.5))


def _key(i: int) -> str:
    return f"x{i:03d}"


class GPBOTuner(Tuner):
    """Step-wise GP-BO with expected improvement (``bayesian-optimization`` package)."""

    name = "gpbo"

    @classmethod
    def configured_name(cls, **options: Any) -> str:
        # Continuous parameters only, as the paper's release had: conf/tuner/gpbo_paper.yaml.
        return "gpbo" if options.get("typed", True) else "gpbo_paper"

    proposes_batches = False  # one GP step at a time after the initial design

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        budget: int = 100,
        n_initial: int = 10,
        xi: float = 0.01,
        typed: bool = True,
        n_random: int = 10_000,
        n_smart: int = 10,
    ) -> None:
        super().__init__(space, seed, budget)
        try:
            import bayes_opt  # noqa: F401 - fail early with the fix
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise ImportError(
                "gpbo needs the bayesian-optimization package: pip install bayesian-optimization"
            ) from exc
        self.n_initial = max(int(n_initial), 1)
        self.xi = float(xi)
        self.typed = bool(typed)
        self.name = self.configured_name(typed=self.typed)
        self.n_random, self.n_smart = int(n_random), int(n_smart)
        self._design = self.lhs(min(self.n_initial, max(budget - 1, 1)))
        self._handed = 0
        self.step_log: list[StepRecord] = []
        self.preferred_batch = 1

    def params(self) -> dict[str, object]:
        import bayes_opt

        return {
            **super().params(),
            "n_initial": self.n_initial,
            "xi": self.xi,
            "typed": self.typed,
            "n_random": self.n_random,
            "n_smart": self.n_smart,
            "bayes_opt_version": bayes_opt.__version__,
        }

    # -- knob <-> bayes_opt parameter -----------------------------------------------------
    def _continuous(self, knob: Knob) -> bool:
        """Float knobs, log ints, and ints wider than :data:`EXACT_INT` (bayes_opt draws
        integer parameters in int64) are searched on their encoded coordinate."""
        if not self.typed or knob.type == "float":
            return True
        return knob.type == "int" and (
            knob.log or int(knob.high) - int(knob.low) > EXACT_INT  # type: ignore[arg-type]
        )

    def _pbounds(self) -> dict[str, Any]:
        from bayes_opt.parameter import CategoricalParameter

        bounds: dict[str, Any] = {}
        for i, knob in enumerate(self.space.knobs):
            if self._continuous(knob):
                bounds[_key(i)] = (0.0, 1.0)
            elif knob.type == "int":
                bounds[_key(i)] = (int(knob.low), int(knob.high), int)  # type: ignore[arg-type]
            else:
                values = knob.values if knob.type == "enum" else (False, True)
                bounds[_key(i)] = CategoricalParameter(_key(i), [str(v) for v in values])
        return bounds

    def _to_params(self, config: Config) -> dict[str, Any]:
        params: dict[str, Any] = {}
        for i, knob in enumerate(self.space.knobs):
            value = config[knob.name]
            params[_key(i)] = (
                knob.encode(value)
                if self._continuous(knob)
                else (int(value) if knob.type == "int" else str(value))
            )
        return params

    def _to_config(self, params: dict[str, Any]) -> Config:
        config: Config = {}
        for i, knob in enumerate(self.space.knobs):
            value = params[_key(i)]
            if self._continuous(knob):
                config[knob.name] = knob.decode(float(value))
            elif knob.type == "int":
                config[knob.name] = knob.check(round(float(value)))
            else:
                config[knob.name] = knob.check(str(value))
        return config

    # -- proposing ------------------------------------------------------------------------
    def _propose(self, n: int) -> list[Config] | np.ndarray:
        if self._handed < len(self._design):
            points = self._design[self._handed : self._handed + n]
            self._handed += len(points)
            return points
        return [self._suggest()]  # one step at a time: fewer than n is allowed

    def _suggest(self) -> Config:
        from bayes_opt import BayesianOptimization

        started = time.perf_counter()
        trial = self._asked + (1 if self._asked == 0 else 0)
        # A fresh optimiser per step, seeded by (seed, step): deterministic and independent of
        # how the session batched its asks; failures re-imputed against the current best/worst.
        state = np.random.RandomState(self.rng.integers(2**31 - 1))
        fallback = False
        with warnings.catch_warnings():
            # bayes_opt warns that typed parameters are "experimental", and sklearn about GP
            # hyper-parameter convergence; neither is actionable per step.
            warnings.simplefilter("ignore")
            optimizer = BayesianOptimization(
                f=None,
                pbounds=self._pbounds(),
                random_state=state,
                verbose=0,
                acquisition_function=_make_ei(self.xi, self.n_random, self.n_smart, state),
                allow_duplicate_points=True,
            )
            if all(self._continuous(knob) for knob in self.space.knobs):
                unwrap_identity_kernel(optimizer)  # same numbers, without a Python loop
            for obs, score in zip(self.history, self.scores(), strict=True):
                optimizer.register(params=self._to_params(obs.config), target=float(score))
            if not self.history:  # asked again before anything was told
                config = self.space.decode(self.rng.random(self.space.dim))
                fallback = True
            else:
                config = self._to_config(optimizer.suggest())
        if not fallback and config in [o.config for o in self.history]:
            log.debug("gpbo: suggestion repeats a measured setting; testing a random one")
            config = self.space.decode(self.rng.random(self.space.dim))
            fallback = True
        self.step_log.append(
            StepRecord(trial, time.perf_counter() - started, len(self.history), fallback)
        )
        return config
