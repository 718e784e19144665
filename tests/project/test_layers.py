"""The layering of the folders, as a test: what may import what, no cycles, small modules.

- ``harness/`` (the core) imports nothing from ``baselines/``, ``systems/`` or ``paper/``;
  ``baselines/`` and ``systems/`` never import each other; only ``paper/`` (and ``scripts/``,
  ``tests/``) sees everything. The contract is import-linter's, declared in pyproject.toml.
- No two modules import each other, directly or through others (function-level imports
  count: they are cycles postponed, not removed).
- No module is much over 600 lines (functions are held small by ruff's complexity and
  argument-count rules in pyproject.toml; a module holds one concept, not a line quota).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "baselines", "classytune", "systems", "paper")
#: "~600 lines": one concept per module; past this it is usually two.
MAX_LINES = 600


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the groups of modules that reach each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_strongly_connected_finds_a_cycle_and_only_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _strongly_connected(graph) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    grimp = pytest.importorskip("grimp")
    imports = grimp.build_graph(*PACKAGES)
    graph = {m: set(imports.find_modules_directly_imported_by(m)) for m in imports.modules}
    cycles = _strongly_connected(graph)
    assert not cycles, "modules that import each other: " + "; ".join(
        " <-> ".join(group) for group in cycles
    )


def test_layer_contract_holds() -> None:
    tool = Path(sys.executable).parent / "lint-imports"
    path = str(tool) if tool.exists() else shutil.which("lint-imports")
    if path is None:
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [path, "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def test_no_module_is_much_over_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): count
        for package in (*PACKAGES, "scripts")
        for path in (ROOT / package).rglob("*.py")
        if (count := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these modules: {long}"
