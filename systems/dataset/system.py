"""A system whose tests are answered from recorded samples: a surrogate or the records.

:class:`DatasetSystem` reads a sample table (ARFF or CSV, including the harness's own exported
samples), infers the knob space with the table's structure, lets the data choose the backend
(:mod:`systems.dataset.backend`) and checks its fidelity on held-out rows, and then answers
each test in well under a millisecond:

* ``recorded`` backend: ``apply`` picks the nearest unused recorded row
  (:mod:`systems.dataset.recorded`) and writes that row's configuration into the configuration
  it was given, so the session records what was measured, and the workload reports the
  recorded value (a recorded failure fails the test the same way).
* ``surrogate`` backend: ``apply`` encodes the configuration, ``start`` raises
  :class:`SystemStartError` where the failure model predicts a failure, a configuration that
  breaks a constraint of the table fails its test, and :class:`SurrogateWorkload` reports the
  prediction (plus optional seeded noise drawn from the model's out-of-bag residuals).

At session start (``setup``) the inferred knobs and their reasons, the backend and why, the
default and its rule and the best-known optimum with its provenance are logged, and the last
two are added to the session summary; ``describe()`` saves them all with the session.

Building the same surrogate again in one process is cheap: the parsed table (keyed by the
file's content and the reading options, :func:`load_dataset`) and the fitted model
(:func:`systems.dataset.model.load_or_fit`) are kept in memory.

Every error in the input (unreadable file, missing target, text in a numeric knob, too few
rows, useless fidelity) is a :class:`ConfigError` raised from the constructor, i.e. before
any test runs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from harness.errors import ConfigError, SystemStartError, WorkloadError, WorkloadTimeout
from harness.space import Config, load_catalogue
from harness.system import System, Workload
from systems.dataset.backend import Choice, Thresholds, choose, failure_mode, verdict
from systems.dataset.cache import USER_CACHE
from systems.dataset.defaults import median_config, plain_config, with_default_row
from systems.dataset.infer import Dataset, apply_catalogue, build_dataset
from systems.dataset.model import ModelSettings, SurrogateModel, cache_key, load_or_fit
from systems.dataset.recorded import RecordedSamples, coverage, measured_noise, nearest_fidelity
from systems.dataset.session_info import announce, best_known, describe_tags, warn
from systems.dataset.tables import file_digest, read_table
from systems.dataset.workload import SurrogateWorkload

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
    default_config: Mapping[str, Any] | None = None,
    one_hot: bool = True,
    ordinal: bool = True,
    max_levels: int = 10,
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
        tuple(sorted((default_config or {}).items())),
        one_hot,
        ordinal,
        max_levels,
    )
    cached = _DATASETS.get(key)
    if cached is not None and key[0][1]:
        return cached
    dataset = build_dataset(
        read_table(path, exclude=exclude),
        target,
        failure_value=failure_value,
        default_row=default_row,
        default_config=default_config,
        rename=rename,
        max_enum=max_enum,
        one_hot=one_hot,
        ordinal=ordinal,
        max_levels=max_levels,
    )
    if catalogue_path is not None:
        dataset = apply_catalogue(dataset, load_catalogue(catalogue_path, knob_set))
    _DATASETS[key] = dataset
    return dataset


class DatasetSystem(System):
    """A recorded-data system: its tests are answered by the recorded rows or by a surrogate
    of them (``backend``: auto | recorded | surrogate, see :mod:`systems.dataset.backend`).
    ``kind`` is ``"surrogate"`` and the default name starts with ``surrogate_``.

    Main parameters: ``path`` (CSV/ARFF, or ``builtin:<file under data/>``), ``target`` column
    and ``direction`` (a ``-``/``+`` marker on the column wins); ``noise``/``noise_seed``
    (residual noise, surrogate only); ``measurement_noise`` (every answer times
    ``exp(N(0, sigma))``, both backends, seeded by ``noise_seed``); ``default_row``,
    ``default_config``, ``failure_value``, ``exclude``, ``rename``, ``catalogue``/
    ``knob_set``, ``one_hot``, ``ordinal``/
    ``max_levels`` (how the table is read, see :mod:`systems.dataset.infer`); forest settings;
    ``allow_poor_fidelity``, ``min_coverage`` and the warn/refuse thresholds;
    ``failure_status`` (how a failure shows); ``cache_dir`` (fitted models and optima: the
    configs put it in ``${results_dir}/cache/surrogates``; ``user:``, the default here, is the
    user's cache folder; ``null`` turns it off; see :mod:`systems.dataset.cache`).
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
        measurement_noise: float = 0.0,
        default_row: int | str | None = None,
        default_config: Mapping[str, Any] | None = None,
        failure_value: float | None = None,
        exclude: list[str] | tuple[str, ...] = (),
        rename: str | None = None,
        max_enum: int = 12,
        one_hot: bool = True,
        ordinal: bool = True,
        max_levels: int = 10,
        min_rows: int = 20,
        backend: str = "auto",
        min_coverage: float = 0.25,
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
        cache_dir: str | None = USER_CACHE,
        catalogue: str | None = None,
        knob_set: str | None = None,
        unit: str = "",
        source: str = "",
    ) -> None:
        if direction not in ("max", "min"):
            raise ConfigError(f"dataset direction must be max or min, got {direction!r}")
        self.path = resolve_path(path)
        dataset = load_dataset(
            self.path,
            target,
            exclude=tuple(exclude or ()),
            failure_value=failure_value,
            default_row=default_row,
            rename=rename,
            max_enum=max_enum,
            catalogue=catalogue,
            knob_set=knob_set,
            default_config=plain_config(default_config),
            one_hot=bool(one_hot),
            ordinal=bool(ordinal),
            max_levels=int(max_levels),
        )
        marked = dataset.direction
        self.direction: Literal["max", "min"] = marked or direction  # type: ignore[assignment]
        self.target = dataset.target.removeprefix("result.")
        if marked:
            self.target = self.target[:-1]
        self.name = name or f"surrogate_{self.path.stem}"
        self.unit, self.source, self.cache_dir = unit, source, cache_dir
        n_ok = dataset.n_ok
        needed = max(int(min_rows), 2 * folds)
        if n_ok < needed:
            raise ConfigError(
                f"{self.path.name}: {n_ok} successful rows, at least {needed} "
                f"are needed to fit and check a surrogate ({len(dataset.configs)} rows "
                f"in all, {int(dataset.failed.sum())} failed)"
            )
        self.settings = ModelSettings(
            n_estimators=int(n_estimators),
            min_samples_leaf=int(min_samples_leaf),
            max_features=float(max_features),
            max_samples=None if max_samples is None else float(max_samples),
            seed=int(model_seed),
            folds=int(folds),
        )
        limits = Thresholds(float(min_coverage), 0.05, r2_warn, tau_warn, tau_refuse)
        self.samples = RecordedSamples(dataset.space, dataset.configs)
        self.model: SurrogateModel | None = None
        self.model_key = cache_key(
            dataset.points, dataset.values, dataset.failed, self.direction, self.settings
        )

        def forest() -> Any:
            self.model, self.model_key = load_or_fit(
                dataset.points, dataset.values, dataset.failed, self.direction, self.settings,
                cache_dir,
            )  # fmt: skip
            return self.model.fidelity

        self.choice: Choice = choose(
            str(backend),
            coverage(dataset.space, dataset.configs),
            nearest_fidelity(self.samples, dataset.values, dataset.failed, self.direction),
            forest,
            limits,
        )
        self.backend = self.choice.backend
        self.fidelity = self.choice.fidelity
        self.problems = verdict(self.choice, self.name, allow_poor_fidelity, limits)
        self.dataset = self._recorded_default(dataset)
        super().__init__(self.dataset.space)
        self.noise_measured = measured_noise(dataset.configs, dataset.values, dataset.failed)
        warn(self)
        self.failure_status = failure_mode(failure_status, self.dataset.failure_statuses)
        self._predicted_failure = ""
        self.noise = float(noise)
        self.noise_seed = int(noise_seed)
        if not 0 <= float(measurement_noise) < 1:
            raise ConfigError(f"measurement_noise is a sigma in [0, 1), got {measurement_noise}")
        self.measurement_noise = float(measurement_noise)
        self._rng = np.random.default_rng(self.noise_seed)
        self._point: np.ndarray | None = None
        self._row: int | None = None
        self._summary: list[str] = []
        self.running = False
        self._optimum: tuple[Config, float] | None = None
        self.optimum_source = ""

    def _recorded_default(self, dataset: Dataset) -> Dataset:
        """The default moved to the nearest recorded row where it must be one: always for
        the recorded backend, for the surrogate when it breaks a constraint of the table."""
        if dataset.default_index is not None:
            return dataset
        default = dataset.space.default()
        broken = [c for c in dataset.constraints if c.broken_by(default)]
        if self.backend != "recorded" and not broken:
            return dataset
        index = self.samples.find(default)
        why = "it breaks " + str(broken[0]) if broken else "the recorded backend answers rows"
        rule = dataset.default_source.split(":")[0]
        return with_default_row(dataset, index, f"nearest recorded row to the {rule} ({why})")

    # -- System contract --------------------------------------------------------------------
    def setup(self, workdir: Path, workload: Workload) -> None:
        """A new session: no recorded row is used yet; log what the session runs on."""
        super().setup(workdir, workload)
        self.samples.reset()
        self._summary = announce(self)

    def summary_lines(self) -> list[str]:
        return list(self._summary)

    def apply(self, config: Config) -> Config | None:
        valid = self.space.validate(config)
        self._row, self._predicted_failure = None, ""
        if self.backend == "recorded":
            self._row = self.samples.answer(valid)
            return dict(self.dataset.configs[self._row])  # the test is the recorded row's
        self._point = self.space.encode(valid)
        broken = [c for c in self.dataset.constraints if c.broken_by(valid)]
        if broken:
            self._predicted_failure = (
                f"{self.name}: this configuration breaks a constraint of the recorded "
                f"table ({broken[0]}), so it was never measured and cannot exist"
            )
        return None

    def start(self, timeout_s: float) -> None:
        if self._point is None and self._row is None:
            raise SystemStartError("no configuration applied before start")
        p_fail, what = 0.0, ""
        if self._row is not None and self.dataset.failed[self._row]:
            p_fail, what = 1.0, f"recorded data row {self._row + 1} failed"
        elif self._point is not None and self.model and self.model.has_failure_model:
            p_fail = float(self.model.failure_probability(self._point)[0])
            what = (
                f"the failure model predicts this configuration fails (probability "
                f"{p_fail:.2f}, learned from {self.fidelity.failures} failed recorded tests)"
            )
        if p_fail >= 0.5:
            message = f"surrogate {self.name}: {what}"
            if self.failure_status == "crashed":
                raise SystemStartError(message, log_tail="(predicted by the surrogate)")
            self._predicted_failure = message
        self.running = True

    def stop(self) -> None:
        self.running = False

    def predict(self, config: Config) -> float:
        """The noise-free answer for ``config`` (for analysis; tests use the workload): the
        forest's prediction, or the value of the nearest recorded row (NaN if it failed)."""
        valid = self.space.validate(config)
        if self.model is None:
            return float(self.dataset.values[self.samples.find(valid)])
        return float(self.model.predict(self.space.encode(valid))[0])

    def measure(self) -> dict[str, float]:
        """The answer for the applied configuration, plus residual noise if enabled."""
        if (self._point is None and self._row is None) or not self.running:
            raise WorkloadError(f"surrogate {self.name} is not started")
        if self._predicted_failure:
            if self.failure_status == "timed_out" and "constraint" not in self._predicted_failure:
                raise WorkloadTimeout(self._predicted_failure)
            raise WorkloadError(self._predicted_failure)
        if self._row is not None:
            value = float(self.dataset.values[self._row])
        else:
            assert self.model is not None and self._point is not None
            value = float(self.model.predict(self._point)[0])
            if self.noise > 0 and len(self.model.residuals):
                value += self.noise * float(self._rng.choice(self.model.residuals))
                if self.model.value_range[0] >= 0:  # a throughput or duration is never < 0
                    value = max(value, 0.0)
        if self.measurement_noise > 0:  # multiplicative: the same relative spread at any scale
            value *= float(np.exp(self._rng.normal(0.0, self.measurement_noise)))
        return {self.target: value}

    def noise_free_metrics(self, config: Config) -> dict[str, float]:
        """The answer for ``config`` without any noise (to score a noisy session on truth)."""
        return {self.target: self.predict(config)}

    def known_optimum(self) -> tuple[Config, float]:
        """Best-known optimum, once per system: the best recorded row (recorded backend); else
        the committed one (optima.yaml) if it matches this model, else a convergence-checked
        search, cached with its provenance (:func:`~systems.dataset.optimum.stable_optimum`);
        how it was obtained is in :attr:`optimum_source`."""
        if self._optimum is None:
            config, value, self.optimum_source = best_known(self)
            self._optimum = (config, value)
        return self._optimum

    def default_values(self) -> dict[str, float]:
        """The answer at the default of each rule (this system's and the median/mode), for
        reports that must show whether a result depends on the default rule."""
        rule = self.dataset.default_source.split(" (")[0]
        return {
            rule: self.predict(self.space.default()),
            "median/mode": self.predict(median_config(self.space, self.dataset.configs)),
        }

    def describe(self) -> dict[str, str]:
        return {**super().describe(), **describe_tags(self)}

    def params(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "target": self.target,
            "direction": self.direction,
            "backend": self.backend,
            "noise": self.noise,
            "noise_seed": self.noise_seed,
            "measurement_noise": self.measurement_noise,
            **self.settings.__dict__,
        }
