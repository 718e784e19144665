"""``--help`` is answered without composing and without loading the sessions: the same page
Hydra renders, for the default and a chosen system."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.quick_help import help_text

ROOT = Path(__file__).resolve().parents[3]
#: Hydra's own answer: the application called directly, not through the entry point.
HYDRA_HELP = "import sys; from harness.cli.app import main; sys.argv[0] = 'harness'; main()"
#: The entry point, then which heavy modules it loaded.
ENTRY = (
    "import sys; sys.argv = ['harness', '--help']; from harness.__main__ import main; main(); "
    "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith(HEAVY)}))"
)


@pytest.mark.parametrize("arguments", [["--help"], ["system=postgres", "--help"]])
def test_the_page_is_the_one_hydra_renders(arguments: list[str]) -> None:
    hydra = subprocess.run(
        [sys.executable, "-c", HYDRA_HELP, *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    page = help_text(arguments)
    assert page is not None and page + "\n" == hydra.stdout


def test_the_entry_point_loads_no_session_machinery() -> None:
    heavy = ("scipy", "mlflow", "sklearn", "harness.session", "harness.api")
    code = f"HEAVY = {heavy!r}; {ENTRY}"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "== Choices" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "arguments", [["--hydra-help"], ["--help", "--config-name=other"], ["tuner=lhs"]]
)
def test_what_only_hydra_knows_is_left_to_it(arguments: list[str]) -> None:
    assert help_text(arguments) is None
