"""Apply the answer: write a session's best configuration where a user can use it.

``python -m harness.cli.export <session folder> [--format native|yaml|json|env] [--out DIR]``
reads the session folder through the store, picks the session's answer by the summary's own
rule (:attr:`harness.session.options.SessionResult.answer`: the best measured test, or the
tuner's own answer when the session recorded one), rebuilds the system adapter from
the stored config *without* starting or reaching anything (adapters do no I/O before
``preflight``), and writes into ``--out`` (default ``<session>/export/``):

- ``native`` (the default): the adapter's :meth:`~harness.system.System.native_files` (my.cnf,
  site XML, PRAGMAs, ...) plus ``best.yaml`` and ``best.json``; ``yaml``/``json``/``env``:
  that file alone (``best.env`` holds ``HARNESS_KNOB_<NAME>=value`` lines);
- always ``overrides.txt``: one ``+system.fixed.<knob>=<value>`` Hydra override per knob,
  quoted for Hydra's override grammar, so the configuration can be measured again.

Every format carries each knob's unit (a YAML or env comment on its line, a ``units`` object
in JSON), whatever the system: the units come from the adapter's space when it is built, else
from the units the session recorded when it started (a synthetic or recorded-data system is
not rebuilt for an export: building one may fit a model).

Every session with a folder also gets this at its end (:mod:`harness.session.end`). Values
were validated by the space when tested; here each is still escaped per format (the adapters'
own escaping, ``yaml.safe_dump``, ``shlex.quote``, Hydra quoting), and file names from
adapters are checked so nothing is written outside the output folder.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from omegaconf import DictConfig, OmegaConf

from harness.errors import ConfigError, HarnessError
from harness.hosts.process import this_python
from harness.records import Observation
from harness.session.options import SessionResult
from harness.space import Config, Space, Value
from harness.store.samples import SampleStore, atomic_write
from harness.store.stored_config import check_stored_targets, refuse_links
from harness.system import System

__all__ = [
    "EXPORT_DIR",
    "FORMATS",
    "ExportResult",
    "build_adapter",
    "export_config",
    "export_session",
    "hydra_override",
]

log = logging.getLogger(__name__)

Format = Literal["native", "yaml", "json", "env"]
FORMATS: tuple[Format, ...] = ("native", "yaml", "json", "env")
EXPORT_DIR = "export"
OVERRIDES_FILE = "overrides.txt"
#: The files the export writes itself; an adapter's native file may not take these names.
OWN_FILES = frozenset({"best.yaml", "best.json", "best.env", OVERRIDES_FILE})
#: A native file name: one bare name (no folder, no ``..``, no hidden file).
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


@dataclass
class ExportResult:
    """What an export wrote, and what it could not (knobs no override can name, say)."""

    folder: Path
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The command that measures the exported configuration again (one test).
    command: str = ""


# -- the session ---------------------------------------------------------------------------
def best_observation(
    folder: Path, observations: list[Observation], answer_trial: int | None = None
) -> Observation | None:
    """The session's answer by the summary's rule (:attr:`SessionResult.answer`: the tuner's
    own answer when the session recorded one, else the best measured; no objective needed)."""
    # The objective is not read by ``answer``: a stand-in keeps the rule in one place.
    result = SessionResult(
        session_id="",
        directory=folder,
        objective=cast(Any, None),
        observations=observations,
        references=[],
        status="",
        tracking="",
        answer_trial=answer_trial,
    )
    return result.answer


def build_adapter(cfg: DictConfig) -> System:
    """The session's adapter, built from its stored config on this machine, started never.

    ``hosts=`` is ignored on purpose: rendering needs no host, and connecting would be I/O.
    Range overrides are applied, so a value of a widened range validates as it did.
    """
    from hydra.utils import instantiate

    from harness.builder.validate import check_range_overrides, dotted_knobs, is_range_change
    from harness.conf.schema import register_configs

    register_configs()  # the stored config's ${harness_install:...} resolvers
    try:
        system: System = instantiate(cfg.system.adapter)
    except (
        Exception
    ) as exc:  # not harness.builder.session's wrapper: build -> session -> here is a cycle
        cause = exc.__cause__ or exc
        if isinstance(cause, HarnessError):
            raise cause from None
        raise ConfigError(f"cannot build the system {cfg.system.name!r}: {cause}") from None
    system.name = str(cfg.system.name)
    ranges_node = cfg.system.get("ranges")
    tree = OmegaConf.to_container(ranges_node, resolve=True) if ranges_node else {}
    ranges = dotted_knobs(dict(tree or {}), is_range_change)  # type: ignore[arg-type]
    if ranges:
        check_range_overrides(ranges)
        system.space = system.space.with_overrides(ranges)
    return system


def has_native_files(cfg: DictConfig) -> bool:
    """Whether the session's adapter class renders native files (without building it)."""
    from hydra.utils import get_class

    try:
        cls = get_class(str(cfg.system.adapter._target_))
    except Exception:  # an unknown target: building it reports the error properly
        return True
    return getattr(cls, "native_files", None) is not System.native_files


