"""Rerunning a sweep: a named session that already exists is skipped or continued.

A sweep whose jobs name their sessions
(``session.name='${hydra:runtime.choices.tuner}-s${seed}'``) and set
``session.existing=resume`` can be rerun after any stop (a cancelled Slurm job, a dead node, a
Ctrl-C): a job whose session folder holds a FINISHED session is skipped, one whose session
stopped early, or finished a budget this job raises, continues it as ``resume=`` would, and
the others start. A folder holding a session of another setup (tuner, system, workload, seed,
objective, repeats) is refused in one line rather than mixed into. ``session.existing=fail``
(the default) keeps the old behaviour: a name that is taken stops the job.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from harness.builder.validate import RESUME_OVERRIDABLE, override_key, validate_session_name
from harness.errors import ConfigError
from harness.store.samples import SampleStore

__all__ = ["EXISTING", "SAME_SETUP", "existing_session", "resume_overrides"]

EXISTING = ("fail", "resume")
#: What must agree between the stored session and the job that finds it.
SAME_SETUP = ("tuner", "system", "workload", "seed", "objective", "repeats")


def existing_session(cfg: DictConfig) -> tuple[Path, bool] | None:
    """``(folder, finished)`` of the session this job names, when ``session.existing`` is
    ``resume`` and the folder holds one of the same setup; None when the job starts anew.
    ``finished``: it ended FINISHED and this job's budget is not above its own (a raised
    budget continues it, as ``resume=<folder> budget=N`` would)."""
    if cfg.session.get("existing", "fail") != "resume" or cfg.get("resume"):
        return None
    if not cfg.session.get("name"):
        raise ConfigError(
            "session.existing=resume needs session.name, e.g. "
            "session.name='${hydra:runtime.choices.tuner}-s${seed}' "
            "(a sweep names each job's session)"
        )
    # Checked before the name becomes a path: nothing outside results_dir/sessions is read.
    folder = Path(cfg.results_dir) / "sessions" / validate_session_name(str(cfg.session.name))
    store = SampleStore(folder)
    if not store.exists:
        return None
    meta = store.read_meta()
    stored = OmegaConf.create(meta["config"])
    for key in SAME_SETUP:
        mine = OmegaConf.to_container(cfg, resolve=False).get(key)  # type: ignore[union-attr]
        theirs = OmegaConf.to_container(stored, resolve=False).get(key)  # type: ignore[union-attr]
        if known_keys(mine, theirs) != theirs:
            raise ConfigError(
                f"session folder {folder} holds a session with another {key}; "
                "give this job another session.name"
            )
    raised = int(cfg.budget) > int(stored.get("budget", cfg.budget))
    return folder, meta.get("status") == "FINISHED" and not raised


def known_keys(mine: Any, theirs: Any) -> Any:
    """``mine`` without the keys ``theirs`` lacks, at any depth: a key the configs gained
    after a session was stored (a new schema field) names no other setup, since the session
    continues from its stored config."""
    if not isinstance(mine, dict) or not isinstance(theirs, dict):
        return mine
    return {k: known_keys(v, theirs[k]) for k, v in mine.items() if k in theirs}


def resume_overrides(overrides: list[str], budget: int | None = None) -> list[str]:
    """The command line's overrides a resume honours (the rest defined the stored session),
    with ``budget=<budget>`` when the job's budget came from elsewhere (a recipe): the
    budget the job asks for is the one its session continues to."""
    kept = [
        text
        for text in overrides
        if any(
            override_key(text) == k or override_key(text).startswith(f"{k}.")
            for k in RESUME_OVERRIDABLE
        )
    ]
    if budget is not None and not any(override_key(text) == "budget" for text in kept):
        kept.append(f"budget={budget}")
    return kept
