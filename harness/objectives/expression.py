"""A small, safe evaluator for utility and constraint expressions written in the config.

User text is parsed with :func:`ast.parse` (``mode="eval"``) and the tree is checked against an
allow-list before anything is evaluated; Python's ``eval``/``exec``/``compile`` never see it.
Evaluation walks the checked tree with plain float arithmetic.

Allowed:

* numbers (``3``, ``0.7``, ``1e3``), names (workload metrics, or named constants such as
  ``cores`` that are folded in at parse time);
* ``+ - * / // % **``, unary ``-``/``+``; the exponent of ``**`` must not depend on a metric
  and must lie within ``±MAX_EXPONENT`` (so ``10**10**10`` is refused before it runs);
* comparisons ``< <= > >= == !=`` (chained, like ``1 <= x < 5``), ``and``, ``or``, ``not``,
  and ``a if condition else b``;
* the functions ``min``, ``max``, ``abs``, ``sqrt``, ``log`` (natural), ``log10``, ``exp`` and
  ``clip(x, low, high)``.

Everything else (attribute access, subscripts, other calls, keyword arguments, lambdas,
comprehensions, strings, assignments, ...) is refused with a one-line
:class:`ExpressionError` (a :class:`~harness.errors.ConfigError`) naming the problem and its
column. Expressions are typed: arithmetic works on numbers, ``and``/``or``/``not`` on conditions,
so ``tps and 3`` or a utility that is a comparison is refused up front too.

At run time a value outside ``±MAX_MAGNITUDE``, a division by zero, a logarithm of a non-positive
number or a missing metric raise :class:`EvaluationError`; the objective turns that into a
FAILED test.
"""

from __future__ import annotations

import ast
import difflib
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from harness.objectives.grammar import (
    BINARY,
    BITWISE,
    COMPARE,
    FUNCTIONS,
    MAX_EXPONENT,
    MAX_LENGTH,
    MAX_MAGNITUDE,
    MAX_NODES,
    REFUSED,
    EvaluationError,
    ExpressionError,
    Kind,
)

__all__ = [
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "MAX_MAGNITUDE",
    "MAX_NODES",
    "EvaluationError",
    "Expression",
    "ExpressionError",
    "parse",
]


@dataclass(frozen=True, eq=False)
class Expression:
    """A checked expression: its text, kind (number or condition) and the metrics it reads."""

    text: str
    kind: Kind
    names: frozenset[str]
    _tree: ast.expr
    _constants: Mapping[str, float]

    def evaluate(self, values: Mapping[str, float]) -> float | bool:
        """The value on ``values`` (metric name -> number); raises EvaluationError."""
        return _Evaluator(self.text, values, self._constants).eval(self._tree)

    def violation(self, values: Mapping[str, float]) -> float:
        """For a condition: 0 if it holds, else how far it misses (see :func:`_violation`)."""
        if self.kind != "bool":
            raise TypeError(f"{self.text!r} is not a condition")
        return _violation(self._tree, _Evaluator(self.text, values, self._constants))

    def __str__(self) -> str:
        return self.text


