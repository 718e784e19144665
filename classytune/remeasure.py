"""Re-measuring the best few settings before answering: noise handling.

Under measurement noise the best *single* measurement of a session is biased upwards: of a
hundred settings measured once, the one that drew the luckiest noise tends to win (the
winner's curse). ``classytune``'s ``remeasure`` option keeps the last tests of the budget for
measuring the best few settings again, one test at a time, and the harness judges a setting
measured more than once on the mean of its measurements
(:func:`harness.records.best_measured`), so a lucky draw that does not repeat drops out.

:class:`Challenger` re-measures during the search instead: when a setting measured once has
become the best, it is measured again before the next round, so a lucky draw is found out
while there is budget left to look elsewhere (SMAC's intensification, in one test).

Each end-of-budget re-measurement goes to the least-measured of the ``top`` best settings by
that mean (a small racing procedure: a setting that regresses leaves the top and the next one
is measured instead). When the first repeated measurements agree within ``tolerance`` the
system is taken as deterministic and the remaining tests go back to the search: re-measuring
costs one test where it cannot help.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.records import Observation, config_key
from harness.space import Config

__all__ = ["Challenger", "Remeasure", "agreement", "remeasure_pick"]


def _groups(history: Sequence[Observation]) -> dict[str, list[Observation]]:
    groups: dict[str, list[Observation]] = {}
    for obs in history:
        groups.setdefault(config_key(obs.config), []).append(obs)
    return groups


def remeasure_pick(history: Sequence[Observation], top: int) -> Config | None:
    """The configuration to measure again next, or ``None`` with no success to re-measure.

    Candidates are the ``top`` best configurations ranked as
    :func:`~harness.records.best_measured` ranks them (never-failed first, then the mean score
    of their successful measurements); of those, the one measured fewest times, the better
    mean on a tie.
    """
    ranked: list[tuple[tuple[bool, float], int, Config]] = []
    for measured in _groups(history).values():
        ok = [float(o.score) for o in measured if o.ok]  # type: ignore[arg-type]
        if ok:
            rank = (len(ok) == len(measured), sum(ok) / len(ok))
            ranked.append((rank, len(measured), dict(measured[0].config)))
    if not ranked:
        return None
    ranked.sort(key=lambda item: item[0], reverse=True)
    leaders = ranked[: max(1, top)]
    fewest = min(count for _, count, _ in leaders)
    return next(config for _, count, config in leaders if count == fewest)


def agreement(history: Sequence[Observation]) -> float | None:
    """The largest relative spread among the repeated measurements of any configuration:
    ``(max - min) / max(|mean|, tiny)`` over its successful measurements; ``None`` while no
    configuration has two successful measurements."""
    spreads: list[float] = []
    for measured in _groups(history).values():
        ok = [float(o.score) for o in measured if o.ok]  # type: ignore[arg-type]
        if len(ok) >= 2:
            scale = max(abs(sum(ok) / len(ok)), 1e-12)
            spreads.append((max(ok) - min(ok)) / scale)
    return max(spreads) if spreads else None


class Remeasure:
    """The re-measure phase of one session: which setting to measure again, and when to stop.

    Parameters:
        tests: tests kept at the end of the budget for re-measuring (0: off).
        top: re-measure among this many best settings.
        tolerance: after the first re-measurement, a relative spread at or below this
            (:func:`agreement`) means a deterministic system: the phase ends there.
    """

    def __init__(self, tests: int, top: int, tolerance: float) -> None:
        self.tests, self.top, self.tolerance = int(tests), int(top), float(tolerance)
        self.active = self.tests > 0
        self.stopped_because = ""
        self._asked: Config | None = None
        self._count = 0

    def propose(self, history: Sequence[Observation]) -> Config | None:
        """The setting to measure again now, or ``None`` once the phase is over (the caller
        gives the rest of the budget to its search)."""
        if not self.active:
            return None
        if self._asked is not None:
            last = history[-1] if history else None
            if last is None or config_key(last.config) != config_key(self._asked):
                # A recorded-data system answers with its nearest *unused* row, for example.
                self._stop("the system ran another setting than the one asked again")
                return None
            spread = agreement(history)
            if self._count == 1 and spread is not None and spread <= self.tolerance:
                self._stop(f"two measurements agree within {spread:.3%}: deterministic")
                return None
        config = remeasure_pick(history, self.top)
        if config is None:
            self._stop("no successful test to measure again")
            return None
        self._asked, self._count = config, self._count + 1
        return config

    def _stop(self, why: str) -> None:
        self.active, self.stopped_because = False, why


class Challenger:
    """Measure a new best again before it stands (intensification during the search).

    At a round boundary, :meth:`propose` returns the best setting (by
    :func:`~harness.records.best_measured`'s ranking) when it was measured only once, else
    ``None``. It stops for good after ``limit`` re-measurements, when the first repeat agrees
    within ``tolerance`` (a deterministic system: repeats cannot help), or when the system
    ran another setting than the one asked again (a recorded-data backend).
    """

    def __init__(self, limit: int, tolerance: float) -> None:
        self.limit, self.tolerance = int(limit), float(tolerance)
        self.active = self.limit > 0
        self.stopped_because = ""
        self.count = 0
        self._asked: Config | None = None

    def propose(self, history: Sequence[Observation]) -> Config | None:
        """The setting to measure again now, or ``None`` (no test taken from the search)."""
        if not self.active or not self._last_was_honoured(history):
            return None
        if self.count >= self.limit:
            self._stop(f"{self.limit} re-measurements made")
            return None
        groups = _groups(history)
        best = remeasure_pick(history, 1)
        if best is None or len(groups[config_key(best)]) > 1:
            return None
        self._asked, self.count = best, self.count + 1
        return best

    def _last_was_honoured(self, history: Sequence[Observation]) -> bool:
        """After a re-measurement: was it run as asked, and is the system noisy?"""
        if self._asked is None:
            return True
        asked, self._asked = self._asked, None
        if not history or config_key(history[-1].config) != config_key(asked):
            self._stop("the system ran another setting than the one asked again")
            return False
        spread = agreement(history)
        if self.count == 1 and spread is not None and spread <= self.tolerance:
            self._stop(f"two measurements agree within {spread:.3%}: deterministic")
            return False
        return True

    def _stop(self, why: str) -> None:
        self.active, self.stopped_because = False, why
