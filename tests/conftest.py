"""Shared fixtures: composing the Hydra config the way ``python -m harness`` does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from harness.config import register_configs

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "conf"

register_configs()

# The private sshd fixture (tests/sshd.py) for the remote-execution tests.
pytest_plugins = ["tests.sshd"]


def group_options(group: str) -> list[str]:
    """Names of the YAML options of a config group in conf/."""
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.fixture
def compose_cfg(tmp_path: Path) -> Callable[..., DictConfig]:
    """Compose the app's config with overrides, writing results under tmp_path."""

    def _compose(*overrides: str, tracking: bool = False) -> DictConfig:
        base = [f"results_dir={tmp_path / 'results'}", "session.progress=false"]
        if tracking:
            base.append(f"tracking.uri=sqlite:///{tmp_path / 'results' / 'mlflow.db'}")
        else:
            base.append("tracking=none")
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            return compose(config_name="config", overrides=[*base, *overrides])

    return _compose
