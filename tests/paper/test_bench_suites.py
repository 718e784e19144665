"""The benchmark's suites (development vs evaluation), noisy variants scored on truth, the
recorded MOOT tables as development systems, and a crashing tuner recorded, not fatal."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from harness.conf import CONFIG_DIR
from harness.errors import ConfigError
from paper import bench, suites
from paper.bench_score import grouped_summaries, report_sections
from systems.dataset.defaults import median_value_row
from systems.dataset.system import DATA_DIR, DatasetSystem, SurrogateWorkload


def test_problem_names_round_trip() -> None:
    assert suites.variant("surrogate_tomcat", 0.0) == "surrogate_tomcat"
    name = suites.variant("surrogate_tomcat", 0.15)
    assert name == "surrogate_tomcat~noise15"
    assert suites.base_system(name) == "surrogate_tomcat"
    assert suites.noise_of(name) == pytest.approx(0.15)
    assert suites.noise_of("synthetic10") == 0.0
    with pytest.raises(ValueError, match="~noise5"):
        suites.noise_of("synthetic10~loud")


def test_suites_are_disjoint_and_named_by_their_members() -> None:
    dev, evaluation = set(suites.SUITES["dev"]), set(suites.SUITES["eval"])
    assert not dev & evaluation
    assert {"synthetic10", "synthetic30", "moot_apache", "moot_mysql"} <= dev
    assert all(s.startswith("surrogate_") for s in evaluation) and len(evaluation) == 8
    assert suites.suite_of("moot_x264~noise5") == "dev"
    assert suites.suite_of("surrogate_tomcat") == "eval"
    assert suites.suite_of("sqlite") == "other"
    expanded = suites.expand(["eval", "synthetic10"], (0.0, 0.05))
    assert expanded[:8] == sorted(evaluation)
    assert "synthetic10~noise5" in expanded and len(expanded) == len(set(expanded)) == 18


def test_overrides_seed_the_noise_with_the_session_seed() -> None:
    assert suites.overrides("moot_apache", 3) == ["system=moot_apache"]
    assert suites.overrides("synthetic30~noise5", 3) == [
        "system=synthetic30",
        "system.adapter.noise=0.05",
        "system.adapter.noise_seed=3",
    ]
    assert "system.adapter.measurement_noise=0.15" in suites.overrides("moot_vp9~noise15", 1)


def test_every_suite_problem_composes_with_noise() -> None:
    """A noisy variant of every development and evaluation problem is a valid override set
    (the evaluation surrogates once lacked ``measurement_noise`` and ended the run)."""
    from harness import api

    for problem in suites.expand(["dev", "eval"], (0.05,)):
        cfg = api.compose(overrides=[*suites.overrides(problem, 1), "tracking=none"])
        synthetic = problem.startswith(("synthetic", "family"))
        noise_key = "noise" if synthetic else "measurement_noise"
        assert cfg.system.adapter[noise_key] == pytest.approx(0.05), problem


def test_every_moot_config_names_a_packaged_table_and_its_objective() -> None:
    from omegaconf import OmegaConf

    names = [s for s in suites.SUITES["dev"] if s.startswith("moot_")]
    assert len(names) == 10  # SS-N left out: its forest has R² 0.27, a poor stand-in
    for name in names:
        adapter = OmegaConf.load(CONFIG_DIR / "system" / f"{name}.yaml").adapter
        path = DATA_DIR / str(adapter.path).removeprefix("builtin:")
        header = path.read_text().split("\n", 1)[0].split(",")
        assert adapter.target in header, (name, adapter.target)
        workload = OmegaConf.load(CONFIG_DIR / "workloads" / name / "surrogate.yaml")
        assert workload.metric == adapter.target[:-1] and workload.direction == "min"
    assert (DATA_DIR / "moot" / "LICENSE.md").read_text().startswith("# MIT License")


def test_median_value_row_is_the_lower_median_of_the_successes() -> None:
    values = [5.0, 1.0, 9.0, 3.0, 7.0]
    failed = [False, False, True, False, False]
    # successes 5, 1, 3, 7 -> sorted 1, 3, 5, 7 -> lower median 3 (row 3)
    assert median_value_row(values, failed) == 3
    assert median_value_row([2.0, 2.0, 2.0], [False] * 3) == 1  # ties: by row
    with pytest.raises(ConfigError, match="successful row"):
        median_value_row([1.0], [True])


def _apache(**kwargs: object) -> DatasetSystem:
    return DatasetSystem(
        "builtin:moot/Apache_AllMeasurements.csv",
        "Performance-",
        "min",
        default_row="median_value",
        cache_dir=None,
        **kwargs,  # type: ignore[arg-type]
    )


def test_measurement_noise_multiplies_every_answer_and_is_seeded(tmp_path: Path) -> None:
    def answers(noise: float, seed: int) -> tuple[list[float], float]:
        system = _apache(measurement_noise=noise, noise_seed=seed)
        system.setup(tmp_path, SurrogateWorkload("Performance-", "min"))
        config = system.space.default()
        out = []
        for _ in range(20):
            system.apply(config)
            system.start(1.0)
            out.append(system.measure()["Performance"])
        return out, system.noise_free_metrics(config)["Performance"]

    clean, truth = answers(0.0, 0)
    noisy, same_truth = answers(0.15, 0)
    again, _ = answers(0.15, 0)
    other, _ = answers(0.15, 1)
    assert truth == same_truth
    assert noisy == again and noisy != other
    # Recorded rows are used once each, so compare ratios against the clean answers.
    ratios = np.log(np.array(noisy) / np.array(clean))
    assert 0.05 < float(np.std(ratios)) < 0.3
    with pytest.raises(ConfigError, match="measurement_noise"):
        _apache(measurement_noise=1.5)


def test_a_noisy_session_is_scored_on_noise_free_truth() -> None:
    row = bench.session_row("random", "synthetic10~noise15", 2, 15)
    assert row["suite"] == "dev" and row["measurement_noise"] == pytest.approx(0.15)
    assert row["best"] != row["best_measured"]
    clean = bench.session_row("random", "synthetic10", 2, 15)
    # Same seed, same tuner: the same default; its noise-free score is the clean session's.
    assert row["default"] == pytest.approx(clean["default"])
    assert row["default_measured"] != row["default"]
    assert row["best"] <= row["optimum"] + 1e-9


def test_a_moot_table_runs_as_a_development_problem() -> None:
    row = bench.session_row("lhs", "moot_apache", 0, 12)
    assert "error" not in row, row
    assert row["suite"] == "dev" and row["direction"] == "min"
    assert row["default"] <= row["best"] <= row["optimum"]


def test_a_tuner_that_raises_is_a_failed_session_not_the_end_of_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness import api

    def broken(session: object) -> None:
        raise OverflowError("Python int too large to convert to C long")

    monkeypatch.setattr(api, "run", broken)
    row = bench.session_row("random", "synthetic10", 0, 5)
    assert row["crashed"] and row["error"].startswith("OverflowError")
    assert "retry" not in row  # a tuner's bug is a verdict: cached like any session


def _row(tuner: str, system: str, seed: int, best: float) -> dict[str, object]:
    return {
        "tuner": tuner,
        "system": system,
        "seed": seed,
        "best": best,
        "default": 0.0,
        "optimum": 1.0,
        "tests": 10,
        "compute_s": 0.1,
        "dim": 10,
    }


def test_groups_put_evaluation_first_and_count_dropped_problems() -> None:
    jobs = [
        (t, s, k, 10)
        for t in ("a", "b")
        for s in ("synthetic10", "surrogate_tomcat", "surrogate_tomcat~noise5")
        for k in (0, 1)
    ]
    rows = [_row(t, s, k, 0.5 if t == "a" else 0.4) for t, s, k, _ in jobs]
    rows = [
        r
        for r in rows
        if not (r["tuner"] == "b" and r["system"] == "synthetic10" and r["seed"] == 1)
    ]
    groups = grouped_summaries(rows, jobs)
    labels = [label for label, _ in groups]
    assert labels[0].startswith("evaluation suite") and "no noise" in labels[0]
    assert "5 % measurement noise" in labels[1] and labels[2].startswith("development")
    dev = groups[2][1]
    assert dev["problems"] == 2 and dev["dropped"] == ["synthetic10 seed 1 (b)"]
    assert math.isclose(dev["tuners"]["a"]["rank"], 1.0)
    text = report_sections(groups, "python -m paper.bench")
    assert text.count("## Evaluation suite") == 2
    assert "Ranked over 1 of 2 (system, seed) problems; dropped 1" in text


# -- the hard synthetic family ---------------------------------------------------------------
def test_family_problems_are_development_problems_built_from_a_shipped_config() -> None:
    assert set(suites.SUITES["hard"]) == {"family10", "family30", "family60", "family120"}
    assert set(suites.SUITES["hard"]) <= set(suites.SUITES["dev"])
    assert suites.suite_of("family60~noise15") == "dev"
    assert suites.system_config("family60~noise5") == "synthetic10"
    assert suites.system_config("moot_apache") == "moot_apache"
    assert suites.overrides("family30~noise5", 7) == [
        "system=synthetic10",
        "system.name=family30",
        "system.adapter._target_=systems.synthetic.SyntheticFamily",
        "~system.adapter.knob_set",
        "+system.adapter.dim=30",
        "+system.adapter.instance=7",
        "session.max_consecutive_crashes=1000",
        "system.adapter.noise=0.05",
        "system.adapter.noise_seed=7",
    ]


@pytest.mark.parametrize("dim", [10, 30, 60, 120])
def test_a_family_instance_is_hard_where_the_suite_says(dim: int) -> None:
    """Mixed knob types, failures over 20-60 % of the box that spare the optimum and the
    default, and an optimum that moves with the instance."""
    from systems.synthetic import SyntheticFamily

    first, second = SyntheticFamily(dim, instance=1), SyntheticFamily(dim, instance=2)
    assert {k.type for k in first.space.knobs} == {"float", "int", "enum", "bool"}
    for system in (first, second):
        assert 0.2 <= system.fail_share <= 0.6
        assert abs(system.measured_fail_share() - system.fail_share) < 0.08
        optimum, value = system.known_optimum()
        assert value == pytest.approx(10_000.0)
        for config in (optimum, system.space.default()):
            assert not system.response.fails(system.space.encode(config))[0]
    assert first.known_optimum()[0] != second.known_optimum()[0]


def test_a_family_session_is_scored_against_its_own_optimum() -> None:
    row = bench.session_row("random", "family10~noise5", 3, 12)
    assert "error" not in row and row["dim"] == 10 and row["optimum"] == pytest.approx(10_000.0)
    assert row["best"] <= row["optimum"] and row["suite"] == "dev"
