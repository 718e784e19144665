"""A system whose performance is predicted by a model of recorded samples (a surrogate).

:class:`DatasetSystem` reads a sample table (ARFF or CSV, including the harness's own exported
samples), infers the knob space, fits (or loads from cache) a random-forest surrogate, checks
its fidelity on held-out rows, and then answers each test in well under a millisecond:
``apply`` encodes the configuration, ``start`` raises :class:`SystemStartError` where the
failure model predicts a failure, and :class:`SurrogateWorkload` reports the prediction (plus
optional seeded noise drawn from the model's out-of-bag residuals).

Building the same surrogate again in one process is cheap: the parsed table (keyed by the
file's content and the reading options, :func:`load_dataset`) and the fitted model
(:func:`systems.dataset.model.load_or_fit`) are kept in memory.

Every error in the input (unreadable file, missing target, text in a numeric knob, too few
rows, useless fidelity) is a :class:`ConfigError` raised from the constructor, i.e. before
any test runs.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

import numpy as np

from harness.errors import ConfigError, SystemStartError, WorkloadError, WorkloadTimeout
from harness.space import Config, load_catalogue
from harness.system import MetricSpec, System, Workload
from systems.dataset.infer import Dataset, apply_catalogue, build_dataset
from systems.dataset.model import ModelSettings, load_or_fit
from systems.dataset.optimum import load_optima, search_optimum
from systems.dataset.tables import file_digest, read_table

__all__ = ["DATA_DIR", "DatasetSystem", "SurrogateWorkload", "load_dataset", "resolve_path"]

log = logging.getLogger(__name__)

DATA_DIR = Path(__file__).with_name("data")
BUILTIN = "builtin:"

#: Datasets parsed by this process, by :func:`_dataset_key`. A Dataset is frozen and its
#: arrays are only read, so systems built from the same file share one.
_DATASETS: dict[tuple[Any, ...], Dataset] = {}


def resolve_path(path: str | Path | None) -> Path:
    """``builtin:bestconf/x.arff`` -> the packaged data file; other paths as given."""
    if path is None or str(path) in ("", "None", "null"):
        raise ConfigError(
            "no dataset file given: run with system=dataset dataset.path=FILE "
            "dataset.target=COLUMN dataset.direction=max|min"
        )
    text = str(path)
    if text.startswith(BUILTIN):
        return DATA_DIR / text[len(BUILTIN) :]
    return Path(text).expanduser()


def _identity(path: Path) -> tuple[str, str]:
    """(absolute path, content digest): a rewritten file is a new key even within one mtime."""
    try:
        return str(path.resolve()), file_digest(path)
    except OSError:
        return str(path), ""  # read_table reports the error


def load_dataset(
    path: Path,
    target: str | None,
    *,
    exclude: tuple[str, ...] = (),
    failure_value: float | None = None,
    default_row: int | str | None = None,
    rename: str | None = None,
    max_enum: int = 12,
    catalogue: str | None = None,
    knob_set: str | None = None,
) -> Dataset:
    """The typed dataset of a sample file (see :mod:`systems.dataset.infer`), parsed once per
    process for each file content and set of reading options."""
    catalogue_path = resolve_path(catalogue) if catalogue else None
    key = (
        _identity(path),
        target,
        exclude,
        failure_value,
        default_row,
        rename,
        max_enum,
        _identity(catalogue_path) if catalogue_path else None,
        knob_set,
    )
    cached = _DATASETS.get(key)
    if cached is not None and key[0][1]:
        return cached
    dataset = build_dataset(
        read_table(path),
        target,
        exclude=exclude,
        failure_value=failure_value,
        default_row=default_row,
        rename=rename,
        max_enum=max_enum,
    )
    if catalogue_path is not None:
        dataset = apply_catalogue(dataset, load_catalogue(catalogue_path, knob_set))
    _DATASETS[key] = dataset
    return dataset


class DatasetSystem(System):
    """A surrogate of a real system, built from its recorded (configuration -> performance)
    samples. ``kind`` is ``"surrogate"`` and the default name starts with ``surrogate_``.

    Main parameters: ``path`` (CSV/ARFF, or ``builtin:<file under data/>``), ``target`` column
    and ``direction``; ``noise``/``noise_seed`` (residual noise); ``default_row``,
    ``failure_value``, ``exclude``, ``rename``, ``catalogue``/``knob_set`` (how the table is
    read, see :mod:`systems.dataset.infer`); forest settings; ``allow_poor_fidelity`` and the
    warn/refuse thresholds; ``failure_status`` (how a predicted failure shows); ``cache_dir``.
    """

    kind = "surrogate"

    def __init__(
        self,
        path: str,
        target: str | None,
        direction: str = "max",
        name: str | None = None,
        *,
        noise: float = 0.0,
        noise_seed: int = 0,
        default_row: int | str | None = None,
        failure_value: float | None = None,
        exclude: list[str] | tuple[str, ...] = (),
        rename: str | None = None,
        max_enum: int = 12,
        min_rows: int = 20,
        n_estimators: int = 100,
        min_samples_leaf: int = 2,
        max_features: float = 1.0,
        max_samples: float | None = None,
        model_seed: int = 0,
        folds: int = 4,
        allow_poor_fidelity: bool = False,
        r2_warn: float = 0.5,
        tau_warn: float = 0.4,
        tau_refuse: float = 0.1,
        failure_status: str = "auto",
        cache_dir: str | None = "results/cache/surrogates",
        catalogue: str | None = None,
        knob_set: str | None = None,
        unit: str = "",
        source: str = "",
    ) -> None:
        if direction not in ("max", "min"):
            raise ConfigError(f"dataset direction must be max or min, got {direction!r}")
        self.direction: Literal["max", "min"] = direction  # type: ignore[assignment]
        self.path = resolve_path(path)
        self.dataset: Dataset = load_dataset(
            self.path,
            target,
            exclude=tuple(exclude or ()),
            failure_value=failure_value,
            default_row=default_row,
            rename=rename,
            max_enum=max_enum,
            catalogue=catalogue,
            knob_set=knob_set,
        )
        super().__init__(self.dataset.space)
        self.target = self.dataset.target.removeprefix("result.")
        self.name = name or f"surrogate_{self.path.stem}"
        self.unit = unit
        self.source = source
        n_ok = self.dataset.n_ok
        needed = max(int(min_rows), 2 * folds)
        if n_ok < needed:
            raise ConfigError(
                f"{self.path.name}: {n_ok} successful rows, at least {needed} "
                f"are needed to fit and check a surrogate ({len(self.dataset.configs)} rows "
                f"in all, {int(self.dataset.failed.sum())} failed)"
            )
        self.settings = ModelSettings(
            n_estimators=int(n_estimators),
            min_samples_leaf=int(min_samples_leaf),
            max_features=float(max_features),
            max_samples=None if max_samples is None else float(max_samples),
            seed=int(model_seed),
            folds=int(folds),
        )
        self.model, self.model_key = load_or_fit(
            self.dataset.points,
            self.dataset.values,
            self.dataset.failed,
            self.direction,
            self.settings,
            cache_dir,
        )
        self.fidelity = self.model.fidelity
        self.problems = self.fidelity.problems(r2_warn, tau_warn)
        self._check_fidelity(allow_poor_fidelity, tau_refuse)
        self.failure_status = self._failure_status(failure_status)
        self._predicted_failure = ""
        self.noise = float(noise)
        self.noise_seed = int(noise_seed)
        self._rng = np.random.default_rng(self.noise_seed)
        self._point: np.ndarray | None = None
        self.running = False
        self._optimum: tuple[Config, float] | None = None

    def _failure_status(self, wanted: str) -> str:
        """How a predicted failure shows: crashed (start fails), timed_out or failed (the
        workload does). ``auto``: the data's most common failure status, else crashed."""
        choices = ("crashed", "timed_out", "failed")
        wanted = str(wanted).lower()
        if wanted == "auto":
            counts = self.dataset.failure_statuses
            common = max(counts, key=lambda k: counts[k]).lower() if counts else "crashed"
            return common if common in choices else "failed"
        if wanted not in choices:
            raise ConfigError(
                f"failure_status must be auto or one of {', '.join(choices)}, got {wanted!r}"
            )
        return wanted

    def _check_fidelity(self, allow: bool, tau_refuse: float) -> None:
        fid = self.fidelity
        if fid.tau < tau_refuse and not allow:
            raise ConfigError(
                f"surrogate {self.name} is useless: held-out Kendall τ={fid.tau:.2f} < "
                f"{tau_refuse} ({fid.summary()}); its predictions do not rank configurations. "
                "Set allow_poor_fidelity=true to use it anyway"
            )
        if self.problems:
            log.warning(
                "SURROGATE %s HAS POOR FIDELITY (%s): %s; results on it say little "
                "about the real system",
                self.name,
                "; ".join(self.problems),
                fid.summary(),
            )
        else:
            log.info("surrogate %s: %s", self.name, fid.summary())

    # -- System contract --------------------------------------------------------------------
    def apply(self, config: Config) -> None:
        self._point = self.space.encode(self.space.validate(config))

    def start(self, timeout_s: float) -> None:
        if self._point is None:
            raise SystemStartError("no configuration applied before start")
        self._predicted_failure = ""
        if self.model.classifier is not None:
            p_fail = float(self.model.failure_probability(self._point)[0])
            if p_fail >= 0.5:
                message = (
                    f"surrogate {self.name}: the failure model predicts this "
                    f"configuration fails (probability {p_fail:.2f}, learned from "
                    f"{self.fidelity.failures} failed recorded tests)"
                )
                if self.failure_status == "crashed":
                    raise SystemStartError(message, log_tail="(predicted by the surrogate)")
                self._predicted_failure = message
        self.running = True

    def stop(self) -> None:
        self.running = False

    def predict(self, config: Config) -> float:
        """The noise-free prediction for ``config`` (for analysis; tests use the workload)."""
        return float(self.model.predict(self.space.encode(self.space.validate(config)))[0])

    def measure(self) -> dict[str, float]:
        """The prediction for the applied configuration, plus residual noise if enabled."""
        if self._point is None or not self.running:
            raise WorkloadError(f"surrogate {self.name} is not started")
        if self._predicted_failure:
            if self.failure_status == "timed_out":
                raise WorkloadTimeout(self._predicted_failure)
            raise WorkloadError(self._predicted_failure)
        value = float(self.model.predict(self._point)[0])
        if self.noise > 0 and len(self.model.residuals):
            value += self.noise * float(self._rng.choice(self.model.residuals))
            if self.model.value_range[0] >= 0:  # a throughput or a duration cannot go negative
                value = max(value, 0.0)
        return {self.target: value}

    def known_optimum(self) -> tuple[Config, float]:
        """Best-known optimum: the committed one (optima.yaml) if it matches this model, else
        a smaller search (20k LHS points + refinement) done now and kept for the session."""
        if self._optimum is None:
            entry = load_optima().get(self.name)
            if entry and entry.get("model_key") == self.model_key:
                config = self.space.validate(entry["config"])
                self._optimum = (config, float(entry["value"]))
            else:
                log.info(
                    "no committed optimum for %s (model %s); searching 20k points",
                    self.name,
                    self.model_key,
                )
                self._optimum = search_optimum(
                    self.model, self.space, self.direction, n_points=20_000
                )
        return self._optimum

    def describe(self) -> dict[str, str]:
        fid = self.fidelity
        tags = {
            **super().describe(),
            "surrogate_data": self.path.name,
            "surrogate_target": self.target,
            "surrogate_direction": self.direction,
            "surrogate_rows": str(len(self.dataset.configs)),
            "surrogate_knobs": str(self.space.dim),
            "surrogate_default": self.dataset.default_source,
            "surrogate_model": (
                f"RandomForestRegressor(n_estimators="
                f"{self.settings.n_estimators}, min_samples_leaf="
                f"{self.settings.min_samples_leaf})"
            ),
            "surrogate_model_key": self.model_key,
            "fidelity_r2": f"{fid.r2:.3f}",
            "fidelity_tau": f"{fid.tau:.3f}",
            "fidelity_topk_recall": f"{fid.topk_recall:.3f}",
            "fidelity_warning": "; ".join(self.problems) or "none",
            "surrogate_failure_status": self.failure_status,
            "noise": str(self.noise),
        }
        if self.source:
            tags["surrogate_source"] = self.source
        return tags

    def params(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "target": self.target,
            "direction": self.direction,
            "noise": self.noise,
            "noise_seed": self.noise_seed,
            **self.settings.__dict__,
        }


