"""Parallel tests across a pool of hosts (``session.parallel``, :mod:`harness.pool`): the waves
a batch is cut into, tests that really overlap, a store in trial order, resume, and the one-line
refusals. The systems here are synthetic ones that take a while per test (logic only); the
real pool of PostgreSQL hosts is tested on the testbed (tests/test_testbed_sessions.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from baselines.sampling import LHSTuner
from harness import api
from harness.build import assemble_session
from harness.errors import ConfigError
from harness.objective import Objective
from harness.pool import Worker, batch_size, waves
from harness.session import Session
from harness.session_options import SessionOptions
from harness.space import Config
from harness.store import SampleStore
from systems.synthetic.system import SyntheticSystem, SyntheticWorkload


def test_a_batch_is_cut_into_waves_default_and_replays_alone() -> None:
    batch: list[Config] = [{"k": i} for i in range(7)]
    trials = [[t for _, t in wave] for wave in waves(batch, 0, 0, 2)]
    assert trials == [[0], [1, 2], [3, 4], [5, 6]]
    trials = [[t for _, t in wave] for wave in waves(batch, 0, 3, 2)]  # 3 stored
    assert trials == [[0], [1], [2], [3, 4], [5, 6]]
    assert [[t for _, t in w] for w in waves(batch[:4], 3, 0, 3)] == [[3, 4, 5], [6]]
    assert all(len(w) == 1 for w in waves(batch, 0, 0, 1))


def test_a_pool_asks_for_whole_waves_plus_the_default() -> None:
    assert batch_size(4, 1, 0) == 4  # no pool: the tuner's own batch
    assert batch_size(1, 2, 0) == 3  # the default alone, then a wave of 2
    assert batch_size(1, 2, 5) == 2
    assert batch_size(5, 4, 1) == 8  # rounded up to whole waves


class _Clocked(SyntheticSystem):
    """A synthetic server whose test takes 0.3 s, counting how many run at the same time."""

    running_now = 0
    most = 0
    lock = threading.Lock()

    def __init__(self, host: str) -> None:
        super().__init__("10", delay_s=0.3)
        self.host = host

    def measure(self) -> dict[str, float]:
        cls = type(self)
        with cls.lock:
            cls.running_now += 1
            cls.most = max(cls.most, cls.running_now)
        try:
            time.sleep(0.3)
            return super().measure()
        finally:
            with cls.lock:
                cls.running_now -= 1


def _session(tmp_path: Path, budget: int, hosts: int, name: str = "pool") -> Session:
    systems = [_Clocked(f"h{i + 1}") for i in range(hosts)]
    workload = SyntheticWorkload()
    return assemble_session(
        lambda **kw: LHSTuner(**kw),
        systems[0],
        workload,
        objective=Objective.for_workload(workload.metrics),
        options=SessionOptions(budget=budget, seed=1, progress=False, parallel=hosts),
        results_dir=tmp_path,
        store="disk",
        session_id=name,
        pool=[Worker(s, SyntheticWorkload()) for s in systems[1:]],
    )


def test_tests_of_a_wave_overlap_and_the_store_stays_in_trial_order(tmp_path: Path) -> None:
    _Clocked.most = 0
    started = time.perf_counter()
    result = _session(tmp_path, budget=7, hosts=3).run()
    elapsed = time.perf_counter() - started
    assert result.status == "FINISHED"
    assert _Clocked.most == 3
    stored = SampleStore(tmp_path / "sessions" / "pool").load()
    assert [o.trial for o in stored] == list(range(7))
    assert stored[0].extra["host"] == "synthetic10"  # the default ran alone, on the first
    assert {o.extra["host"] for o in stored[1:]} == {"synthetic10"}  # Worker.host: the name
    # 1 + 2 waves of 3 at ~0.6 s each (sleep in run and in measure), not 7 tests in a row
    assert elapsed < 7 * 0.6 * 0.75, elapsed


def test_resume_replays_the_stored_tests_and_runs_only_the_rest(tmp_path: Path) -> None:
    first = _session(tmp_path, budget=4, hosts=2).run()
    assert first.status == "FINISHED"
    store = SampleStore(tmp_path / "sessions" / "pool")
    kept = store.load()
    # a longer session over the same store: the 4 kept tests replay, 4 more are measured
    session = assemble_session(
        lambda **kw: LHSTuner(**kw),
        _Clocked("h1"),
        SyntheticWorkload(),
        objective=Objective.for_workload(SyntheticWorkload.metrics),
        options=SessionOptions(budget=8, seed=1, progress=False, parallel=2),
        results_dir=tmp_path,
        store=store,
        session_id="pool",
        pool=[Worker(_Clocked("h2"), SyntheticWorkload())],
    )
    result = session.run()
    assert result.status == "FINISHED"
    final = store.load()
    assert [o.trial for o in final] == list(range(8))
    assert [o.to_json() for o in final[:4]] == [o.to_json() for o in kept]


def test_parallel_without_an_inventory_is_one_line(tmp_path: Path) -> None:
    cfg = api.compose(
        ["system=synthetic10", "session.parallel=2", "tracking=none", f"results_dir={tmp_path}"]
    )
    with pytest.raises(ConfigError, match=r"session\.parallel=2 runs tests on several SUT hosts"):
        api.prepare(cfg)
    with pytest.raises(ConfigError, match=r"session\.parallel must be at least 1"):
        SessionOptions(parallel=0)
