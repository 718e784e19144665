"""A Python function as a system under tune, and the dict shorthand for its knobs.

:func:`harness.api.tune` tunes ``fn(config) -> float`` (or a dict of metrics) through the same
session loop as a server: the function is a :class:`FunctionSystem` (its "configuration" is
the config dict the function is called with) measured by a :class:`FunctionWorkload`. So a
function's session has what any session has: trial 0 is the default, failures become a status,
the store and MLflow when asked for, and the same summary, tables and plots.

The shorthand (:func:`space_from_shorthand`) is the one place a dict becomes a
:class:`~harness.space.Space`, with one-line errors naming the knob:

    {"x": (0.0, 1.0),          # float in [0, 1]      (any float bound makes a float knob)
     "n": (1, 64),             # int in [1, 64]       ((1, 64, "log") for a log scale)
     "mode": ["a", "b"],       # enum                 (the first value is the default)
     "on": [True, False]}      # bool

The default of a range is its middle (the geometric middle on a log scale); a
:class:`~harness.space.Knob` may be given instead of a shorthand for anything else.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

from harness.errors import ConfigError, HarnessError, WorkloadError
from harness.objectives.objective import Objective
from harness.session.options import SessionOptions
from harness.space import Config, Knob, Space
from harness.system import MetricSpec, System, Workload

__all__ = [
    "FunctionSystem",
    "FunctionWorkload",
    "function_objective",
    "function_options",
    "space_from_shorthand",
]

Direction = Literal["max", "min"]
#: A tuned function: a config dict in, a number (or named numbers) out.
TunedFunction = Callable[[dict[str, Any]], "float | Mapping[str, float]"]
_FORM = 'a range (low, high) or (low, high, "log"), a list of values, or a Knob'


def space_from_shorthand(space: Mapping[str, Any] | Space) -> Space:
    """The :class:`Space` a shorthand dict describes (a Space is returned as it is)."""
    if isinstance(space, Space):
        return space
    if not isinstance(space, Mapping) or not space:
        raise ConfigError(f"space: a dict of knob name -> {_FORM}, got {space!r}")
    knobs = tuple(_knob(str(name), form) for name, form in space.items())
    try:
        return Space(knobs)
    except HarnessError as exc:
        raise ConfigError(f"space: {exc}") from None


def _knob(name: str, form: Any) -> Knob:
    try:
        if isinstance(form, Knob):
            return form
        if isinstance(form, tuple):
            return _range_knob(name, form)
        if isinstance(form, list):
            return _choice_knob(name, form)
    except HarnessError as exc:
        raise ConfigError(f"space[{name!r}]: {exc}") from None
    raise ConfigError(f"space[{name!r}]: {form!r} is not {_FORM}")


def _range_knob(name: str, form: tuple[Any, ...]) -> Knob:
    log = len(form) == 3 and form[2] == "log"
    bounds = form[:2] if log else form
    if len(bounds) != 2 or not all(_is_number(b) for b in bounds):
        raise ConfigError(f"{form!r} is not {_FORM}")
    low, high = bounds
    if not low < high:
        raise ConfigError(f"range {form!r}: low must be below high")
    if all(isinstance(b, int) for b in bounds):
        middle = math.sqrt(low * high) if log and low > 0 else (low + high) / 2
        return Knob(name, "int", round(middle), low=low, high=high, log=log)
    low, high = float(low), float(high)
    middle = math.sqrt(low * high) if log and low > 0 else (low + high) / 2
    return Knob(name, "float", middle, low=low, high=high, log=log)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _choice_knob(name: str, values: list[Any]) -> Knob:
    if len(values) < 2 or len(set(values)) != len(values):
        raise ConfigError(f"{values!r}: a list of at least two different values")
    if all(isinstance(v, bool) for v in values):
        return Knob(name, "bool", values[0])
    if any(isinstance(v, bool) for v in values):
        raise ConfigError(f"{values!r}: booleans and other values cannot be mixed")
    return Knob(name, "enum", values[0], values=tuple(values))


class FunctionSystem(System):
    """A Python function's knobs; ``apply`` only keeps the config the workload calls it with
    (no process, no files: start and stop have nothing to do)."""

    kind = "synthetic"

    def __init__(self, space: Space, name: str) -> None:
        super().__init__(space)
        self.name = name
        self.config: Config = {}

    def apply(self, config: Config) -> None:
        self.config = dict(config)

    def start(self, timeout_s: float) -> None:
        """Nothing to start: the function runs in the workload."""

    def stop(self) -> None:
        """Nothing to stop."""


class FunctionWorkload(Workload):
    """Calls the function with the applied config; a number is the metric ``metric``, a dict
    gives every metric it names. An exception of the function is that test's failure (its
    message is kept with the test), never the session's end."""

    def __init__(self, fn: TunedFunction, metric: str, direction: Direction) -> None:
        self.fn = fn
        self.name = "function"
        self.function = getattr(fn, "__name__", "function")
        self.metrics = (MetricSpec(metric, direction),)

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        config = getattr(system, "config", {})
        try:
            answer = self.fn(dict(config))
        except Exception as exc:  # the user's function: its error fails this test only
            raise WorkloadError(f"{self.function} raised {type(exc).__name__}: {exc}") from exc
        return _metrics(answer, self.metrics[0].name, self.function)


def _metrics(answer: Any, metric: str, name: str) -> dict[str, float]:
    """The function's answer as metrics (a number, or a dict of numbers)."""
    if hasattr(answer, "__float__") and not isinstance(answer, str):  # numpy numbers too
        return {metric: float(answer)}
    if isinstance(answer, Mapping):
        try:
            return {str(key): float(value) for key, value in answer.items()}
        except (TypeError, ValueError):
            pass
    raise WorkloadError(f"{name} returned {answer!r}: return a number or a dict of numbers")


def function_objective(metric: str, direction: str) -> Objective:
    """The objective of a tuned function: ``metric``, to maximise (``max``) or minimise."""
    if direction not in ("max", "min"):
        raise ConfigError(f"direction must be 'max' or 'min', got {direction!r}")
    return Objective(metric, direction)  # type: ignore[arg-type]


def function_options(budget: int, seed: int, **options: Any) -> SessionOptions:
    """Session options for a function (checked there): no progress bar unless asked."""
    return SessionOptions(budget=budget, seed=seed, **{"progress": False, **options})
