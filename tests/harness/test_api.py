"""The front door (harness.api): compose, prepare, run, run_objects — one loop behind all four."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baselines.sampling import LHSTuner
from harness import api
from harness.errors import ConfigError
from harness.records import Observation
from harness.session.options import SessionOptions, SessionPolicy
from harness.store.memory import MemoryStore
from harness.store.samples import SampleStore
from systems.synthetic import SyntheticSystem
from systems.synthetic.system import SyntheticWorkload


def _overrides(tmp_path: Path, *more: str) -> list[str]:
    return [
        "system=synthetic10",
        "tuner=lhs",
        "budget=8",
        "seed=3",
        "tracking=none",
        "session.progress=false",
        f"results_dir={tmp_path / 'results'}",
        *more,
    ]


def test_compose_uses_the_shipped_configs_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no conf/ here: the configs come from the package
    cfg = api.compose(["system=mysql", "workload=readonly", "budget=7"])
    assert cfg.system.name == "mysql" and cfg.workload.name == "readonly" and cfg.budget == 7
    assert cfg.tuner._target_.startswith("classytune.")


def test_a_disk_session_and_a_memory_session_measure_the_same_tests(tmp_path: Path) -> None:
    on_disk = api.run(api.compose(_overrides(tmp_path)))
    in_memory = api.run(api.compose(_overrides(tmp_path)), store="memory")
    assert on_disk.status == in_memory.status == "FINISHED"
    assert [o.config for o in on_disk.observations] == [o.config for o in in_memory.observations]
    assert [o.score for o in on_disk.observations] == [o.score for o in in_memory.observations]
    # the disk session has its folder; the memory one wrote nothing at all
    assert len(SampleStore(on_disk.directory).load()) == 8
    assert on_disk.csv_path is not None and on_disk.csv_path.exists()
    assert in_memory.csv_path is None and not in_memory.directory.exists()
    assert sorted(p.name for p in (tmp_path / "results" / "sessions").iterdir()) == [
        on_disk.directory.name
    ]
    # both finished sessions removed their work folders
    assert not any((tmp_path / "results" / "work").iterdir())


def test_prepare_validates_before_anything_runs(tmp_path: Path) -> None:
    session = api.prepare(api.compose(_overrides(tmp_path)), store="memory")
    assert isinstance(session.store, MemoryStore) and session.store.load() == []
    assert session.tuner_name == "lhs" and session.options.budget == 8
    with pytest.raises(ConfigError, match="knob"):
        api.prepare(api.compose(_overrides(tmp_path, "+system.fixed.no_such_knob=1")))


def test_a_memory_store_cannot_be_resumed(tmp_path: Path) -> None:
    done = api.run(api.compose(_overrides(tmp_path, "session.name=first")))
    with pytest.raises(ConfigError, match="needs the disk store"):
        api.prepare(api.compose(_overrides(tmp_path, f"resume={done.directory}")), store="memory")


def test_run_objects_runs_the_session_loop_on_objects_built_by_hand(tmp_path: Path) -> None:
    system, workload = SyntheticSystem(knob_set="10"), SyntheticWorkload()
    seen: list[Observation] = []
    result = api.run_objects(
        lambda space, seed, budget: LHSTuner(space, seed=seed, budget=budget),
        system,
        workload,
        budget=6,
        seed=1,
        results_dir=tmp_path,
        on_progress=lambda obs, best: seen.append(obs),
    )
    assert result.status == "FINISHED"
    assert [o.trial for o in result.observations] == list(range(6)) == [o.trial for o in seen]
    assert result.observations[0].is_default and result.best is not None
    assert not (tmp_path / "sessions").exists()  # in memory: no session folder


def test_run_objects_accepts_a_built_tuner_and_session_options(tmp_path: Path) -> None:
    system, workload = SyntheticSystem(knob_set="10"), SyntheticWorkload()
    tuner = LHSTuner(system.space, seed=0, budget=4)
    result = api.run_objects(
        tuner, system, workload, budget=4, results_dir=tmp_path, repeats=2, keep_workdir=True
    )
    assert len(result.observations) == 4
    measured = [o for o in result.observations if o.ok]
    assert measured and all(len(o.extra["runs"]) == 2 for o in measured)  # repeats=2
    assert tuner.best() is not None  # the same tuner object was told every test
    assert len(list((tmp_path / "work").iterdir())) == 1  # kept


def test_session_options_are_declared_once() -> None:
    """The config schema extends SessionPolicy: a new session.* option cannot be forgotten."""
    from dataclasses import fields

    from harness.conf.schema import SessionConf

    policy = {f.name for f in fields(SessionPolicy)}
    assert policy <= {f.name for f in fields(SessionConf)}
    assert policy <= {f.name for f in fields(SessionOptions)}
    assert {f.name for f in fields(SessionConf)} - policy == {"name"}


def test_the_stored_session_record_names_the_code_and_libraries(tmp_path: Path) -> None:
    done = api.run(api.compose(_overrides(tmp_path)))
    tags = json.loads((done.directory / "session.json").read_text())["tags"]
    assert tags["harness.tuner"] == "lhs"
    assert "harness.lib.numpy" in tags and "harness.lib.scikit-learn" in tags
