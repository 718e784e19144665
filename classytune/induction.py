"""Sample induction: turn pairs of settings into comparison rows of the same dimension.

ClassyTune's comparison model sees one row per ordered pair ``(Xa, Xb)`` of settings in
[0, 1]^d. The paper's bijection works per dimension: both values are quantised to ``bits`` bits
and their bits are interleaved, Xa's bit first (z-order / Morton code), giving one z-value in
[0, 1). Order matters: ``zorder(a, b) != zorder(b, a)`` unless the quantised values are equal.

With ``2 * bits <= 52`` the interleaved integer fits a float64 mantissa, so the z-value is exact
and :func:`dezorder` recovers the quantised pair. The default, 26 bits per value, is the largest
such depth. (Classifiers may work in float32 internally, XGBoost does, which keeps only the
leading ~12 bits of each value; that is the model's resolution, not the induction's.)

Two alternatives exist for the paper's Fig. 9 ablation, chosen by name in :func:`induce`:
``difference`` (``Xa - Xb`` per dimension, in [-1, 1]; different pairs collide) and ``concat``
(``[Xa, Xb]``, dimension 2d).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

__all__ = [
    "DEFAULT_BITS",
    "MAX_BITS",
    "METHODS",
    "dezorder",
    "induce",
    "induce_against",
    "induce_all_pairs",
    "induced_dim",
    "ordered_pairs",
    "quantise",
    "zorder",
    "zorder_against",
]

DEFAULT_BITS = 26
MAX_BITS = 26  # 2 * 26 = 52 bits: exact in a float64 mantissa

_M = [
    np.uint64(m)
    for m in (
        0x0000FFFF0000FFFF,
        0x00FF00FF00FF00FF,
        0x0F0F0F0F0F0F0F0F,
        0x3333333333333333,
        0x5555555555555555,
    )
]
_LOW32 = np.uint64(0xFFFFFFFF)


def _check_bits(bits: int) -> int:
    if not 1 <= int(bits) <= MAX_BITS:
        raise ValueError(f"bits must be in 1..{MAX_BITS} (2*bits <= 52 keeps z exact), got {bits}")
    return int(bits)


def quantise(x: np.ndarray, bits: int = DEFAULT_BITS) -> np.ndarray:
    """Integer cell of each value of [0, 1] at ``bits`` bits (1.0 falls in the top cell)."""
    bits = _check_bits(bits)
    top = (1 << bits) - 1
    cells = np.floor(np.clip(np.asarray(x, dtype=float), 0.0, 1.0) * (1 << bits))
    return np.minimum(cells, top).astype(np.uint64)


def _spread(v: np.ndarray) -> np.ndarray:
    """Put bit j of a 32-bit integer at bit 2j (zeros in between)."""
    v = v & _LOW32
    for shift, mask in zip((16, 8, 4, 2, 1), _M, strict=True):
        v = (v | (v << np.uint64(shift))) & mask
    return v


def _compact(v: np.ndarray) -> np.ndarray:
    """Inverse of :func:`_spread`: gather the even bits of a 64-bit integer."""
    v = v & _M[4]
    for shift, mask in zip((1, 2, 4, 8, 16), (*_M[3::-1], _LOW32), strict=True):
        v = (v | (v >> np.uint64(shift))) & mask
    return v


def zorder(a: np.ndarray, b: np.ndarray, bits: int = DEFAULT_BITS) -> np.ndarray:
    """Per-element z-value of ``(a, b)``: interleave their ``bits``-bit cells, a's bit first."""
    bits = _check_bits(bits)
    code = (_spread(quantise(a, bits)) << np.uint64(1)) | _spread(quantise(b, bits))
    return code.astype(np.float64) / float(1 << (2 * bits))


