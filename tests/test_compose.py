"""Config-compose tests over every group, and the system contract over every system config."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from harness.build import make_objective, make_workload
from harness.system import System, Workload
from tests.conftest import ROOT, group_options

Compose = Callable[..., DictConfig]
SYSTEMS = [s for s in group_options("system") if s != "dataset"]
DATASET = [
    f"dataset.path={ROOT}/systems/dataset/data/local/sqlite_readwrite_lhs200.csv",
    "dataset.target=tps",
]


@pytest.mark.parametrize("tuner", group_options("tuner"))
def test_every_tuner_composes_and_builds_a_partial(compose_cfg: Compose, tuner: str) -> None:
    cfg = compose_cfg(f"tuner={tuner}", "system=synthetic10")
    factory = instantiate(cfg.tuner)
    assert isinstance(factory, partial)


@pytest.mark.parametrize("system", group_options("system"))
def test_every_system_config_honours_the_contract(compose_cfg: Compose, system: str) -> None:
    extra = DATASET if system == "dataset" else []
    cfg = compose_cfg(f"system={system}", *extra)
    adapter = instantiate(cfg.system.adapter)
    assert isinstance(adapter, System)
    space = adapter.space
    assert space.validate(space.default()) == space.default()
    assert cfg.system.default_workload in cfg.system.workloads
    for name in cfg.system.workloads:
        cfg.workload.name = name
        workload = make_workload(cfg, cfg.system.name)
        assert isinstance(workload, Workload)
        assert workload.metrics, f"{system}/{name} declares no metrics"
        objective = make_objective(cfg, workload, {"cores": 2.0})
        assert objective.metric == workload.metrics[0].name


@pytest.mark.parametrize("workload", group_options("workload"))
def test_every_workload_option_belongs_to_some_system(compose_cfg: Compose, workload: str) -> None:
    if workload == "default":
        return
    offered = set()
    for system in group_options("system"):
        extra = DATASET if system == "dataset" else []
        offered |= set(compose_cfg(f"system={system}", *extra).system.workloads)
    assert workload in offered


@pytest.mark.parametrize("tracking", group_options("tracking"))
def test_tracking_options_compose(compose_cfg: Compose, tracking: str) -> None:
    cfg = compose_cfg()
    assert OmegaConf.select(cfg, "tracking.enabled") is not None
    with pytest.raises(Exception, match="tracking"):
        compose_cfg("tracking=nonesuch")
    del tracking


def test_default_session_is_classytune_on_sqlite(compose_cfg: Compose) -> None:
    cfg = compose_cfg()
    assert cfg.system.name == "sqlite"
    assert "classytune" in cfg.tuner._target_.lower()
    assert cfg.budget == 100
