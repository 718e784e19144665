"""Checks of a session's input that need no system: names, resume overrides, unknown keys,
tuner options, range overrides and the results folder. Each failure is one ConfigError line
that names the fix, raised before anything is created."""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import math
import os
import re
from functools import partial
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from harness.conf.schema import HarnessConfig
from harness.errors import ConfigError, HarnessError
from harness.session.options import MAX_BUDGET, MAX_CONFIRM, MAX_REPEATS
from harness.tuner import tuner_name_of

__all__ = [
    "RESUME_OVERRIDABLE",
    "check_counts",
    "check_range_overrides",
    "check_resume_overrides",
    "check_tuner_inputs",
    "check_tuner_keys",
    "check_tuner_options",
    "check_tuner_values",
    "check_unknown_keys",
    "check_workload_numbers",
    "ensure_results_dir",
    "override_key",
    "validate_session_name",
]

#: A session name is one path component: it names folders, never points elsewhere.
_SESSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$")
#: What a resume may change (everything else is the stored session's and stays so).
RESUME_OVERRIDABLE = (
    "resume",
    "budget",
    "results_dir",
    "tracking",
    "session.progress",
    "session.keep_workdir",
    "session.confirm",
    "hydra",
)
#: Typed nodes whose keys are fixed; a ``+key=`` Hydra would add to them is refused.
_TYPED_NODES = ("session", "objective", "tracking", "dataset")


def validate_session_name(name: str) -> str:
    """``name`` if it is a safe folder name, else a ConfigError naming the rule."""
    if not _SESSION_NAME.match(name):
        raise ConfigError(
            f"session.name {name!r} is not a plain name: use letters, digits, "
            "'.', '_' and '-' (at most 120, no '/'), e.g. session.name=mysql-run1"
        )
    return name


def override_key(text: str) -> str:
    return text.lstrip("+~").split("=", 1)[0]


def check_resume_overrides(overrides: list[str], stored: DictConfig) -> int | None:
    """Refuse command-line overrides a resume cannot honour; return a raised budget, if any.

    The stored session's tuner, system, seed, objective and knob space define what its
    finished tests mean, so they cannot change when it continues.
    """
    budget: int | None = None
    for text in overrides:
        key = override_key(text)
        if not any(key == k or key.startswith(f"{k}.") for k in RESUME_OVERRIDABLE):
            raise ConfigError(
                f"`{text}` cannot change on resume (the stored session's "
                "settings define its finished tests); resume without it, or "
                "start a new session"
            )
        if key == "budget":
            try:
                budget = int(text.split("=", 1)[1])
            except ValueError:
                raise ConfigError(f"budget must be a whole number, got `{text}`") from None
            if budget < int(stored.budget):
                raise ConfigError(
                    f"budget={budget} is below this session's budget "
                    f"{stored.budget}; a resume can only raise it"
                )
    return budget


def check_unknown_keys(cfg: DictConfig) -> None:
    """Refuse keys added with ``+`` that no part of the harness reads (typos)."""
    known = {f.name for f in dataclasses.fields(HarnessConfig)}
    extra = [str(k) for k in cfg if str(k) not in known and str(k) != "hydra"]
    for node in _TYPED_NODES:
        schema = {f.name for f in dataclasses.fields(type(getattr(HarnessConfig(), node)))}
        extra += [f"{node}.{k}" for k in cfg[node] if str(k) not in schema]
    if extra:
        raise ConfigError(
            f"unknown setting(s) {', '.join(sorted(extra))}: nothing reads "
            "them (a typo?); see `python -m harness --cfg job` for the keys"
        )


def check_tuner_options(factory: partial[Any], name: str) -> None:
    """Unknown tuner options fail now, not when the session builds the tuner."""
    try:
        signature = inspect.signature(factory.func)
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return
    unknown = sorted(set(factory.keywords) - set(signature.parameters))
    if unknown:
        options = [p for p in signature.parameters if p not in ("space", "seed", "budget")]
        raise ConfigError(unknown_option_message(f"tuner {name!r}", unknown[0], options))


