"""Tuning sessions across the testbed's network (issue #20 item 3): a real PostgreSQL on a
namespace host, driven over SSH from the harness; a host that is unreachable before the first
test is one line naming it. A link cut mid-session should end it ``ABORTED`` with every
finished test kept, and ``resume=`` finish it once the link is back (the connection's
keepalives and ``TCP_USER_TIMEOUT`` notice the dead link within the host's
``link_timeout_s``; before them the session hung on TCP retransmission)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.helpers import testbed
from tests.helpers.requirements import NEEDS_MARIADB, NEEDS_TOMCAT
from tests.helpers.testbed import Testbed

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deep]

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Testbed]:
    if os.geteuid() != 0 or not Path(testbed.SSHD).exists():
        pytest.skip("the testbed needs root and openssh-server")
    if not Path("/usr/lib/postgresql").exists():
        pytest.skip("postgresql is not installed")
    # Not under pytest's tmp folder: /tmp/pytest-of-root is 0700, and the host's PostgreSQL
    # runs as the postgres user, who must reach its data folder under the host's workdir.
    folder = Path(tempfile.mkdtemp(prefix="harness-testbed-", dir="/tmp"))
    made = testbed.start(2, folder)  # h1 runs the SUT, h2 the load generator
    if made.mode != "netns":
        made.down()
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip("network namespaces are not permitted here: no link to cut")
    try:
        yield made
    finally:
        assert made.down() == []
        shutil.rmtree(folder, ignore_errors=True)


def _config_dir(bed: Testbed, folder: Path, load: int | None = None, sut: int = 1) -> Path:
    """A config folder holding ``hosts=testbed``: the first ``sut`` hosts SUTs, and host
    ``load`` (an index) the load host when given."""
    (folder / "hosts").mkdir(parents=True, exist_ok=True)
    inventory = bed.inventory(load=load)
    used = set(range(sut)) | ({load} if load is not None else set())
    entries: list[dict[str, object]] = inventory["hosts"]  # type: ignore[assignment]
    inventory["hosts"] = [h for i, h in enumerate(entries) if i in used]
    inventory["common"] = {"connect_timeout_s": 5}
    (folder / "hosts" / "testbed.yaml").write_text(yaml.safe_dump(inventory))
    return folder


def _args(
    conf: Path,
    results: Path,
    name: str,
    budget: int,
    workload: str = "pgbench",
    system: str = "postgres",
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harness",
        f"--config-dir={conf}",
        f"system={system}",
        f"workload={workload}",
        "workload.duration_s=4",
        "tuner=lhs",
        f"budget={budget}",
        "hosts=testbed",
        "session.progress=false",
        "tracking=none",
        f"session.name={name}",
        f"results_dir={results}",
    ]


def _finished(folder: Path) -> list[dict[str, object]]:
    path = folder / "observations.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_an_unreachable_host_is_one_line_before_any_test(bed: Testbed, tmp_path: Path) -> None:
    host = bed.hosts[0]
    conf = _config_dir(bed, tmp_path / "conf")
    host.cut()
    try:
        started = time.monotonic()
        done = subprocess.run(
            _args(conf, tmp_path / "results", "unreachable", 2),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        host.mend()
    assert done.returncode != 0
    assert host.name in done.stderr and host.address in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 60
    assert not _finished(tmp_path / "results" / "sessions" / "unreachable")


def test_a_cut_link_aborts_keeps_the_finished_tests_and_resume_completes(
    bed: Testbed, tmp_path: Path
) -> None:
    host = bed.hosts[0]
    conf = _config_dir(bed, tmp_path / "conf")
    results = tmp_path / "results"
    folder = results / "sessions" / "cut"
    run = subprocess.Popen(
        _args(conf, results, "cut", 3),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while len(_finished(folder)) < 1 and time.monotonic() < deadline:
            assert run.poll() is None, "".join(run.communicate())[-3000:]
            time.sleep(0.5)
        assert _finished(folder), "no test finished within 240 s"
        time.sleep(2.0)  # the next test is under way on the host
        host.cut()
        cut_at = time.monotonic()
        stdout, stderr = run.communicate(timeout=240)
        cut_to_end = time.monotonic() - cut_at
    finally:
        host.mend()
        if run.poll() is None:
            run.kill()
    kept = _finished(folder)
    session = json.loads((folder / "session.json").read_text())
    assert run.returncode != 0 and session.get("status") == "ABORTED", stderr[-3000:]
    assert 1 <= len(kept) < 3 and all(o["status"] == "SUCCEEDED" for o in kept), kept
    said = f"{stdout}\n{stderr}"
    assert host.address in said or host.name in said, said[-3000:]
    line = next(x for x in said.splitlines()[::-1] if host.address in x or host.name in x)
    print(f"link cut -> session ended in {cut_to_end:.0f} s: {line.strip()[:300]}")
    # The host's link_timeout_s (20 s) plus stopping the system over the dead link.
    assert cut_to_end < 120, said[-3000:]

    resumed = subprocess.run(
        [sys.executable, "-m", "harness", f"--config-dir={conf}", f"resume={folder}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    final = _finished(folder)
    assert len(final) == 3 and final[: len(kept)] == kept  # nothing lost, nothing rerun
    assert all(o["status"] == "SUCCEEDED" for o in final)


@pytest.mark.parametrize(
    ("system", "workload"),
    [
        ("postgres", "pgbench"),
        ("postgres", "tpcc"),
        pytest.param("mysql", "readwrite", marks=NEEDS_MARIADB),
    ],
)
def test_the_load_generator_runs_on_another_host(
    bed: Testbed, tmp_path: Path, system: str, workload: str
) -> None:
    """pgbench, the TPC-C driver and sysbench run on the load host h2 against the server on
    h1, over the testbed's network, as ``ss`` on h1 shows; the password they need is on no
    command line of either host (``ps``), and a client that reads it from a file reads the
    file in h2's folder (on separate machines the SUT's folder is not there)."""
    sut, load = bed.hosts[0], bed.hosts[1]
    conf = _config_dir(bed, tmp_path / "conf", load=1)
    name = f"split-{system}-{workload}"
    with testbed.Peers(sut) as peers:
        done = subprocess.run(
            _args(conf, tmp_path / "results", name, 1, workload, system),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    kept = _finished(tmp_path / "results" / "sessions" / name)
    assert [o["status"] for o in kept] == ["SUCCEEDED"], kept
    assert load.address in peers.seen, peers.seen
    # Nothing else talks to the server: only the client and h1's own admin commands.
    assert peers.seen <= {load.address, sut.address}, peers.seen
    assert not peers.exposed, peers.exposed
    option_files = [
        arg.split("=", 1)[1]
        for command in peers.commands
        if "sysbench" in command
        for arg in command.split()
        if arg.startswith("--config-file=")
    ]
    if workload == "readwrite":
        assert option_files, peers.commands
    assert all(Path(f).is_relative_to(load.folder) for f in option_files), option_files
    print(f"{system} {workload}: peers of the server on {sut.address}: {sorted(peers.seen)}")


def test_a_pool_of_two_hosts_runs_tests_at_once(bed: Testbed, tmp_path: Path) -> None:
    """``session.parallel=2``: a PostgreSQL on h1 and one on h2, each loaded once; after the
    default (alone), two tests at once, one per host (two pgbench at the same moment), and the
    store holds every test in the order it finished with the host that measured it."""
    conf = _config_dir(bed, tmp_path / "conf", sut=2)
    most = 0
    run = subprocess.Popen(
        [*_args(conf, tmp_path / "results", "pool", 3), "session.parallel=2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while run.poll() is None:
            count = subprocess.run(
                ["pgrep", "-c", "-x", "pgbench"], capture_output=True, text=True
            )
            most = max(most, int(count.stdout.strip() or 0))
            time.sleep(0.2)
        _, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, stderr[-3000:]
    kept = _finished(tmp_path / "results" / "sessions" / "pool")
    assert [o["trial"] for o in kept] == list(range(3))
    assert all(o["status"] == "SUCCEEDED" for o in kept), kept
    hosts = [o["extra"]["host"] for o in kept]  # type: ignore[index]
    assert hosts[0] == "h1" and sorted(hosts[1:]) == ["h1", "h2"], hosts  # default alone
    assert most >= 2, f"never two pgbench at once (max {most})"


def test_a_slow_link_does_not_turn_into_timeouts(bed: Testbed, tmp_path: Path) -> None:
    """Every packet to and from h1 through a 512 kbit/s token bucket (up to 400 ms queued):
    commands, file transfers and pgbench's logs take longer, and every test still succeeds
    (no false TIMED_OUT, no link taken for dead). ``netem`` delay is not in this kernel."""
    host = bed.hosts[0]
    conf = _config_dir(bed, tmp_path / "conf")
    host.slow("512kbit")
    try:
        done = subprocess.run(
            _args(conf, tmp_path / "results", "slow", 2),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        host.normal()
    assert done.returncode == 0, done.stderr[-3000:]
    kept = _finished(tmp_path / "results" / "sessions" / "slow")
    assert [o["status"] for o in kept] == ["SUCCEEDED", "SUCCEEDED"], kept


@NEEDS_TOMCAT[0]
@NEEDS_TOMCAT[1]
def test_wrk_runs_on_the_load_host_against_tomcat_on_the_sut(bed: Testbed, tmp_path: Path) -> None:
    """Tomcat on h1, wrk's visitors from h2 (the inventory's load host), as ``ss`` on h1
    shows."""
    sut, load = bed.hosts[0], bed.hosts[1]
    conf = _config_dir(bed, tmp_path / "conf", load=1)
    args = _args(conf, tmp_path / "results", "tomcat-split", 1)
    args = [a for a in args if not a.startswith(("system=", "workload"))]
    args += ["system=tomcat", "workload.duration_s=3", "workload.warmup_s=1"]
    with testbed.Peers(sut) as peers:
        done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    kept = _finished(tmp_path / "results" / "sessions" / "tomcat-split")
    assert [o["status"] for o in kept] == ["SUCCEEDED"], kept
    assert load.address in peers.seen, peers.seen
    assert peers.seen <= {load.address, sut.address}, peers.seen
