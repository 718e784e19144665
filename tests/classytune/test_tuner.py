"""The paper's ClassyTune and what both ClassyTune tuners share: contract, determinism, failures,
mixed types, the classifier as a factory, artifacts + analyze."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from classytune import ClassyTunePaper, round_sizes
from classytune.analyze import knob_influence
from classytune.analyze import main as analyze_main
from classytune.classifiers import decision_tree, describe, resolve, xgboost
from classytune.model_io import load_artifacts
from harness.api import run_objects
from harness.errors import ConfigError
from harness.objectives.objective import Objective
from harness.records import Observation, Status
from harness.session.trial import run_test
from harness.space import Knob, Space
from systems.synthetic import SyntheticSystem, SyntheticWorkload

FAST: dict[str, Any] = {"s_factor": 10, "classifier": partial(xgboost, n_estimators=30)}


def run(
    results: Path, seed: int = 0, budget: int = 40, knob_set: str = "10", **kwargs: Any
) -> tuple[ClassyTunePaper, list[Observation]]:
    system, workload = SyntheticSystem(knob_set), SyntheticWorkload()
    tuner = ClassyTunePaper(system.space, seed=seed, budget=budget, **{**FAST, **kwargs})
    result = run_objects(tuner, system, workload, budget=budget, results_dir=results, seed=seed)
    assert result.status == "FINISHED"
    return tuner, result.observations


def test_round_sizes() -> None:
    assert round_sizes(100, 50, 1) == [50, 50]
    assert round_sizes(100, 30, 4) == [30, 18, 18, 17, 17]
    assert round_sizes(10, 8, 5) == [8, 1, 1]
    assert round_sizes(10, 10, 3) == [10]


def test_contract_batches_and_best_is_measured(tmp_path: Path) -> None:
    tuner, observations = run(tmp_path, rounds=2, initial_fraction=0.5)
    assert len(observations) == 40 and observations[0].is_default
    assert observations[0].config == tuner.space.default()
    assert tuner.plan == [20, 10, 10]
    assert [r["batch"] for r in tuner.round_log] == [10, 10]
    assert all(r["train_s"] >= 0 and r["search_s"] >= 0 for r in tuner.round_log)
    best = tuner.best()
    assert best is not None and best in observations
    assert best.score == max(float(o.score or 0) for o in observations if o.ok)
    params = tuner.params()
    assert params["name"] == "classytune_paper" and params["rounds"] == 2
    assert params["rules"] == "[]" and params["classifier"] == "xgboost"
    assert params["classifier_options"] == '{"n_estimators": 30}'
    assert "opponents" not in params  # the ranked tuner's options are not this one's


def test_ask_returns_at_most_n_valid_configs_in_any_batch_size() -> None:
    space = SyntheticSystem("10").space
    tuner = ClassyTunePaper(space, seed=1, budget=30, **FAST)
    assert tuner.preferred_batch == 15
    first = tuner.ask(4)
    assert len(first) == 4 and first[0] == space.default()
    rest = tuner.ask(100)  # more than the round holds: still valid configurations
    assert len(rest) == 100
    for config in first + rest:
        space.validate(config)


def test_deterministic_under_seed_and_batching(tmp_path: Path) -> None:
    a = [o.config for o in run(tmp_path, seed=3, rounds=2)[1]]
    b = [o.config for o in run(tmp_path, seed=3, rounds=2)[1]]
    c = [o.config for o in run(tmp_path, seed=4, rounds=2)[1]]
    assert a == b and a != c
    # one config per ask (tell after each) gives the same session as whole rounds
    system = SyntheticSystem("10")
    tuner = ClassyTunePaper(system.space, seed=3, budget=40, rounds=2, **FAST)
    objective = Objective.for_workload(SyntheticWorkload.metrics)
    configs = []
    for trial in range(40):
        (config,) = tuner.ask(1)
        configs.append(config)
        tuner.tell([run_test(system, SyntheticWorkload(), objective, config, trial)])
    assert configs == a


def test_failures_lose_every_comparison(tmp_path: Path) -> None:
    # the synthetic system crashes when buffer_pool_mb is in the top 7% of its range
    tuner, observations = run(tmp_path, seed=0, budget=40, rounds=2)
    failed = [o for o in observations if o.status is Status.CRASHED]
    assert failed and tuner.best() is not None and tuner.best().ok  # type: ignore[union-attr]
    scores = tuner.scores()
    worst_ok = min(float(o.score or 0) for o in observations if o.ok)
    assert all(scores[o.trial] < worst_ok for o in failed)


def test_all_failures_fall_back_to_lhs() -> None:
    space = SyntheticSystem("10").space
    tuner = ClassyTunePaper(space, seed=0, budget=12, n_initial=6, **FAST)
    configs = tuner.ask(6)
    tuner.tell([Observation(i, c, Status.FAILED, None) for i, c in enumerate(configs)])
    more = tuner.ask(6)
    assert len(more) == 6 and tuner.round_log[0]["fallback"] == "no_comparisons"
    assert tuner.best() is None


def test_mixed_types_and_rules() -> None:
    space = Space(
        (
            Knob("mode", "enum", "b", values=("a", "b", "c")),
            Knob("flag", "bool", False),
            Knob("threads", "int", 4, low=1, high=8),
            Knob("ratio", "float", 0.5, low=0.0, high=1.0),
        )
    )

    def score(config: dict) -> float:
        return (config["mode"] == "c") + config["flag"] + config["threads"] / 8 + config["ratio"]

    tuner = ClassyTunePaper(
        space,
        seed=0,
        budget=40,
        rounds=3,
        rules=[{"knob": "threads", "direction": "increase"}],
        rule_samples=20,
        **FAST,
    )
    assert "threads" in str(tuner.params()["rules"])
    trial = 0
    while tuner.remaining:
        batch = tuner.ask(tuner.preferred_batch)
        tuner.tell(
            [Observation(trial + i, c, Status.SUCCEEDED, score(c)) for i, c in enumerate(batch)]
        )
        trial += len(batch)
    assert trial == 40 and all(r["n_rule_rows"] > 0 for r in tuner.round_log)
    for search in tuner.searches:
        assert np.all(search.lows <= search.centres) and np.all(search.centres <= search.highs)
        assert np.all(search.highs > search.lows)
    best = tuner.best()
    assert best is not None and (best.score or 0.0) >= 3.0  # c, True, >= 8 threads-ish, ratio high


def test_invalid_settings_are_config_errors() -> None:
    space = SyntheticSystem("10").space
    for kwargs in (
        {"classifier": "gpt"},
        {"classifier": decision_tree(0)},  # a model, not a factory (no _partial_: true)
        {"induction": "hilbert"},
        {"bits": 40},
        {"initial_fraction": 0.0},
        {"rounds": 0},
        {"k_max": 0},
        {"centre": "median"},
        {"rules": [{"knob": "nope"}]},
    ):
        with pytest.raises(ConfigError):
            ClassyTunePaper(space, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("classifier", ["xgboost", "decision_tree"])
def test_artifacts_and_analyze_round_trip(
    tmp_path: Path, classifier: str, capsys: pytest.CaptureFixture[str]
) -> None:
    factory = partial(xgboost, n_estimators=30) if classifier == "xgboost" else classifier
    tuner, _observations = run(tmp_path, budget=30, rounds=1, classifier=factory)
    tuner.save_artifacts(tmp_path / "artifacts")
    art = load_artifacts(tmp_path)  # the session folder holding artifacts/ works too
    assert art.points.shape == (30, 10) and len(art.configs) == 30
    assert art.settings["best_trial"] == tuner.best().trial  # type: ignore[union-attr]
    assert art.configs[art.best_index] == tuner.best().config  # type: ignore[union-attr]
    assert art.settings["classifier"] == classifier
    model_file = "classifier.json" if classifier == "xgboost" else None  # no pickle, ever
    assert art.settings["model_file"] == model_file
    assert (art.model is None) == (classifier != "xgboost")
    rows, calibration = knob_influence(art, probes=4, members=3)
    assert [r.knob for r in rows] == tuner.space.names
    assert all(r.verdict in ("raise", "lower", "keep", "unsure", "no data") for r in rows)
    assert calibration.pairs > 0
    assert analyze_main([str(tmp_path / "artifacts"), "--probes", "4", "--members", "3"]) == 0
    out = capsys.readouterr().out
    assert "buffer_pool_mb" in out and "verdict" in out and "held-out pair accuracy" in out
    assert ("refitted from samples.json" in out) == (classifier != "xgboost")
    assert (tmp_path / "artifacts" / "knob_influence.png").stat().st_size > 1000
    assert (tmp_path / "artifacts" / "samples.csv").read_text().count("\n") == 31


def test_analyze_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert analyze_main([str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert analyze_main([str(tmp_path)]) == 2
    assert "not a ClassyTune artifact directory" in capsys.readouterr().err
    (tmp_path / "settings.json").write_text("{broken")
    assert analyze_main([str(tmp_path)]) == 2
    assert "unreadable" in capsys.readouterr().err


def _nearest_centroid(seed: int = 0, shrink: float | None = None) -> Any:
    from sklearn.neighbors import NearestCentroid

    return NearestCentroid(shrink_threshold=shrink)


def test_classifier_is_a_factory_or_a_short_name() -> None:
    space = SyntheticSystem("10").space
    assert resolve("decision_tree") is decision_tree
    assert describe(partial(xgboost, n_estimators=7)) == ("xgboost", {"n_estimators": 7})
    nested = partial(partial(xgboost, max_depth=2), n_estimators=7)
    assert describe(nested) == ("xgboost", {"max_depth": 2, "n_estimators": 7})
    tuner = ClassyTunePaper(space, classifier="decision_tree")
    assert tuner.params()["classifier"] == "decision_tree"
    assert tuner.params()["classifier_options"] == "{}"
    tuner = ClassyTunePaper(space, classifier=partial(xgboost, n_estimators=7))
    assert tuner.comparator.factory(seed=1).get_params()["n_estimators"] == 7
    # a factory from elsewhere is named by its module path
    own = ClassyTunePaper(space, classifier=partial(_nearest_centroid, shrink=0.1))
    assert own.params()["classifier"] == f"{__name__}._nearest_centroid"
    # bad options fail when the tuner is built, naming the classifier and the option
    with pytest.raises(ConfigError, match=r"decision_tree.*n_estimators"):
        ClassyTunePaper(space, classifier=partial(decision_tree, n_estimators=7))
