"""Expert tuners: rules per system, clipping into the space, one test after the default."""

from __future__ import annotations

import logging

import pytest

from harness.errors import ConfigError
from harness.machine import Machine
from paper.expert import ExpertTuner, expert_setting, load_rules
from systems.synthetic import SyntheticSystem


def test_synthetic_rules_and_one_test_after_default() -> None:
    space = SyntheticSystem("10").space
    tuner = ExpertTuner(space, budget=2, system="synthetic10", style="manual")
    default, expert = tuner.ask(2)
    assert default == space.default() and expert != default
    assert expert["flush_policy"] == "o_direct" and expert["buffer_pool_mb"] == 1024
    assert tuner.ask(2) == [expert, expert]  # asked for more: the same setting again
    assert tuner.params()["style"] == "manual"


def test_script_rules_scale_with_machine_and_clip(caplog: pytest.LogCaptureFixture) -> None:
    space = SyntheticSystem("10").space
    small = expert_setting(space, "synthetic", "script", Machine(ram_bytes=4 << 30, cores=2))
    assert small["buffer_pool_mb"] == 1024 and small["worker_threads"] == 8
    with caplog.at_level(logging.WARNING):
        huge = expert_setting(space, "synthetic", "script", Machine(ram_bytes=1 << 40, cores=64))
    assert huge["buffer_pool_mb"] == 16384 and "clipped" in caplog.text
    assert space.validate(huge) == huge


def test_missing_rules_and_unknown_style() -> None:
    with pytest.raises(ConfigError, match="no expert rules"):
        load_rules("nosuchsystem")
    with pytest.raises(ConfigError, match="style"):
        expert_setting(SyntheticSystem("10").space, "synthetic", "guess")
