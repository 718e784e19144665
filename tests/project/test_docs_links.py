"""The docs a clone ships stand on their own: every relative link and every quoted repository
path in a Markdown file names a file of the repository, and none points outside it (the
project's working notes are not in a clone)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tracked(pattern: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", pattern], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed]


DOCS = [p for p in _tracked("*.md") if "/sessions/" not in str(p)]
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")  # [text](target) with a file target
_OUTSIDE = re.compile(r"(?:\.\./shared|shared/notes|shared/seed|shared/data)/")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_doc_points_only_inside_the_repository(doc: Path) -> None:
    text = doc.read_text()
    assert not _OUTSIDE.search(text), f"{doc.name} cites a file outside the repository"
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        resolved = (doc.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{target} leaves the repository"
        assert resolved.exists(), f"{doc.name}: the link {target} names no file"


def test_the_code_cites_no_working_notes() -> None:
    for path in _tracked("*.py"):
        assert not _OUTSIDE.search(path.read_text()), f"{path} cites a file outside the repo"
