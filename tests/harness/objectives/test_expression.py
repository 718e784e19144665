"""The safe expression evaluator: arithmetic, comparisons, functions, and hostile input."""

from __future__ import annotations

import math
import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ConfigError
from harness.objectives.expression import (
    MAX_LENGTH,
    EvaluationError,
    Expression,
    ExpressionError,
    parse,
)

METRICS = ("tps", "lat", "errors")
VALUES = {"tps": 100.0, "lat": 8.0, "errors": 0.0}


def value(text: str, values: dict[str, float] | None = None, **constants: float) -> float | bool:
    return parse(text, METRICS, constants).evaluate(VALUES if values is None else values)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("2 ** 3 ** 2", 512.0),  # right-associative
        ("-2 ** 2", -4.0),  # unary minus binds looser than **
        ("2 ** -1", 0.5),
        ("10 - 4 - 3", 3.0),  # left-associative
        ("10 / 4", 2.5),
        ("7 // 2", 3.0),
        ("7 % 4", 3.0),
        ("+tps", 100.0),
        ("tps / 2", 50.0),
        ("0.7*tps - 3*lat", 46.0),
        ("tps / lat ** 2", 100.0 / 64.0),
        ("1e3 * errors + tps", 100.0),
        ("min(tps, lat)", 8.0),
        ("max(tps, lat, 500)", 500.0),
        ("min(3)", 3.0),
        ("abs(lat - tps)", 92.0),
        ("sqrt(tps)", 10.0),
        ("log(tps)", math.log(100.0)),
        ("log10(tps)", 2.0),
        ("exp(0)", 1.0),
        ("clip(tps, 0, 50)", 50.0),
        ("clip(lat, 10, 50)", 10.0),
        ("tps if lat < 10 else 0", 100.0),
        ("tps if lat > 10 else -1", -1.0),
        ("tps / cores", 25.0),
    ],
)
def test_arithmetic_precedence_and_functions(text: str, expected: float) -> None:
    expression = parse(text, METRICS, {"cores": 4})
    assert expression.kind == "num"
    assert expression.evaluate(VALUES) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lat <= 8", True),
        ("lat < 8", False),
        ("lat > 7.5", True),
        ("lat >= 9", False),
        ("errors == 0", True),
        ("errors != 0", False),
        ("1 <= lat < 10", True),  # chained
        ("1 <= lat < 5", False),
        ("5 < lat < tps < 50", False),
        ("lat <= 10 and tps >= 50", True),
        ("lat <= 5 or tps >= 50", True),
        ("lat <= 5 or tps >= 500", False),
        ("not lat > 10", True),
        ("not (lat < 10 and errors == 0)", False),
    ],
)
def test_comparisons_and_logic(text: str, expected: bool) -> None:
    expression = parse(text, METRICS)
    assert expression.kind == "bool"
    assert expression.evaluate(VALUES) is expected


def test_names_are_the_metrics_read_and_constants_are_not() -> None:
    expression = parse("tps / cores + 0 * lat", METRICS, {"cores": 2})
    assert expression.names == {"tps", "lat"}
    assert str(expression) == "tps / cores + 0 * lat"


@pytest.mark.parametrize(
    ("text", "values", "expected"),
    [
        ("lat <= 12", {"lat": 15.5}, 3.5),
        ("lat <= 12", {"lat": 11.0}, 0.0),
        ("tps >= 100", {"tps": 40.0}, 60.0),
        ("1 <= lat <= 5", {"lat": 8.0}, 3.0),  # chained: sum over the links that fail
        ("lat <= 5 and tps >= 100", {"lat": 8.0, "tps": 90.0}, 13.0),  # and: adds up
        ("lat <= 5 or tps >= 100", {"lat": 8.0, "tps": 90.0}, 3.0),  # or: the closer one
        ("lat <= 5 or tps >= 100", {"lat": 8.0, "tps": 120.0}, 0.0),
        ("not lat > 5", {"lat": 8.0}, 3.0),  # not of a comparison flips it
        ("errors == 0", {"errors": 2.0}, 2.0),
        ("lat < 8", {"lat": 8.0}, 0.0),  # fails, but at the boundary: misses by 0
    ],
)
def test_violation_is_how_far_a_condition_misses(
    text: str, values: dict[str, float], expected: float
) -> None:
    assert parse(text, METRICS).violation(values) == pytest.approx(expected)


