"""A real figure's pack: sessions travel as one line each, come back as resumable folders, name
no path of the machine they ran on, the queue reads its state from the pack, and each committed
report is what its pack makes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.records import Observation, Status
from harness.store.samples import SampleStore
from paper.real_figures import FIGURES
from paper.real_pack import (
    PACK_FILE,
    REPOSITORY,
    add_sessions,
    main,
    pack_finished,
    pack_folder,
    portable,
    read_pack,
    unpack,
)
from paper.real_panel import report, session_table
from paper.real_queue import session_state


def _test(trial: int, value: float, message: str = "") -> Observation:
    return Observation(
        trial=trial,
        config={"x": trial, "mode": "=fast"},
        status=Status.SUCCEEDED,
        score=value,
        metrics={"tps": value},
        duration_s=1.25,
        is_default=trial == 0,
        message=message,
        extra={"loadavg_1m": 0.5},
    )


def _folder(root: Path, name: str, status: str = "FINISHED", tests: int = 3) -> Path:
    """A session folder as the harness writes it, with a resolved path in its record."""
    folder = root / "sessions" / name
    store = SampleStore(folder)
    store.create({"status": status, "tags": {"harness.session_dir": str(REPOSITORY / "x")}})
    for trial in range(tests):
        store.append(_test(trial, 100.0 + trial, message=f"{REPOSITORY}/.venv/lib/a.py failed"))
    store.append(_test(0, 99.0), reference=True)
    store.export_csv()
    (folder / "export").mkdir()
    (folder / "export" / "best.json").write_text('{"x": 2}\n')
    (folder / "artifacts").mkdir()
    (folder / "artifacts" / "classifier.json").write_text("{}")
    store.unlock()
    (folder / "session.lock").unlink(missing_ok=True)
    return folder


def test_a_path_under_the_repository_is_written_relative_to_it():
    record = {"dir": f"{REPOSITORY}/results/real", "here": str(REPOSITORY), "n": 3, "l": ["/etc"]}
    assert portable(record) == {"dir": "results/real", "here": ".", "n": 3, "l": ["/etc"]}


def test_a_packed_session_unpacks_into_the_folder_it_came_from_less_its_artifacts(tmp_path):
    folder = _folder(tmp_path, "fig6-sqlite-readwrite-lhs-s0")
    packed = pack_folder(folder)
    assert str(REPOSITORY) not in packed.to_line()
    again = unpack(read_back(packed.to_line(), tmp_path), tmp_path / "again")
    for name in ("observations.jsonl", "references.jsonl", "samples.csv", "export/best.json"):
        assert (again / name).read_text() == portable((folder / name).read_text()), name
    assert json.loads((again / "session.json").read_text()) == portable(
        json.loads((folder / "session.json").read_text())
    )
    assert not (again / "artifacts").exists()  # rebuilt by resuming, never packed
    assert SampleStore(again).load()[2].score == 102.0


def read_back(line: str, tmp_path: Path):
    (tmp_path / PACK_FILE).write_text(line)
    (session,) = read_pack(tmp_path / PACK_FILE)
    return session


def test_the_queue_packs_finished_sessions_and_resumes_the_others_from_their_folders(tmp_path):
    _folder(tmp_path, "done")
    _folder(tmp_path, "halfway", status="INTERRUPTED", tests=2)
    assert pack_finished(tmp_path) == ["done"]
    assert [s.name for s in read_pack(tmp_path / PACK_FILE)] == ["done"]
    assert not (tmp_path / "sessions" / "done").exists()
    assert session_state(tmp_path, "done") == ("finished", 3)
    assert session_state(tmp_path, "halfway") == ("stopped", 2)
    assert session_state(tmp_path, "later") == ("not started", 0)


def test_an_unpacked_session_is_resumed_and_packed_again_in_its_place(tmp_path, capsys):
    _folder(tmp_path, "b")
    _folder(tmp_path, "a")
    pack_finished(tmp_path)
    assert main(["unpack", "a", "--results-dir", str(tmp_path)]) == 0
    assert "resume=" in capsys.readouterr().out
    assert main(["unpack", "a", "--results-dir", str(tmp_path)]) == 2  # already unpacked
    store = SampleStore(tmp_path / "sessions" / "a")
    store.append(_test(3, 200.0))  # as a resumed session adds tests
    assert session_state(tmp_path, "a") == ("finished", 4)  # its folder, not the pack, counts
    pack_finished(tmp_path)
    assert [(s.name, len(s.observations)) for s in read_pack(tmp_path / PACK_FILE)] == [
        ("a", 4),
        ("b", 3),
    ]


def test_adding_a_session_keeps_the_pack_sorted_by_name(tmp_path):
    first, second = pack_folder(_folder(tmp_path, "z")), pack_folder(_folder(tmp_path, "m"))
    add_sessions(tmp_path / PACK_FILE, [first])
    add_sessions(tmp_path / PACK_FILE, [second, first])
    assert [s.name for s in read_pack(tmp_path / PACK_FILE)] == ["m", "z"]


def test_the_driver_packs_each_session_that_finishes_and_skips_it_next_time(tmp_path, monkeypatch):
    """The queue's data is the pack: a finished session lands in it at once (its folder goes),
    and a stopped one keeps its folder for the next run of the queue."""
    from paper import real_queue

    outcomes = iter([("FINISHED", 0), ("INTERRUPTED", real_queue.INTERRUPTED)])
    ran: list[str] = []

    def runs(argv: list[str], log: Path, deadline: float | None, group: object) -> int:
        name = log.stem
        ran.append(name)
        status, code = next(outcomes)
        _folder(tmp_path, name, status=status, tests=2)
        return code

    monkeypatch.setattr(real_queue, "_run_one", runs)
    monkeypatch.setattr(real_queue, "wait_until_quiet", lambda *a, **k: 0.0)
    argv = ["run", "--systems", "sqlite", "--seeds", "1", "--tuners", "lhs", "bestconfig",
            "--results-dir", str(tmp_path)]  # fmt: skip
    assert real_queue.main(argv) == real_queue.INTERRUPTED
    first, second = ran
    assert [s.name for s in read_pack(tmp_path / PACK_FILE)] == [first]
    assert not (tmp_path / "sessions" / first).exists()
    assert session_state(tmp_path, second) == ("stopped", 2)


@pytest.mark.parametrize("figure", sorted(FIGURES))
def test_each_committed_report_is_what_its_pack_makes(figure):
    """``python -m paper.real_panel --figure <figure>`` writes REPORT.md and sessions.csv from
    the committed pack alone: the committed ones must be exactly that (regenerate them after a
    change to the panel)."""
    real = FIGURES[figure]
    folder = REPOSITORY / real.results_dir
    sessions = session_table(folder)
    table = io.StringIO()
    sessions.to_csv(table, index=False)
    assert table.getvalue() == (folder / "sessions.csv").read_text()
    assert report(sessions, real) == (folder / "REPORT.md").read_text()
