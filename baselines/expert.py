"""Expert baselines (Fig. 7): one fixed setting a person would use, measured after the default.

A system names its rules in its own config, ``system.expert_rules: <module>`` (e.g.
``systems.mysql.expert``), and the tuner configs pass it on (``rules: ${system.expert_rules}``):
the rules are found by that dotted path, never by a module named after the system, so a user's
system brings its own rules without touching this file. The module holds two functions of the
knob space and the machine (:class:`harness.hosts.machine.Machine`):

* ``manual(space, machine) -> dict``: a setting from common published tuning guidance;
* ``script(space, machine) -> dict``: the rules of thumb of tuning scripts such as pgtune or
  mysql-tuning-primer (e.g. a cache of 25% of RAM).

Both return *partial* settings: knobs they do not mention keep their defaults, and knobs outside
the session's knob set are ignored. Numeric values outside a knob's range are clipped to it (with
a warning), since rules that scale with the machine can overshoot a range chosen elsewhere.

The tuner proposes the default (trial 0) and then the expert setting; asked for more it repeats
the expert setting, so the session runs it with a budget of 2 ("a one-test tuner"). Its answer
is the expert setting even when the default measured better: Fig. 7 asks what the setting a
person would deploy does, so a loss is the result, and the session's confirmation runs measure
it against the default like any other answer (the best measured would hide the loss behind
the default, as if the expert had said "change nothing").
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from harness.errors import ConfigError
from harness.hosts.machine import Machine
from harness.records import Observation, best_measured, config_key
from harness.space import Config, Space
from harness.tuner import Tuner

__all__ = ["ExpertTuner", "expert_setting", "load_rules"]

log = logging.getLogger(__name__)

STYLES = ("manual", "script")


def load_rules(rules: str | None, system: str = "") -> ModuleType:
    """Import the rules module ``rules`` names (a dotted path, e.g. ``systems.mysql.expert``)."""
    if not rules:
        raise ConfigError(
            f"system {system!r} has no expert rules: name a module with manual(space, machine) "
            "and script(space, machine) in its config (system.expert_rules: <module>), or "
            "pick another tuner"
        )
    try:
        return importlib.import_module(rules)
    except ModuleNotFoundError as exc:
        if exc.name is None or not f"{rules}.".startswith(f"{exc.name}."):
            raise  # the rules module exists but one of its own imports is missing
        raise ConfigError(
            f"system {system!r}: its expert rules {rules!r} (system.expert_rules) cannot be "
            "imported; no such module"
        ) from None


def _clip(space: Space, setting: Mapping[str, Any]) -> dict[str, Any]:
    """Drop knobs outside the space and clip numeric values into their ranges."""
    clipped: dict[str, Any] = {}
    for name, value in setting.items():
        if name not in space:
            log.info("expert rule for %r ignored: not in this knob set", name)
            continue
        knob = space[name]
        if (
            knob.type in ("int", "float")
            and isinstance(value, int | float)
            and not isinstance(value, bool)
        ):
            low, high = float(knob.low), float(knob.high)  # type: ignore[arg-type]
            if not low <= value <= high:
                inside = min(max(value, low), high)
                log.warning(
                    "expert value %s=%s is outside [%s, %s]; clipped to %s",
                    name,
                    value,
                    knob.low,
                    knob.high,
                    inside,
                )
                value = inside
            if knob.type == "int":
                value = round(value)
        clipped[name] = value
    return clipped


def expert_setting(
    space: Space,
    rules: str | None,
    style: str,
    machine: Machine | None = None,
    system: str = "",
) -> Config:
    """The full expert configuration: the default with the ``style`` rules of the module
    ``rules`` applied (``system`` names the system in errors)."""
    if style not in STYLES:
        raise ConfigError(f"expert style {style!r} is unknown; use one of {', '.join(STYLES)}")
    rule: Callable[[Space, Machine], Mapping[str, Any]] = getattr(load_rules(rules, system), style)
    partial = space.validate(_clip(space, rule(space, machine or Machine.detect())), partial=True)
    return {**space.default(), **partial}


class ExpertTuner(Tuner):
    """Trial 0 the default, then the ``style`` expert setting of the ``rules`` module (repeated);
    ``system`` only names the system in its parameters and errors."""

    name = "expert"

    @classmethod
    def configured_name(cls, **options: Any) -> str:
        return f"expert_{options.get('style', 'manual')}"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        budget: int = 2,
        system: str = "",
        rules: str | None = None,
        style: str = "manual",
        machine: Machine | None = None,
    ) -> None:
        super().__init__(space, seed, budget)
        self.system, self.rules, self.style = system, rules, style
        self.name = self.configured_name(style=style)
        # The session passes the SUT host's facts (harness.hosts.machine.sut_machine); alone: here.
        self.machine = machine or Machine.detect()
        self.setting = expert_setting(space, rules, style, self.machine, system)
        self.preferred_batch = min(2, budget)

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "system": self.system,
            "style": self.style,
            "setting": dict(self.setting),
            "machine_ram_mib": self.machine.ram_mib,
            "machine_cores": self.machine.cores,
        }

    def answer(self) -> Observation | None:
        """The expert setting's own tests (judged on their mean), whether or not they beat the
        default; ``best()`` when none succeeded (a setting that breaks the system is shown by
        its failed tests, not confirmed)."""
        key = config_key(self.setting)
        own = [o for o in self.history if o.trial > 0 and config_key(o.config) == key]
        return best_measured(own) or self.best()

    def _propose(self, n: int) -> list[Config]:
        return [dict(self.setting) for _ in range(n)]