def test_violation_needs_a_condition() -> None:
    with pytest.raises(TypeError):
        parse("tps", METRICS).violation(VALUES)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("().__class__", "attribute access is not allowed"),
        ("tps.real", "attribute access is not allowed"),
        ("(1).__class__.__bases__", "attribute access is not allowed"),
        ("__import__('os')", "calls to '__import__' are not allowed"),
        ("__import__('os').system('echo hacked')", "calls to \"__import__('os').system\""),
        ("open('/etc/passwd')", "calls to 'open' are not allowed"),
        ("eval('1')", "calls to 'eval' are not allowed"),
        ("import os", "invalid syntax"),
        ("tps; lat", "invalid syntax"),
        ("tps = 3", "invalid syntax"),
        ("(x := 3)", "assignments are not allowed"),
        ("tps[0]", "subscripts are not allowed"),
        ("lambda: 1", "lambdas are not allowed"),
        ("[x for x in (1, 2)]", "comprehensions are not allowed"),
        ("sum(x for x in [1])", "calls to 'sum'"),
        ("'abc'", "strings are not allowed"),
        ("f'{tps}'", "strings are not allowed"),
        ("b'x'", "strings are not allowed"),
        ("[1, 2]", "lists are not allowed"),
        ("{'a': 1}", "dicts are not allowed"),
        ("None", "constant None is not allowed"),
        ("True", "constant True is not allowed"),
        ("1j", "constant 1j is not allowed"),
        ("...", "constant Ellipsis is not allowed"),
        ("10**10**10", "exponent 1e+10 is too large"),
        ("2 ** (10 ** 10 ** 10)", "exponent 1e+10 is too large"),
        ("2 ** 100", "exponent 100 is too large"),
        ("2 ** tps", "exponent must not depend on a metric"),
        ("2 ** (1 / 0)", "exponent cannot be evaluated"),
        ("tps ^ 2", "operator ^ is not allowed (use ** for powers)"),
        ("tps << 2", "operator << is not allowed"),
        ("~tps", "bitwise operators are not allowed"),
        ("tps is lat", "comparison Is is not allowed"),
        ("tps in lat", "comparison In is not allowed"),
        ("min(tps, key=abs)", "keyword arguments are not allowed"),
        ("max(*tps)", "star arguments are not allowed"),
        ("abs(tps, lat)", "abs() takes 1 argument(s), got 2"),
        ("clip(tps)", "clip() takes 3 argument(s), got 1"),
        ("min()", "min() takes at least 1 argument(s), got 0"),
        ("tps and lat", "needs a condition"),
        ("(lat < 3) + 1", "must be a number, not a condition"),
        ("max(lat < 3, 1)", "must be a number, not a condition"),
        ("tps if lat else 0", "needs a condition"),
        ("", "empty expression"),
        ("   ", "empty expression"),
        ("tps +", "invalid syntax"),
        ("tps\x00", "invalid"),
        ("9" * 400, "number too large"),
        ("tps + " * 100 + "1", f"at most {MAX_LENGTH}"),
        ("-" * 300 + "1", "syntax nodes"),
        ("(" * 240 + "1" + ")" * 240, "too many nested parentheses"),
    ],
)
def test_hostile_or_invalid_input_is_refused_cleanly(text: str, fragment: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse(text, METRICS, what="objective.utility")
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message
    assert message.startswith("objective.utility ")
    assert isinstance(info.value, ConfigError)


def test_errors_name_the_column() -> None:
    with pytest.raises(ExpressionError, match=r"at column 7: attribute access"):
        parse("tps + lat.real", METRICS)
    with pytest.raises(ExpressionError, match=r"at column 5: exponent"):
        parse("10**10**10", METRICS)


def test_unknown_names_are_refused_with_a_suggestion() -> None:
    with pytest.raises(ExpressionError) as info:
        parse("tps - 3*latency", METRICS, {"cores": 2}, what="objective.utility")
    message = str(info.value)
    assert "unknown name 'latency'" in message
    assert "column 9" in message
    assert "did you mean 'lat'" in message
    assert "the workload reports: errors, lat, tps" in message
    assert "constants: cores" in message


def test_kind_is_enforced() -> None:
    with pytest.raises(ExpressionError, match="must be a condition"):
        parse("lat", METRICS, kind="bool")
    with pytest.raises(ExpressionError, match="must be a number"):
        parse("lat < 3", METRICS, kind="num")
    assert parse("lat < 3", METRICS, kind="bool").kind == "bool"


def test_non_string_input_is_refused() -> None:
    with pytest.raises(ExpressionError, match="must be a string"):
        parse(12, METRICS)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "values", "fragment"),
    [
        ("tps / errors", VALUES, "division by zero"),
        ("tps // errors", VALUES, "division by zero"),
        ("tps % errors", VALUES, "division by zero"),
        ("errors ** -1", VALUES, "division by zero"),
        ("log(errors)", VALUES, "log() of a non-positive number"),
        ("sqrt(-lat)", VALUES, "sqrt() of a negative number"),
        ("(-lat) ** 0.5", VALUES, "not a real number"),
        ("exp(tps * 10)", VALUES, "exp()"),
        ("tps ** 60", VALUES, "beyond"),
        ("1e300 * 1e10", VALUES, "beyond"),
        ("tps + lat", {"tps": 1.0}, "metric 'lat' is missing"),
        ("tps + lat", {"tps": 1.0, "lat": math.nan}, "metric 'lat' is not finite"),
        ("tps < lat", {"tps": math.inf, "lat": 1.0}, "metric 'tps' is not finite"),
    ],
)
def test_runtime_errors_are_evaluation_errors(
    text: str, values: dict[str, float], fragment: str
) -> None:
    expression = parse(text, METRICS)
    with pytest.raises(EvaluationError, match=None) as info:
        expression.evaluate(values)
    assert fragment in str(info.value)


