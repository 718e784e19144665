"""Config-compose tests over every group, and the system contract over every system config."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from harness.builder.session import make_objective, make_workload
from harness.builder.validate import check_workload_choices
from harness.conf.schema import workloads_of
from harness.errors import ConfigError
from harness.system import System, Workload
from tests.conftest import CONF, ROOT, group_options

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
    offered = workloads_of(system)
    assert offered and cfg.workload.name in offered  # the default is one of them
    for name in offered:
        cfg = compose_cfg(f"system={system}", f"workload={name}", *extra)
        workload = make_workload(cfg)
        assert isinstance(workload, Workload) and workload.name == name
        assert workload.metrics, f"{system}/{name} declares no metrics"
        objective = make_objective(cfg, workload, {"cores": 2.0})
        assert objective.metric == workload.metrics[0].name


def test_workload_choices_are_generated_from_the_systems_workload_folders() -> None:
    from hydra.core.config_store import ConfigStore

    offered = {name for system in group_options("system") for name in workloads_of(system)}
    generated = {
        name.removesuffix(".yaml") for name in ConfigStore.instance().list("workload")
    } - {"default"}
    assert generated == offered  # one choice per workload some system offers, none else
    assert not (CONF / "workload").exists()  # no selector file per name
    assert not (CONF / "workloads" / "moot_apache" / "default.yaml").exists()


def test_a_system_with_one_workload_defaults_to_it_and_one_with_several_to_its_file(
    compose_cfg: Compose,
) -> None:
    assert compose_cfg("system=moot_apache").workload.name == "surrogate"
    assert compose_cfg("system=tomcat").workload.name == "explore"
    assert compose_cfg("system=mysql").workload.name == "tpcc"  # workloads/mysql/default.yaml


def test_a_workload_the_system_does_not_offer_gets_one_line_naming_its_workloads() -> None:
    with pytest.raises(
        ConfigError,
        match=r"system 'mysql' has no workload 'pagerank'; it "
        r"offers: readonly, readwrite, tpcc",
    ):
        check_workload_choices(["system=mysql", "workload=pagerank"])
    with pytest.raises(ConfigError, match="system 'spark' has no workload 'tpcc'"):
        check_workload_choices(["-m", "system=mysql,spark", "workload=tpcc"])
    check_workload_choices(["system=mysql,postgres", "workload=tpcc"])  # both offer it
    check_workload_choices(["system=sqlite", "workload=default"])
    check_workload_choices(["system=nosuch", "workload=tpcc"])  # Hydra names the systems


def test_workload_settings_are_config_keys_checked_against_the_driver(
    compose_cfg: Compose,
) -> None:
    cfg = compose_cfg("system=mysql", "workload=readonly", "workload.threads=4")
    assert make_workload(cfg).threads == 4  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"workload 'readonly' has no setting.* treads"):
        make_workload(compose_cfg("system=mysql", "workload=readonly", "+workload.treads=4"))
    with pytest.raises(ConfigError, match="duration_s=0: the measurement needs a positive"):
        make_workload(compose_cfg("system=mysql", "workload.duration_s=0"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("workload.duration_s=nan",), r"duration_s=nan: .* takes a finite number, 0 or more"),
        (("workload.duration_s=abc",), r"duration_s=abc: workload 'readwrite' takes a number"),
        (("workload.threads=-2",), r"threads=-2: .* 0 or more"),
        (("workload.threads=2.5",), r"threads=2.5: threads is a whole number, e.g. 2"),
        (("workload.threads=0",), r"threads=0: use a whole number, 1 or more"),
        (("workload=tpcc", "workload.warehouses=inf"), r"warehouses=inf: .* finite number"),
        (("system=postgres", "workload=pgbench", "workload.sampling_rate=2"), r"\(0, 1\]"),
        (
            ("system=tomcat", "workload=explore", "workload.connections=0"),
            r"connections=0: use a whole number",
        ),
    ],
)
def test_workload_numbers_get_one_line(
    compose_cfg: Compose, args: tuple[str, ...], message: str
) -> None:
    """Bad numbers for a workload are refused before anything starts, never cut or passed on."""
    chosen = " ".join(args)
    system = [] if "system=" in chosen else ["system=mysql"]
    workload = [] if "workload=" in chosen else ["workload=readwrite"]
    with pytest.raises(ConfigError, match=message):
        make_workload(compose_cfg(*system, *workload, *args))


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


def test_the_config_folders_a_command_line_adds(tmp_path: Path) -> None:
    from harness.conf.choices import config_folders, folder_of, user_folders

    arguments = [
        "--config-dir",
        "a",
        "-cd",
        "b",
        "--config-dir=c",
        "hydra.searchpath=[file://d,e]",
    ]
    assert user_folders(arguments) == ["a", "b", "c", "file://d", "e"]
    assert folder_of("pkg://paper.conf") == ROOT / "paper" / "conf"
    assert folder_of("pkg://no_such_package.conf") is None
    assert folder_of(f"file://{tmp_path}") == tmp_path.resolve()
    assert config_folders([str(tmp_path)]) == [CONF, ROOT / "paper" / "conf", tmp_path.resolve()]
