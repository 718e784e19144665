"""Early stop of a real client: the SQLite worker process, judged on its live interval lines.

Three fast settings (WAL or no journal, no fsync: thousands of tx/s) set the bar; then a
setting that fsyncs every commit (tens of tx/s) cannot reach the 3rd best, so its worker is
killed mid-run, the test is stored STOPPED_EARLY with its censored bound, and a resumed
session replays it from the store and tells the tuner the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.options import SessionOptions
from harness.session.session import Session
from harness.space import Config, Space
from harness.store.samples import SampleStore
from harness.tracking.mlflow_tracker import NullTracker
from harness.tuner import Tuner
from systems.sqlite import SQLiteOLTP, SQLiteSystem

pytestmark = pytest.mark.integration

SECONDS = 6.0


class Scripted(Tuner):
    """Proposes a fixed list after the default (a real session's tuner, minus the search)."""

    name = "scripted"

    def __init__(self, space: Space, seed: int = 0, budget: int = 100) -> None:
        super().__init__(space, seed, budget)
        default = space.default()
        fast = {**default, "journal_mode": "wal", "synchronous": "off"}
        self.script: list[Config] = [
            fast,
            {**fast, "cache_size": 8000},
            {**fast, "journal_mode": "off"},
            {**default, "synchronous": "extra"},  # every commit waits for fsyncs
            {**fast, "cache_size": 16000},
        ]

    def _propose(self, n: int) -> Sequence[Config]:
        done = self._asked - 1  # the default came first
        return self.script[done : done + n]


def _session(folder: Path, budget: int) -> Session:
    store = SampleStore(folder / "s")
    if not store.exists:
        store.create({"session_id": "s", "experiment": "x"})
    workload = SQLiteOLTP(mix="readwrite", duration_s=SECONDS, rows=2000, seed=3)
    return Session(
        session_id="s",
        store=store,
        tuner_factory=Scripted,
        system=SQLiteSystem(knob_set="all"),
        workload=workload,
        objective=Objective("tps", "max"),
        tracker=NullTracker(),
        options=SessionOptions(
            budget=budget,
            progress=False,
            confirm=0,
            early_stop=True,
            early_stop_window_s=1.0,
            early_stop_rank=3,
        ),
        workdir=folder / "work",
    )


def test_a_hopeless_setting_is_stopped_mid_run_stored_and_replayed(tmp_path: Path) -> None:
    first = _session(tmp_path, budget=5).run()
    assert first.status == "FINISHED", first.message
    statuses = [o.status for o in first.observations]
    assert statuses == [Status.SUCCEEDED] * 4 + [Status.STOPPED_EARLY], [
        o.message for o in first.observations
    ]
    stopped = first.observations[4]
    censored = stopped.extra["censored"]
    fast = sorted(o.metrics["tps"] for o in first.observations[1:4])
    assert censored["threshold"] == pytest.approx(fast[0])  # the 3rd best of three
    assert censored["side"] == "upper" and censored["bound"] < censored["threshold"]
    # killed mid-run: fewer interval reports than a whole run prints (one per second)
    assert 3 <= censored["samples"] < SECONDS - 1
    assert stopped.score is None and "stopped early" in stopped.message
    assert first.best is not None and first.best.trial in (1, 2, 3)

    stored = SampleStore(tmp_path / "s").load()
    assert stored[4].status is Status.STOPPED_EARLY and stored[4].extra["censored"] == censored

    resumed = _session(tmp_path, budget=6).run()  # one more test after the replay
    assert resumed.status == "FINISHED", resumed.message
    replayed: list[Observation] = resumed.observations[:5]
    assert [(o.status, o.extra.get("censored")) for o in replayed] == [
        (o.status, o.extra.get("censored")) for o in stored
    ]
    assert resumed.observations[5].config["cache_size"] == 16000  # the script went on
    assert resumed.observations[5].status in (Status.SUCCEEDED, Status.STOPPED_EARLY)
