"""A session's plots (python -m harness.cli.plot) and its Optuna study, for any tuner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import api
from harness.cli.plot import knob_importance, main
from harness.errors import ConfigError, StoreError
from harness.session.optuna_export import to_optuna_study
from harness.session.results import load_result, observations_frame
from tests.helpers.sweeps import ROOT


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A BestConfig and a random-search session on the synthetic system."""
    results = tmp_path_factory.mktemp("results")
    found = {}
    for tuner in ("bestconfig", "random"):
        overrides = [
            "system=synthetic10",
            f"tuner={tuner}",
            "budget=12",
            "tracking=none",
            "session.progress=false",
            f"results_dir={results}",
        ]
        found[tuner] = api.run(api.compose(overrides)).directory
    return found


def test_the_command_draws_three_pngs_for_any_tuner(
    sessions: dict[str, Path], tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli.plot", str(sessions["bestconfig"])],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    plots = sessions["bestconfig"] / "plots"
    assert done.stdout.split() == [
        str(plots / n) for n in ("convergence.png", "importance.png", "parallel.png")
    ]
    for name in ("convergence.png", "importance.png", "parallel.png"):
        assert (plots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main([str(sessions["random"]), "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "convergence.png",
        "importance.png",
        "parallel.png",
    ]


def test_knob_importance_finds_the_knob_the_value_depends_on() -> None:
    result = api.tune(
        lambda c: 10 * c["x"] + 0.01 * c["y"], {"x": (0.0, 1.0), "y": (0.0, 1.0)},
        budget=25, tuner="random",
    )  # fmt: skip
    importance = knob_importance(result.to_dataframe())
    assert list(importance.index) == ["x", "y"] and importance["x"] > 0.8


def test_a_missing_session_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no session in" in capsys.readouterr().err


def test_the_optuna_study_holds_every_test(sessions: dict[str, Path], tmp_path: Path) -> None:
    optuna = pytest.importorskip("optuna")
    folder = sessions["bestconfig"]
    study = to_optuna_study(folder)
    result = load_result(folder)
    assert len(study.trials) == len(result.observations) == 12
    assert study.direction == optuna.study.StudyDirection.MAXIMIZE
    assert study.best_value == result.value(result.answer)
    assert study.best_params == result.answer.config  # type: ignore[union-attr]
    assert set(optuna.importance.get_param_importances(study)) == set(result.answer.config)  # type: ignore[union-attr]
    tests = observations_frame(result.observations, result.objective)
    assert study.trials_dataframe()["value"].tolist() == pytest.approx(
        tests["value"].tolist(), nan_ok=True
    )


def test_the_optuna_study_goes_to_a_journal_file_or_a_database(
    sessions: dict[str, Path], tmp_path: Path
) -> None:
    optuna = pytest.importorskip("optuna")
    from optuna.storages.journal import JournalFileBackend

    journal = tmp_path / "study.log"
    assert main([str(sessions["random"]), "--out", str(tmp_path), "--optuna", str(journal)]) == 0
    storage = optuna.storages.JournalStorage(JournalFileBackend(str(journal)))
    (summary,) = optuna.get_all_study_summaries(storage)
    assert summary.n_trials == 12
    database = f"sqlite:///{tmp_path / 'study.db'}"
    to_optuna_study(sessions["random"], database, study_name="mine")
    assert (
        optuna.load_study(study_name="mine", storage=database)
        .trials[0]
        .user_attrs["harness.is_default"]
    )
    with pytest.raises(StoreError, match="already holds a study named 'mine'"):
        to_optuna_study(sessions["random"], database, study_name="mine")
    with pytest.raises(ConfigError, match="journal file"):
        to_optuna_study(sessions["random"], tmp_path / "study.txt")


def test_without_matplotlib_the_plot_command_names_its_install_in_one_line(tmp_path: Path) -> None:
    wrapper = tmp_path / "without_matplotlib.py"
    wrapper.write_text(
        "import sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'matplotlib':\n"
        "            raise ModuleNotFoundError(name, name=name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "from harness.cli.plot import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, str(wrapper), str(tmp_path / "no-session")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "matplotlib" in done.stderr and "[plot]" in done.stderr
    assert not (tmp_path / "no-session").exists()
