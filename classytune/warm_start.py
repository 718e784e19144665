"""Warm start from earlier sessions' samples: the paper's reusable sample database (issue #19).

The paper keeps every tuning session's samples for later ones. What transfers between two
environments (another machine, another data size) is the *order* of settings, not their
values: a setting that beat another on the old machine likely beats it on the new one, while
its throughput may be twice as high. So an earlier session contributes comparison pairs made
*within* that session only (never across sessions, whose scales differ), added to the
comparator's training pairs; and its best few settings may join the initial sample.

A source is a session folder (its ``observations.jsonl``) or a samples table written by the
harness (``samples.csv``: ``config.<knob>``, ``status`` and ``score`` columns). Knobs the
earlier session did not tune take this space's defaults; values outside this space's ranges
are moved to the nearest allowed value (:meth:`harness.space.Space.fit`); knobs this space
does not have are dropped.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.errors import ConfigError, KnobError
from harness.records import Observation, Status
from harness.space import Space
from harness.store import SampleStore
from harness.tuner import imputed_scores

__all__ = ["PriorSamples", "elite_points", "load_priors"]

_PREFIX = "config."


@dataclass(frozen=True)
class PriorSamples:
    """One earlier session's measured settings, as points of this space and scores."""

    source: str
    points: np.ndarray
    scores: np.ndarray  # larger is better, failures imputed below the session's worst
    ok: np.ndarray  # which settings succeeded


def _cell(text: str) -> int | float | str:
    """A CSV cell back to the number it was written from (``60`` an int, so that it also
    matches an enum level written ``60``); bools and other text stay text."""
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return text


def _read_table(path: Path) -> list[Observation]:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or "score" not in rows[0] or "status" not in rows[0]:
        raise ConfigError(
            f"warm_start: {path} is not a harness samples table "
            "(needs status, score and config.<knob> columns)"
        )
    observations = []
    for index, row in enumerate(rows):
        config = {k[len(_PREFIX) :]: _cell(v) for k, v in row.items() if k.startswith(_PREFIX)}
        status = Status(row["status"]) if row["status"] in Status.__members__ else Status.FAILED
        score = float(row["score"]) if row["score"] not in ("", None) else None
        observations.append(Observation(index, config, status, score))
    return observations


def _read(source: str) -> list[Observation]:
    path = Path(source).expanduser()
    if path.is_dir():
        if not (path / "observations.jsonl").is_file():
            raise ConfigError(f"warm_start: {path} has no observations.jsonl (not a session)")
        return SampleStore(path).load()
    if path.is_file():
        return _read_table(path)
    raise ConfigError(f"warm_start: {source} does not exist; give a session folder or samples.csv")


def load_priors(sources: Sequence[str], space: Space) -> list[PriorSamples]:
    """Every source's settings moved into ``space`` (see the module docstring)."""
    priors = []
    for source in sources:
        observations = _read(str(source))
        points = []
        for obs in observations:
            try:
                points.append(space.encode(space.complete(space.fit(obs.config))))
            except KnobError as exc:
                raise ConfigError(f"warm_start: {source}, trial {obs.trial}: {exc}") from None
        if len(points) >= 2:
            ok = np.array([o.ok for o in observations], dtype=bool)
            priors.append(
                PriorSamples(str(source), np.array(points), imputed_scores(observations), ok)
            )
    return priors


def elite_points(priors: Sequence[PriorSamples], k: int, exclude: np.ndarray) -> np.ndarray:
    """The ``k`` best successful settings over the priors (each prior's best first, then each
    one's second, ...), distinct and not equal to any row of ``exclude`` (e.g. the default)."""
    ranked = [p.points[p.ok][np.argsort(-p.scores[p.ok], kind="stable")] for p in priors]
    chosen: list[np.ndarray] = []
    for depth in range(max((len(r) for r in ranked), default=0)):
        for rows in ranked:
            if len(chosen) >= k or depth >= len(rows):
                continue
            row = rows[depth]
            seen = [*chosen, *np.atleast_2d(exclude)]
            if not any(np.allclose(row, other) for other in seen):
                chosen.append(row)
    return np.array(chosen).reshape(len(chosen), exclude.shape[-1])