def export_session(
    folder: str | Path,
    fmt: Format = "native",
    out: str | Path | None = None,
    config_dirs: Sequence[str | Path] = (),
) -> ExportResult:
    """Export the best test of the session in ``folder`` (see the module docstring); its
    stored config builds only targets this project or ``config_dirs`` name
    (:mod:`harness.store.stored_config`)."""
    path = Path(folder)
    if not path.is_dir():
        raise ConfigError(f"{path} is not a session folder; pass results/sessions/<session-id>")
    refuse_links(path)
    store = SampleStore(path)
    meta = store.read_meta()
    if not isinstance(meta.get("config"), dict):
        raise ConfigError(
            f"{path / 'session.json'} holds no composed config (a session built from objects); "
            "export needs a session started by python -m harness or harness.api.run"
        )
    observations = store.load()
    answer_trial = meta.get("answer_trial")
    best = best_observation(
        path, observations, answer_trial if isinstance(answer_trial, int) else None
    )
    if best is None:
        raise ConfigError(
            f"session {path} has no successful test to export ({len(observations)} tests); "
            f"resume it with python -m harness resume={path}"
        )
    cfg = OmegaConf.create(meta["config"])
    assert isinstance(cfg, DictConfig)
    check_stored_targets(cfg, path / "session.json", config_dirs)
    session_id = str(meta.get("session_id", path.name))
    note = f"session {session_id}, trial {best.trial} of {len(observations)}"
    units = _recorded_units(meta)
    # a real system's adapter is cheap to build (no I/O): its space also says what a value trades
    wanted = fmt == "native" or not units
    system = build_adapter(cfg) if wanted and has_native_files(cfg) else None
    result = export_config(
        best.config,
        Path(out) if out is not None else path / EXPORT_DIR,
        system=system,
        fmt=fmt,
        note=note,
        meta={"session": session_id, "trial": best.trial, "metrics": best.metrics},
        units=units,
    )
    lines, _ = overrides(best.config)
    picks = [f"system={cfg.system.name}", f"workload={cfg.workload.get('name', 'default')}"]
    stored = meta.get("overrides")
    if not isinstance(stored, list):
        stored = []
        result.notes.append(
            "this session predates recorded overrides: add the ones it ran with (dataset.*, "
            "system.adapter.*, workload.*) to the command below"
        )
    kept = _repeated_overrides(stored)
    result.command = shlex.join(
        [this_python(), "-m", "harness", *picks, *kept, *lines, "budget=1"]
    )
    if system is None and fmt == "native":
        result.notes.append(f"system {cfg.system.name!r} has no configuration files of its own")
    return result


