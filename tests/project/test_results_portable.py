"""Nothing committed names a path of the machine it was made on.

A committed session, report or doc that says ``/work/main/results/...`` or ``/root/...``
describes one machine's layout, breaks on every other clone and leaks where a run happened.
Writers record paths relative to the repository (:func:`paper.real_pack.portable` for the real
figures' packs); this test reads every tracked text file and fails on:

- the absolute path of this clone (wherever it is checked out), and of the machine the
  committed results were measured on (``/work/main``, its interpreter in ``/work/venv``);
- the home folder of the user running it (``/root/`` on the measuring machine);
- the temporary folders of a run (pytest's ``/tmp/pytest-of-<user>/pytest-<n>/``,
  ``tempfile``'s ``/tmp/tmp<random>/``).

A path counts only where one starts (after a space, a quote, ``=`` ...), so ``results/x/work/``
or Hadoop's ``.../staging/root/...`` inside a relative path are not one. Files that other work
still has to clean are listed in ``PENDING`` with the writer that must change.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Where the committed results were measured: the repository and the interpreter's folder.
MEASURING_MACHINE = ("/work/main", "/work/venv")
#: Tracked files that still carry a run's absolute path, each with the writer that must change
#: (outside this test's owners' reach when it was written). Remove an entry once it is clean.
PENDING: dict[str, str] = {}


def _prefixes() -> list[str]:
    """The folders no committed file may name, each ending in ``/``."""
    home = str(Path.home())
    prefixes = {str(ROOT), *MEASURING_MACHINE}
    if home not in ("/", str(ROOT)):
        prefixes.add(home)
    return sorted(p + "/" for p in prefixes)


def _pattern() -> re.Pattern[str]:
    temporary = re.escape(tempfile.gettempdir())
    runs = [rf"{temporary}/pytest-of-[^/\s]+/pytest-\d+/", rf"{temporary}/tmp[a-z0-9_]{{8}}/"]
    alternatives = [re.escape(p) for p in _prefixes()] + runs
    return re.compile(r"(?<![\w.~/-])(?:" + "|".join(alternatives) + ")")


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    return [ROOT / name.decode() for name in listed if name]


def _leaks(path: Path, pattern: re.Pattern[str]) -> list[str]:
    """The lines of ``path`` that name a forbidden folder (none for a binary file)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):  # deleted in the working tree, or a submodule
        return []
    if b"\0" in data[:8192]:
        return []
    text = data.decode("utf-8", errors="replace")
    return [line.strip()[:160] for line in text.splitlines() if pattern.search(line)]


def test_no_tracked_file_names_a_path_of_the_machine_it_was_made_on():
    pattern = _pattern()
    found = {}
    for path in _tracked_text_files():
        relative = path.relative_to(ROOT).as_posix()
        if relative in PENDING or relative == "tests/project/test_results_portable.py":
            continue
        if leaks := _leaks(path, pattern):
            found[relative] = leaks[:2]
    assert not found, "absolute paths of a machine in committed files (write them relative):\n" + (
        "\n".join(f"{name}: {lines}" for name, lines in sorted(found.items()))
    )


def test_each_pending_file_still_needs_its_entry():
    """An entry whose file is clean (or gone) is stale: remove it, so the list stays the work
    that is left."""
    pattern = _pattern()
    stale = [name for name in PENDING if not _leaks(ROOT / name, pattern)]
    assert not stale, f"clean now, remove from PENDING: {stale}"


@pytest.mark.parametrize(
    ("line", "leaks"),
    [
        (f'"dir": "{ROOT}/results/real"', True),
        ("python /work/main/scripts/x.py", True),
        ("cache at /root/.cache/pip", True),
        (f"{tempfile.gettempdir()}/pytest-of-root/pytest-3/x", True),
        ("not under pytest's tmp folder: /tmp/pytest-of-root is 0700", False),
        ("results/long/hive/work/long-hive-join/x", False),
        ("path: /tmp/hadoop-yarn/staging/root/.staging/job_1", False),
        ("python -m tests.helpers.testbed up 3 /tmp/tb", False),
    ],
)
def test_the_rule_sees_paths_where_they_start_only(line, leaks):
    assert bool(_pattern().search(line)) is leaks