def unknown_option_message(owner: str, key: str, options: list[str]) -> str:
    """``owner has no option 'rouns' (did you mean 'rounds'?)``: the closest names when some
    are close, else the list when it is short, else where to read it (never 40 names)."""
    close = difflib.get_close_matches(key, options, n=3, cutoff=0.6)
    if close:
        hint = f"did you mean {' or '.join(repr(c) for c in close)}?"
    elif len(options) <= 8:
        hint = f"its options: {', '.join(options) or 'none'}"
    else:
        hint = "its options: python -m harness --cfg job --package tuner"
    return f"{owner} has no option {key!r} ({hint})"


def check_tuner_keys(arguments: list[str]) -> None:
    """``tuner.rouns=3`` (a key the chosen tuner's YAML does not have) gets one line with a
    "did you mean" before Hydra composes; Hydra's own answer is a multi-line struct error.
    Keys added with ``+``, and tuners not found in the packaged configs, are left to the
    checks after composing, as are command lines whose tuner another config may choose (an
    experiment, a config folder of the user's)."""
    if any(_chooses_elsewhere(a) for a in arguments):
        return
    tuners = _choices(arguments, "tuner") or [_default_choice("tuner")]
    for argument in arguments:
        name, sep, _ = argument.partition("=")
        if not sep or name.startswith("+") or not name.lstrip("~").startswith("tuner."):
            continue
        key = name.lstrip("~").split(".")[1]
        for tuner in tuners:
            options = _tuner_yaml_keys(tuner)
            if options is not None and key not in options:
                raise ConfigError(unknown_option_message(f"tuner {tuner!r}", key, options))


#: Arguments after which the packaged defaults may not be what composes the tuner.
_ELSEWHERE = ("experiment", "--config-dir", "-cd", "--config-path", "-cp", "--config-name", "-cn")


def _chooses_elsewhere(argument: str) -> bool:
    name = argument.partition("=")[0].lstrip("+~")
    return name in _ELSEWHERE or name.startswith("--config")


def _tuner_yaml_keys(tuner: str) -> list[str] | None:
    """The option names of the packaged ``conf/tuner/<tuner>.yaml``, or None if there is none."""
    import yaml

    from harness.conf import CONFIG_DIR

    path = CONFIG_DIR / "tuner" / f"{tuner}.yaml"
    if not re.fullmatch(r"[A-Za-z0-9_-]+", tuner) or not path.is_file():
        return None
    tree = yaml.safe_load(path.read_text()) or {}
    if not isinstance(tree, dict) or "defaults" in tree:  # composed from others: Hydra checks
        return None
    return [str(k) for k in tree if not str(k).startswith("_")]


def check_tuner_values(factory: partial[Any], space: Any, options: Any) -> None:
    """Build the tuner once and drop it: an option value it refuses (``tuner.rounds=-1``, a
    fraction outside its interval, a package only one sampler needs) fails now, with the
    tuner's own one-line reason, instead of after the session and its folder exist."""
    name = tuner_name_of(factory)
    try:
        factory(space=space, seed=options.seed, budget=options.budget)
    except HarnessError as exc:
        raise ConfigError(f"tuner {name!r}: {exc}") from None
    except (ValueError, TypeError, ImportError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"tuner {name!r}: {reason}") from None


def check_tuner_inputs(factory: partial[Any], space: Any, system: str) -> None:
    """A tuner class may check its inputs against this system before anything is created:
    a ``preflight(options, space, system)`` class method that raises ConfigError (ClassyTune
    reads its warm-start sources' headers there). A failure then exits 2 with no session
    folder, instead of ending a session that was just created."""
    preflight = getattr(factory.func, "preflight", None)
    if callable(preflight):
        preflight(dict(factory.keywords), space, system)


def target_signature(node: dict[str, Any]) -> inspect.Signature | None:
    """The signature of a config node's ``_target_`` class, or None if it cannot be
    resolved (instantiating the node then reports why)."""
    from hydra.utils import get_class

    try:
        return inspect.signature(get_class(str(node.get("_target_"))))
    except Exception:
        return None


