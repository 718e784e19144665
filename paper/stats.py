"""The statistics behind the reports' claims, on maintained library functions (scipy.stats).

- :func:`sign_test`: a head-to-head count of wins and losses over paired problems; ties carry
  no direction, so they are left out (the usual sign-test convention) and reports say so.
- :func:`friedman`: do tuners' ranks over (problem, seed) blocks differ at all? The omnibus
  test that a mean-rank table needs before its differences are read.
- :func:`nemenyi_cd` and :func:`plot_cd`: the critical difference of mean ranks (Demšar, JMLR
  2006): two tuners whose mean ranks differ by less cannot be told apart at that level.
- :func:`bootstrap_interval`: a percentile interval of a mean over few seeds, with a fixed
  seed so a regenerated report is byte-identical.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

__all__ = [
    "BOOTSTRAP_SEED",
    "Friedman",
    "bootstrap_difference",
    "bootstrap_interval",
    "friedman",
    "nemenyi_cd",
    "plot_cd",
    "sign_test",
    "sign_test_text",
]

#: The bootstrap's random seed: a fixed one, so the same data give the same interval.
BOOTSTRAP_SEED = 0


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign-test p-value of ``wins`` against ``losses`` (ties excluded by the
    caller); 1.0 when there is nothing to test."""
    trials = wins + losses
    if trials == 0:
        return 1.0
    return float(stats.binomtest(wins, trials, 0.5, alternative="two-sided").pvalue)


def sign_test_text(wins: int, losses: int) -> str:
    """``p = 0.109`` style text of :func:`sign_test` (three significant digits)."""
    return f"{sign_test(wins, losses):.3g}"


@dataclass(frozen=True)
class Friedman:
    """The Friedman test over ``blocks`` (problem, seed) blocks of ``k`` tuners."""

    statistic: float
    pvalue: float
    blocks: int
    k: int

    def text(self) -> str:
        """One report line: the statistic, degrees of freedom, p and the blocks."""
        if not math.isfinite(self.pvalue):
            return f"Friedman test: not computed ({self.blocks} blocks of {self.k} tuners)."
        return (
            f"Friedman test over {self.blocks} (problem, seed) blocks of {self.k} tuners: "
            f"χ² = {self.statistic:.2f} (df {self.k - 1}), p = {self.pvalue:.3g}."
        )


def friedman(ranks: Mapping[str, Sequence[float]]) -> Friedman:
    """The Friedman test on a rank (or score) table: per tuner, its values over the same
    blocks in the same order. Needs at least 3 tuners and 2 blocks (else NaN): scipy's
    ``friedmanchisquare`` ranks within each block itself, so ranks or scores give the same."""
    columns = [list(v) for v in ranks.values()]
    blocks = len(columns[0]) if columns else 0
    if len(columns) < 3 or blocks < 2:
        return Friedman(math.nan, math.nan, blocks, len(columns))
    result = stats.friedmanchisquare(*columns)
    return Friedman(float(result.statistic), float(result.pvalue), blocks, len(columns))


def nemenyi_cd(k: int, blocks: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of mean ranks: q_α √(k(k+1) / 6N), with q_α the
    studentized range quantile at infinite degrees of freedom over √2 (Demšar 2006)."""
    if k < 2 or blocks < 1:
        return math.nan
    q = float(stats.studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2)
    return q * math.sqrt(k * (k + 1) / (6 * blocks))


def bootstrap_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (10 000 resamples, seed
    :data:`BOOTSTRAP_SEED`); NaN for fewer than 2 finite values, and the value itself when
    they are all equal (no spread to resample)."""
    data = np.asarray([v for v in values if math.isfinite(v)], dtype=float)
    if len(data) < 2:
        return math.nan, math.nan
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    result = stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=level,
        n_resamples=10_000,
        method="percentile",
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
    )
    interval = result.confidence_interval
    return float(interval.low), float(interval.high)


def bootstrap_difference(
    first: Sequence[float], second: Sequence[float], level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(first) − mean(second), each sample resampled on
    its own (independent seeds of two tuners; 10 000 resamples, seed :data:`BOOTSTRAP_SEED`);
    NaN when either has fewer than 2 finite values. With few seeds the interval is only as
    wide as the seeds' spread: it says how far the seeds disagree, not a population range."""
    a = np.asarray([v for v in first if math.isfinite(v)], dtype=float)
    b = np.asarray([v for v in second if math.isfinite(v)], dtype=float)
    if len(a) < 2 or len(b) < 2:
        return math.nan, math.nan
    if np.all(a == a[0]) and np.all(b == b[0]):
        return float(a[0] - b[0]), float(a[0] - b[0])

    def difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.mean(x, axis=axis) - np.mean(y, axis=axis))

    result = stats.bootstrap(
        (a, b),
        difference,
        confidence_level=level,
        n_resamples=10_000,
        method="percentile",
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
    )
    interval = result.confidence_interval
    return float(interval.low), float(interval.high)


def plot_cd(mean_ranks: Mapping[str, float], blocks: int, path: Path, title: str = "") -> float:
    """Draw the critical-difference diagram of ``mean_ranks`` over ``blocks`` blocks as a PNG
    and return the CD. Demšar's layout: a rank axis with 1 (best) on the right, each tuner a
    line from its mean rank down and out to a label, the better half to the right and the
    other half to the left (so no line crosses a label), the CD as a bar; one colour per
    tuner from :mod:`paper.figures.style`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper.figures.style import series_styles

    names = sorted(
        (n for n in mean_ranks if math.isfinite(mean_ranks[n])), key=lambda n: mean_ranks[n]
    )
    k, half = len(names), (len(names) + 1) // 2
    cd = nemenyi_cd(k, blocks)
    styles = series_styles(names)
    fig, ax = plt.subplots(figsize=(9.0, 1.8 + 0.3 * half))
    fig.subplots_adjust(left=0.25, right=0.75, top=0.68 if title else 0.8, bottom=0.05)
    ax.set_xlim(max(k, 2), 1)  # inverted: rank 1 (best) on the right
    ax.set_ylim(-half - 0.5, 1.6)
    ax.yaxis.set_visible(False)
    for side in ("left", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.xaxis.tick_top()
    ax.set_xlabel("mean rank (1 = best)")
    ax.xaxis.set_label_position("top")
    sides = [(n, 1, "left", row) for row, n in enumerate(names[:half], start=1)]
    sides += [(n, max(k, 2), "right", row) for row, n in enumerate(reversed(names[half:]), 1)]
    for name, edge, align, row in sides:
        rank, colour = mean_ranks[name], styles[name].colour
        ax.plot([rank, rank, edge], [0, -row, -row], color=colour, lw=1.2, clip_on=False)
        ax.plot(rank, 0, "o", color=colour, ms=4)
        label = f" {name} ({rank:.2f}) " if align == "left" else f" ({rank:.2f}) {name} "
        ax.text(edge, -row, label, va="center", ha=align, color=colour, clip_on=False)
    if math.isfinite(cd):
        start = mean_ranks[names[0]]
        ax.plot([start, start + cd], [0.7, 0.7], color="black", lw=2)
        ax.text(
            start + cd / 2, 0.8, f"CD = {cd:.2f} (Nemenyi, α = 0.05)", ha="center", va="bottom"
        )
    if title:
        fig.suptitle(textwrap.fill(title, 110), fontsize=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return cd
