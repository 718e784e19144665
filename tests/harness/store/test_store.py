"""Sample store: durability, torn writes, CSV export."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from harness.errors import StoreError
from harness.records import Observation, Status
from harness.store.samples import SampleStore


def _obs(trial: int, status: Status = Status.SUCCEEDED) -> Observation:
    ok = status is Status.SUCCEEDED
    return Observation(
        trial,
        {"a": trial, "mode": "x"},
        status,
        float(trial) if ok else None,
        {"tps": 10.0 * trial} if ok else {},
        1.5,
        trial == 0,
    )


def test_append_load_and_export(tmp_path: Path) -> None:
    store = SampleStore(tmp_path / "s")
    store.create({"session_id": "s"})
    for t in range(3):
        store.append(_obs(t, Status.CRASHED if t == 2 else Status.SUCCEEDED))
    loaded = store.load()
    assert [o.trial for o in loaded] == [0, 1, 2]
    assert loaded[2].status is Status.CRASHED and loaded[2].score is None
    with open(store.export_csv()) as handle:
        rows = list(csv.DictReader(handle))
    assert rows[1]["config.a"] == "1" and rows[1]["result.tps"] == "10.0"
    assert rows[2]["status"] == "CRASHED" and rows[2]["result.tps"] == ""


def test_a_torn_last_line_is_dropped_and_truncated(tmp_path: Path) -> None:
    store = SampleStore(tmp_path)
    store.create({"session_id": "s"})
    store.append(_obs(0))
    with open(tmp_path / "observations.jsonl", "a") as handle:
        handle.write('{"trial": 1, "config": {"a"')
    assert [o.trial for o in store.load()] == [0]
    store.append(_obs(1))
    assert [o.trial for o in store.load()] == [0, 1]


def test_corruption_in_the_middle_is_an_error(tmp_path: Path) -> None:
    store = SampleStore(tmp_path)
    store.create({"session_id": "s"})
    store.append(_obs(0))
    with open(tmp_path / "observations.jsonl", "a") as handle:
        handle.write("garbage\n")
    store.append(_obs(1))
    with pytest.raises(StoreError, match="corrupt"):
        store.load()


def test_create_refuses_to_overwrite(tmp_path: Path) -> None:
    store = SampleStore(tmp_path)
    store.create({"session_id": "s"})
    with pytest.raises(StoreError, match="already holds a session"):
        store.create({"session_id": "t"})


def test_missing_session_is_explained(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no session in"):
        SampleStore(tmp_path / "nothing").read_meta()
