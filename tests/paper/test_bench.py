"""Tests for the tuner benchmark: scoring and ranking by hand, the code digest of its cache,
a tiny end-to-end run, and the fixed-list tuner of the measurement tools."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import api
from paper import code_version
from paper.bench import job_key, main, run_jobs, session_row, suite_names
from paper.bench_score import mean_ranks, normalised_score, rank_average, summarise
from paper.code_version import code_digest
from paper.listed import ListTuner
from systems.synthetic import SyntheticSystem, SyntheticWorkload

ROOT = Path(__file__).resolve().parents[2]


def test_normalised_score_max() -> None:
    # default 100, optimum 200, best 150: half way.
    assert normalised_score(150.0, 100.0, 200.0) == pytest.approx(0.5)
    assert normalised_score(100.0, 100.0, 200.0) == 0.0
    assert normalised_score(250.0, 100.0, 200.0) == pytest.approx(1.5)


def test_normalised_score_min_is_mirrored() -> None:
    # Latency (minimised): default 40 ms, optimum 10 ms, best 20 ms -> (40-20)/(40-10) = 2/3.
    # Scores are negated values, which mirrors the formula.
    assert normalised_score(-20.0, -40.0, -10.0) == pytest.approx(2 / 3)
    # Worse than the default is negative: 50 ms -> (40-50)/30.
    assert normalised_score(-50.0, -40.0, -10.0) == pytest.approx(-1 / 3)


def test_normalised_score_edge_cases() -> None:
    assert normalised_score(None, 100.0, 200.0) == 0.0  # nothing succeeded
    assert math.isnan(normalised_score(150.0, None, 200.0))  # default unknown
    assert math.isnan(normalised_score(150.0, 200.0, 200.0))  # default already optimal


def test_rank_average_ties_and_nan() -> None:
    assert rank_average([0.2, 0.9, 0.5]) == [3.0, 1.0, 2.0]
    assert rank_average([0.5, 0.9, 0.5, 0.1]) == [2.5, 1.0, 2.5, 4.0]
    assert rank_average([math.nan, 0.3]) == [2.0, 1.0]


def _row(tuner: str, system: str, seed: int, best: float) -> dict[str, object]:
    return {
        "tuner": tuner,
        "system": system,
        "seed": seed,
        "best": best,
        "default": 0.0,
        "optimum": 1.0,
        "tests": 10,
        "compute_s": 0.5,
        "dim": 10,
    }


def test_mean_ranks_and_summary() -> None:
    rows = [
        _row("a", "s1", 0, 0.9),
        _row("b", "s1", 0, 0.5),
        _row("c", "s1", 0, 0.5),
        _row("a", "s1", 1, 0.1),
        _row("b", "s1", 1, 0.8),
        _row("c", "s1", 1, 0.3),
        _row("a", "s2", 0, 0.6),
        _row("b", "s2", 0, 0.6),
        _row("c", "s2", 0, 0.6),
    ]
    summary = summarise(rows)  # adds "norm" (= best here: default 0, optimum 1)
    ranks = mean_ranks(rows)
    # a: 1, 3, 2 -> 2.0; b: 2.5, 1, 2 -> 5.5/3; c: 2.5, 2, 2 -> 6.5/3.
    assert ranks["a"] == pytest.approx(2.0)
    assert ranks["b"] == pytest.approx(5.5 / 3)
    assert ranks["c"] == pytest.approx(6.5 / 3)
    a = summary["tuners"]["a"]
    assert a["cells"]["s1"][0] == pytest.approx(0.5)  # mean of 0.9 and 0.1
    assert a["overall"] == pytest.approx((0.5 + 0.6) / 2)  # mean of per-system means


def test_mean_ranks_skip_incomplete_problems() -> None:
    rows = [_row("a", "s1", 0, 0.9), _row("b", "s1", 0, 0.5), _row("a", "s2", 0, 0.1)]
    summarise(rows)
    assert mean_ranks(rows) == {"a": 1.0, "b": 2.0}


def test_suite_has_every_surrogate() -> None:
    suite = suite_names()
    assert suite[:2] == ["synthetic10", "synthetic30"]
    assert all(s.startswith("surrogate_") for s in suite[2:]) and len(suite) > 2


def test_end_to_end_tiny(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    argv = [
        "--tuners",
        "random",
        "lhs",
        "--suite",
        "synthetic10",
        "--seeds",
        "1",
        "--budget",
        "10",
        "--processes",
        "1",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 0
    report = (out / "REPORT.md").read_text()
    assert "python -m paper.bench --tuners random lhs" in report
    assert "| random |" in report and "| lhs |" in report
    assert (out / "scores.png").stat().st_size > 1000
    cache = json.loads((out / "cache.json").read_text())
    lhs_key = job_key(("lhs", "synthetic10", 0, 10))
    assert set(cache) == {job_key(("random", "synthetic10", 0, 10)), lhs_key}
    for result in cache.values():
        assert result["tests"] == 10 and result["dim"] == 10
        assert result["default"] <= result["best"] <= result["optimum"]
    # A rerun is served from the cache: a changed entry shows up in the report unchanged.
    cache[lhs_key]["best"] = cache[lhs_key]["optimum"]
    (out / "cache.json").write_text(json.dumps(cache))
    assert main(argv) == 0
    assert "| lhs | 1.00 | 1.000 |" in (out / "REPORT.md").read_text()
    # A changed tuner config is a different key: recomputed, not read back stale.
    assert code_digest("lhs", "synthetic10") != code_digest("random", "synthetic10")


def test_a_session_row_is_the_apis_session(tmp_path: Path) -> None:
    row = session_row("random", "synthetic10", 3, 12)
    cfg = api.compose(
        [
            "tuner=random",
            "system=synthetic10",
            "seed=3",
            "budget=12",
            "tracking=none",
            f"results_dir={tmp_path}",
        ]
    )
    result = api.run(cfg, store="memory")
    assert result.best is not None and result.default is not None
    assert (row["best"], row["default"], row["tests"]) == (
        result.best.score,
        result.default.score,
        12,
    )
    assert row["dim"] == 10 and row["metric"] == "throughput" and row["direction"] == "max"
    assert row["optimum"] == pytest.approx(SyntheticSystem("10").known_optimum()[1])


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_code_digest_follows_the_code_a_session_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(
        tmp_path,
        {
            "harness/__init__.py": "",
            "harness/loop.py": "LOOP = 1\n",
            "harness/conf/config.yaml": "budget: 100\n",
            "harness/conf/tuner/t.yaml": "_target_: baselines.mine.Mine\n_partial_: true\n",
            "harness/conf/system/s.yaml": "adapter:\n  _target_: systems.sim.Sim\n",
            "baselines/__init__.py": "",
            "baselines/mine.py": "from baselines.helper import help\nfrom . import shared\n",
            "baselines/helper.py": "help = 1\n",
            "baselines/shared.py": "X = 1\n",
            "baselines/other.py": "Y = 1\n",
            "systems/__init__.py": "",
            "systems/sim/__init__.py": "from systems.sim.model import Sim\n",
            "systems/sim/model.py": "class Sim: ...\n",
            "systems/sim/knobs.yaml": "knobs: []\n",
            "systems/unrelated/__init__.py": "",
        },
    )
    monkeypatch.setattr(code_version, "ROOT", tmp_path)
    monkeypatch.setattr(code_version, "CONFIG_DIR", tmp_path / "harness" / "conf")
    files = {
        str(p.relative_to(tmp_path))
        for p in code_version.source_files(["baselines.mine.Mine", "systems.sim.Sim"])
    }
    assert files == {
        "baselines/__init__.py",
        "baselines/mine.py",
        "baselines/helper.py",
        "baselines/shared.py",
        "systems/__init__.py",
        "systems/sim/__init__.py",
        "systems/sim/model.py",
        "systems/sim/knobs.yaml",
    }

    def digest() -> str:
        code_digest.cache_clear()
        return code_digest("t", "s")

    seen = {digest()}
    for name in ("baselines/other.py", "systems/unrelated/__init__.py"):  # not in the closure
        (tmp_path / name).write_text("# changed\n")
        assert digest() in seen, name
    for name in (
        "baselines/helper.py",  # imported by the tuner's module
        "baselines/shared.py",  # a relative import
        "systems/sim/knobs.yaml",  # data of the system's package
        "harness/loop.py",  # the core
        "harness/conf/tuner/t.yaml",  # the tuner's config
        "harness/conf/system/s.yaml",
    ):
        (tmp_path / name).write_text((tmp_path / name).read_text() + "# changed\n")
        new = digest()
        assert new not in seen, name
        seen.add(new)
    code_digest.cache_clear()


def test_list_tuner_runs_fixed_settings_as_a_session(tmp_path: Path) -> None:
    system = SyntheticSystem("10")
    default = system.space.default()
    tuner = ListTuner(system.space, [{"buffer_pool_mb": 256}, {}, {"compression": True}])
    assert tuner.budget == 4
    result = api.run_objects(tuner, system, SyntheticWorkload(), budget=4, results_dir=tmp_path)
    assert result.status == "FINISHED"
    configs = [o.config for o in result.observations]
    assert configs == [
        default,
        {**default, "buffer_pool_mb": 256},
        default,
        {**default, "compression": True},
    ]
    assert result.observations[0].is_default and not result.observations[2].is_default


def test_sessions_are_cached_under_their_own_job_whatever_order_they_finish(
    tmp_path: Path,
) -> None:
    """Two workers, a long job queued before a short one: the short one finishes first and is
    cached at once; every cached row still belongs to its own job (budget and dimension)."""
    jobs = [("random", "synthetic30", 0, 60), ("random", "synthetic10", 0, 5)]
    cache = tmp_path / "cache.json"
    rows = run_jobs(jobs, processes=2, cache=cache, progress=False)
    assert [(r["tests"], r["dim"]) for r in rows] == [(60, 30), (5, 10)]  # in job order
    stored = json.loads(cache.read_text())
    for job in jobs:
        assert stored[job_key(job)]["tests"] == job[3]
        assert stored[job_key(job)]["system"] == job[1]


def _children(pid: int) -> set[int]:
    """The pids whose parent is ``pid``, from /proc (no procps needed)."""
    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended while we looked
            continue
        if int(fields[1]) == pid:
            children.add(int(stat.parent.name))
    return children


def _gone(pids: set[int], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() for pid in pids):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux's")
def test_a_worker_whose_parent_died_before_it_asked_for_the_signal_stops_at_once() -> None:
    """The race: the parent dies between the worker's start and its prctl call. The signal
    would never come, so the worker, no longer the parent's child, stops itself."""
    script = (
        "import time\n"
        "from harness.hosts.process import die_with_parent\n"
        "die_with_parent(parent_pid=1)\n"  # pid 1 is not this child's parent
        "time.sleep(30)\n"
        "print('still computing')\n"
    )
    worker = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=25
    )
    assert worker.returncode == -signal.SIGTERM, worker.stderr
    assert "still computing" not in worker.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux's")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_bench_leaves_no_worker_computing(signum: int) -> None:
    """However the bench dies (SIGTERM's default action, or SIGKILL), its workers get the
    parent-death signal and stop. Found when a killed run's orphans kept computing."""
    long_jobs = [("random", "synthetic30", seed, 200_000) for seed in (0, 1)]
    script = (
        "from paper.bench import run_jobs\n"
        f"run_jobs({long_jobs!r}, processes=2, cache=None, progress=False)\n"
    )
    bench = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while len(workers) < 3 and time.monotonic() < deadline:  # 2 workers + resource tracker
            time.sleep(0.2)
            workers = _children(bench.pid)
        assert len(workers) >= 3, "the pool never started"
        time.sleep(1.0)  # the workers are computing by now
        bench.send_signal(signum)
        bench.wait(timeout=30)
        assert _gone(workers, within_s=20), f"workers outlived the bench: {workers}"
    finally:  # its own process group holds the bench and any worker left: none outlives this
        with contextlib.suppress(ProcessLookupError):
            os.killpg(bench.pid, signal.SIGKILL)
        bench.wait(timeout=30)
