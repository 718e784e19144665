"""Tuners that exist only to produce paper figures (used by recipes in ``paper/conf/experiment/``).

* :class:`SubspaceRecordingClassyTune` (Fig. 8): the paper's ClassyTune
  (:class:`classytune.ClassyTunePaper`) that also writes every search round's promising
  subspaces (``subspaces.json``) next to its usual artifacts; the stock
  artifacts keep only the mean box width per round.
* :class:`SweepTuner` (Fig. 1): one knob swept over its range, every other knob at its default.
* :class:`MappedExpertTuner` (Fig. 7 on a surrogate): the expert rules of a real system,
  converted into the units and ranges of a surrogate's knob space.

They are selected by ``_target_`` in a recipe (e.g. ``tuner._target_:
paper.figures.tuners.SweepTuner``) on top of a tuner group whose keys they accept.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from classytune import ClassyTunePaper
from harness.errors import ConfigError
from harness.space import Config, Space
from harness.tuner import Tuner

__all__ = [
    "SUBSPACES",
    "MappedExpertTuner",
    "SubspaceRecordingClassyTune",
    "SweepTuner",
    "sweep_values",
]

log = logging.getLogger(__name__)

SUBSPACES = "subspaces.json"
# MySQL's catalogue writes KB/MB/GB for binary multiples, as MySQL itself does
_UNIT_BYTES = {
    "B": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "KB": 1024,
    "MB": 1024**2,
    "GB": 1024**3,
}


class SubspaceRecordingClassyTune(ClassyTunePaper):
    """The paper's ClassyTune (Algorithm 1, any number of rounds) whose artifacts also hold the
    subspaces of every search round; it takes ``classytune_paper``'s options.

    ``subspaces.json``: ``{"knobs": [...], "rounds": [{"round", "pivot", "n_candidates",
    "n_winners", "fallback", "boxes": [{"centre", "size", "low", "high"}]}]}`` with every
    coordinate in the tuner's [0, 1] encoding (decode with the space in ``settings.json``).
    The last box of a round is the pivot's own when ``include_pivot`` is set.
    """

    def save_artifacts(self, directory: Path) -> None:
        super().save_artifacts(directory)
        rounds = []
        logged = [e for e in self.round_log if "n_candidates" in e]  # rounds that searched
        for entry, found in zip(logged, self.searches, strict=True):
            boxes = [
                {"centre": c.tolist(), "size": int(s), "low": lo.tolist(), "high": hi.tolist()}
                for c, s, lo, hi in zip(
                    found.centres, found.sizes, found.lows, found.highs, strict=True
                )
            ]
            rounds.append(
                {
                    "round": int(entry["round"]),
                    "pivot": found.pivot.tolist(),
                    "n_candidates": found.n_candidates,
                    "n_winners": found.n_winners,
                    "fallback": bool(found.fallback),
                    "boxes": boxes,
                }
            )
        payload = {"knobs": self.space.names, "rounds": rounds}
        (Path(directory) / SUBSPACES).write_text(json.dumps(payload, indent=1))


def sweep_values(space: Space, knob: str, points: int) -> list[Any]:
    """``points`` values of ``knob`` evenly spaced in the tuner's encoding (so log-spaced for a
    log-scale knob), ends included; every value of an enum or bool knob. Duplicates (small
    int ranges) are dropped."""
    if knob not in space:
        raise ConfigError(
            f"sweep knob {knob!r} is not in the space; knobs: {', '.join(space.names)}"
        )
    spec = space[knob]
    if spec.type == "bool":
        return [False, True]
    if spec.type == "enum":
        return list(spec.values)
    if points < 2:
        raise ConfigError(f"a sweep needs points >= 2, got {points}")
    return list(dict.fromkeys(spec.decode(u) for u in np.linspace(0.0, 1.0, points)))


class SweepTuner(Tuner):
    """Fig. 1: one knob over ``values`` (or ``points`` evenly spaced values), the others at
    their defaults. Trial 0 is the default as always; asked for more tests than values, the
    sweep starts again (a second pass measures the noise)."""

    name = "sweep"

    def __init__(
        self,
        space: Space,
        seed: int = 0,
        budget: int = 100,
        knob: str = "",
        points: int = 20,
        values: Sequence[Any] | None = None,
    ) -> None:
        super().__init__(space, seed, budget)
        self.knob = knob
        self.values = (
            [space[knob].check(v) for v in values] if values else sweep_values(space, knob, points)
        )
        self._next = 0
        self.preferred_batch = len(self.values)

    def params(self) -> dict[str, object]:
        return {**super().params(), "knob": self.knob, "values": json.dumps(self.values)}

    def _propose(self, n: int) -> list[Config]:
        configs = []
        for _ in range(n):
            value = self.values[self._next % len(self.values)]
            self._next += 1
            configs.append({**self.space.default(), self.knob: value})
        return configs


class MappedExpertTuner(Tuner):
    """Fig. 7 on a surrogate: the default, then the ``style`` expert setting of the real
    ``system`` (its rules in the module ``rules``, e.g. ``systems.mysql.expert``, computed on
    that system's own catalogue ``catalogue`` with this machine's memory and cores) moved into
    the surrogate's space: values converted between the units both catalogues state
    (B/KiB/MiB/GiB), then clamped into the surrogate's recorded ranges (:meth:`Space.fit`).
    Knobs the surrogate lacks are dropped; the log says which knobs were mapped and which were
    clamped."""

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
        catalogue: str = "",
        knob_set: str | None = None,
    ) -> None:
        super().__init__(space, seed, budget)
        from baselines.expert import expert_setting
        from harness.space import load_catalogue

        real = load_catalogue(catalogue, knob_set)
        self.system, self.style = system, style
        self.name = self.configured_name(style=style)
        setting = expert_setting(real, rules, style, system=system)
        self.mapped = self.map_setting(setting, real, space)
        self.setting = {**space.default(), **space.fit(self.mapped)}
        self.preferred_batch = min(2, budget)

    @classmethod
    def map_setting(
        cls, setting: Mapping[str, Any], source: Space, target: Space
    ) -> dict[str, Any]:
        """The knobs of ``setting`` that ``target`` has, converted to ``target``'s units."""
        mapped: dict[str, Any] = {}
        for name, value in setting.items():
            if name not in target or value == source[name].default:
                continue  # a rule that leaves a knob at the real default says nothing
            src, dst = source[name].unit or "", target[name].unit or ""
            if (
                src != dst
                and src in _UNIT_BYTES
                and dst in _UNIT_BYTES
                and isinstance(value, int | float)
                and not isinstance(value, bool)
            ):
                value = value * _UNIT_BYTES[src] / _UNIT_BYTES[dst]
            elif src != dst:
                log.warning(
                    "expert knob %s: units %r -> %r not convertible; skipped", name, src, dst
                )
                continue
            mapped[name] = value
        return mapped

    def params(self) -> dict[str, object]:
        return {
            **super().params(),
            "system": self.system,
            "style": self.style,
            "mapped": json.dumps(self.mapped, default=str),
            "setting": json.dumps(self.setting, default=str),
        }

    def _propose(self, n: int) -> list[Config]:
        return [dict(self.setting) for _ in range(n)]
