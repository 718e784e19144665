"""``python -m harness``: the Hydra application (one session, or a sweep with ``-m``)."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from harness.build import build_session
from harness.config import register_configs
from harness.errors import HarnessError
from harness.records import Observation
from harness.report import format_value, summary

log = logging.getLogger("harness")
register_configs()
# An absolute path: `python -m` makes Hydra read a relative one as a Python package.
CONFIG_DIR = str(Path(__file__).resolve().parent.parent / "conf")


def _progress(total: int, initial: int, enabled: bool, unit: str) -> Any:
    from tqdm import tqdm

    bar = tqdm(total=total, initial=initial, unit="test", disable=not enabled,
               dynamic_ncols=True, file=sys.stderr)

    def update(obs: Observation, best: float | None) -> None:
        bar.update(1)
        bar.set_postfix_str(f"best {format_value(best, unit)}, last {obs.status.value.lower()}")

    return bar, update


def run(cfg: DictConfig) -> float | None:
    """Build and run one session; return the best objective value (for sweepers)."""
    budget_override = None
    if cfg.get("resume"):
        # budget=N on the command line raises the stored budget of a resumed session
        overrides = HydraConfig.get().overrides.task if HydraConfig.initialized() else []
        budget_override = next((int(o.split("=", 1)[1]) for o in overrides
                                if o.startswith("budget=")), None)
    session = build_session(cfg, budget_override)
    done = len(session.store.load())
    tuner_name = getattr(getattr(session.tuner_factory, "func", None), "name", "tuner")
    log.info("session %s: %s on %s/%s, budget %d (%d done), folder %s", session.session_id,
             tuner_name, session.system.name, session.workload.name,
             session.options.budget, done, session.store.directory)
    bar, update = _progress(session.options.budget, done, session.options.progress,
                            session.objective.unit)
    try:
        result = session.run(on_progress=update)
    finally:
        bar.close()
    print(summary(result))
    if result.status == "FINISHED" and not cfg.session.keep_workdir:
        shutil.rmtree(session.workdir, ignore_errors=True)
        if cfg.get("hosts") and cfg.hosts.get("hosts"):
            from harness.remote.connect import remove_remote_workdirs

            remove_remote_workdirs(session.system, session.workdir)
    if result.status == "ABORTED" and not _multirun():
        sys.exit(1)  # scripts chaining sessions must see that this one did not tune
    return result.value(result.best)


def _multirun() -> bool:
    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


@hydra.main(config_path=CONFIG_DIR, config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float | None:
    try:
        return run(cfg)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if _multirun():
            return None  # one bad job must not end the whole sweep
        sys.exit(2)
