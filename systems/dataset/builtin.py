"""The built-in surrogates: their Hydra configs in ``harness/conf/system/surrogate_*.yaml``
(and their workload in ``harness/conf/workloads/<name>/surrogate.yaml``), loadable without
the app (for scripts and benchmarks)."""

from __future__ import annotations

from typing import Any

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from harness.conf import CONFIG_DIR
from harness.conf.schema import HarnessConfig
from systems.dataset.system import DatasetSystem, SurrogateWorkload

__all__ = ["CONF_DIR", "builtin_names", "load_builtin"]

CONF_DIR = CONFIG_DIR / "system"
RESULTS_DIR = HarnessConfig.results_dir


def builtin_names() -> list[str]:
    """Names of the built-in surrogates (``surrogate_*`` system configs)."""
    return sorted(p.stem for p in CONF_DIR.glob("surrogate_*.yaml"))


def load_builtin(name: str, **adapter_overrides: Any) -> tuple[DatasetSystem, SurrogateWorkload]:
    """Instantiate a built-in surrogate and its workload from its config file."""
    cfg = OmegaConf.load(CONF_DIR / f"{name}.yaml")
    assert isinstance(cfg, DictConfig)
    # The configs name the app's results_dir (their cache lives there): the app's default.
    root = OmegaConf.create({"results_dir": RESULTS_DIR, "system": cfg})
    for key, value in adapter_overrides.items():
        root.system.adapter[key] = value
    system = instantiate(root.system.adapter)
    node = OmegaConf.load(CONFIG_DIR / "workloads" / name / "surrogate.yaml")
    assert isinstance(node, DictConfig)
    workload = instantiate({k: v for k, v in node.items() if k != "name"})
    workload.name = str(node.name)
    return system, workload
