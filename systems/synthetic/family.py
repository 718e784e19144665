"""A family of synthetic systems where tuning is hard: many knobs, hidden failures, noise.

The two fixed synthetic systems (:mod:`systems.synthetic.function`) have their optimum at the
same place in every session and crash only in one corner, so a tuner can look good by luck of
its design and variants of one tuner score alike. A family instance is drawn from
``(dim, instance)``:

* **the space** depends on ``dim`` only: knobs cycle through float, int (ranges from 2 to
  10^6 values), string enum (3-6 values) and bool (:func:`family_space`); the default is a
  fixed, mediocre, feasible setting;
* **the optimum** is random per instance (every coordinate in [0.05, 0.95], snapped to the
  knobs' cells), so no design point is lucky twice;
* **the response** is a weighted sum of per-knob terms, each 1 at the optimum: smooth bumps,
  *plateaus* (the bump quantised into five steps, so small moves change nothing) and
  *asymmetric* peaks; a few knobs carry most of the weight (as in real systems); pairs of
  knobs form narrow rotated *ridges* (good only along a diagonal);
* **hidden failures**: two half-spaces over 2-3 knobs each fail the test (the system will not
  start), sized together to cover ``fail_share`` of the box (:func:`failure_planes`; the
  optimum and the default are always feasible, the optimum often near an edge, as a cache
  sized near the memory limit is);
* **noise**: multiplicative log-normal, as the fixed synthetic systems have it.

Everything works on the encoded coordinates in [0, 1]^d, so :class:`SyntheticFamily` also
takes any :class:`~harness.space.Space` (the tuner contract runs it on extreme spaces).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.errors import SystemStartError
from harness.space import Config, Knob, Space
from harness.system import System
from systems.synthetic.system import PEAK_THROUGHPUT

__all__ = ["FamilyResponse", "SyntheticFamily", "failure_planes", "family_space"]

_INT_RANGES = (1, 7, 63, 1000, 65535, 1_000_000)
_ENUM_SIZES = (3, 4, 6)
#: Monte-Carlo points that size the failure regions (fixed per instance, so exact per seed).
_SIZING_POINTS = 20_000


def _knob(i: int, u_default: float) -> Knob:
    """Knob ``i`` of a family space: its type cycles float, int, float, enum, float, bool, ..."""
    kind = ("float", "int", "float", "enum", "int", "bool", "float", "enum", "int", "float")[
        i % 10
    ]
    name = f"k{i:03d}_{kind}"
    if kind == "float":
        return Knob(name, "float", default=round(u_default, 3), low=0.0, high=1.0)
    if kind == "int":
        high = _INT_RANGES[i % len(_INT_RANGES)]
        return Knob(name, "int", default=int(u_default * high), low=0, high=high)
    if kind == "enum":
        values = tuple(f"mode{j}" for j in range(_ENUM_SIZES[i % len(_ENUM_SIZES)]))
        return Knob(name, "enum", default=values[int(u_default * len(values))], values=values)
    return Knob(name, "bool", default=u_default >= 0.5)


def family_space(dim: int) -> Space:
    """The knob space of the ``dim``-knob family (the same for every instance)."""
    if dim < 1:
        raise ValueError(f"a family system needs at least one knob, got dim={dim}")
    defaults = np.random.default_rng(dim).uniform(0.15, 0.85, dim)
    return Space(tuple(_knob(i, float(u)) for i, u in enumerate(defaults)))


def _plane(
    opt: np.ndarray, default: np.ndarray, each: float, sample: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, float, float]:
    """One failure half-space over 2-3 random knobs: its normal, offset and covered share."""
    d = opt.size
    dims = rng.choice(d, size=min(d, int(rng.integers(2, 4))), replace=False)
    normal = np.zeros(d)
    normal[dims] = rng.normal(size=dims.size)
    if normal @ (default - opt) > 0:
        normal = -normal
    projected = (sample - opt) @ normal
    margin = 0.02 * float(np.linalg.norm(normal))
    offset = max(float(np.quantile(projected, 1.0 - each)), margin)
    return normal, offset, float(np.mean(projected > offset))


def failure_planes(
    opt: np.ndarray,
    default: np.ndarray,
    share: float,
    rng: np.random.Generator,
    regions: int = 2,
    tries: int = 8,
) -> tuple[np.ndarray, np.ndarray]:
    """Hidden failure half-spaces ``normals @ (u - opt) > offsets`` covering about ``share`` of
    the box together (each ``1 - (1 - share)^(1/regions)``), over 2-3 knobs each. A normal
    points away from the default, and an offset is at least a small margin, so the optimum
    and the default never fail; of ``tries`` random planes the one whose share comes closest
    is kept (where the margin binds, a plane covers less)."""
    d = opt.size
    normals = np.zeros((regions, d))
    offsets = np.full(regions, np.inf)
    if share <= 0:
        return normals, offsets
    each = 1.0 - (1.0 - share) ** (1.0 / regions)
    sample = rng.random((_SIZING_POINTS, d))
    for r in range(regions):
        planes = [_plane(opt, default, each, sample, rng) for _ in range(tries)]
        normals[r], offsets[r], _ = min(planes, key=lambda p: abs(p[2] - each))
    return normals, offsets


@dataclass(frozen=True)
class FamilyResponse:
    """The response of one instance: relative performance in (0, 1], 1 at ``opt``."""

    opt: np.ndarray
    weights: np.ndarray  # per-knob term weights
    widths: np.ndarray
    shapes: np.ndarray  # 0 bump, 1 plateau, 2 asymmetric peak
    ridges: np.ndarray  # (r, 2) knob pairs
    ridge_slopes: np.ndarray
    ridge_weights: np.ndarray
    normals: np.ndarray
    offsets: np.ndarray

    @classmethod
    def draw(
        cls, opt: np.ndarray, default: np.ndarray, fail_share: float, rng: np.random.Generator
    ) -> FamilyResponse:
        d = opt.size
        weights = np.exp(-np.arange(d) / max(2.0, d / 6.0))[rng.permutation(d)]
        n_ridges = d // 10 + 1 if d >= 2 else 0
        ridges = np.array([rng.choice(d, 2, replace=False) for _ in range(n_ridges)], dtype=int)
        normals, offsets = failure_planes(opt, default, fail_share, rng)
        return cls(
            opt=opt,
            weights=weights,
            widths=rng.uniform(0.15, 0.45, d),
            shapes=rng.integers(0, 3, d),
            ridges=ridges.reshape(-1, 2),
            ridge_slopes=rng.uniform(0.6, 1.6, n_ridges) * rng.choice([-1.0, 1.0], n_ridges),
            ridge_weights=np.full(n_ridges, float(weights.max())),
            normals=normals,
            offsets=offsets,
        )

    def _knob_terms(self, u: np.ndarray) -> np.ndarray:
        delta = (u - self.opt) / self.widths
        bump = np.exp(-(delta**2))
        plateau = np.floor(bump * 5.0 + 1e-9) / 5.0
        slope = np.where(delta > 0, 3.0, 1.0)  # steeper above the optimum
        peak = np.clip(1.0 - slope * np.abs(delta) / 2.5, 0.0, 1.0)
        return np.select([self.shapes == 0, self.shapes == 1], [bump, plateau], peak)

    def _ridge_terms(self, u: np.ndarray) -> np.ndarray:
        if not len(self.ridges):
            return np.zeros((len(u), 0))
        a = u[:, self.ridges[:, 0]] - self.opt[self.ridges[:, 0]]
        b = u[:, self.ridges[:, 1]] - self.opt[self.ridges[:, 1]]
        return np.exp(-((a / 0.35) ** 2 + ((b - self.ridge_slopes * a) / 0.06) ** 2))

    def __call__(self, u: np.ndarray) -> np.ndarray:
        u = np.atleast_2d(np.asarray(u, dtype=float))
        total = self._knob_terms(u) @ self.weights + self._ridge_terms(u) @ self.ridge_weights
        return 0.05 + 0.95 * total / (self.weights.sum() + self.ridge_weights.sum())

    def fails(self, u: np.ndarray) -> np.ndarray:
        """Which points lie in a hidden failure region."""
        u = np.atleast_2d(np.asarray(u, dtype=float))
        return np.any((u - self.opt) @ self.normals.T > self.offsets, axis=1)


class SyntheticFamily(System):
    """One instance of the hard synthetic family (module docstring); ``space`` replaces the
    family's own knobs (any space: the response works on the encoded coordinates)."""

    kind = "synthetic"

    def __init__(
        self,
        dim: int = 30,
        instance: int = 0,
        fail_share: float | None = None,
        noise: float = 0.0,
        noise_seed: int = 0,
        delay_s: float = 0.0,
        space: Space | None = None,
    ) -> None:
        super().__init__(space if space is not None else family_space(int(dim)))
        self.name = f"family{self.space.dim}"
        rng = np.random.default_rng([self.space.dim, int(instance)])
        #: share of the box that fails: drawn in [0.2, 0.6] per instance unless given.
        self.fail_share = float(rng.uniform(0.2, 0.6) if fail_share is None else fail_share)
        opt = self.space.snap(rng.uniform(0.05, 0.95, self.space.dim)[None])[0]
        default = self.space.encode(self.space.default())
        self.response = FamilyResponse.draw(opt, default, self.fail_share, rng)
        self.noise, self.delay_s = float(noise), float(delay_s)
        self._rng = np.random.default_rng(noise_seed)
        self._point: np.ndarray | None = None
        self.running = False

    def apply(self, config: Config) -> None:
        self._point = self.space.encode(self.space.validate(config))

    def start(self, timeout_s: float) -> None:
        if self._point is None:
            raise SystemStartError("no configuration applied before start")
        if self.response.fails(self._point)[0]:
            raise SystemStartError(
                "synthetic family server refused to start (hidden failure region)",
                log_tail="FATAL: invalid combination of settings",
            )
        self.running = True

    def stop(self) -> None:
        self.running = False

    def measure(self) -> dict[str, float]:
        """Throughput (with optional noise) and a latency that falls as throughput rises."""
        assert self._point is not None and self.running
        relative = float(self.response(self._point)[0])
        if self.noise > 0:
            relative *= float(np.exp(self._rng.normal(0.0, self.noise)))
        return {
            "throughput": relative * PEAK_THROUGHPUT,
            "latency_p99_ms": 2.0 + 400.0 / relative,
        }

    def noise_free_metrics(self, config: Config) -> dict[str, float]:
        point = self.space.encode(self.space.validate(config))
        return {"throughput": float(self.response(point)[0]) * PEAK_THROUGHPUT}

    def known_optimum(self) -> tuple[Config, float]:
        """The instance's optimum (at cell centres by construction) and its throughput."""
        opt = self.response.opt
        return self.space.decode(opt), float(self.response(opt)[0]) * PEAK_THROUGHPUT

    def measured_fail_share(self, points: int = 20_000, seed: int = 1) -> float:
        """The share of the box that fails, estimated from uniform points."""
        u = np.random.default_rng(seed).random((points, self.space.dim))
        return float(self.response.fails(u).mean())

    def describe(self) -> dict[str, str]:
        return {**super().describe(), "noise": str(self.noise), "fail_share": f"{self.fail_share}"}