def check_workload_options(node: dict[str, Any], name: str) -> None:
    """Unknown workload settings (e.g. a typo in ``workload.treads=4``) fail with the list."""
    signature = target_signature(node)
    if signature is None:
        return
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return
    unknown = sorted(k for k in node if not k.startswith("_") and k not in signature.parameters)
    if unknown:
        raise ConfigError(
            f"workload {name!r} has no setting(s) {', '.join(unknown)}; its settings: "
            f"{', '.join(signature.parameters) or 'none'}"
        )


def check_workload_numbers(node: dict[str, Any], name: str) -> None:
    """Every number a workload takes is finite and not negative (a duration, a count, a scale,
    a seed), ``duration_s`` is positive, and a setting whose default is a whole number gets
    one: ``workload.threads=2.5`` would otherwise be cut to 2 without a word."""
    signature = target_signature(node)
    parameters = signature.parameters if signature is not None else {}
    for key, value in node.items():
        default = parameters[key].default if key in parameters else None
        numeric_default = isinstance(default, int | float) and not isinstance(default, bool)
        if key.startswith("_") or isinstance(value, bool) or value is None:
            continue
        setting = f"workload.{key}={value}"
        if not isinstance(value, int | float):
            if numeric_default or key == "duration_s":
                raise ConfigError(f"{setting}: workload {name!r} takes a number here")
            continue
        if not math.isfinite(value) or value < 0:
            raise ConfigError(f"{setting}: workload {name!r} takes a finite number, 0 or more")
        if key == "duration_s" and value == 0:
            raise ConfigError(f"{setting}: the measurement needs a positive number of seconds")
        if isinstance(default, int) and numeric_default and not float(value).is_integer():
            raise ConfigError(f"{setting}: {key} is a whole number, e.g. {int(value)}")


def check_workload_choices(arguments: list[str]) -> None:
    """``system=X workload=Y`` where X offers no Y: one line naming what X offers.

    Checked on the command line before Hydra composes (Hydra's own message names an internal
    group and prints its search path); sweeps (``system=a,b``) check every combination.
    """
    from harness.conf.schema import workloads_of

    systems = _choices(arguments, "system") or [_default_choice("system")]
    workloads = _choices(arguments, "workload")
    for system in systems:
        offered = workloads_of(system)
        if not offered:  # not a system config: Hydra lists the systems
            continue
        for workload in workloads:
            if workload != "default" and workload not in offered:
                raise ConfigError(
                    f"system {system!r} has no workload {workload!r}; it offers: "
                    f"{', '.join(offered)} (e.g. workload={offered[0]})"
                )


def _choices(arguments: list[str], key: str) -> list[str]:
    """The options ``key=a,b`` names on the command line (the last one wins, as in Hydra);
    sweep functions such as ``choice(...)`` or ``glob(...)`` are left to Hydra."""
    found: list[str] = []
    for argument in arguments:
        name, sep, value = argument.partition("=")
        if sep and name.lstrip("+~") == key:
            found = [] if "(" in value or "*" in value else value.split(",")
    return [v.strip() for v in found if v.strip()]


def _default_choice(group: str) -> str:
    """The option ``config.yaml``'s defaults list picks for ``group``."""
    import yaml

    from harness.conf import CONFIG_DIR

    defaults = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text()).get("defaults", [])
    for entry in defaults:
        if isinstance(entry, dict) and group in entry:
            return str(entry[group])
    return ""


RANGE_FIELDS = frozenset({"min", "max", "default", "log", "values"})


def dotted_knobs(tree: dict[str, Any], leaf: Any = None) -> dict[str, Any]:
    """``{"mapreduce": {"job": {"maps": 2}}}`` → ``{"mapreduce.job.maps": 2}``.

    Hydra reads the dots of ``+system.fixed.mapreduce.job.maps=2`` as nesting, but Hadoop's and
    Hive's knob names have dots of their own. A value is a leaf when it is not a dict, or when
    ``leaf(value)`` says so (a range override's ``{max: ...}``)."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and not (value and leaf and leaf(value)):
            for inner, item in dotted_knobs(value, leaf).items():
                flat[f"{key}.{inner}"] = item
        else:
            flat[str(key)] = value
    return flat


def is_range_change(value: dict[str, Any]) -> bool:
    """A range override's fields (``{max: 100}``), not a level of a dotted knob name."""
    return set(value) <= RANGE_FIELDS


