"""The fitted trees of a forest as plain arrays, and back: the surrogate cache's format.

Rule: a forest read from a file is rebuilt only from arrays of exactly the dtypes and shapes
this scikit-learn writes, after checks that make every prediction walk end at a leaf inside
its tree (children strictly after their parent and inside the tree, leaves without
children, split features inside the space, finite thresholds and values). Why: the file sits
in a cache folder, i.e. data, and scikit-learn's own ``Tree.__setstate__`` checks dtypes and
shapes but not the links, so a crafted file could make prediction read out of bounds or loop.

:func:`to_npz` writes one ``.npz``: JSON metadata (as bytes), the residuals, and per forest
(``reg``; ``fail`` when there is a failure model) the four arrays :func:`pack` makes (all
nodes, all values, nodes per tree, depth per tree). :func:`from_npz` reads it with
``allow_pickle=False``; :func:`unpack` checks and rebuilds the arrays into
``sklearn.tree._tree.Tree`` objects, which predict as fast as the fitted trees (they are the
same objects, rebuilt).
"""

from __future__ import annotations

import io
import json
import math
from typing import Any

import numpy as np
from sklearn.tree._tree import NODE_DTYPE, Tree

__all__ = ["checked_array", "finite_pair", "from_npz", "pack", "to_npz", "unpack"]


def pack(prefix: str, trees: list[Tree]) -> dict[str, np.ndarray]:
    """A forest as four arrays: all nodes, all values, nodes per tree, depth per tree."""
    states = [tree.__getstate__() for tree in trees]
    nodes = np.empty(sum(s["node_count"] for s in states), dtype=NODE_DTYPE)
    start = 0
    for state in states:  # np.concatenate would drop the dtype's padding (another dtype)
        nodes[start : start + state["node_count"]] = state["nodes"]
        start += state["node_count"]
    return {
        f"{prefix}_nodes": nodes,
        f"{prefix}_values": np.concatenate([s["values"] for s in states]),
        f"{prefix}_counts": np.array([s["node_count"] for s in states], dtype=np.int64),
        f"{prefix}_depths": np.array([s["max_depth"] for s in states], dtype=np.int64),
    }


def checked_array(arrays: dict[str, np.ndarray], name: str, dtype: Any, ndim: int) -> np.ndarray:
    """``arrays[name]``, checked to be of exactly ``dtype`` and ``ndim`` dimensions."""
    if name not in arrays:
        raise ValueError(f"it has no {name!r} array")
    array = arrays[name]
    if array.dtype != np.dtype(dtype) or array.ndim != ndim:
        raise ValueError(f"its {name!r} array is {array.dtype} in {array.ndim} dimensions")
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise ValueError(f"its {name!r} array holds a value that is not finite")
    return np.ascontiguousarray(array)


def unpack(
    arrays: dict[str, np.ndarray], prefix: str, n_features: int, n_classes: int
) -> list[Tree]:
    """The trees of one forest, rebuilt after every array is checked (:func:`_check_forest`)."""
    nodes = checked_array(arrays, f"{prefix}_nodes", NODE_DTYPE, 1)
    values = checked_array(arrays, f"{prefix}_values", np.float64, 3)
    counts = checked_array(arrays, f"{prefix}_counts", np.int64, 1)
    depths = checked_array(arrays, f"{prefix}_depths", np.int64, 1)
    _check_forest(nodes, values, counts, depths, n_features, n_classes)
    trees, start = [], 0
    for count, depth in zip(counts.tolist(), depths.tolist(), strict=True):
        tree = Tree(n_features, np.array([n_classes], dtype=np.intp), 1)
        tree.__setstate__(
            {
                "max_depth": depth,
                "node_count": count,
                "nodes": np.ascontiguousarray(nodes[start : start + count]),
                "values": np.ascontiguousarray(values[start : start + count]),
            }
        )
        trees.append(tree)
        start += count
    return trees


def _check_forest(
    nodes: np.ndarray,
    values: np.ndarray,
    counts: np.ndarray,
    depths: np.ndarray,
    n_features: int,
    n_classes: int,
) -> None:
    """Raise ValueError unless the arrays describe trees a prediction can walk safely: every
    internal node's children come after it and inside its tree (so every walk ends at a
    leaf, in bounds), leaves have no children, features index the space, and thresholds and
    values are finite numbers of the expected shape."""
    if not len(counts) or (counts < 1).any() or int(counts.sum()) != len(nodes):
        raise ValueError("its trees' node counts do not add up to its nodes")
    if depths.shape != counts.shape or (depths < 0).any() or (depths >= counts).any():
        raise ValueError("its trees' depths are not inside their node counts")
    if values.shape != (len(nodes), 1, n_classes):
        raise ValueError(
            f"its values have shape {values.shape}, not ({len(nodes)}, 1, {n_classes})"
        )
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    local = np.arange(len(nodes)) - starts
    size = np.repeat(counts, counts)
    left, right = nodes["left_child"], nodes["right_child"]
    leaf = left == -1
    if (right[leaf] != -1).any():
        raise ValueError("a leaf has a right child")
    inner = ~leaf
    for child in (left[inner], right[inner]):
        if ((child <= local[inner]) | (child >= size[inner])).any():
            raise ValueError("a node's child is not after it inside its tree")
    feature = nodes["feature"][inner]
    if ((feature < 0) | (feature >= n_features)).any():
        raise ValueError(f"a node splits on a feature outside [0, {n_features})")
    if not np.isfinite(nodes["threshold"][inner]).all():
        raise ValueError("a node's threshold is not finite")


def to_npz(
    meta: dict[str, Any], residuals: np.ndarray, trees: list[Tree], failure: list[Tree] | None
) -> bytes:
    """One ``.npz`` holding ``meta`` (JSON), ``residuals`` and the forests' arrays."""
    meta = {**meta, "failure_model": failure is not None}
    arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
    arrays["residuals"] = np.asarray(residuals, dtype=np.float64)
    arrays.update(pack("reg", trees))
    if failure is not None:
        arrays.update(pack("fail", failure))
    out = io.BytesIO()
    np.savez(out, **arrays)  # type: ignore[arg-type]
    return out.getvalue()


def from_npz(
    raw: bytes, expected: dict[str, Any], n_features: int
) -> tuple[dict[str, Any], np.ndarray, list[Tree], list[Tree] | None]:
    """(metadata, residuals, regression trees, failure trees or None) of a :func:`to_npz`
    file whose metadata holds ``expected`` and ``n_features``; ValueError otherwise."""
    with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    meta = json.loads(checked_array(arrays, "meta", np.uint8, 1).tobytes())
    if not isinstance(meta, dict):
        raise ValueError("its metadata is not an object")
    for field, value in {**expected, "n_features": n_features}.items():
        if meta.get(field) != value:
            raise ValueError(f"its {field} is {meta.get(field)!r}, expected {value!r}")
    residuals = checked_array(arrays, "residuals", np.float64, 1)
    trees = unpack(arrays, "reg", n_features, 1)
    if meta.get("failure_model") not in (True, False):
        raise ValueError("it does not say whether it holds a failure model")
    failure = unpack(arrays, "fail", n_features, 2) if meta["failure_model"] else None
    return meta, residuals, trees, failure


def finite_pair(value: Any) -> tuple[float, float]:
    """Two finite numbers (a JSON list) as floats; ValueError otherwise."""
    ok = isinstance(value, list) and len(value) == 2
    if not ok or not all(isinstance(v, int | float) and math.isfinite(v) for v in value):
        raise ValueError(f"its value range {value!r} is not two finite numbers")
    return float(value[0]), float(value[1])
