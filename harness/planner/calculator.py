"""A safe arithmetic evaluator for the CalculatorAgent: numbers and operators, no ``eval``."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

__all__ = ["CalculationError", "calculate"]

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_EXPONENT = 100
MAX_LENGTH = 200


class CalculationError(ValueError):
    """The expression is not plain arithmetic, or cannot be computed."""


def _eval(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalculationError(f"the exponent {right} is too large (at most {MAX_EXPONENT})")
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
            raise CalculationError("division by zero")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    raise CalculationError(f"only numbers and + - * / // % ** are allowed, not {ast.unparse(node)!r}")


def calculate(expression: str) -> int | float:
    """The value of an arithmetic ``expression`` such as ``"15 * 3"``."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculationError(f"an expression must be a non-empty string, got {expression!r}")
    if len(expression) > MAX_LENGTH:
        raise CalculationError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise CalculationError(f"{expression!r} is not an arithmetic expression") from exc
    result = _eval(tree.body)
    return int(result) if isinstance(result, float) and result.is_integer() else result
