"""A safe arithmetic evaluator for the CalculatorAgent: numbers and operators, no ``eval``.

The expression comes from model output, so every intermediate result is bounded before
it is computed: an integer may have at most ``MAX_INT_BITS`` bits (a power or a product
that would pass it is refused without being computed), a float must stay finite, and a
result is never complex. Every failure is a ``CalculationError``, which the task
executor turns into a step error and the fallback plan.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from harness.exceptions import HarnessError

__all__ = ["CalculationError", "MAX_INT_BITS", "calculate"]

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_EXPONENT = 100
MAX_LENGTH = 200
# About 300 decimal digits: more than any float, far below str()'s 4300-digit limit.
MAX_INT_BITS = 1000

Number = int | float


class CalculationError(HarnessError, ValueError):
    """The expression is not plain arithmetic, or cannot be computed."""


def _bits(value: Number) -> int:
    """Bits of an integer's magnitude; a float counts as what it can hold (1024)."""
    return abs(value).bit_length() if isinstance(value, int) else 1024


def _check_size(op: ast.operator, left: Number, right: Number) -> None:
    """Refuse an operation whose integer result would pass ``MAX_INT_BITS``, before doing it."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return
    if isinstance(op, ast.Pow) and right > 0 and abs(left) > 1:
        estimate = (_bits(left) - 1) * right
    elif isinstance(op, ast.Mult):
        estimate = _bits(left) + _bits(right) - 1
    else:
        return
    if estimate > MAX_INT_BITS:
        raise CalculationError(f"the result would be too large (over {MAX_INT_BITS} bits)")


def _checked(value: Any) -> Number:
    if isinstance(value, complex):
        raise CalculationError("the result is not a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the result is too large for a floating-point number")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise CalculationError(f"the result is too large (over {MAX_INT_BITS} bits)")
    return value


def _binary(node: ast.BinOp) -> Number:
    left, right = _eval(node.left), _eval(node.right)
    op = node.op
    if isinstance(op, ast.Pow):
        if abs(right) > MAX_EXPONENT:
            raise CalculationError(f"the exponent {right} is too large (at most {MAX_EXPONENT})")
        if left == 0 and right < 0:
            raise CalculationError("division by zero (zero to a negative power)")
    if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
        raise CalculationError("division by zero")
    _check_size(op, left, right)
    try:
        value = _BINARY[type(op)](left, right)
    except ArithmeticError as exc:  # OverflowError: a float power past the float range
        raise CalculationError(f"{ast.unparse(node)!r} cannot be computed: {exc}") from exc
    return _checked(value)


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _checked(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _binary(node)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    raise CalculationError(f"only numbers and + - * / // % ** are allowed, not {ast.unparse(node)!r}")


def calculate(expression: str) -> Number:
    """The value of an arithmetic ``expression`` such as ``"15 * 3"``."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculationError(f"an expression must be a non-empty string, got {expression!r}")
    if len(expression) > MAX_LENGTH:
        raise CalculationError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
        result = _eval(tree.body)
    except (SyntaxError, ValueError) as exc:
        if isinstance(exc, CalculationError):
            raise
        raise CalculationError(f"{expression!r} is not an arithmetic expression") from exc
    except (RecursionError, MemoryError) as exc:
        raise CalculationError(f"{expression!r} is nested too deeply") from exc
    return int(result) if isinstance(result, float) and result.is_integer() else result
