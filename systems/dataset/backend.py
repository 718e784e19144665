"""Which backend answers a recorded-data system's tests, chosen by the data.

* ``recorded``: the nearest unused recorded configuration answers (:mod:`.recorded`), so every
  answer is a measurement and every reported configuration a recorded one.
* ``surrogate``: the random forest predicts (:mod:`.model`), so unrecorded configurations get
  a value between the recorded ones.

``backend: auto`` takes ``recorded`` when the table is **dense** — every knob discrete and the
distinct recorded configurations at least ``min_coverage`` of the space they span — or when a
held-out row's nearest recorded neighbour predicts it about as well as the forest does
(neighbour τ ≥ forest τ − ``margin``, and at least ``tau_warn``); else ``surrogate``. The
chosen backend's held-out fidelity is then checked: below ``tau_refuse`` the system is refused
(unless ``allow_poor_fidelity``), below ``r2_warn``/``tau_warn`` it warns. Every threshold is
a constructor option, i.e. a ``system.adapter.<key>=`` override.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.errors import ConfigError
from systems.dataset.model import Fidelity

__all__ = ["BACKENDS", "MEANING", "Choice", "Thresholds", "choose", "failure_mode", "verdict"]

BACKENDS = ("auto", "surrogate", "recorded")

#: What the numbers mean, for messages and the README.
MEANING = (
    "R² and Kendall τ compare held-out recorded values with the backend's answer for their "
    "configuration (4-fold cross-validation: the forest's prediction, or the value of the "
    "nearest recorded neighbour); τ near 0 means the answers do not rank configurations, "
    "1 that they rank them as measured"
)


@dataclass(frozen=True)
class Thresholds:
    """The backend choice and the fidelity verdict (see the module docstring)."""

    min_coverage: float = 0.25
    margin: float = 0.05
    r2_warn: float = 0.5
    tau_warn: float = 0.4
    tau_refuse: float = 0.1


@dataclass(frozen=True)
class Choice:
    """The chosen backend, why, and the fidelity of each backend that was checked."""

    backend: str
    reason: str
    coverage: float | None
    recorded: Fidelity
    surrogate: Fidelity | None

    @property
    def fidelity(self) -> Fidelity:
        chosen = self.recorded if self.backend == "recorded" else self.surrogate
        assert chosen is not None
        return chosen


def _coverage_text(coverage: float | None) -> str:
    if coverage is None:
        return "not every knob is discrete"
    return f"the rows cover {coverage:.0%} of the discrete space"


def choose(
    requested: str,
    coverage: float | None,
    recorded: Fidelity,
    surrogate: Callable[[], Fidelity],
    limits: Thresholds,
) -> Choice:
    """Pick the backend (``surrogate`` is called only if the forest is needed)."""
    if requested not in BACKENDS:
        raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}, got {requested!r}")
    dense = coverage is not None and coverage >= limits.min_coverage
    if requested == "recorded":
        return Choice("recorded", "backend=recorded was asked for", coverage, recorded, None)
    if requested == "auto" and dense:
        reason = f"dense table: {_coverage_text(coverage)} (min_coverage={limits.min_coverage})"
        return Choice("recorded", reason, coverage, recorded, None)
    forest = surrogate()
    if requested == "surrogate":
        return Choice("surrogate", "backend=surrogate was asked for", coverage, recorded, forest)
    bar = max(forest.tau - limits.margin, limits.tau_warn)
    if recorded.tau >= bar:
        reason = (
            f"nearest recorded neighbours predict held-out rows as well as the forest "
            f"(τ {recorded.tau:.2f} vs {forest.tau:.2f})"
        )
        return Choice("recorded", reason, coverage, recorded, forest)
    reason = (
        f"sparse table ({_coverage_text(coverage)}); the forest predicts held-out rows "
        f"better than their nearest recorded neighbours (τ {forest.tau:.2f} vs "
        f"{recorded.tau:.2f}, min_coverage={limits.min_coverage})"
    )
    return Choice("surrogate", reason, coverage, recorded, forest)


def verdict(choice: Choice, name: str, allow: bool, limits: Thresholds) -> list[str]:
    """Reasons to distrust the chosen backend (empty if fine); ConfigError if it is useless."""
    fid = choice.fidelity
    if fid.tau < limits.tau_refuse and not allow:
        raise ConfigError(
            f"surrogate {name} is useless: held-out Kendall τ={fid.tau:.2f} < "
            f"{limits.tau_refuse} with the {choice.backend} backend ({fid.summary()}); its "
            f"answers do not rank configurations. {MEANING}. Set allow_poor_fidelity=true to "
            "use it anyway, or lower tau_refuse"
        )
    if choice.backend == "recorded" and (choice.coverage or 0.0) >= 1.0:
        return []  # every configuration is recorded: every answer is exact
    return fid.problems(limits.r2_warn, limits.tau_warn)


def failure_mode(wanted: str, counts: dict[str, int]) -> str:
    """How a predicted or recorded failure shows: crashed (start fails), timed_out or failed
    (the workload does). ``auto``: the data's most common failure status, else crashed."""
    choices = ("crashed", "timed_out", "failed")
    wanted = str(wanted).lower()
    if wanted == "auto":
        common = max(counts, key=lambda k: counts[k]).lower() if counts else "crashed"
        return common if common in choices else "failed"
    if wanted not in choices:
        raise ConfigError(
            f"failure_status must be auto or one of {', '.join(choices)}, got {wanted!r}"
        )
    return wanted