def check_range_overrides(ranges: dict[str, Any]) -> None:
    """Range overrides must be finite numbers (min/max/default) before the space sees them."""
    for knob, changes in ranges.items():
        if not isinstance(changes, dict):
            raise ConfigError(
                f"+system.ranges.{knob} must set fields, e.g. +system.ranges.{knob}.max=100"
            )
        for key in ("min", "max"):
            if key not in changes:
                continue
            value = changes[key]
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
            ):
                raise ConfigError(
                    f"+system.ranges.{knob}.{key} must be a finite number, got {value!r}"
                )


#: Counts on the command line: their caps (:mod:`harness.session.options`) and an example.
_COUNTS = {
    "budget": (MAX_BUDGET, 100),
    "repeats": (MAX_REPEATS, 3),
    "session.confirm": (MAX_CONFIRM, 3),
}


def check_counts(arguments: list[str]) -> None:
    """``budget``, ``repeats`` and ``session.confirm`` on the command line (every value of a
    sweep list) are whole numbers within their caps: ``budget=2e9`` or ``budget=1e20`` get
    one line before Hydra composes (Hydra's own answer to a float was a multi-line type
    error; a huge whole number asked for memory before failing). Values Hydra computes
    (``${...}``, ``range(...)``), and the lower bounds, are checked once composed
    (:class:`harness.session.options.SessionOptions`)."""
    for argument in arguments:
        name, sep, value = argument.partition("=")
        key = name.lstrip("+~")
        if not sep or key not in _COUNTS or "(" in value or "$" in value:
            continue
        high, example = _COUNTS[key]
        for text in value.split(","):
            try:
                number = float(text)
            except ValueError:
                continue  # not a number: Hydra's type check names it
            if not (math.isfinite(number) and number.is_integer() and number <= high):
                raise ConfigError(
                    f"{key}={text.strip()} is not a whole number up to {high} (a cap no "
                    f"real session reaches); e.g. {key}={example}"
                )


#: Folders a session never writes into (it makes sessions/, work/, runs/ and mlflow.db
#: there): the file system's root and the system's own folders, themselves ...
_NOT_ITSELF: tuple[str, ...] = ("/", "/home", "/media", "/mnt", "/opt", "/root", "/run", "/srv")
_NOT_ITSELF += ("/tmp", "/var", "/var/lib", "/var/log", "/var/tmp")
#: ... and these with everything below them.
_SYSTEM_TREES: tuple[str, ...] = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/proc",
    "/sbin",
)
_SYSTEM_TREES += ("/sys", "/usr")


def _system_folder(folder: Path) -> bool:
    """Whether ``folder`` (resolved: ``/tmp/..`` is ``/``) is a system folder or a home
    folder itself."""
    resolved = folder.expanduser().resolve()
    mine = {Path(p) for p in _NOT_ITSELF} | {Path.home().resolve()}
    trees = [Path(p) for p in _SYSTEM_TREES]
    return resolved in mine or any(resolved.is_relative_to(tree) for tree in trees)


def ensure_results_dir(folder: Path) -> Path:
    """``folder``, created if missing (0711) and probed with a write, or a one-line
    ConfigError (a system folder, unwritable, not a folder, a full disk).

    A system folder (``/``, ``/etc``, ``/usr``, a home folder itself) is refused before
    anything is written: a session fills its results folder with its own subfolders, and run
    as root it would do so anywhere."""
    if _system_folder(folder):
        raise ConfigError(
            f"results_dir={folder} is a system or home folder; give the results a folder of "
            f"their own, e.g. results_dir={Path.home() / 'harness-results'}"
        )
    try:
        if not folder.exists():
            folder.mkdir(parents=True)
            # traversable (server users reach their instance folders under work/), not listable
            os.chmod(folder, 0o711)
        probe = folder / f".write-test-{os.getpid()}"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        raise ConfigError(
            f"results folder {folder} is not writable ({exc.strerror}); "
            "set results_dir=<a writable folder>"
        ) from None
    return folder