def test_logic_short_circuits_like_python() -> None:
    # The right side would divide by zero; 'and'/'or' must not evaluate it.
    assert value("errors > 0 and tps / errors > 1") is False
    assert value("errors == 0 or tps / errors > 1") is True
    assert value("tps if errors == 0 else tps / errors") == 100.0


# -- property tests ------------------------------------------------------------------------

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_LEAVES = st.one_of(
    st.integers(0, 99).map(lambda n: (str(n), float(n))),
    st.sampled_from([("tps", 100.0), ("lat", 8.0), ("errors", 0.0)]),
)


def _combine(children: st.SearchStrategy[tuple[str, float]]) -> st.SearchStrategy:
    binary = st.tuples(children, st.sampled_from(sorted(_OPS)), children).map(
        lambda t: (f"({t[0][0]} {t[1]} {t[2][0]})", _OPS[t[1]](t[0][1], t[2][1]))
    )
    minimum = st.tuples(children, children).map(
        lambda t: (f"min({t[0][0]}, {t[1][0]})", min(t[0][1], t[1][1]))
    )
    maximum = st.tuples(children, children).map(
        lambda t: (f"max({t[0][0]}, {t[1][0]})", max(t[0][1], t[1][1]))
    )
    negated = children.map(lambda c: (f"-{c[0]}", -c[1]))
    return st.one_of(binary, minimum, maximum, negated)


@settings(max_examples=200, deadline=None)
@given(st.recursive(_LEAVES, _combine, max_leaves=12))
def test_random_arithmetic_matches_the_reference(case: tuple[str, float]) -> None:
    text, expected = case
    assert parse(text, METRICS).evaluate(VALUES) == pytest.approx(expected)


_ALPHABET = "tpslaerorminaxbsqclgxp_ ()+-*/%<>=!.,0123456789e:[]'\"~^&|@ifnotandelsel"


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=40), st.text(alphabet=_ALPHABET, max_size=60)))
def test_fuzzed_text_only_ever_raises_the_documented_errors(text: str) -> None:
    try:
        expression = parse(text, METRICS)
    except ExpressionError:
        return
    assert isinstance(expression, Expression)
    try:
        result = expression.evaluate(VALUES)
    except EvaluationError:
        return
    assert isinstance(result, bool) or math.isfinite(result)


_TOKENS = [
    "tps",
    "lat",
    "errors",
    "cores",
    "0",
    "1",
    "2.5",
    "1e3",
    "64",
    "-",
    "+",
    "*",
    "/",
    "//",
    "%",
    "**",
    "<",
    "<=",
    ">",
    "==",
    "!=",
    "and",
    "or",
    "not",
    "if",
    "else",
    "(",
    ")",
    ",",
    "min",
    "max",
    "abs",
    "sqrt",
    "log",
    "log10",
    "exp",
    "clip",
    ".",
    "[",
    "]",
    "x",
    "__class__",
    "'s'",
    "lambda",
    ":",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=14))
def test_fuzzed_token_soup_only_ever_raises_the_documented_errors(tokens: list[str]) -> None:
    text = " ".join(tokens)
    try:
        expression = parse(text, METRICS, {"cores": 2})
    except ExpressionError:
        return
    for values in (VALUES, {"tps": -3.0, "lat": 0.0, "errors": 1e30}):
        try:
            result = expression.evaluate(values)
            expression.violation(values) if expression.kind == "bool" else None
        except EvaluationError:
            continue
        assert isinstance(result, bool) or math.isfinite(result)
