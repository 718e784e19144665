"""A tuner that proposes a given list of configurations, for measurement tools.

The measurement tools (:mod:`paper.measure_real`, :mod:`paper.measure_sqlite`) run fixed
configurations as an ordinary session through :func:`harness.api.run_objects`, so that they
get the session's setup, timeouts, crash handling and teardown instead of a loop of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.space import Config, Space
from harness.tuner import Tuner

__all__ = ["ListTuner"]


class ListTuner(Tuner):
    """Trial 0 is the default (as for every tuner), then ``configs`` in order.

    Each entry is a *partial* setting: knobs it leaves out keep their defaults. The session's
    budget is ``1 + len(configs)``; asked for more, the tuner repeats the default.
    """

    name = "listed"

    def __init__(
        self, space: Space, configs: Sequence[dict[str, Any]], seed: int = 0, budget: int = 0
    ) -> None:
        super().__init__(space, seed, budget or 1 + len(configs))
        default = space.default()
        self.configs = [space.validate({**default, **c}) for c in configs]
        self._next = 0
        self.preferred_batch = 1

    def _propose(self, n: int) -> list[Config]:
        picked = self.configs[self._next : self._next + n]
        self._next += len(picked)
        return picked + [self.space.default()] * (n - len(picked))
