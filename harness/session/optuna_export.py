"""A finished session as an Optuna study, for Optuna's importance, plots and dashboard.

Any tuner's session converts: each stored test becomes a trial (a successful test COMPLETE with
its objective value, one stopped early PRUNED, any other FAIL), with the test's status, metrics
and message as user attributes; the study maximises or minimises as the session did. Optuna
needs a distribution per parameter, and a session folder stores values, not the system's
catalogue, so each knob's distribution is read from the values its tests took: booleans and
text are categorical, integers and floats span their smallest to largest tested value. Read as
data, never run.

The study lives in memory, or in a storage the caller names: a journal file (a path ending in
``.log``, ``.journal`` or ``.jsonl``, what ``optuna-dashboard <file>`` opens) or a database URL
(``sqlite:///study.db``). Optuna is in the ``peers`` extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError, StoreError
from harness.records import Observation, Status
from harness.session.results import load_result

if TYPE_CHECKING:
    import optuna

__all__ = ["JOURNAL_SUFFIXES", "to_optuna_study"]

#: A storage named by a path with one of these endings is an Optuna journal file.
JOURNAL_SUFFIXES = (".log", ".journal", ".jsonl")
_MISSING = (
    "the Optuna export needs optuna, from the peers extra: "
    ".venv/bin/pip install -e '.[peers]' (or pip install optuna)"
)


def to_optuna_study(
    folder: str | Path, storage: str | Path | None = None, study_name: str | None = None
) -> optuna.Study:
    """The session in ``folder`` as an Optuna study (in memory, or written to ``storage``)."""
    try:
        import optuna
    except ImportError:
        raise ConfigError(_MISSING) from None
    result = load_result(folder)
    name = study_name or result.session_id
    try:
        study = optuna.create_study(
            storage=_storage(optuna, storage),
            study_name=name,
            direction="maximize" if result.objective.direction == "max" else "minimize",
        )
    except optuna.exceptions.DuplicatedStudyError:
        raise StoreError(
            f"{storage} already holds a study named {name!r}; pass another name or file"
        ) from None
    distributions = _distributions(optuna, result.observations)
    study.add_trials(
        [_trial(optuna, obs, result.value(obs), distributions) for obs in result.observations]
    )
    study.set_user_attr("harness.session", str(result.directory))
    return study


def _storage(optuna: Any, storage: str | Path | None) -> Any:
    """Optuna's storage for ``storage``: memory (None), a journal file or a database URL."""
    if storage is None:
        return None
    text = str(storage)
    if "://" in text:
        return text
    if not text.endswith(JOURNAL_SUFFIXES):
        raise ConfigError(
            f"storage {text!r}: name a journal file (ending in {', '.join(JOURNAL_SUFFIXES)}) "
            "or a database URL such as sqlite:///study.db"
        )
    from optuna.storages.journal import JournalFileBackend

    Path(text).parent.mkdir(parents=True, exist_ok=True)
    return optuna.storages.JournalStorage(JournalFileBackend(text))


def _distributions(optuna: Any, observations: list[Observation]) -> dict[str, Any]:
    """Each knob's distribution, from the values its tests took."""
    values: dict[str, list[Any]] = {}
    for obs in observations:
        for knob, value in obs.config.items():
            values.setdefault(knob, []).append(value)
    return {knob: _distribution(optuna, seen) for knob, seen in values.items()}


def _distribution(optuna: Any, seen: list[Any]) -> Any:
    found = optuna.distributions
    if all(isinstance(v, bool) for v in seen) or not all(isinstance(v, int | float) for v in seen):
        return found.CategoricalDistribution(sorted(set(seen), key=str))
    if all(isinstance(v, int) for v in seen):
        return found.IntDistribution(min(seen), max(seen))
    return found.FloatDistribution(float(min(seen)), float(max(seen)))


def _trial(optuna: Any, obs: Observation, value: float | None, distributions: Any) -> Any:
    complete = obs.status is Status.SUCCEEDED and value is not None
    states = optuna.trial.TrialState
    state = states.PRUNED if obs.status is Status.STOPPED_EARLY else states.FAIL
    return optuna.trial.create_trial(
        params={k: v for k, v in obs.config.items() if k in distributions},
        distributions={k: distributions[k] for k in obs.config if k in distributions},
        value=value if complete else None,
        state=states.COMPLETE if complete else state,
        user_attrs={
            "harness.trial": obs.trial,
            "harness.status": obs.status.value,
            "harness.is_default": obs.is_default,
            "harness.message": obs.message,
            **{f"metric.{m}": v for m, v in obs.metrics.items()},
        },
    )