def _recorded_units(meta: Mapping[str, Any]) -> dict[str, str]:
    """The knob units a session recorded when it started (``units`` in session.json)."""
    units = meta.get("units")
    if not isinstance(units, dict):
        return {}
    return {str(k): v for k, v in units.items() if isinstance(v, str) and v}


# -- the files -----------------------------------------------------------------------------
def export_config(
    config: Config,
    out: Path,
    *,
    system: System | None = None,
    fmt: Format = "native",
    note: str = "",
    meta: Mapping[str, Any] | None = None,
    units: Mapping[str, str] | None = None,
) -> ExportResult:
    """Write ``config`` into ``out`` in format ``fmt`` (with ``system``'s native files); a
    knob's unit is its space's, else the one ``units`` gives."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    texts: dict[str, str] = {}
    if system is not None and fmt == "native":
        for name, text in system.native_files(dict(config), note).items():
            texts[_checked_name(name)] = text
    space = system.space if system is not None else None
    known = dict(units or {})
    if fmt in ("native", "yaml"):
        texts["best.yaml"] = best_yaml(config, space, note, units=known)
    if fmt in ("native", "json"):
        texts["best.json"] = best_json(config, space, meta or {}, units=known)
    if fmt == "env":
        texts["best.env"] = best_env(config, note, units=known, space=space)
    lines, skipped = overrides(config)
    texts[OVERRIDES_FILE] = "".join(f"{line}\n" for line in lines)
    result = ExportResult(out, notes=[f"no Hydra override can pin knob {k!r}" for k in skipped])
    if out.is_symlink():
        raise ConfigError(f"{out} is a symbolic link; pass --out <a folder of your own>")
    try:
        out.mkdir(mode=0o700, parents=True, exist_ok=True)
        for name, text in texts.items():
            target = out / name
            atomic_write(target, text)  # 0600, and a link planted at target is replaced
            result.files.append(target)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the export into {out}: {exc.strerror}; pass --out <a writable folder>"
        ) from None
    return result


def _checked_name(name: str) -> str:
    """An adapter's file name, refused unless it is one bare name the export does not own."""
    if not _FILE_NAME.fullmatch(name) or ".." in name or name in OWN_FILES:
        raise ConfigError(f"the adapter's export file name {name!r} is not a plain file name")
    return name


def _unit(space: Space | None, name: str, units: Mapping[str, str] | None = None) -> str:
    """``name``'s unit: its space's, else the recorded one (printable characters only, so a
    unit cannot end a comment line early)."""
    unit = space[name].unit if space is not None and name in space else ""
    return "".join(c for c in (unit or (units or {}).get(name, "")) if c.isprintable())


def best_yaml(
    config: Config, space: Space | None, note: str = "", *, units: Mapping[str, str] | None = None
) -> str:
    """``knob: value`` per line (``yaml.safe_dump`` quotes); the unit, and what an unsafe value
    trades, as a trailing comment."""
    lines = [f"# {_one_line(note or 'best configuration')}"]
    for name, value in config.items():
        # one key per dump, so the unit comment lands on its knob's line (width: never fold)
        dumped = yaml.safe_dump({name: value}, default_flow_style=False, width=2**31).rstrip()
        unit = _unit(space, name, units)
        comment = "; ".join(filter(None, [unit, _risk(space, name, value)]))
        lines.append(f"{dumped}  # {comment}" if comment and "\n" not in dumped else dumped)
    return "\n".join(lines) + "\n"


def _risk(space: Space | None, name: str, value: Value) -> str:
    """``trades safety: ...`` when the value gives a guarantee up (harness.knob_risk)."""
    risk = space[name].risk if space is not None and name in space else None
    return f"trades safety: {risk.says}" if risk and risk.applies_to(value) else ""


def best_json(
    config: Config,
    space: Space | None,
    meta: Mapping[str, Any],
    *,
    units: Mapping[str, str] | None = None,
) -> str:
    """The configuration, its units and where it came from, as one JSON object."""
    known = {name: _unit(space, name, units) for name in config}
    body = {**meta, "config": dict(config), "units": {k: v for k, v in known.items() if v}}
    return json.dumps(body, indent=2, sort_keys=False) + "\n"


