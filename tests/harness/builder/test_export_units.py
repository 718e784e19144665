"""Every export format states each knob's unit, for real, synthetic and recorded-data systems
alike, and a recorded count or type code comes out as the whole number the system takes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from omegaconf import DictConfig

from harness import api
from harness.builder.export import export_session


def _session(compose_cfg: Callable[..., DictConfig], system: str) -> Path:
    result = api.run(compose_cfg(f"system={system}", "tuner=lhs", "budget=3"))
    assert result.status == "FINISHED"
    return Path(result.directory)


def _exported(folder: Path, fmt: str, out: Path) -> str:
    export_session(folder, fmt, out)  # type: ignore[arg-type]
    return (out / f"best.{fmt}").read_text()


@pytest.mark.parametrize(("system", "knob", "unit"), [("synthetic10", "buffer_pool_mb", "MiB")])
def test_a_synthetic_system_keeps_its_units_in_every_format(
    compose_cfg: Callable[..., DictConfig], tmp_path: Path, system: str, knob: str, unit: str
) -> None:
    folder = _session(compose_cfg, system)
    assert json.loads((folder / "session.json").read_text())["units"][knob] == unit
    text = _exported(folder, "yaml", tmp_path / "yaml")
    assert any(
        line.startswith(f"{knob}:") and line.endswith(f"# {unit}") for line in text.split("\n")
    )
    assert json.loads(_exported(folder, "json", tmp_path / "json"))["units"][knob] == unit
    env = _exported(folder, "env", tmp_path / "env")
    assert f"# {unit}" in env
    shown = subprocess.run(
        [
            "sh",
            "-c",
            f'. "$0"; printf %s "$HARNESS_KNOB_{knob.upper()}"',
            str(tmp_path / "env" / "best.env"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout == str(yaml.safe_load(text)[knob])  # the comment is no part of the value


def test_a_recorded_data_system_exports_units_and_whole_numbers(
    compose_cfg: Callable[..., DictConfig], tmp_path: Path
) -> None:
    folder = _session(compose_cfg, "surrogate_mysql_oltp")
    best = yaml.safe_load((folder / "export" / "best.yaml").read_text())
    assert best["query_cache_type"] in (0, 1, 2)
    assert all(isinstance(v, int) for k, v in best.items() if k != "query_cache_type")
    assert "innodb_buffer_pool_size:" in (folder / "export" / "best.yaml").read_text()
    units = json.loads(_exported(folder, "json", tmp_path / "json"))["units"]
    assert units["innodb_buffer_pool_size"] == "KiB"
