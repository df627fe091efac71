"""Small whole-number expressions in G and N, for stops, indices, options and conditions.

'G-1', '2*G', 'N % G == 0', 'G >= 4 and N % G'. Only + − * // % and comparisons, and/or/not,
min(), max() and log2up() (⌈log₂x⌉, the levels of a binary tree on x GPUs) over whole numbers:
nothing a lesson file writes can run code or grow huge.
"""

from __future__ import annotations

import ast
import operator

from ..core.errors import RingsimError
from ..core.textout import clip

MAX_TEXT = 120
MAX_VALUE = 10 ** 30  # far past any count ringsim accepts; keeps products from growing

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
def _log2up(values: list[int]) -> int:
    """⌈log₂x⌉ of one whole number x ≥ 1: the levels a binary tree on x GPUs climbs."""
    if len(values) != 1 or values[0] < 1:
        raise RingsimError(f"log2up() takes one whole number from 1, got {len(values)} "
                           f"({', '.join(map(str, values[:3]))})")
    return (values[0] - 1).bit_length()


_CALLS = {"min": min, "max": max, "log2up": _log2up}
_CALLED = "min(), max() and log2up()"


def compile_expression(text: str) -> ast.Expression:
    """Parse and check an expression; RingsimError says what is not allowed."""
    source = text.strip().replace("−", "-").replace("·", "*").replace("×", "*")
    if not source:
        raise RingsimError("an empty expression")
    if len(source) > MAX_TEXT:
        raise RingsimError(f"expression {clip(source)} is longer than {MAX_TEXT} characters")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise RingsimError(f"cannot read expression {clip(source)!s}: use whole numbers, G, N, "
                           f"+ - * // %, comparisons, and/or/not, {_CALLED}") from None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare,
                                 ast.Name, ast.Constant, ast.Call, ast.Load, ast.USub, ast.UAdd,
                                 ast.Not, ast.And, ast.Or, *_BINARY, *_COMPARE)):
            raise RingsimError(f"expression {clip(source)}: {type(node).__name__} is not allowed "
                               "(whole numbers, G, N, + - * // %, comparisons, and/or/not, min, max, "
                               "log2up)")
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool)
                                               or not isinstance(node.value, int)):
            raise RingsimError(f"expression {clip(source)}: only whole numbers, got {node.value!r}")
        if isinstance(node, ast.Name) and node.id not in ("G", "N") and node.id not in _CALLS:
            raise RingsimError(f"expression {clip(source)}: unknown name {node.id!r} (use G or N)")
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name)
                                           or node.func.id not in _CALLS or node.keywords):
            raise RingsimError(f"expression {clip(source)}: only {_CALLED} may be called")
    return tree


def evaluate(text: str, gpus: int, elements: int) -> int:
    """The expression's value for G and N (comparisons give 1 or 0)."""
    return int(_value(compile_expression(text).body, {"G": gpus, "N": elements}, text))


def _value(node: ast.AST, names: dict, text: str) -> int:
    if isinstance(node, ast.Constant):
        result = node.value
    elif isinstance(node, ast.Name):
        if node.id not in names:
            raise RingsimError(f"expression {clip(text)}: {node.id} is a function: write {node.id}(a, b)")
        result = names[node.id]
    elif isinstance(node, ast.UnaryOp):
        inner = _value(node.operand, names, text)
        if isinstance(node.op, ast.USub):
            result = -inner
        else:
            result = (not inner) if isinstance(node.op, ast.Not) else inner
    elif isinstance(node, ast.BinOp):
        left, right = _value(node.left, names, text), _value(node.right, names, text)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
            raise RingsimError(f"expression {clip(text)} divides by zero")
        result = _BINARY[type(node.op)](left, right)
    elif isinstance(node, ast.BoolOp):
        values = [_value(v, names, text) for v in node.values]
        result = all(values) if isinstance(node.op, ast.And) else any(values)
    elif isinstance(node, ast.Compare):
        left, result = _value(node.left, names, text), True
        for op, right_node in zip(node.ops, node.comparators):
            right = _value(right_node, names, text)
            result = result and _COMPARE[type(op)](left, right)
            left = right
    else:  # ast.Call of min, max or log2up
        args = [_value(a, names, text) for a in node.args]
        if not args:
            raise RingsimError(f"expression {clip(text)}: {node.func.id}() needs numbers")
        result = _CALLS[node.func.id](args)
    result = int(result)
    if abs(result) > MAX_VALUE:
        raise RingsimError(f"expression {clip(text)} grows past {MAX_VALUE:.0e}")
    return result