class SurrogateWorkload(Workload):
    """Reads a surrogate's predicted metric; ``metric``/``direction`` must match the system's
    target (checked in ``prepare``)."""

    name = "surrogate"

    def __init__(
        self,
        metric: str | None = "performance",
        direction: str = "max",
        unit: str = "",
        duration_s: float = 0.0,
    ) -> None:
        if direction not in ("max", "min"):
            raise ConfigError(
                f"surrogate workload direction must be max or min, got {direction!r}"
            )
        if metric is None or str(metric) in ("", "None", "null"):
            raise ConfigError(
                "the surrogate workload needs the target metric: run with "
                "dataset.target=COLUMN (the column of the data to optimise)"
            )
        self.metric = str(metric).removeprefix("result.")
        self.metrics = (MetricSpec(self.metric, direction, unit),)  # type: ignore[arg-type]
        self.duration_s = float(duration_s)

    def prepare(self, system: System, workdir: Path) -> None:
        if not isinstance(system, DatasetSystem):
            raise ConfigError("the surrogate workload runs only on a dataset-backed system")
        if system.target != self.metric:
            raise ConfigError(
                f"surrogate workload reports {self.metric!r} but the system "
                f"models {system.target!r}"
            )

    def run(self, system: System, timeout_s: float | None) -> dict[str, float]:
        if not isinstance(system, DatasetSystem):
            raise WorkloadError("the surrogate workload runs only on a dataset-backed system")
        return system.measure()
