"""Rerunning a sweep (harness.cli.rerun, issue #20 item 5): a named session that finished is
skipped, one that stopped is continued with nothing lost, one of another setup is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _cli(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "system=synthetic10",
            "tuner=lhs",
            "budget=6",
            "tracking=none",
            "session.progress=false",
            f"results_dir={tmp_path}",
            "session.name=job-a",
            "session.existing=resume",
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _tests(folder: Path) -> list[dict[str, object]]:
    lines = (folder / "observations.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_a_rerun_skips_a_finished_session_and_continues_a_stopped_one(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "job-a"
    first = _cli(tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    done = _tests(folder)
    assert len(done) == 6

    again = _cli(tmp_path)
    assert again.returncode == 0 and "finished before" in again.stdout, again.stdout[-2000:]
    assert _tests(folder) == done  # not rerun

    # As a job killed after its 3rd test leaves it: 3 tests stored, not FINISHED.
    meta = json.loads((folder / "session.json").read_text())
    meta["status"] = "INTERRUPTED"
    (folder / "session.json").write_text(json.dumps(meta))
    kept = (folder / "observations.jsonl").read_text().splitlines(keepends=True)[:3]
    (folder / "observations.jsonl").write_text("".join(kept))
    resumed = _cli(tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    final = _tests(folder)
    assert len(final) == 6 and final[:3] == done[:3]
    assert [t["config"] for t in final] == [t["config"] for t in done]  # the same LHS plan
    assert json.loads((folder / "session.json").read_text())["status"] == "FINISHED"


def test_a_name_taken_by_another_setup_or_no_name_is_one_line(tmp_path: Path) -> None:
    assert _cli(tmp_path).returncode == 0
    other = _cli(tmp_path, "seed=1")
    assert other.returncode == 2
    assert "another seed" in other.stderr and "Traceback" not in other.stderr
    unnamed = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "system=synthetic10",
            "budget=3",
            "tracking=none",
            f"results_dir={tmp_path}",
            "session.existing=resume",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert unnamed.returncode == 2 and "needs session.name" in unnamed.stderr


def test_a_hostile_session_name_is_refused_before_any_folder_is_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "session.json").write_text("{}")  # a "session" a hostile name would point at
    # Quoted for Hydra's grammar where needed, so that the harness's own check is what runs.
    for name in ("../outside", "a/../../outside", "'$(id)'", "'x y'", "'..'"):
        done = _cli(tmp_path / "results", f"session.name={name}")
        assert done.returncode == 2, (name, done.stderr[-1000:])
        assert "Traceback" not in done.stderr and "session" in done.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["session.json"]  # no lock written


def test_a_key_the_configs_gained_since_the_session_was_stored_names_no_other_setup(
    tmp_path: Path,
) -> None:
    from harness.cli.rerun import known_keys

    stored = {"name": "s", "adapter": {"a": 1}}
    assert known_keys({"name": "s", "adapter": {"a": 1, "b": 2}, "new": None}, stored) == stored
    assert known_keys({"name": "t", "new": 1}, stored) == {"name": "t"}  # still another system

    folder = tmp_path / "sessions" / "job-a"
    assert _cli(tmp_path, "budget=3").returncode == 0
    meta = json.loads((folder / "session.json").read_text())
    del meta["config"]["system"]["expert_rules"]  # as stored before systems named their rules
    meta["status"] = "INTERRUPTED"
    (folder / "session.json").write_text(json.dumps(meta))
    resumed = _cli(tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert len(_tests(folder)) == 6
