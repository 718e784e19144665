"""Noise handling and warm start of the ranked mode (issue #19): re-measuring the best few
settings before answering, the harness judging a re-measured setting on its mean, and earlier
sessions' samples training the comparator."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from classytune import ClassyTuneRanked
from classytune.comparator import Comparator
from classytune.remeasure import Remeasure, agreement, remeasure_pick
from classytune.warm_start import elite_points, load_priors
from harness.api import run_objects
from harness.errors import ConfigError
from harness.records import Observation, Status, best_measured, config_key
from harness.space import Knob, Space
from harness.store.samples import SampleStore
from systems.synthetic import SyntheticSystem, SyntheticWorkload


def obs(
    trial: int, x: float, score: float | None, status: Status = Status.SUCCEEDED
) -> Observation:
    return Observation(trial, {"x": x}, status, score)


# -- the harness's best: a re-measured setting is judged on its mean ------------------------
def test_best_measured_without_repeats_is_the_best_single_test() -> None:
    history = [
        obs(0, 0.1, 1.0),
        obs(1, 0.2, 3.0),
        obs(2, 0.3, 3.0),
        obs(3, 0.4, None, Status.FAILED),
    ]
    assert best_measured(history).trial == 1  # type: ignore[union-attr]  # ties: the earliest
    assert best_measured([obs(0, 0.1, None, Status.CRASHED)]) is None
    assert best_measured([]) is None


def test_a_lucky_draw_that_does_not_repeat_loses_to_a_steady_setting() -> None:
    history = [obs(0, 0.1, 5.0), obs(1, 0.2, 9.0), obs(2, 0.2, 4.0), obs(3, 0.2, 5.0)]
    # x=0.2: mean 6.0 beats 5.0; the test reported is the one nearest its mean (5.0 at trial 3)
    best = best_measured(history)
    assert best is not None and best.config == {"x": 0.2} and best.trial == 3
    history.append(obs(4, 0.3, 6.5))
    assert best_measured(history).trial == 4  # type: ignore[union-attr]


def test_a_setting_that_failed_once_ranks_after_every_steady_one() -> None:
    history = [obs(0, 0.1, 1.0), obs(1, 0.2, 9.0), obs(2, 0.2, None, Status.CRASHED)]
    assert best_measured(history).trial == 0  # type: ignore[union-attr]


def test_config_key_tells_types_apart_as_written() -> None:
    assert config_key({"a": 1, "b": "x"}) == config_key({"b": "x", "a": 1})
    assert config_key({"a": True}) != config_key({"a": "True"})


# -- which setting to measure again --------------------------------------------------------
def test_remeasure_pick_races_the_top_settings() -> None:
    history = [obs(0, 0.1, 1.0), obs(1, 0.2, 9.0), obs(2, 0.3, 8.0), obs(3, 0.4, 7.0)]
    assert remeasure_pick(history, top=2) == {"x": 0.2}  # both once: the better mean
    history.append(obs(4, 0.2, 5.0))  # 0.2 regresses to 7.0: 0.3 now leads, measured once
    assert remeasure_pick(history, top=2) == {"x": 0.3}
    history.append(obs(5, 0.3, 8.0))
    assert remeasure_pick(history, top=2) == {"x": 0.3}  # both twice: the better mean
    history.append(obs(6, 0.3, 8.0))
    assert remeasure_pick(history, top=2) == {"x": 0.2}  # 0.3 thrice, 0.2 twice
    assert remeasure_pick([obs(0, 0.1, None, Status.FAILED)], top=3) is None


def test_agreement_is_the_largest_relative_spread_of_repeats() -> None:
    assert agreement([obs(0, 0.1, 1.0), obs(1, 0.2, 2.0)]) is None
    spread = agreement([obs(0, 0.1, 10.0), obs(1, 0.1, 12.0), obs(2, 0.2, 4.0), obs(3, 0.2, 4.0)])
    assert spread == pytest.approx(2.0 / 11.0)


def test_remeasure_stops_on_a_deterministic_system_and_when_another_setting_ran() -> None:
    phase = Remeasure(tests=5, top=3, tolerance=1e-3)
    history = [obs(0, 0.1, 1.0), obs(1, 0.2, 2.0)]
    assert phase.propose(history) == {"x": 0.2}
    history.append(obs(2, 0.2, 2.0))  # the same value again: deterministic
    assert phase.propose(history) is None and not phase.active
    assert "deterministic" in phase.stopped_because

    phase = Remeasure(tests=5, top=3, tolerance=1e-3)
    history = [obs(0, 0.1, 1.0), obs(1, 0.2, 2.0)]
    assert phase.propose(history) == {"x": 0.2}
    history.append(obs(2, 0.25, 2.1))  # e.g. a recorded-data system's nearest unused row
    assert phase.propose(history) is None and "another setting" in phase.stopped_because
    assert Remeasure(tests=0, top=3, tolerance=0.0).propose(history) is None


# -- sessions --------------------------------------------------------------------------------
def _session(tmp_path: Path, noise: float, **options: object):  # type: ignore[no-untyped-def]
    system = SyntheticSystem("10", noise=noise, noise_seed=3)
    return run_objects(
        lambda **kw: ClassyTuneRanked(**kw, **options),  # type: ignore[arg-type]
        system,
        SyntheticWorkload(),
        budget=30,
        results_dir=tmp_path,
        seed=4,
    )


def test_a_noisy_session_spends_its_last_tests_on_repeats(tmp_path: Path) -> None:
    result = _session(tmp_path, noise=0.15, remeasure={"tests": 6, "top": 2})
    keys = [config_key(o.config) for o in result.observations]
    assert len(result.observations) == 30
    assert len(set(keys[:24])) == 24  # the search never repeats itself
    assert all(key in keys[:24] for key in keys[24:])  # the last 6 measure settings again
    best = result.best
    assert best is not None and result.measurements_of_answer() >= 2
    scores = [
        o.score for o in result.observations if config_key(o.config) == config_key(best.config)
    ]
    assert min(abs(s - np.mean(scores)) for s in scores) == pytest.approx(
        abs(best.score - np.mean(scores))
    )


def test_a_deterministic_session_gives_the_reserved_tests_back_after_one(tmp_path: Path) -> None:
    result = _session(tmp_path, noise=0.0, remeasure={"tests": 6})
    keys = [config_key(o.config) for o in result.observations]
    assert len(keys) == 30 and len(set(keys)) == 29  # one repeat, then the search again


def test_remeasure_must_leave_room_for_the_initial_sample() -> None:
    space = SyntheticSystem("10").space
    with pytest.raises(ConfigError, match=r"remeasure\.tests must be 0 or fewer"):
        ClassyTuneRanked(space, budget=30, remeasure={"tests": 25})


# -- warm start ------------------------------------------------------------------------------
def test_warm_start_reads_a_session_folder_and_a_samples_table(tmp_path: Path) -> None:
    earlier = _session(tmp_path / "run", noise=0.0)
    space = SyntheticSystem("10").space
    folder = tmp_path / "earlier"
    store = SampleStore(folder)  # a session folder as the CLI leaves it
    store.create({"session_id": "earlier"})
    for observation in earlier.observations:
        store.append(observation)
    store.unlock()
    table = store.export_csv()
    from_folder, from_table = load_priors([str(folder), str(table)], space)
    assert from_folder.points.shape == (30, 10) and from_table.points.shape == (30, 10)
    np.testing.assert_allclose(from_folder.points, from_table.points)
    np.testing.assert_allclose(from_folder.scores, from_table.scores)

    tuner = ClassyTuneRanked(space, seed=1, budget=30, warm_start=[str(folder)], warm_elite=2)
    first = tuner.ask(tuner.preferred_batch)
    best_two = elite_points([from_folder], 2, space.encode(space.default()))
    assert [space.encode(c).tolist() for c in first[1:3]] == best_two.tolist()
    for i, config in enumerate(first):
        tuner.tell([Observation(i, config, Status.SUCCEEDED, float(space.encode(config).sum()))])
    _, info = tuner.fit()
    scores = from_folder.scores  # every ordered pair but ties (two crashes tie)
    assert info["n_prior_pairs"] == int((scores[:, None] != scores[None, :]).sum())
    assert info["n_samples"] == len(first)


def test_prior_pairs_are_made_within_each_earlier_session_only() -> None:
    space = Space((Knob("x", "float", 0.5, low=0.0, high=1.0),))
    comparator = Comparator(space, ties="skip")
    rng = np.random.default_rng(0)
    points = np.array([[0.1], [0.9]])
    # Two earlier sessions on scales 1000x apart: 2 ordered pairs each, none across them.
    earlier = [
        (np.array([[0.2], [0.8]]), np.array([1.0, 2.0])),
        (np.array([[0.3], [0.7]]), np.array([3000.0, 1000.0])),
    ]
    prior = [comparator.pairs(p, s) for p, s in earlier]
    assert [labels.tolist() for _, labels in prior] == [[0, 1], [1, 0]]
    _, info = comparator.fit(points, np.array([0.0, 1.0]), rng, prior=prior)
    assert info["n_pairs"] == 2 and info["n_prior_pairs"] == 4


def test_warm_start_bad_sources_fail_in_one_line(tmp_path: Path) -> None:
    space = SyntheticSystem("10").space
    with pytest.raises(ConfigError, match="does not exist"):
        load_priors([str(tmp_path / "nope")], space)
    with pytest.raises(ConfigError, match="not a session"):
        load_priors([str(tmp_path)], space)
    bad = tmp_path / "t.csv"
    with bad.open("w", newline="") as handle:
        csv.writer(handle).writerows([["a", "b"], ["1", "2"]])
    with pytest.raises(ConfigError, match="not a harness samples table"):
        load_priors([str(bad)], space)


# -- a challenger is measured again before it stands --------------------------------------------
def test_a_noisy_new_best_is_measured_again_during_the_search(tmp_path: Path) -> None:
    result = _session(tmp_path, noise=0.15, remeasure={"challenger": True, "challenger_max": 3})
    keys = [config_key(o.config) for o in result.observations]
    assert len(keys) == 30
    repeated = len(keys) - len(set(keys))
    assert 1 <= repeated <= 3  # re-measured challengers, within the limit
    assert result.best is not None and result.measurements_of_answer() >= 1


def test_the_challenger_stops_on_a_deterministic_system(tmp_path: Path) -> None:
    result = _session(tmp_path, noise=0.0, remeasure={"challenger": True})
    keys = [config_key(o.config) for o in result.observations]
    assert len(keys) == 30 and len(set(keys)) == 29  # one repeat agreed: no more
