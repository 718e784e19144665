"""A real figure's sessions packed into one file, ``results/real/<figure>/sessions.jsonl``.

    python -m paper.real_pack pack --figure fig6           # finished queue folders into the pack
    python -m paper.real_pack list --figure fig7
    python -m paper.real_pack unpack --figure fig7 fig7-mysql-tpcc-expert_manual-s0

One line per session, sorted by name: its record (``session.json``), every test
(``observations.jsonl``), the default's re-measurements and the confirmation
(``references.jsonl``) and its other small text files (the exported best configuration, the
crash logs). The pack is what is committed and what the panels read: a figure's sessions travel
as a few files instead of a folder each. What a session folder holds besides is left out
because it can be made again: ``samples.csv`` is the tests as a table (``unpack`` writes it),
and ClassyTune's ``artifacts/`` (its classifier, 120-250 kB a session) are rebuilt by resuming
the unpacked session, which replays its tests.

The queue (:mod:`paper.real_queue`) runs each session in a working folder,
``results/real/<figure>/sessions/<session>/`` (not committed), and packs it when it finishes,
so a stopped session still resumes from its folder. ``unpack`` makes a packed session's folder
again, for ``python -m harness resume=<folder>`` (then ``pack`` takes it back).

Every path of the machine a session ran on is written relative to the repository (see
:func:`portable`): the harness records resolved folders (the session's, the installs'), and a
committed file must not name one machine's layout.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.records import Observation
from harness.store.samples import SampleStore, atomic_write, export_csv
from paper.real_figures import FIGURES

__all__ = [
    "PACK_FILE",
    "PackedSession",
    "add_sessions",
    "main",
    "pack_finished",
    "pack_folder",
    "packed_tests",
    "portable",
    "read_pack",
    "session_state",
    "unpack",
    "write_pack",
]

PACK_FILE = "sessions.jsonl"
#: Where the queue runs its sessions, under a figure's results folder (not committed).
WORK_FOLDER = "sessions"
#: Session files the pack holds as structured records.
_RECORDS = ("session.json", "observations.jsonl", "references.jsonl")
#: What a session folder holds that the pack leaves out: made again from the records
#: (``samples.csv``), rebuilt by resuming (ClassyTune's ``artifacts/``), or transient.
_LEFT_OUT = ("samples.csv", "artifacts", "session.lock")
#: The repository this module belongs to: committed paths are written relative to it.
REPOSITORY = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PackedSession:
    """One session as packed: its record, tests, re-measurements and other text files."""

    name: str
    meta: dict[str, Any]
    observations: list[dict[str, Any]]
    references: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return bool(self.meta.get("status") == "FINISHED")

    def tests(self) -> list[Observation]:
        """The session's tests in trial order."""
        return [Observation.from_json(record) for record in self.observations]

    def remeasurements(self) -> list[Observation]:
        """The default's re-measurements and the confirmation runs."""
        return [Observation.from_json(record) for record in self.references]

    def to_line(self) -> str:
        record = {
            "session": self.name,
            "meta": self.meta,
            "observations": self.observations,
            "references": self.references,
            "files": self.files,
        }
        return json.dumps(record) + "\n"

    @classmethod
    def from_line(cls, line: str) -> PackedSession:
        record = json.loads(line)
        return cls(
            name=record["session"],
            meta=record["meta"],
            observations=record["observations"],
            references=record.get("references", []),
            files=record.get("files", {}),
        )


def portable(value: Any, roots: Iterable[Path] = (REPOSITORY,)) -> Any:
    """``value`` (JSON data or text) with every path under one of ``roots`` made relative to
    it: ``<root>/results/x`` becomes ``results/x`` and ``<root>`` alone ``.``. The harness
    resolves folders when it records them, and captured stack traces name installed files."""
    if isinstance(value, dict):
        return {key: portable(item, roots) for key, item in value.items()}
    if isinstance(value, list):
        return [portable(item, roots) for item in value]
    if not isinstance(value, str):
        return value
    for root in roots:
        if str(root) != "/":
            value = value.replace(f"{root}/", "").replace(str(root), ".")
    return value


def pack_folder(folder: Path) -> PackedSession:
    """A session folder as one packed record, its paths made portable."""
    store = SampleStore(folder)  # read only; a torn last line is dropped as on resume
    meta = store.read_meta()
    return PackedSession(
        name=folder.name,
        meta=portable(meta),
        observations=[portable(o.to_json()) for o in store.load()],
        references=[portable(o.to_json()) for o in store.load(reference=True)],
        files={name: portable(text) for name, text in _other_files(folder)},
    )


def _other_files(folder: Path) -> Iterator[tuple[str, str]]:
    """(path relative to ``folder``, text) of the session's files that are not records."""
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and relative.parts[0] not in (*_RECORDS, *_LEFT_OUT):
            yield relative.as_posix(), path.read_text(encoding="utf-8")


