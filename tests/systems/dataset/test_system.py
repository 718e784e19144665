"""Dataset-backed surrogate systems end to end: built-ins, harness exports, sessions, noise."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hydra.utils import instantiate
from omegaconf import DictConfig

from baselines.sampling import LHSTuner
from harness import api
from harness.builder.session import make_workload
from harness.errors import ConfigError
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.trial import run_test
from harness.store.samples import export_csv
from harness.system import System, Workload
from harness.tuner import Tuner
from systems.dataset import DatasetSystem, SurrogateWorkload
from systems.dataset import model as model_module
from systems.dataset import system as system_module
from systems.dataset.optimum import load_optima
from systems.synthetic import SyntheticSystem, SyntheticWorkload
from tests.conftest import group_options

Compose = Callable[..., DictConfig]
SURROGATES = [name for name in group_options("system") if name.startswith("surrogate_")]


@pytest.fixture(scope="session")
def cache_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Fitted models persist in pytest's cache between local runs (fresh on CI; a run folder
    of their own with ``-p no:cacheprovider``)."""
    cache = getattr(request.config, "cache", None)
    return str(cache.mkdir("surrogates") if cache else tmp_path_factory.mktemp("surrogates"))


def _build(
    compose: Compose, name: str, cache: str, *overrides: str
) -> tuple[DatasetSystem, SurrogateWorkload, DictConfig]:
    cfg = compose(f"system={name}", f"system.adapter.cache_dir={cache}", *overrides)
    system = instantiate(cfg.system.adapter)
    workload = make_workload(cfg)
    assert isinstance(workload, SurrogateWorkload)
    return system, workload, cfg


def _lhs_session(
    tuner: Tuner, system: System, workload: Workload, budget: int, folder: Path
) -> list[Observation]:
    """A whole in-memory session through the API (crashes in a row allowed); its tests."""
    result = api.run_objects(
        tuner,
        system,
        workload,
        budget=budget,
        results_dir=folder,
        max_consecutive_crashes=budget + 1,
    )
    assert result.status == "FINISHED", result.message
    return result.observations


def test_the_builtin_surrogates_are_configured() -> None:
    assert SURROGATES == [
        "surrogate_cassandra_ycsba",
        "surrogate_hive_join",
        "surrogate_hive_pagerank",
        "surrogate_mysql_oltp",
        "surrogate_mysql_zipfian",
        "surrogate_spark_pagerank",
        "surrogate_sqlite_readwrite",
        "surrogate_tomcat",
    ]


# Fitting Tomcat (3960 rows) and Hive Join (110 knobs) takes a few seconds on a fresh cache.
_SLOW_FIT = ("surrogate_tomcat", "surrogate_hive_join")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_FIT else n for n in SURROGATES]
)
def test_each_builtin_surrogate_loads_and_evaluates(
    compose_cfg: Compose, cache_dir: str, name: str, tmp_path: Path
) -> None:
    system, workload, cfg = _build(compose_cfg, name, cache_dir)
    assert system.kind == "surrogate" and cfg.system.name == name
    assert cfg.workload.name == "surrogate" and workload.name == "surrogate"
    assert cfg.system.description.startswith("SURROGATE")
    system.setup(tmp_path, workload)
    objective = Objective.for_workload(workload.metrics)
    assert (objective.metric, objective.direction) == (system.target, "max")
    # The default is the first data row (BestConfig's, or the export's is_default row).
    first = system.dataset.configs[0]
    assert system.space.default() == first
    obs = run_test(system, workload, objective, system.space.default(), 0, is_default=True)
    assert system.model is not None
    low, high = system.model.value_range
    if obs.ok:
        assert low <= obs.metrics[system.target] <= high
    else:  # Hive's default sits next to many slow (aborted) configurations
        assert obs.status is Status.TIMED_OUT
    statuses = [
        run_test(system, workload, objective, system.space.decode(p), i + 1).status
        for i, p in enumerate(np.random.default_rng(0).random((20, system.space.dim)))
    ]
    assert Status.SUCCEEDED in statuses
    assert set(statuses) <= {Status.SUCCEEDED, Status.TIMED_OUT}
    tags = system.describe()
    assert tags["system_kind"] == "surrogate" and tags["surrogate_target"] == system.target
    assert float(tags["fidelity_tau"]) == pytest.approx(system.fidelity.tau, abs=1e-3)


