"""Shared fixtures: composing the Hydra config the way ``python -m harness`` does."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from omegaconf import DictConfig

from harness import api
from harness.conf import CONFIG_DIR
from harness.conf.schema import register_configs

ROOT = Path(__file__).resolve().parents[1]
CONF = CONFIG_DIR

register_configs()

# The private sshd fixture (tests/helpers/sshd.py) for the remote-execution tests.
pytest_plugins = ["tests.helpers.sshd"]

#: Every process a test starts inherits this variable (its value names the test run), so a
#: process that outlives its test — a server a session failed to stop — is found and fails it.
LEAK_MARKER = "HARNESS_TEST_PROCESS"


@pytest.fixture(autouse=True)
def no_process_outlives_its_test() -> Iterator[None]:
    """Fail any test after which a process it started is still alive (and kill those).

    Autouse and function-scoped, so it is set up after the session- and module-scoped
    fixtures (their long-lived servers do not carry the marker) and torn down last.
    """
    from tests.helpers.hostile import kill_all, processes_with

    token = secrets.token_hex(6)
    os.environ[LEAK_MARKER] = token
    try:
        yield
    finally:
        del os.environ[LEAK_MARKER]
    deadline = time.monotonic() + 10  # a process killed just now may take a moment to exit
    leftovers = _strays(processes_with(LEAK_MARKER, token))
    while leftovers and time.monotonic() < deadline:
        time.sleep(0.2)
        leftovers = _strays(processes_with(LEAK_MARKER, token))
    kill_all(leftovers)
    assert not leftovers, f"processes outlived the test: {leftovers}"


def group_options(group: str) -> list[str]:
    """Names of the YAML options of a config group in conf/."""
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.fixture
def compose_cfg(tmp_path: Path) -> Callable[..., DictConfig]:
    """Compose the app's config with overrides, writing results under tmp_path."""

    def _compose(*overrides: str, tracking: bool = False) -> DictConfig:
        base = [f"results_dir={tmp_path / 'results'}", "session.progress=false"]
        if tracking:
            base.append(f"tracking.uri=sqlite:///{tmp_path / 'results' / 'mlflow.db'}")
        else:
            base.append("tracking=none")
        return api.compose([*base, *overrides])

    return _compose


def _strays(processes: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Leave out Python's own pool helpers, which serve this pytest process until it exits
    (multiprocessing's resource tracker, joblib/loky's reusable workers)."""
    helpers = (
        "multiprocessing.resource_tracker",
        "joblib.externals.loky",
        "multiprocessing.forkserver",
    )
    return [(pid, cmd) for pid, cmd in processes if not any(h in cmd for h in helpers)]


TESTS = Path(__file__).resolve().parent
#: Test modules that start real servers (marked ``integration``), read from their source so the
#: pytest-xdist controller, which collects nothing itself, knows them as well as the workers.
SERVER_MODULES = frozenset(
    path.relative_to(ROOT).as_posix()
    for path in TESTS.rglob("test_*.py")
    if "mark.integration" in path.read_text()
)


def _module(path: Path) -> str:
    """A test module as :data:`SERVER_MODULES` names it: its path from the repository root."""
    return path.resolve().relative_to(ROOT).as_posix()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """On xdist workers, the modules that start real servers last (see
    :func:`pytest_xdist_make_scheduler`); in one process, the order stays as collected."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: _module(item.path) in SERVER_MODULES)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The two workers share the unit tests first; then one worker runs every test of the
    server modules, one after another, while the other finishes and idles.

    Why not two server tests at once: on 2 cores a Cassandra node beside another server (or
    beside unit tests) measured 13 ops/s where its test expects > 20, and a default test found
    no successful read; Cassandra and Hadoop also listen on fixed default ports. Server tests
    are measured alone, as a user's session would be. (xdist's own ``loadgroup`` cannot be
    used: it renames test ids through an attribute pytest 9 no longer reads.)
    """
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # keep the collection order: the servers last

    class ServersTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "servers" if module in SERVER_MODULES else nodeid

    return ServersTogether(config, log)


def _worker_states(config: pytest.Config) -> Path | None:
    """The folder where each xdist worker of this run writes what it is doing: the run's own
    temporary folder, which pytest cleans up (None without workers, ``-n 0``)."""
    basetemp = getattr(config.option, "basetemp", None)
    if not os.environ.get("PYTEST_XDIST_WORKER") or not basetemp:
        return None
    return Path(basetemp).parent / "worker-states"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """A server test waits until the other worker has finished its last unit tests, so that
    even the first server test is measured alone (CI once saw a Cassandra node beside the
    wheel-building tests fall below its test's throughput floor)."""
    folder, worker = _worker_states(item.config), os.environ.get("PYTEST_XDIST_WORKER", "")
    if folder is not None:
        folder.mkdir(exist_ok=True)
        server = _module(item.path) in SERVER_MODULES
        (folder / worker).write_text("server" if server else "unit")
        if server:
            _wait_for_idle_workers(folder, worker)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield
    folder, worker = _worker_states(item.config), os.environ.get("PYTEST_XDIST_WORKER", "")
    if folder is not None:
        (folder / worker).write_text("idle")


def _wait_for_idle_workers(folder: Path, me: str, timeout_s: float = 600.0) -> None:
    """Until every other worker has been idle (or on server tests) for 1.5 s; a worker moves
    from one test to the next in well under that."""
    deadline, quiet = time.monotonic() + timeout_s, 0
    while quiet < 3 and time.monotonic() < deadline:
        busy = [p for p in folder.iterdir() if p.name != me and p.read_text() == "unit"]
        quiet = 0 if busy else quiet + 1
        time.sleep(0.5)