def parse(
    text: str,
    metrics: Collection[str],
    constants: Mapping[str, float] | None = None,
    *,
    kind: Kind | None = None,
    what: str = "expression",
) -> Expression:
    """Check ``text`` and return an :class:`Expression`, or raise :class:`ExpressionError`.

    ``metrics`` are the names the workload reports; ``constants`` are extra named numbers;
    ``kind`` requires a number (``"num"``, e.g. a utility) or a condition (``"bool"``, e.g. a
    constraint); ``what`` prefixes error messages (e.g. ``"objective.utility"``).
    """
    constants = dict(constants or {})
    if not isinstance(text, str):
        raise ExpressionError(f"{what} must be a string expression, got {text!r}")
    text = text.strip()

    def fail(problem: str, col: int | None = None) -> ExpressionError:
        where = f" at column {col}" if col is not None else ""
        shown = text if len(text) <= 80 else text[:77] + "..."
        return ExpressionError(f"{what} {shown!r}{where}: {problem}")

    if not text:
        raise fail("empty expression")
    if len(text) > MAX_LENGTH:
        raise fail(f"expression is {len(text)} characters long (at most {MAX_LENGTH})")
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        detail = "" if exc.msg == "invalid syntax" else f" ({exc.msg})"
        raise fail(f"invalid syntax{detail}", exc.offset) from None
    except (RecursionError, MemoryError):
        raise fail("expression is too deeply nested") from None
    except ValueError as exc:  # e.g. a NUL byte
        raise fail(f"invalid characters ({exc})") from None
    count = sum(1 for _ in ast.walk(tree))
    if count > MAX_NODES:
        raise fail(f"expression has {count} syntax nodes (at most {MAX_NODES})")
    checker = _Checker(set(metrics), constants, fail)
    try:
        found = checker.check(tree)
    except RecursionError:
        raise fail("expression is too deeply nested") from None
    if kind is not None and found != kind:
        wanted = "a number" if kind == "num" else "a condition (a comparison such as 'x <= 5')"
        raise fail(f"must be {wanted}")
    return Expression(text, found, frozenset(checker.used), tree, constants)


class _Checker:
    """Walks the tree once: allow-list, static types, known names, bounded exponents."""

    def __init__(
        self, metrics: set[str], constants: dict[str, float], fail: Callable[..., ExpressionError]
    ) -> None:
        self.metrics, self.constants, self.fail = metrics, constants, fail
        self.used: set[str] = set()

    def check(self, node: ast.expr) -> Kind:
        """The kind of ``node`` ("num" or "bool"), or the error of the first thing refused."""
        col = getattr(node, "col_offset", -1) + 1
        visit = _CHECKS.get(type(node))
        if visit is None:
            raise self.fail(REFUSED.get(type(node), f"{type(node).__name__} is not allowed"), col)
        return visit(self, node, col)

    def constant(self, node: ast.Constant, col: int) -> Kind:
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            what = "strings" if isinstance(node.value, str | bytes) else repr(node.value)
            raise self.fail(
                f"{what} are not allowed"
                if what == "strings"
                else f"constant {what} is not allowed",
                col,
            )
        try:
            float(node.value)
        except OverflowError:
            raise self.fail("number too large", col) from None
        return "num"

    def name(self, node: ast.Name, col: int) -> Kind:
        if node.id in self.constants:
            return "num"
        if node.id not in self.metrics:
            raise self.fail(self._unknown(node.id), col)
        self.used.add(node.id)
        return "num"

    def binary(self, node: ast.BinOp, col: int) -> Kind:
        op = type(node.op)
        if op not in BINARY:
            symbol = BITWISE.get(op, op.__name__)
            hint = " (use ** for powers)" if op is ast.BitXor else ""
            raise self.fail(f"operator {symbol} is not allowed{hint}", col)
        self.number(node.left, "left operand")
        self.number(node.right, "right operand")
        if op is ast.Pow:
            self.exponent(node.right)
        return "num"

    def unary(self, node: ast.UnaryOp, col: int) -> Kind:
        if isinstance(node.op, ast.Not):
            self.condition(node.operand, "'not'")
            return "bool"
        if isinstance(node.op, ast.USub | ast.UAdd):
            self.number(node.operand, "operand")
            return "num"
        raise self.fail("bitwise operators are not allowed", col)

    def compare(self, node: ast.Compare, col: int) -> Kind:
        for cmp in node.ops:
            if type(cmp) not in COMPARE:
                raise self.fail(
                    f"comparison {type(cmp).__name__} is not allowed (use < <= > >= == !=)", col
                )
        for operand in (node.left, *node.comparators):
            self.number(operand, "compared value")
        return "bool"

    def boolean(self, node: ast.BoolOp, col: int) -> Kind:
        for value in node.values:
            self.condition(value, "'and'/'or'")
        return "bool"

    def if_else(self, node: ast.IfExp, col: int) -> Kind:
        self.condition(node.test, "'if'")
        self.number(node.body, "'if' branch")
        self.number(node.orelse, "'else' branch")
        return "num"

    def number(self, node: ast.expr, role: str) -> None:
        if self.check(node) != "num":
            raise self.fail(f"{role} must be a number, not a condition", node.col_offset + 1)

    def condition(self, node: ast.expr, role: str) -> None:
        if self.check(node) != "bool":
            raise self.fail(
                f"{role} needs a condition (a comparison), not a number", node.col_offset + 1
            )

    def exponent(self, node: ast.expr) -> None:
        """The exponent must be a constant expression of bounded size (no metric in it)."""
        col = node.col_offset + 1
        if any(isinstance(n, ast.Name) and n.id not in self.constants for n in ast.walk(node)):
            raise self.fail("an exponent must not depend on a metric", col)
        try:
            value = _Evaluator("", {}, self.constants).eval(node)
        except EvaluationError as exc:
            raise self.fail(f"exponent cannot be evaluated ({exc})", col) from None
        if abs(float(value)) > MAX_EXPONENT:
            raise self.fail(
                f"exponent {float(value):g} is too large (at most {MAX_EXPONENT:g})", col
            )

    def call(self, node: ast.Call, col: int) -> Kind:
        allowed = ", ".join(FUNCTIONS)
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise self.fail(f"calls to {name!r} are not allowed (functions: {allowed})", col)
        if node.keywords:
            raise self.fail("keyword arguments are not allowed", col)
        low, high, _ = FUNCTIONS[node.func.id]
        n = len(node.args)
        if n < low or (high is not None and n > high):
            need = f"{low}" if low == high else f"at least {low}"
            raise self.fail(f"{node.func.id}() takes {need} argument(s), got {n}", col)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.fail("star arguments are not allowed", arg.col_offset + 1)
            self.number(arg, f"argument of {node.func.id}()")
        return "num"

    def _unknown(self, name: str) -> str:
        known = sorted(self.metrics) + sorted(self.constants)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        consts = f"; constants: {', '.join(sorted(self.constants))}" if self.constants else ""
        return (
            f"unknown name {name!r}{hint}; the workload reports: "
            f"{', '.join(sorted(self.metrics)) or '(nothing)'}{consts}"
        )


