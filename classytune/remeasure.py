"""Re-measuring the best few settings before answering: noise handling.

Under measurement noise the best *single* measurement of a session is biased upwards: of a
hundred settings measured once, the one that drew the luckiest noise tends to win (the
winner's curse). ``classytune``'s ``remeasure`` option keeps the last tests of the budget for
measuring the best few settings again, one test at a time, and the harness judges a setting
measured more than once on the mean of its measurements
(:func:`harness.records.best_measured`), so a lucky draw that does not repeat drops out.

Each re-measurement goes to the least-measured of the ``top`` best settings by that mean (a
small racing procedure: a setting that regresses leaves the top and the next one is measured
instead). When the first repeated measurements agree within ``tolerance`` the system is taken
as deterministic and the remaining tests go back to the search: re-measuring costs one test
where it cannot help.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.records import Observation, config_key
from harness.space import Config

__all__ = ["Remeasure", "agreement", "remeasure_pick"]


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
