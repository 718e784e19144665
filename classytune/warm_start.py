"""Warm start from earlier sessions' samples: the paper's reusable sample database.

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

Sources are data from elsewhere, so they are bounded and checked before a session starts
(:func:`preflight`, one line and exit 2, no session folder):

- A source file over :data:`MAX_SOURCE_BYTES` (16 MiB: some 15,000 tests of 30 knobs in a
  session folder, 40,000 in a samples.csv) is refused before it is read; reading one that
  size takes about 0.4 GB for a moment.
- A source of more than :data:`MAX_SOURCE_TESTS` (500) tests is sampled: its
  :data:`KEEP_BEST` best successful tests and the rest drawn with a fixed seed, so one source
  gives the same sample in every session. The memory goes into the comparison pairs, which are
  induced once for all of a source's n(n-1) ordered pairs before ``warm_pairs`` of them are
  drawn per fit: 5,000 tests made 25 million pairs (12.3 GB, 90 s); 500 make 250,000
  (about 0.3 GB at 30 knobs, a second or two). More tests add nothing the drawn pairs use.
- A source of another system (its ``session.json`` names another ``system.name``) or with no
  knob in common with this space is refused: its order of settings says nothing here.
- ``tuner.warm_start=path`` (text, not a list) is one source, never a list of characters.
"""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import ConfigError, KnobError
from harness.records import Observation, Status
from harness.space import Space
from harness.store.samples import SampleStore
from harness.tuner import imputed_scores

__all__ = [
    "KEEP_BEST",
    "MAX_SOURCE_BYTES",
    "MAX_SOURCE_TESTS",
    "PriorSamples",
    "elite_points",
    "load_priors",
    "preflight",
    "source_list",
]

log = logging.getLogger(__name__)
_PREFIX = "config."
#: A source file above this size is refused unread (observations.jsonl or samples.csv).
MAX_SOURCE_BYTES = 16 * 2**20
#: A source with more tests is sampled down to this many (see the module docstring).
MAX_SOURCE_TESTS = 500
#: ... always keeping its best successful tests (the ones ``warm_elite`` may take).
KEEP_BEST = 20
_SAMPLE_SEED = 19  # fixed: the same source gives the same sample in every session


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


def source_list(sources: str | Sequence[str] | None) -> list[str]:
    """The warm-start sources as a list of paths: a path given as text
    (``tuner.warm_start=path``) is one source, not a list of its characters."""
    if sources is None:
        return []
    if isinstance(sources, str | Path):
        return [str(sources)]
    return [str(source) for source in sources]


def _file_of(source: str) -> Path:
    """The file a source's tests are read from, or a one-line ConfigError."""
    path = Path(source).expanduser()
    if path.is_dir():
        path = path / "observations.jsonl"
        if not path.is_file():
            raise ConfigError(
                f"warm_start: {source} has no observations.jsonl (not a session folder)"
            )
    elif path.exists() and not path.is_file():  # a FIFO or a device would never end
        raise ConfigError(f"warm_start: {source} is not a regular file; give a samples.csv")
    elif not path.is_file():
        raise ConfigError(
            f"warm_start: {source} does not exist; give a session folder or samples.csv"
        )
    size = path.stat().st_size
    if size > MAX_SOURCE_BYTES:
        raise ConfigError(
            f"warm_start: {path} is {size / 2**20:.0f} MiB, above the {MAX_SOURCE_BYTES // 2**20}"
            f" MiB a source may have; give a samples.csv of at most "
            f"{MAX_SOURCE_TESTS} of its tests (more are sampled down to that anyway)"
        )
    return path


def _read(source: str) -> list[Observation]:
    path = _file_of(source)
    if path.name == "observations.jsonl":
        return SampleStore(path.parent).load()
    return _read_table(path)


def _stored_system(path: Path) -> str | None:
    """The system named by the ``session.json`` beside a source's file, if any (a claim
    read as data: anything unreadable claims nothing)."""
    try:
        meta = json.loads((path.parent / "session.json").read_text())
        name = meta["config"]["system"]["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return name if isinstance(name, str) else None


def _knobs_of(path: Path) -> set[str]:
    """The knob names a source's first test (or its table's header) sets."""
    with path.open(newline="") as handle:
        first = handle.readline()
    if path.name == "observations.jsonl":
        try:
            config = json.loads(first).get("config", {})
        except (ValueError, AttributeError):
            return set()
        return set(config) if isinstance(config, dict) else set()
    header = next(csv.reader([first]), [])
    return {name[len(_PREFIX) :] for name in header if name.startswith(_PREFIX)}


def _check_source(source: str, space: Space, system: str) -> None:
    """One source against this session: readable, bounded, of this system, sharing knobs."""
    path = _file_of(source)
    theirs = _stored_system(path)
    if theirs is not None and theirs != system:
        raise ConfigError(
            f"warm_start: {source} is a session of system {theirs!r}, not {system!r}; "
            "warm-start from sessions of this system (its order of settings transfers "
            "between machines, not between systems)"
        )
    knobs = _knobs_of(path)
    if knobs and not knobs & set(space.names):
        raise ConfigError(
            f"warm_start: {source} has no knob in common with system {system!r} "
            f"(it sets {', '.join(sorted(knobs)[:3])}, ...); give a session of this system"
        )


def preflight(options: Mapping[str, Any], space: Space, system: str) -> None:
    """Check the ``warm_start`` sources of a tuner's ``options`` before the session is created
    (:func:`harness.builder.validate.check_tuner_inputs`): each one line and exit 2."""
    for source in source_list(options.get("warm_start")):
        _check_source(source, space, system)


def _bounded(observations: list[Observation]) -> list[Observation]:
    """At most :data:`MAX_SOURCE_TESTS` of a source's tests, in their order: the
    :data:`KEEP_BEST` best successful ones and the rest drawn with a fixed seed."""
    if len(observations) <= MAX_SOURCE_TESTS:
        return observations
    scores = imputed_scores(observations)
    ok = [i for i, obs in enumerate(observations) if obs.ok]
    best = sorted(ok, key=lambda i: -scores[i])[:KEEP_BEST]
    others = np.setdiff1d(np.arange(len(observations)), best)
    rng = np.random.default_rng(_SAMPLE_SEED)
    drawn = rng.choice(others, MAX_SOURCE_TESTS - len(best), replace=False)
    return [observations[i] for i in sorted([*best, *drawn.tolist()])]


def load_priors(sources: str | Sequence[str], space: Space) -> list[PriorSamples]:
    """Every source's settings moved into ``space`` (see the module docstring); a source of
    more than :data:`MAX_SOURCE_TESTS` tests is sampled down to that many."""
    priors = []
    for source in source_list(sources):
        observations = _read(source)
        if len(observations) > MAX_SOURCE_TESTS:
            log.info(
                "warm_start: %s has %d tests: using %d of them (its %d best and a fixed "
                "random draw)",
                source,
                len(observations),
                MAX_SOURCE_TESTS,
                KEEP_BEST,
            )
            observations = _bounded(observations)
        points = []
        for obs in observations:
            try:
                points.append(space.encode(space.complete(space.fit(obs.config))))
            except KnobError as exc:
                raise ConfigError(f"warm_start: {source}, trial {obs.trial}: {exc}") from None
        if len(points) >= 2:
            ok = np.array([o.ok for o in observations], dtype=bool)
            priors.append(PriorSamples(source, np.array(points), imputed_scores(observations), ok))
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
