"""One error hierarchy for the harness.

Every failure the user can cause or meet (bad config, a system that will not start, a dead host)
is raised as a subclass of :class:`HarnessError` whose message names what failed and how to fix
it. The CLI prints these as one line; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ExecutorError",
    "HarnessError",
    "HostUnreachable",
    "KnobError",
    "SessionAborted",
    "StoreError",
    "SystemStartError",
    "TrackingError",
    "WorkloadError",
    "WorkloadTimeout",
]


class HarnessError(Exception):
    """Base of every error the harness reports to the user without a traceback."""


class ConfigError(HarnessError):
    """The composed configuration is invalid (caught before any test runs)."""


class KnobError(ConfigError):
    """A knob definition or a knob value is invalid; the message names knob, value and range."""


class SystemStartError(HarnessError):
    """The system under tune would not start or never became ready (status CRASHED)."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.log_tail = log_tail


class WorkloadError(HarnessError):
    """The workload ran but failed or produced no metric (status FAILED)."""

    def __init__(self, message: str, output_tail: str = "") -> None:
        super().__init__(message)
        self.output_tail = output_tail


class WorkloadTimeout(WorkloadError):
    """The workload exceeded its time limit and was killed (status TIMED_OUT)."""


class ExecutorError(HarnessError):
    """A command could not be run on a host (connection refused, missing binary, ...)."""


class HostUnreachable(HarnessError):
    """A remote host cannot be reached (any more): the session stops at once and keeps its
    finished tests, rather than recording the lost test as a crash of its configuration.

    Deliberately *not* an :class:`ExecutorError`: adapters catch ExecutorError to read "the
    command failed" (a missing pid file, a server that refused to start), and a lost host
    must never be mistaken for that."""


class SessionAborted(HarnessError):
    """The session stopped early, e.g. after too many consecutive crashes."""


class StoreError(HarnessError):
    """The sample store cannot be opened, written or resumed."""


class TrackingError(HarnessError):
    """The MLflow tracking store cannot be opened or written."""


class TrackingRunMissing(TrackingError):
    """The store opens but lacks the run a resumed session names (a fresh clone, another
    store): the session is logged as a new run."""
