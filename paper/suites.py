"""The benchmark's problem suites: where settings may be chosen, and where they are judged.

The protocol: a tuner's settings are chosen on the **development** suite only (the
synthetic systems, the real recorded MOOT tables, ``moot_*``, and the hard synthetic family,
``family<d>``) and reported on the
**evaluation** suite (BestConfig's recorded systems and our SQLite run, ``surrogate_*``),
which no setting was ever chosen on. Both suites also come in noisy variants: every
measurement is multiplied by ``exp(N(0, sigma))`` (sigma 0.05 and 0.15, i.e. about 5 % and
15 % noise), and the session is then scored on the *noise-free* value of the configuration it
answers with, so a tuner that merely got a lucky draw gains nothing.

The **hard** suite (part of the development suite) is where variants differ: instances of the
synthetic family (:mod:`systems.synthetic.family`) with d = 10, 30, 60 and 120 mixed
int/float/enum/bool knobs, hidden failure regions covering 20-60 % of the box, plateaus and
ridges, and an optimum drawn anew for every seed (the session's seed is the instance). A
family problem is built from the ``synthetic10`` config with its adapter replaced
(:func:`overrides`), so it needs no config file of its own.

A problem is named ``<system config>`` or ``<system config>~noise<percent>`` (e.g.
``surrogate_tomcat~noise15``); :func:`overrides` turns the name into the Hydra overrides that
build it, with the noise seeded by the session's seed.
"""

from __future__ import annotations

from harness.conf import CONFIG_DIR

__all__ = [
    "NOISE_LEVELS",
    "SUITES",
    "base_system",
    "expand",
    "noise_of",
    "overrides",
    "suite_of",
    "system_config",
    "variant",
]

SYSTEM_DIR = CONFIG_DIR / "system"

#: Multiplicative measurement noise of the noisy variants (sigma of the log-normal factor).
NOISE_LEVELS = (0.0, 0.05, 0.15)


def _configs(prefix: str) -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in SYSTEM_DIR.glob(f"{prefix}*.yaml")))


#: Knob counts of the hard synthetic family's problems (``family<d>``).
FAMILY_DIMS = (10, 30, 60, 120)
FAMILIES = tuple(f"family{d}" for d in FAMILY_DIMS)
#: The system config a family problem is built from (its adapter replaced).
FAMILY_BASE = "synthetic10"
#: Crashes in a row a family session tolerates (its failure regions cover up to 60 %).
FAMILY_CRASH_STREAK = 1000

#: Suite name -> system configs. ``dev``: choose settings here (``hard``: its problems where
#: variants differ); ``eval``: report here only.
SUITES: dict[str, tuple[str, ...]] = {
    "dev": ("synthetic10", "synthetic30", *_configs("moot_"), *FAMILIES),
    "hard": FAMILIES,
    "eval": _configs("surrogate_"),
}


def variant(system: str, noise: float) -> str:
    """The problem name of ``system`` with measurement noise ``noise`` (0: the system)."""
    return system if noise == 0 else f"{system}~noise{round(100 * noise):g}"


def base_system(problem: str) -> str:
    """The system config of a problem name."""
    return problem.split("~", 1)[0]


def family_dim(problem: str) -> int | None:
    """The knob count of a family problem (``family60~noise5`` -> 60), else None."""
    system = base_system(problem)
    digits = system.removeprefix("family")
    return int(digits) if system.startswith("family") and digits.isdigit() else None


def system_config(problem: str) -> str:
    """The ``harness/conf/system`` config a problem is composed from."""
    return FAMILY_BASE if family_dim(problem) is not None else base_system(problem)


def noise_of(problem: str) -> float:
    """The measurement noise of a problem name (0 without a ``~noise`` suffix)."""
    _, _, tail = problem.partition("~")
    if not tail:
        return 0.0
    if not tail.startswith("noise") or not tail[5:].replace(".", "", 1).isdigit():
        raise ValueError(f"{problem!r}: a variant is <system>~noise<percent>, e.g. ~noise5")
    return float(tail[5:]) / 100.0


def suite_of(problem: str) -> str:
    """``dev``, ``eval`` or ``other`` for a problem name (a ``hard`` problem is ``dev``)."""
    system = base_system(problem)
    for name in ("dev", "eval"):
        if system in SUITES[name]:
            return name
    return "other"


def expand(names: list[str], noise: tuple[float, ...] = (0.0,)) -> list[str]:
    """Problem names for ``names`` (suite names ``dev``/``eval`` or system configs), each at
    every ``noise`` level, in order and without repeats."""
    systems: list[str] = []
    for name in names:
        systems.extend(SUITES.get(name, (name,)))
    problems = [variant(s, level) for level in noise for s in systems]
    return list(dict.fromkeys(problems))


def overrides(problem: str, seed: int) -> list[str]:
    """Hydra overrides that build ``problem`` for the session of ``seed``.

    Synthetic systems already model multiplicative log-normal noise (``noise``); the
    recorded-data systems get it as ``measurement_noise``. Either way the draws are seeded by
    the session's seed, so two seeds do not share a noise sequence. A family problem's
    instance (its optimum and failure regions) is the session's seed too.
    """
    system, noise = base_system(problem), noise_of(problem)
    result = [f"system={system_config(problem)}"]
    dim = family_dim(problem)
    if dim is not None:
        result += [
            f"system.name={system}",
            "system.adapter._target_=systems.synthetic.SyntheticFamily",
            "~system.adapter.knob_set",
            f"+system.adapter.dim={dim}",
            f"+system.adapter.instance={seed}",
            # hidden failures are the problem, not a broken machine: no abort on a streak
            f"session.max_consecutive_crashes={FAMILY_CRASH_STREAK}",
        ]
    if noise > 0:
        synthetic = system.startswith("synthetic") or family_dim(problem) is not None
        key = "noise" if synthetic else "measurement_noise"
        result += [f"system.adapter.{key}={noise}", f"system.adapter.noise_seed={seed}"]
    return result
