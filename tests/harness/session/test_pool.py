"""Parallel tests across a pool of hosts (``session.parallel``, :mod:`harness.session.pool_loop`):
tests that really overlap, a fast host never held back by a slow one, each result told as it
finishes, a store in trial order, resume after an interrupt, and the one-line refusals. The
systems here are synthetic ones that take a while per test (logic only); the real pool of
PostgreSQL hosts is tested on the testbed (tests/harness/hosts/test_testbed_sessions.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest

from baselines.sampling import LHSTuner, RandomTuner
from harness import api
from harness.builder.session import StoreKind, assemble_session
from harness.errors import ConfigError
from harness.hosts.pool import Worker, batch_size
from harness.objectives.objective import Objective
from harness.records import Observation, config_key
from harness.session.options import SessionOptions
from harness.session.session import Session
from harness.space import Config
from harness.store.samples import SampleStore
from harness.tuner import Tuner
from systems.synthetic.system import SyntheticSystem, SyntheticWorkload


def test_a_batch_tuner_is_asked_for_whole_multiples_of_the_pool() -> None:
    assert batch_size(4, 1) == 4  # no pool: the tuner's own batch
    assert batch_size(1, 2) == 2
    assert batch_size(5, 4) == 8  # rounded up: no host idles inside a round


class _Clocked(SyntheticSystem):
    """A synthetic server on host ``host`` whose test takes ``2 * seconds`` (sleeps in the
    workload run and in the measurement), counting how many run at the same time; its
    ``interrupt_at``-th test raises KeyboardInterrupt (Ctrl-C during a test)."""

    running_now = 0
    most = 0
    lock = threading.Lock()

    def __init__(self, host: str, seconds: float = 0.3, interrupt_at: int = 0) -> None:
        super().__init__("10", delay_s=seconds)
        self.executor = SimpleNamespace(host=host)  # what Worker.host reads
        self.seconds = seconds
        self.interrupt_at = interrupt_at
        self.tests = 0

    def measure(self) -> dict[str, float]:
        cls = type(self)
        self.tests += 1
        if self.tests == self.interrupt_at:
            raise KeyboardInterrupt
        with cls.lock:
            cls.running_now += 1
            cls.most = max(cls.most, cls.running_now)
        try:
            time.sleep(self.seconds)
            return super().measure()
        finally:
            with cls.lock:
                cls.running_now -= 1


class _Logged(RandomTuner):
    """Random search that logs its asks and tells; ``one_step``: a GP-BO-like tuner."""

    calls: ClassVar[list[tuple[str, int]]] = []

    def ask(self, n: int = 1) -> list[Config]:
        configs = super().ask(n)
        type(self).calls.append(("ask", len(configs)))
        return configs

    def tell(self, observations: Sequence[Observation]) -> None:
        type(self).calls.append(("tell", len(observations)))
        super().tell(observations)


class _OneStep(_Logged):
    proposes_batches = False

    def ask(self, n: int = 1) -> list[Config]:
        return super().ask(n if len(self.history) < 2 else 1)  # one step after its design


def _session(
    tmp_path: Path,
    budget: int,
    systems: list[_Clocked],
    name: str = "pool",
    tuner: type[Tuner] = LHSTuner,
    default_every: int = 0,
    store: StoreKind | SampleStore = "disk",
) -> Session:
    workload = SyntheticWorkload()
    return assemble_session(
        lambda **kw: tuner(**kw),
        systems[0],
        workload,
        objective=Objective.for_workload(workload.metrics),
        options=SessionOptions(
            budget=budget,
            seed=1,
            progress=False,
            parallel=len(systems),
            default_every=default_every,
        ),
        results_dir=tmp_path,
        store=store,
        session_id=name,
        pool=[Worker(s, SyntheticWorkload()) for s in systems[1:]],
    )


def _hosts(n: int, seconds: float = 0.3) -> list[_Clocked]:
    return [_Clocked(f"h{i + 1}", seconds) for i in range(n)]


def test_tests_overlap_and_the_store_stays_in_trial_order(tmp_path: Path) -> None:
    _Clocked.most = 0
    result = _session(tmp_path, budget=7, systems=_hosts(3)).run()
    assert result.status == "FINISHED"
    assert _Clocked.most == 3
    stored = SampleStore(tmp_path / "sessions" / "pool").load()
    assert [o.trial for o in stored] == list(range(7))
    assert stored[0].extra["host"] == "h1"  # the default ran alone, on the first host
    assert {o.extra["host"] for o in stored[1:]} == {"h1", "h2", "h3"}


def test_a_fast_host_is_not_held_back_and_each_result_is_told_as_it_finishes(
    tmp_path: Path,
) -> None:
    # h2 takes 10x as long per test as h1: without waves, h1 runs test after test meanwhile.
    _Logged.calls = []
    systems = [_Clocked("h1", 0.05), _Clocked("h2", 0.5)]
    result = _session(tmp_path, budget=10, systems=systems, tuner=_Logged).run()
    assert result.status == "FINISHED"
    stored = SampleStore(tmp_path / "sessions" / "pool").load()
    assert [o.trial for o in stored] == list(range(10))  # numbered in the order they finished
    hosts = [o.extra["host"] for o in stored]
    assert hosts.count("h2") <= 2 < hosts.count("h1"), hosts
    assert hosts.index("h2") > 2, hosts  # started second, finished after later tests of h1
    # the default told alone, then every result as it came: one tell per test
    assert _Logged.calls[:2] == [("ask", 1), ("tell", 1)]
    assert _Logged.calls[2] == ("ask", 9)  # random search: its whole design as one batch
    assert _Logged.calls[3:] == [("tell", 1)] * 9


def test_a_one_step_tuner_is_asked_after_each_result_and_keeps_every_host_busy(
    tmp_path: Path,
) -> None:
    _Logged.calls, _Clocked.most = [], 0
    result = _session(tmp_path, budget=8, systems=_hosts(2, 0.1), tuner=_OneStep).run()
    assert result.status == "FINISHED"
    assert _Clocked.most == 2  # both hosts ran at once after the design, too
    # default; the design fills both hosts; then each result told is followed by one ask
    assert _Logged.calls[:3] == [("ask", 1), ("tell", 1), ("ask", 2)]
    assert _Logged.calls[3:9] == [("tell", 1), ("ask", 1)] * 3
    assert _Logged.calls[-2:] == [("tell", 1), ("tell", 1)]  # the budget is asked for


def test_an_interrupted_pool_session_resumes_with_nothing_lost_or_rerun(tmp_path: Path) -> None:
    # Ctrl-C during h2's 3rd test: the finished tests are kept; resume replays them through
    # the same schedule and runs the rest, the interrupted test among them.
    systems = _hosts(2, 0.05)
    systems[1].interrupt_at = 3
    first = _session(tmp_path, budget=9, systems=systems).run()
    assert first.status == "INTERRUPTED"
    store = SampleStore(tmp_path / "sessions" / "pool")
    kept = store.load()
    assert 3 <= len(kept) < 9
    result = _session(tmp_path, budget=9, systems=_hosts(2, 0.05), store=store).run()
    assert result.status == "FINISHED"
    final = store.load()
    assert [o.trial for o in final] == list(range(9))
    assert [o.to_json() for o in final[: len(kept)]] == [o.to_json() for o in kept]
    configs = [config_key(o.config) for o in final]
    assert len(set(configs)) == 9  # no test measured twice, none skipped
    # the same design as a session that was never interrupted
    again = _session(tmp_path, budget=9, systems=_hosts(2, 0.05), name="whole").run()
    assert {config_key(o.config) for o in again.observations} == set(configs)


def test_the_default_is_re_measured_on_a_free_host(tmp_path: Path) -> None:
    result = _session(tmp_path, budget=8, systems=_hosts(2, 0.05), default_every=3).run()
    assert result.status == "FINISHED"
    refs = SampleStore(tmp_path / "sessions" / "pool").load(reference=True)
    assert sorted(int(r.extra["after_trial"]) for r in refs) == [3, 6]
    assert all(r.is_default and r.extra["host"] in ("h1", "h2") for r in refs)


def test_a_longer_session_replays_the_stored_tests_and_runs_only_the_rest(
    tmp_path: Path,
) -> None:
    first = _session(tmp_path, budget=4, systems=_hosts(2)).run()
    assert first.status == "FINISHED"
    store = SampleStore(tmp_path / "sessions" / "pool")
    kept = store.load()
    result = _session(tmp_path, budget=8, systems=_hosts(2), store=store).run()
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
