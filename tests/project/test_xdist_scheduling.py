"""The opt-in two-worker run (``pytest -n 2``, hooks in tests/conftest.py): the unit tests
spread over both workers, then every test of the modules that start real servers runs on one
worker, after the other worker's last unit test has finished."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = ["tests/project/test_docs_links.py", "tests/harness/session/test_pool.py"]
#: Tests of server modules that start no server themselves (fast; without an install they are
#: skipped, which still shows the worker that took them). Four, so that scheduling them one by
#: one would spread them over both workers.
SERVERS = [
    f"tests/systems/{system}/test_real.py::test_{name}"
    for system in ("cassandra", "hadoop")
    for name in (
        "missing_install_names_the_setup_command",
        "a_taken_port_is_one_line_before_any_test",
    )
]


def test_two_workers_run_the_server_tests_together_after_the_unit_tests(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "-v",
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'run'}",
            *UNITS,
            *SERVERS,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    # "[gw1] [ 40%] PASSED tests/harness/session/test_pool.py::test_..." in the order the results
    # came in
    results = re.findall(r"^\[(gw\d)\] \[\s*\d+%\] \w+ (\S+)", done.stdout, re.MULTILINE)
    servers = [(w, t) for w, t in results if t in SERVERS]
    units = [(w, t) for w, t in results if t not in SERVERS]
    assert len(servers) == 4 and len(units) >= 10, results
    assert {w for w, _ in units} == {"gw0", "gw1"}, units  # the units are shared
    assert len({w for w, _ in servers}) == 1, servers  # the server tests on one worker
    last_unit = max(i for i, pair in enumerate(results) if pair in units)
    assert all(results.index(pair) > last_unit for pair in servers), results