def read_pack(path: Path) -> list[PackedSession]:
    """The sessions of a pack file, in its order; none when it does not exist yet."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [PackedSession.from_line(line) for line in lines if line.strip()]


def write_pack(path: Path, sessions: Iterable[PackedSession]) -> None:
    """Replace the pack by ``sessions`` sorted by name (one line each), atomically."""
    ordered = sorted(sessions, key=lambda s: s.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "".join(s.to_line() for s in ordered))


def add_sessions(pack: Path, sessions: Iterable[PackedSession]) -> None:
    """Put ``sessions`` into the pack, each replacing a packed session of its name."""
    by_name = {s.name: s for s in read_pack(pack)}
    by_name.update({s.name: s for s in sessions})
    write_pack(pack, by_name.values())


def packed_tests(results_dir: Path) -> dict[str, int]:
    """Tests of each packed session of the figure (the pack is read again when it changes)."""
    pack = results_dir / PACK_FILE
    try:
        stat = pack.stat()
    except FileNotFoundError:
        return {}
    return _tests_per_session(pack, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _tests_per_session(pack: Path, mtime_ns: int, size: int) -> dict[str, int]:
    """Tests of each session in ``pack`` as it was at ``mtime_ns`` and ``size`` (the cache key:
    the status reads every queued session's state, and a figure's pack holds megabytes)."""
    return {s.name: len(s.observations) for s in read_pack(pack)}


def session_state(results_dir: Path, name: str) -> tuple[str, int]:
    """(``finished`` | ``stopped`` | ``not started``, tests stored) of a figure's session: its
    working folder's (stopped, or unpacked to be resumed), else the pack's (finished)."""
    folder = results_dir / WORK_FOLDER / name
    if not folder.exists():
        packed = packed_tests(results_dir).get(name)
        if packed is not None:
            return "finished", packed
    meta_path = folder / "session.json"
    if not meta_path.exists():
        return "not started", 0
    status = json.loads(meta_path.read_text()).get("status")
    observations = folder / "observations.jsonl"
    tests = sum(1 for _ in observations.open()) if observations.exists() else 0
    return ("finished" if status == "FINISHED" else "stopped"), tests


def unpack(session: PackedSession, folder: Path) -> Path:
    """Write ``session`` as a session folder the harness resumes; ``folder`` must not exist.
    Private (0700), as the harness makes a session folder."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.mkdir(mode=0o700)
    (folder / "session.json").write_text(json.dumps(session.meta, indent=2, default=str))
    for name, records in (
        ("observations.jsonl", session.observations),
        ("references.jsonl", session.references),
    ):
        if records:
            (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    export_csv(session.tests(), folder / "samples.csv")
    for name, text in session.files.items():
        target = folder / name
        if not target.resolve().is_relative_to(folder.resolve()):
            raise ValueError(f"{name!r} in {session.name} leaves its session folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return folder


def pack_finished(results_dir: Path) -> list[str]:
    """Pack every finished session folder under ``results_dir/sessions`` and remove it (the
    pack holds it now); stopped sessions stay to be resumed. The names packed."""
    work = results_dir / WORK_FOLDER
    finished = [
        packed
        for folder in sorted(work.glob("*/"))
        if (folder / "session.json").exists() and (packed := pack_folder(folder)).finished
    ]
    add_sessions(results_dir / PACK_FILE, finished)
    for session in finished:
        shutil.rmtree(work / session.name)
    return [s.name for s in finished]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paper.real_pack",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=("pack", "list", "unpack"))
    parser.add_argument("sessions", nargs="*", help="unpack: the sessions to unpack")
    parser.add_argument("--figure", choices=sorted(FIGURES), default="fig6")
    parser.add_argument("--results-dir", type=Path, help="default: results/real/<figure>")
    args = parser.parse_args(argv)
    results_dir: Path = args.results_dir or FIGURES[args.figure].results_dir
    if args.action == "pack":
        for name in pack_finished(results_dir):
            print(f"packed {name}")
        return 0
    packed = {s.name: s for s in read_pack(results_dir / PACK_FILE)}
    if args.action == "list":
        for session in packed.values():
            print(f"{session.name:<48} {len(session.observations):>4} tests")
        return 0
    return _unpack_named(packed, args.sessions, results_dir / WORK_FOLDER)


def _unpack_named(packed: dict[str, PackedSession], names: list[str], work: Path) -> int:
    """Unpack the named sessions into ``work``; 2 when one is not in the pack or unpacked."""
    missing = [n for n in names if n not in packed]
    existing = [n for n in names if (work / n).exists()]
    if missing or existing or not names:
        print(
            f"error: name packed sessions to unpack (not packed: {missing}; "
            f"already unpacked: {existing})",
            file=sys.stderr,
        )
        return 2
    for name in names:
        print(f"unpacked {unpack(packed[name], work / name)}; resume it with "
              f"python -m harness resume={work / name}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
