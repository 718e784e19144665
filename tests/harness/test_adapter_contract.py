"""Adapters declare where they run and do no I/O until preflight (issue 16, item 5).

Every ``conf/system`` adapter is checked: its declared ``placement`` matches what its
constructor accepts, and the adapters that reach hosts can be built on an executor that
refuses every call, which proves that constructing one touches nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hydra.utils import get_class

from harness.errors import ExecutorError
from harness.executor import CommandResult, Executor
from harness.system import PLACEMENT_KEYWORD, PLACEMENTS, RunsOnHost, System
from tests.conftest import CONF, group_options


class RefusingExecutor(Executor):
    """An executor that fails every call: any I/O in a constructor would raise."""

    host = "nowhere"
    calls: list[str]

    def __init__(self) -> None:
        self.calls = []

    def _refuse(self, what: str) -> Any:
        self.calls.append(what)
        raise ExecutorError(f"on {self.host}: {what} refused")

    def run(
        self,
        command: Sequence[str],
        *,
        timeout_s: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        user: str | None = None,
        check: bool = True,
        input_text: str | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> CommandResult:
        return self._refuse(f"run {list(command)}")  # type: ignore[no-any-return]

    def write_text(self, path: str | Path, text: str, mode: int = 0o644) -> None:
        self._refuse(f"write {path}")

    def read_text(self, path: str | Path) -> str:
        return self._refuse(f"read {path}")  # type: ignore[no-any-return]

    def exists(self, path: str | Path) -> bool:
        return self._refuse(f"exists {path}")  # type: ignore[no-any-return]

    def which(self, program: str, extra_dirs: Sequence[str] = ()) -> str | None:
        return self._refuse(f"which {program}")  # type: ignore[no-any-return]


def _adapter_targets() -> list[str]:
    import yaml

    targets = set()
    for name in group_options("system"):
        adapter = yaml.safe_load((CONF / "system" / f"{name}.yaml").read_text()).get("adapter")
        if isinstance(adapter, dict) and "_target_" in adapter:
            targets.add(adapter["_target_"])
    return sorted(targets)


def _adapter_class(target: str) -> type[System]:
    cls = get_class(target)
    assert issubclass(cls, System), f"{target} is not a System"
    return cls


@pytest.mark.parametrize("target", _adapter_targets())
def test_placement_is_declared_and_matches_the_constructor(target: str) -> None:
    cls = _adapter_class(target)
    assert cls.placement in PLACEMENTS, f"{target}: declares {cls.placement!r}"
    parameters = inspect.signature(cls).parameters
    taken = {place for place, keyword in PLACEMENT_KEYWORD.items() if keyword in parameters}
    assert taken == ({cls.placement} - {"local"}), (
        f"{target}: declares {cls.placement!r} but its constructor takes {sorted(taken)}"
    )


@pytest.mark.parametrize(
    "target", [t for t in _adapter_targets() if _adapter_class(t).placement == "host"]
)
def test_single_host_adapters_do_no_io_until_preflight(target: str) -> None:
    executor = RefusingExecutor()
    system = get_class(target)(executor=executor)  # must not touch the executor
    assert executor.calls == []
    assert isinstance(system, RunsOnHost) and system.executor is executor
    assert isinstance(system, System)
    with pytest.raises(ExecutorError, match="refused"):
        system.preflight()  # the installation check is where the I/O happens
    assert executor.calls