def test_cassandra_is_loud_about_its_useless_fidelity(
    compose_cfg: Compose, cache_dir: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        system, _, _ = _build(compose_cfg, "surrogate_cassandra_ycsba", cache_dir)
    assert "POOR FIDELITY" in caplog.text
    assert system.describe()["fidelity_warning"] != "none"
    refused = compose_cfg(
        "system=surrogate_cassandra_ycsba",
        f"system.adapter.cache_dir={cache_dir}",
        "system.adapter.allow_poor_fidelity=false",
    )
    with pytest.raises(ConfigError, match="surrogate_cassandra_ycsba is useless: held-out"):
        api.prepare(refused, store="memory")


def test_a_hundred_test_lhs_session_on_a_surrogate_is_answered_by_its_model(
    compose_cfg: Compose, cache_dir: str, tmp_path: Path
) -> None:
    """Every test is the model's prediction (the speed of a surrogate test is a benchmark's
    business: paper.overhead, not a test's)."""
    system, workload, _ = _build(compose_cfg, "surrogate_mysql_oltp", cache_dir)
    observations = _lhs_session(
        LHSTuner(system.space, seed=3, budget=100), system, workload, 100, tmp_path
    )
    assert len(observations) == 100 and all(o.ok for o in observations)
    default = observations[0]
    assert default.is_default and default.metrics["performance"] == pytest.approx(
        system.predict(system.space.default())
    )
    best = max(o.metrics["performance"] for o in observations)
    assert best > 1.5 * default.metrics["performance"]  # the recorded data allows ~4x
    optimum_config, optimum = system.known_optimum()
    assert optimum >= best and system.predict(optimum_config) == pytest.approx(optimum)


def test_committed_optima_match_the_builtin_models(compose_cfg: Compose, cache_dir: str) -> None:
    optima = load_optima()
    assert sorted(optima) == SURROGATES
    system, _, _ = _build(compose_cfg, "surrogate_spark_pagerank", cache_dir)
    entry = optima["surrogate_spark_pagerank"]
    assert entry["model_key"] == system.model_key  # else known_optimum() would re-search
    config, value = system.known_optimum()
    assert value == entry["value"] and system.predict(config) == pytest.approx(value)


def test_noise_is_residual_draws_and_deterministic_under_its_seed(
    compose_cfg: Compose, cache_dir: str
) -> None:
    def measures(seed: int, noise: float) -> list[float]:
        system, _, _ = _build(
            compose_cfg,
            "surrogate_mysql_zipfian",
            cache_dir,
            f"system.adapter.noise={noise}",
            f"system.adapter.noise_seed={seed}",
        )
        system.apply(system.space.default())
        system.start(1.0)
        return [system.measure()["performance"] for _ in range(30)]

    clean = measures(0, 0.0)
    assert len(set(clean)) == 1
    first, again, other = measures(7, 1.0), measures(7, 1.0), measures(8, 1.0)
    assert first == again and first != other
    system, _, _ = _build(compose_cfg, "surrogate_mysql_zipfian", cache_dir)
    offsets = np.array(first) - clean[0]
    assert system.model is not None
    residuals = system.model.residuals
    assert all(np.isclose(residuals, o).any() for o in offsets)  # each offset is one residual


# -- the harness's own exported samples ------------------------------------------------------


@pytest.fixture(scope="module")
def synthetic_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real 150-test LHS session on the synthetic system, exported like any session."""
    system, workload = SyntheticSystem(knob_set="10"), SyntheticWorkload()
    folder = tmp_path_factory.mktemp("export")
    observations = _lhs_session(
        LHSTuner(system.space, seed=0, budget=150), system, workload, 150, folder
    )
    path = folder / "samples.csv"
    export_csv(observations, path)
    return path


def test_a_harness_export_becomes_a_surrogate(synthetic_export: Path, tmp_path: Path) -> None:
    real = SyntheticSystem(knob_set="10")
    surrogate = DatasetSystem(str(synthetic_export), "throughput", cache_dir=str(tmp_path))
    assert surrogate.name == "surrogate_samples" and surrogate.target == "throughput"
    assert surrogate.space.names == real.space.names
    assert surrogate.space["flush_policy"].type == "enum"
    assert surrogate.space["compression"].type == "bool"
    assert surrogate.space.default() == real.space.default()  # from the is_default row
    assert surrogate.dataset.failure_statuses.get("CRASHED", 0) >= 3
    assert surrogate.model is not None and surrogate.failure_status == "crashed"
    assert surrogate.model.has_failure_model
    # The surrogate ranks fresh configurations like the real (synthetic) system does.
    points = np.random.default_rng(5).random((200, 10))
    configs = [surrogate.space.decode(p) for p in points]  # inside the data's bounds
    truth = []
    for config in configs:
        real.apply(config)
        truth.append(real.measure()["throughput"] if not _crashes(real) else np.nan)
    ok = ~np.isnan(truth)
    predicted = [surrogate.predict(c) for c, keep in zip(configs, ok, strict=True) if keep]
    from scipy.stats import kendalltau

    assert kendalltau(np.array(truth)[ok], predicted).statistic > 0.3
    # A configuration deep in the crash region crashes the surrogate too.
    crash = real.space.default()
    crash["buffer_pool_mb"] = int(surrogate.space["buffer_pool_mb"].high or 0)
    workload = SurrogateWorkload("throughput", "max")
    obs = run_test(surrogate, workload, Objective("throughput", "max"), crash, 1)
    assert obs.status is Status.CRASHED


def _crashes(system: SyntheticSystem) -> bool:
    try:
        system.start(1.0)
    except Exception:
        return True
    return False


def test_model_is_cached_per_data_and_settings(
    synthetic_export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = DatasetSystem(str(synthetic_export), "throughput", cache_dir=str(tmp_path))
    assert len(list(tmp_path.glob("surrogate-*.npz"))) == 1

    def no_refit(*args: object, **kwargs: object) -> None:
        raise AssertionError("refitted although a cached model exists")

    monkeypatch.setattr(model_module.SurrogateModel, "fit", no_refit)
    model_module.clear_memory_cache()  # from the disk cache this time
    again = DatasetSystem(str(synthetic_export), "throughput", cache_dir=str(tmp_path))
    assert again.model_key == first.model_key
    with pytest.raises(AssertionError, match="refitted"):  # other settings: another model
        DatasetSystem(
            str(synthetic_export), "throughput", cache_dir=str(tmp_path), n_estimators=50
        )


def test_building_the_same_surrogate_again_reuses_data_and_model(
    synthetic_export: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No disk cache: what makes the second build cheap is this process's memory.
    copy = tmp_path / "samples.csv"
    copy.write_bytes(synthetic_export.read_bytes())
    first = DatasetSystem(str(copy), "throughput", cache_dir=None)

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed or fitted again")

    monkeypatch.setattr(system_module, "read_table", forbidden)
    monkeypatch.setattr(model_module.SurrogateModel, "fit", forbidden)
    again = DatasetSystem(str(copy), "throughput", cache_dir=None, noise=0.5, noise_seed=3)
    assert again.model is first.model and again.dataset is first.dataset
    assert again.noise == 0.5 and first.noise == 0.0  # per-system settings stay per system
    copy.write_bytes(synthetic_export.read_bytes())  # rewritten, same content: still cached
    DatasetSystem(str(copy), "throughput", cache_dir=None)
    with pytest.raises(AssertionError, match="again"):  # other reading options: parsed anew
        DatasetSystem(str(copy), "throughput", cache_dir=None, exclude=["compression"])
    copy.write_text(synthetic_export.read_text().replace("\n", "\n", 1) + "\n")
    with pytest.raises(AssertionError, match="again"):  # other content: parsed anew
        DatasetSystem(str(copy), "throughput", cache_dir=None)


def test_dataset_config_runs_a_user_export_through_the_app(
    compose_cfg: Compose, synthetic_export: Path, cache_dir: str
) -> None:
    cfg = compose_cfg(
        "system=dataset",
        f"dataset.path={synthetic_export}",
        "dataset.target=throughput",
        "dataset.direction=max",
        "budget=40",
        f"system.adapter.cache_dir={cache_dir}",
        "tuner=random",
    )
    result = api.run(cfg, store="memory")
    assert result.status == "FINISHED" and len(result.observations) == 40
    assert result.observations[0].is_default and result.observations[0].ok
    missing = compose_cfg("system=dataset", f"dataset.path={synthetic_export}")
    with pytest.raises(ConfigError, match=r"dataset\.target"):
        api.prepare(missing, store="memory")


def test_useless_data_is_refused_unless_allowed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rng = np.random.default_rng(0)
    rows = "".join(f"{a:.4f},{b:.4f},{y:.4f}\n" for a, b, y in rng.random((80, 3)))
    path = tmp_path / "noise.csv"
    path.write_text("a,b,y\n" + rows)
    with pytest.raises(ConfigError, match="useless"):
        DatasetSystem(str(path), "y", cache_dir=None)
    with caplog.at_level(logging.WARNING):
        system = DatasetSystem(str(path), "y", cache_dir=None, allow_poor_fidelity=True)
    assert "POOR FIDELITY" in caplog.text and "τ" in system.describe()["fidelity_warning"]


def test_a_knob_catalogue_supplies_types_scales_and_ranges(
    synthetic_export: Path, tmp_path: Path
) -> None:
    from systems.synthetic.system import CATALOGUE

    plain = DatasetSystem(str(synthetic_export), "throughput", cache_dir=str(tmp_path))
    assert not plain.space["buffer_pool_mb"].log  # the data alone cannot tell
    typed = DatasetSystem(
        str(synthetic_export), "throughput", cache_dir=str(tmp_path), catalogue=str(CATALOGUE)
    )
    real = SyntheticSystem(knob_set="10").space
    assert typed.space.knobs == real.knobs
    assert typed.space.default() == real.default()
    narrow = tmp_path / "narrow.yaml"
    narrow.write_text(CATALOGUE.read_text().replace("max: 16384", "max: 1000", 1))
    with pytest.raises(ConfigError, match="does not fit the knob catalogue: knob 'buffer_pool"):
        DatasetSystem(
            str(synthetic_export), "throughput", cache_dir=str(tmp_path), catalogue=str(narrow)
        )