def zorder_against(
    candidates: np.ndarray, opponents: np.ndarray, bits: int = DEFAULT_BITS
) -> Iterator[np.ndarray]:
    """``zorder(candidates, opponent)`` for each opponent row in turn, the candidates' cells
    spread once (ranking compares ~10^4 candidates with several opponents; spreading is most
    of the cost). Each yielded array equals :func:`zorder` of the pair, bit for bit."""
    bits = _check_bits(bits)
    mine = _spread(quantise(np.atleast_2d(candidates), bits)) << np.uint64(1)
    scale = float(1 << (2 * bits))
    for opponent in np.atleast_2d(opponents):
        theirs = _spread(quantise(opponent, bits))
        yield (mine | theirs[None, :]).astype(np.float64) / scale


def dezorder(z: np.ndarray, bits: int = DEFAULT_BITS) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`zorder`: the lower edges of the two quantised cells."""
    bits = _check_bits(bits)
    code = np.rint(np.asarray(z, dtype=float) * float(1 << (2 * bits))).astype(np.uint64)
    scale = float(1 << bits)
    return (
        _compact(code >> np.uint64(1)).astype(float) / scale,
        _compact(code).astype(float) / scale,
    )


def _difference(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    return a - b


def _concat(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    return np.concatenate([a, b], axis=1)


METHODS: dict[str, Callable[[np.ndarray, np.ndarray, int], np.ndarray]] = {
    "zorder": zorder,
    "difference": _difference,
    "concat": _concat,
}


def induced_dim(method: str, dim: int) -> int:
    """Number of columns of an induced row for a ``dim``-knob space."""
    _method(method)
    return 2 * dim if method == "concat" else dim


def _method(name: str) -> Callable[[np.ndarray, np.ndarray, int], np.ndarray]:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(
            f"unknown induction {name!r}; choose one of {', '.join(METHODS)}"
        ) from None


def induce(
    xa: np.ndarray, xb: np.ndarray, method: str = "zorder", bits: int = DEFAULT_BITS
) -> np.ndarray:
    """Rows for pairs ``(xa[r], xb[r])``; both of shape (n, d). Row r says "xa[r] vs xb[r]"."""
    xa = np.atleast_2d(np.asarray(xa, dtype=float))
    xb = np.atleast_2d(np.asarray(xb, dtype=float))
    if xa.shape != xb.shape:
        raise ValueError(f"pair shapes differ: {xa.shape} vs {xb.shape}")
    return _method(method)(xa, xb, bits)


def ordered_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (ia, ib) of all n(n-1) ordered pairs of distinct items."""
    ia, ib = np.nonzero(~np.eye(n, dtype=bool))
    return ia, ib


def induce_all_pairs(
    points: np.ndarray,
    scores: np.ndarray,
    method: str = "zorder",
    bits: int = DEFAULT_BITS,
    ties: str = "skip",
) -> tuple[np.ndarray, np.ndarray]:
    """Training rows and labels from every ordered pair: label 1 iff score[a] > score[b].

    ``ties="skip"`` drops pairs with equal scores (both orders would say "not better", a
    contradiction the model cannot fit); ``ties="zero"`` keeps them with label 0.
    """
    if ties not in ("skip", "zero"):
        raise ValueError(f"ties must be 'skip' or 'zero', got {ties!r}")
    points = np.asarray(points, dtype=float)
    scores = np.asarray(scores, dtype=float)
    ia, ib = ordered_pairs(len(points))
    if ties == "skip":
        keep = scores[ia] != scores[ib]
        ia, ib = ia[keep], ib[keep]
    rows = induce(points[ia], points[ib], method, bits)
    return rows, (scores[ia] > scores[ib]).astype(np.int64)


def induce_against(
    candidates: np.ndarray, pivot: np.ndarray, method: str = "zorder", bits: int = DEFAULT_BITS
) -> np.ndarray:
    """Rows "candidate vs pivot" for every candidate (label 1 would mean it beats the pivot)."""
    candidates = np.atleast_2d(np.asarray(candidates, dtype=float))
    pivots = np.broadcast_to(np.asarray(pivot, dtype=float), candidates.shape)
    return induce(candidates, pivots, method, bits)
