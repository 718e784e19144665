"""The grammar of utility and constraint expressions: what :mod:`harness.objectives.expression`
allows.

The operators and functions an expression may use (with the Python function each maps to), the
node types it refuses (with the message a user sees), the limits that keep evaluation cheap,
and the two errors. :mod:`harness.objectives.expression` parses, checks and evaluates against these
tables.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Literal

from harness.errors import ConfigError, HarnessError

__all__ = [
    "BINARY",
    "BITWISE",
    "COMPARE",
    "FUNCTIONS",
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "MAX_MAGNITUDE",
    "MAX_NODES",
    "REFUSED",
    "EvaluationError",
    "ExpressionError",
    "Kind",
]

MAX_LENGTH = 500  # characters; a utility is a formula, not a program
MAX_NODES = 200  # syntax-tree nodes, caps nesting and evaluation cost
MAX_EXPONENT = 64.0
MAX_MAGNITUDE = 1e100  # any metric arithmetic stays far below this; beyond it is a runaway

Kind = Literal["num", "bool"]


class ExpressionError(ConfigError):
    """An expression in the config is malformed, unsafe, or names an unknown metric."""


class EvaluationError(HarnessError):
    """An expression could not be evaluated on a test's metrics (e.g. division by zero)."""


BINARY: dict[type[ast.operator], tuple[str, Callable[[float, float], float]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
}
COMPARE: dict[type[ast.cmpop], tuple[str, Callable[[float, float], bool]]] = {
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}

BITWISE: dict[type[ast.operator], str] = {
    ast.BitXor: "^",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.MatMult: "@",
}


def _clip(x: float, low: float, high: float) -> float:
    return min(max(x, low), high)


def _positive(name: str, fn: Callable[[float], float]) -> Callable[[float], float]:
    def checked(x: float) -> float:
        if x <= 0:
            raise EvaluationError(f"{name}() of a non-positive number ({x:g})")
        return fn(x)

    return checked


def _sqrt(x: float) -> float:
    if x < 0:
        raise EvaluationError(f"sqrt() of a negative number ({x:g})")
    return math.sqrt(x)


# name -> (min args, max args or None, function)
FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., float]]] = {
    "min": (1, None, lambda *args: min(args)),  # min(x) of one number is x
    "max": (1, None, lambda *args: max(args)),
    "abs": (1, 1, abs),
    "sqrt": (1, 1, _sqrt),
    "log": (1, 1, _positive("log", math.log)),
    "log10": (1, 1, _positive("log10", math.log10)),
    "exp": (1, 1, math.exp),
    "clip": (3, 3, _clip),
}

# Messages for refused node types (anything not listed: "<NodeType> is not allowed").
REFUSED: dict[type[ast.AST], str] = {
    ast.Attribute: "attribute access is not allowed",
    ast.Subscript: "subscripts are not allowed",
    ast.Slice: "slices are not allowed",
    ast.Lambda: "lambdas are not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.JoinedStr: "strings are not allowed",
    ast.FormattedValue: "strings are not allowed",
    ast.NamedExpr: "assignments are not allowed",
    ast.Starred: "star arguments are not allowed",
    ast.List: "lists are not allowed",
    ast.Tuple: "tuples are not allowed",
    ast.Set: "sets are not allowed",
    ast.Dict: "dicts are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
}
