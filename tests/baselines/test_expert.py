"""Expert tuners: rules per system, clipping into the space, one test after the default."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from omegaconf import DictConfig

from baselines.expert import ExpertTuner, expert_setting, load_rules
from harness.errors import ConfigError
from harness.hosts.machine import Machine
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.confirm import CONFIRM_KEY
from harness.session.options import SessionOptions
from harness.session.session import Session
from harness.space import Config
from harness.store.samples import SampleStore
from harness.tracking.tracker import NullTracker
from systems.synthetic import SyntheticSystem, SyntheticWorkload

#: The synthetic systems' rules, as their configs name them (system.expert_rules).
RULES = "systems.synthetic.expert"


def test_synthetic_rules_and_one_test_after_default() -> None:
    space = SyntheticSystem("10").space
    tuner = ExpertTuner(space, budget=2, rules=RULES, style="manual")
    default, expert = tuner.ask(2)
    assert default == space.default() and expert != default
    assert expert["flush_policy"] == "o_direct" and expert["buffer_pool_mb"] == 1024
    assert tuner.ask(2) == [expert, expert]  # asked for more: the same setting again
    assert tuner.params()["style"] == "manual"


def test_script_rules_scale_with_machine_and_clip(caplog: pytest.LogCaptureFixture) -> None:
    space = SyntheticSystem("10").space
    small = expert_setting(space, RULES, "script", Machine(ram_bytes=4 << 30, cores=2))
    assert small["buffer_pool_mb"] == 1024 and small["worker_threads"] == 8
    with caplog.at_level(logging.WARNING):
        huge = expert_setting(space, RULES, "script", Machine(ram_bytes=1 << 40, cores=64))
    assert huge["buffer_pool_mb"] == 16384 and "clipped" in caplog.text
    assert space.validate(huge) == huge


def test_missing_rules_and_unknown_style() -> None:
    with pytest.raises(ConfigError, match="no expert rules"):
        load_rules(None, "nosuchsystem")
    with pytest.raises(ConfigError, match="cannot be imported"):
        load_rules("systems.nosuchsystem.expert", "nosuchsystem")
    with pytest.raises(ConfigError, match="style"):
        expert_setting(SyntheticSystem("10").space, RULES, "guess")


def test_each_system_config_names_its_own_rules(
    compose_cfg: Callable[..., DictConfig],
) -> None:
    cfg = compose_cfg("tuner=expert_script", "system=mysql")
    assert cfg.tuner.rules == "systems.mysql.expert"
    assert compose_cfg("tuner=expert_manual", "system=surrogate_tomcat").tuner.rules is None


def _told(trial: int, config: Config, score: float | None) -> Observation:
    ok = score is not None
    status = Status.SUCCEEDED if ok else Status.FAILED
    return Observation(trial=trial, config=config, status=status, score=score)


def test_the_answer_is_the_expert_setting_even_when_the_default_beat_it() -> None:
    space = SyntheticSystem("10").space
    tuner = ExpertTuner(space, budget=2, rules=RULES, style="manual")
    default, expert = tuner.ask(2)
    tuner.tell([_told(0, default, 100.0), _told(1, expert, 60.0)])
    answer = tuner.answer()
    assert answer is not None and answer.trial == 1 and tuner.best().trial == 0  # type: ignore[union-attr]
    broken = ExpertTuner(space, budget=2, rules=RULES, style="manual")
    default, expert = broken.ask(2)
    broken.tell([_told(0, default, 100.0), _told(1, expert, None)])
    assert broken.answer() is not None and broken.answer().trial == 0  # type: ignore[union-attr]


def test_a_losing_expert_setting_is_confirmed_against_the_default(tmp_path: Path) -> None:
    # Minimising throughput makes the expert's larger buffer pool a loss on the synthetic system.
    store = SampleStore(tmp_path / "s")
    store.create({"session_id": "s", "experiment": "x"})
    result = Session(
        session_id="s",
        store=store,
        tuner_factory=functools.partial(ExpertTuner, rules=RULES, style="manual"),
        system=SyntheticSystem("10", noise=0.01),
        workload=SyntheticWorkload(),
        objective=Objective("throughput", "min"),
        tracker=NullTracker(),
        options=SessionOptions(budget=2, progress=False, confirm=3),
    ).run()
    assert result.best is not None and result.best.trial == 0  # the default measured better
    assert result.answer is not None and result.answer.trial == 1
    roles = [r.extra[CONFIRM_KEY] for r in result.references if CONFIRM_KEY in r.extra]
    assert roles == ["default", "best"] * 3
    improvement = result.improvement()
    assert improvement is not None and improvement < 0