class _Evaluator:
    """Evaluates a checked tree; only the node types the checker allows are handled."""

    def __init__(
        self, text: str, values: Mapping[str, float], constants: Mapping[str, float]
    ) -> None:
        self.text, self.values, self.constants = text, values, constants

    def eval(self, node: ast.expr) -> Any:
        evaluate = _EVALUATIONS.get(type(node))
        if evaluate is None:  # unreachable: the checker allows only these node types
            raise EvaluationError(f"unexpected {type(node).__name__} in {self.text!r}")
        return evaluate(self, node)

    def binary(self, node: ast.BinOp) -> float:
        symbol, fn = BINARY[type(node.op)]
        return self.arith(symbol, fn, self.eval(node.left), self.eval(node.right))

    def unary(self, node: ast.UnaryOp) -> Any:
        operand = self.eval(node.operand)
        if isinstance(node.op, ast.Not):
            return not operand
        return -operand if isinstance(node.op, ast.USub) else operand

    def compare(self, node: ast.Compare) -> bool:
        left = self.eval(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.eval(right_node)
            if not COMPARE[type(op)][1](left, right):
                return False
            left = right
        return True

    def boolean(self, node: ast.BoolOp) -> bool:
        if isinstance(node.op, ast.And):
            return all(self.eval(v) for v in node.values)
        return any(self.eval(v) for v in node.values)

    def call(self, node: ast.Call) -> float:
        if not isinstance(node.func, ast.Name):  # unreachable: the checker refuses it
            raise EvaluationError(f"unexpected call in {self.text!r}")
        fn = FUNCTIONS[node.func.id][2]
        args = [self.eval(a) for a in node.args]
        return self.checked(f"{node.func.id}()", lambda: fn(*args))

    def name(self, name: str) -> float:
        if name in self.constants:
            return float(self.constants[name])
        if name not in self.values:
            raise EvaluationError(f"metric {name!r} is missing (got {sorted(self.values)})")
        value = float(self.values[name])
        if not math.isfinite(value):
            raise EvaluationError(f"metric {name!r} is not finite ({value})")
        return value

    def arith(self, symbol: str, fn: Callable[[float, float], float], a: float, b: float) -> float:
        return self.checked(f"{a:g} {symbol} {b:g}", lambda: fn(a, b))

    def checked(self, what: str, thunk: Callable[[], float]) -> float:
        """Run one operation; refuse errors, complex results and runaway magnitudes."""
        try:
            result = thunk()
        except ZeroDivisionError:
            raise EvaluationError(f"division by zero ({what}) in {self.text!r}") from None
        except (OverflowError, ValueError) as exc:
            raise EvaluationError(f"{what} failed ({exc}) in {self.text!r}") from None
        # A negative base with a fractional exponent yields a complex number in Python.
        if isinstance(result, complex):
            raise EvaluationError(
                f"{what} is not a real number (negative base with a "
                f"fractional exponent) in {self.text!r}"
            )
        if not math.isfinite(result) or abs(result) > MAX_MAGNITUDE:
            raise EvaluationError(
                f"{what} gave {result} (beyond ±{MAX_MAGNITUDE:g}) in {self.text!r}"
            )
        return float(result)


#: What the checker does per node type it allows (anything else is refused with REFUSED's words).
_CHECKS: dict[type, Callable[[_Checker, Any, int], Kind]] = {
    ast.Constant: _Checker.constant,
    ast.Name: _Checker.name,
    ast.BinOp: _Checker.binary,
    ast.UnaryOp: _Checker.unary,
    ast.Compare: _Checker.compare,
    ast.BoolOp: _Checker.boolean,
    ast.IfExp: _Checker.if_else,
    ast.Call: _Checker.call,
}

#: How each allowed node type evaluates.
_EVALUATIONS: dict[type, Callable[[_Evaluator, Any], Any]] = {
    ast.Constant: lambda ev, node: float(node.value),
    ast.Name: lambda ev, node: ev.name(node.id),
    ast.BinOp: _Evaluator.binary,
    ast.UnaryOp: _Evaluator.unary,
    ast.Compare: _Evaluator.compare,
    ast.BoolOp: _Evaluator.boolean,
    ast.IfExp: lambda ev, node: ev.eval(node.body) if ev.eval(node.test) else ev.eval(node.orelse),
    ast.Call: _Evaluator.call,
}


def _violation(node: ast.expr, ev: _Evaluator) -> float:
    """How far a condition misses: 0 if it holds.

    A comparison misses by the distance between its sides (a chained one by the sum over its
    links; a strict comparison that fails at equality, or a failed ``!=``, misses by 0); ``and``
    adds up its parts, ``or`` takes the smallest, ``not`` of a comparison flips the operator,
    and any other failed condition misses by 1.
    """
    if isinstance(node, ast.Compare):
        total, left = 0.0, float(ev.eval(node.left))
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = float(ev.eval(right_node))
            if not COMPARE[type(op)][1](left, right):
                total += abs(left - right) if not isinstance(op, ast.NotEq) else 0.0
            left = right
        return total
    if isinstance(node, ast.BoolOp):
        parts = [_violation(v, ev) for v in node.values]
        if isinstance(node.op, ast.And):
            return sum(parts)
        return 0.0 if any(ev.eval(v) for v in node.values) else min(parts)
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.Not)
        and isinstance(node.operand, ast.Compare)
        and len(node.operand.ops) == 1
    ):
        flipped = {
            ast.Lt: ast.GtE,
            ast.LtE: ast.Gt,
            ast.Gt: ast.LtE,
            ast.GtE: ast.Lt,
            ast.Eq: ast.NotEq,
            ast.NotEq: ast.Eq,
        }[type(node.operand.ops[0])]()
        negated = ast.Compare(node.operand.left, [flipped], node.operand.comparators)
        return _violation(negated, ev)
    return 0.0 if ev.eval(node) else 1.0
