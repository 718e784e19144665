"""What a session reports to: the :class:`Tracker` interface, and :class:`NullTracker`.

:class:`harness.tracking.mlflow_tracker.MlflowTracker` is the real one; a session with
``tracking=none`` (and every in-memory session of :func:`harness.api.run_objects`) gets the null
tracker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.records import Observation

__all__ = ["NullTracker", "Tracker"]


class Tracker:
    """Interface of the session's tracker; the base class tracks nothing.

    Call order: :meth:`start_session` or :meth:`resume_session` once, then :meth:`log_test`
    and :meth:`log_step` per test, then :meth:`finish` (which also closes). None of them
    raises once the session run exists: records that cannot be written wait and are retried.
    """

    uri = ""
    run_id: str | None = None

    def start_session(
        self,
        experiment: str,
        run_name: str,
        params: Mapping[str, Any],
        tags: Mapping[str, str],
        artifact_root: Path,
        knobs: Sequence[str] = (),
    ) -> str | None:
        """Create the session run; ``knobs`` are the tuned knobs (the UI's columns)."""
        return None

    def resume_session(self, run_id: str) -> set[int]:
        """Reopen a session run; return the trials that already have a complete child run."""
        return set()

    def log_test(self, obs: Observation, objective_value: float | None) -> None: ...

    def log_step(self, step: int, metrics: Mapping[str, float]) -> None:
        """Log metrics by step; (metric, step) pairs the run already has are dropped."""

    def finish(
        self,
        status: str,
        metrics: Mapping[str, float],
        params: Mapping[str, Any],
        artifacts: Mapping[str, Path],
        best: Observation | None = None,
        best_value: float | None = None,
    ) -> None:
        """End the session run; ``params`` is the best configuration as ``config.<knob>``,
        ``best`` the best test (its run is tagged) and ``best_value`` its raw objective."""

    def close(self) -> None:
        """Send what is still buffered, then report in one line what could not be sent."""

    def where(self) -> str:
        return "tracking is off"


class NullTracker(Tracker):
    """Tracking disabled."""