def env_name(knob: str) -> str:
    """``HARNESS_KNOB_<NAME>``: the knob name upper-cased, every other character ``_``."""
    return "HARNESS_KNOB_" + re.sub(r"[^A-Z0-9]", "_", knob.upper())


def best_env(
    config: Config,
    note: str = "",
    *,
    units: Mapping[str, str] | None = None,
    space: Space | None = None,
) -> str:
    """``HARNESS_KNOB_<NAME>=value`` lines a POSIX shell can source (values shell-quoted),
    each with its unit as a trailing comment."""
    lines = [f"# {_one_line(note or 'best configuration')}"]
    seen: set[str] = set()
    for name, value in config.items():
        key = env_name(name)
        while key in seen:  # ``a.b`` and ``a_b`` sanitise alike: keep both, distinctly
            key += "_"
        seen.add(key)
        unit = _unit(space, name, units)
        line = f"{key}={shlex.quote(_plain_text(value))}"
        lines.append(f"{line}  # {unit}" if unit else line)
    return "\n".join(lines) + "\n"


def _plain_text(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in text)


# -- Hydra overrides -----------------------------------------------------------------------
def _hydra_quoted(text: str) -> str:
    """A single-quoted Hydra string: Hydra un-escapes backslashes only where they precede a
    quote or end the string, so only those runs are doubled."""
    body = re.sub(r"(\\*)'", lambda m: m.group(1) * 2 + "\\'", text)
    body = re.sub(r"(\\+)$", lambda m: m.group(1) * 2, body)
    return f"'{body}'"


def hydra_override(name: str, value: Value) -> str | None:
    """``+system.fixed.<name>=<value>`` that Hydra parses back to ``value`` exactly, or None
    when no override can carry it (a knob name outside Hydra's key grammar, an
    interpolation that OmegaConf would resolve)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    if isinstance(value, str) and "${" in value:
        return None
    if isinstance(value, bool):
        candidates = ["true" if value else "false"]
    elif isinstance(value, int | float):
        candidates = [repr(value)]
    else:
        candidates = [value, _hydra_quoted(value)]
    for text in candidates:
        line = f"+system.fixed.{name}={text}"
        try:
            parsed = parser.parse_override(line)
        except Exception:  # Hydra's grammar errors: try the next form
            continue
        got = parsed.value()
        same = type(got) is type(value) and got == value  # 1 == True, so the type too
        if parsed.key_or_group == f"system.fixed.{name}" and same:
            return line
    return None


def overrides(config: Config) -> tuple[list[str], list[str]]:
    """(override lines, knobs no override can pin)."""
    lines, skipped = [], []
    for name, value in config.items():
        line = hydra_override(name, value)
        if line is None:
            skipped.append(name)
        else:
            lines.append(line)
    return lines, skipped


#: Overrides of a session the re-measure command does not repeat: the search and the session's
#: identity (by key or key prefix), the group picks it writes itself, and the knobs it pins.
_NOT_REPEATED = ("tuner", "budget", "resume", "session", "hydra", "system.fixed")
_PICKS = ("system", "workload")


def _repeated_overrides(stored: list[Any]) -> list[str]:
    """The stored command-line overrides that define the system and workload measured, as
    Hydra parses them (a stored list is data: anything else, and any ``_target_``, is left
    out)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    kept = []
    for text in stored:
        if not isinstance(text, str):
            continue
        try:
            key = parser.parse_override(text).key_or_group
        except Exception:  # Hydra's grammar errors: not an override
            continue
        dropped = key in _PICKS or "_target_" in key
        if dropped or any(key == k or key.startswith(f"{k}.") for k in _NOT_REPEATED):
            continue
        kept.append(text)
    return kept
