"""A small, safe parser and evaluator for the expressions tosa.xml uses.

Three kinds appear in the file:

* shape expressions (``shape`` attribute): ``-`` (scalar), a shape variable
  (``shape1``, ``shapes1``, ``var_shape``) or a bracket list of dimension
  expressions (``[N,OH,OW,C*M]``, ``[N,H,W/2 + 1]``, ``[rank(shape1)]``);
* rank bounds: integers or ``MAX_RANK - 1``;
* level-limit values: ``dilation_y * KH``, ``scale_y_n/scale_y_d``,
  ``rank(shape1)``, ``tensor_list_shape(input1)``.

The grammar is integers, names, ``+ - * /``, parentheses, one-argument calls of
``rank`` and ``tensor_list_shape``, and subscripts of a name (``padding[i * 2]``, in
the pseudocode's ERROR_IF conditions: :mod:`conformance.conditions`).  Nothing is
passed to ``eval``.  Division is the spec's integer division: operands here are sizes
and scales, which are non-negative, so it truncates toward zero.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Union

FUNCTIONS = ("rank", "tensor_list_shape", "length")


class ExpressionError(ValueError):
    """An expression that does not parse, or cannot be evaluated with the given names."""


@dataclass(frozen=True)
class Num:
    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Name:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Call:
    func: str
    arg: str  # the argument is always a shape or tensor-list name

    def __str__(self) -> str:
        return f"{self.func}({self.arg})"


@dataclass(frozen=True)
class Subscript:
    """``name[index]``: an element of a shape (or of a shape_t value)."""

    name: str
    index: Expr

    def __str__(self) -> str:
        return f"{self.name}[{self.index}]"


@dataclass(frozen=True)
class BinOp:
    op: str
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


Expr = Union[Num, Name, Call, Subscript, BinOp]  # noqa: UP007 - used at runtime in isinstance-free unions

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(\S))")


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # only trailing whitespace is left
            break
        tok = m.group(1) or m.group(2) or m.group(3)
        if m.group(3) and tok not in "+-*/(),[]":
            raise ExpressionError(f"unexpected character {tok!r} in expression {text!r}")
        tokens.append(tok)
        pos = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            want = f"{expected!r}" if expected else "more input"
            raise ExpressionError(f"expected {want} at token {self.pos} of {self.text!r}")
        self.pos += 1
        return tok

    def done(self) -> None:
        if self.peek() is not None:
            raise ExpressionError(f"unexpected {self.peek()!r} in {self.text!r}")

    def expr(self) -> Expr:
        node = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            node = BinOp(op, node, self.term())
        return node

    def term(self) -> Expr:
        node = self.factor()
        while self.peek() in ("*", "/"):
            op = self.take()
            node = BinOp(op, node, self.factor())
        return node

    def factor(self) -> Expr:
        tok = self.take()
        if tok.isdigit():
            return Num(int(tok))
        if tok == "(":
            node = self.expr()
            self.take(")")
            return node
        if tok == "-":
            return BinOp("-", Num(0), self.factor())
        if re.fullmatch(r"[A-Za-z_]\w*", tok):
            if self.peek() == "(":
                if tok not in FUNCTIONS:
                    raise ExpressionError(f"unknown function {tok!r} in {self.text!r}")
                self.take("(")
                arg = self.take()
                if tok == "length" and arg == "tensor_list_shape" and self.peek() == "(":
                    # TOSA 1.1: length(tensor_list_shape(x)) is the list's length, what
                    # tensor_list_shape(x) alone evaluates to.
                    self.take("(")
                    tok, arg = arg, self.take()
                    self.take(")")
                self.take(")")
                return Call(tok, arg)
            if self.peek() == "[":
                self.take("[")
                index = self.expr()
                self.take("]")
                return Subscript(tok, index)
            return Name(tok)
        raise ExpressionError(f"unexpected {tok!r} in {self.text!r}")


def parse_expr(text: str) -> Expr:
    """Parse one scalar expression such as ``dilation_y * KH`` or ``MAX_RANK - 1``."""
    p = _Parser(text)
    node = p.expr()
    p.done()
    return node


@dataclass(frozen=True)
class ShapeExpr:
    """A parsed ``shape`` attribute: scalar, a named shape, or a list of dimensions."""

    text: str
    kind: str  # "scalar" | "named" | "dims" | "pair"
    name: str | None = None  # for "named"
    dims: tuple[Expr, ...] = ()  # for "dims"
    # for "pair" (TOSA 1.1's block-scaled tensor lists): "(value_shape1, scale_shape1)",
    # the named shapes of a list's values and its scales
    members: tuple[str, ...] = ()

    @property
    def rank(self) -> int | None:
        """The rank this expression fixes, or None when it names a shape of any rank."""
        if self.kind == "scalar":
            return 0
        if self.kind == "dims":
            return len(self.dims)
        return None

    def names(self) -> set[str]:
        """Dimension names this expression uses (not counting function arguments)."""
        out: set[str] = set()
        for d in self.dims:
            out |= names_in(d)
        return out

    def evaluate(self, env: Environment) -> tuple[int, ...]:
        if self.kind == "pair":
            raise ExpressionError(f"{self.text} names the shapes of two list members")
        if self.kind == "scalar":
            return ()
        if self.kind == "named":
            assert self.name is not None
            value = env.shapes.get(self.name)
            if value is None:
                raise ExpressionError(f"shape {self.name!r} is not bound")
            return tuple(value)
        return tuple(evaluate(d, env) for d in self.dims)

    def bind(self, shape: Sequence[int], env: Environment) -> list[str]:
        """Match a concrete shape against this expression.

        Unbound single-name dimensions are bound in ``env``; every other dimension is
        evaluated and compared.  Returns the list of mismatches (empty when it fits).
        """
        shape = tuple(int(s) for s in shape)
        if self.kind == "pair":
            return [f"{self.text} names the shapes of two list members, not one shape"]
        if self.kind == "scalar":
            return [] if shape == () else [f"expected a scalar, got shape {list(shape)}"]
        if self.kind == "named":
            assert self.name is not None
            bound = env.shapes.get(self.name)
            if bound is None:
                env.shapes[self.name] = shape
                return []
            if tuple(bound) != shape:
                return [f"{self.name} is {list(bound)}, got {list(shape)}"]
            return []
        if len(shape) != len(self.dims):
            return [f"expected rank {len(self.dims)} for {self.text}, got shape {list(shape)}"]
        problems: list[str] = []
        deferred: list[tuple[Expr, int]] = []
        for d, size in zip(self.dims, shape, strict=True):
            if isinstance(d, Name) and d.name not in env.values:
                env.values[d.name] = size
            else:
                deferred.append((d, size))
        for d, size in deferred:
            try:
                want = evaluate(d, env)
            except ExpressionError:
                continue  # depends on a name bound by another argument; checked there
            if want != size:
                problems.append(f"dimension {d} of {self.text} should be {want}, got {size}")
        return problems

    def __str__(self) -> str:
        return self.text


def parse_shape(text: str) -> ShapeExpr:
    """Parse a ``shape`` attribute of tosa.xml."""
    t = text.strip()
    if t == "-":
        return ShapeExpr(t, "scalar")
    if re.fullmatch(r"[A-Za-z_]\w*", t):
        return ShapeExpr(t, "named", name=t)
    pair = re.fullmatch(r"\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*\)", t)
    if pair:
        return ShapeExpr(t, "pair", members=(pair.group(1), pair.group(2)))
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1]
        parts = [p for p in inner.split(",")]
        if any(not p.strip() for p in parts):
            raise ExpressionError(f"empty dimension in shape {text!r}")
        return ShapeExpr(t, "dims", dims=tuple(parse_expr(p) for p in parts))
    raise ExpressionError(f"not a shape expression: {text!r}")


class Environment:
    """Names an expression may refer to: integers (dimensions, attribute elements,
    level maxima), shapes (for ``rank``) and tensor lists (for ``tensor_list_shape``)."""

    def __init__(
        self,
        values: Mapping[str, int] | None = None,
        shapes: Mapping[str, Sequence[int]] | None = None,
        lists: Mapping[str, Sequence[Sequence[int]]] | None = None,
    ) -> None:
        self.values: dict[str, int] = dict(values or {})
        self.shapes: dict[str, tuple[int, ...]] = {k: tuple(v) for k, v in (shapes or {}).items()}
        self.lists: dict[str, list[tuple[int, ...]]] = {
            k: [tuple(s) for s in v] for k, v in (lists or {}).items()
        }

    def copy(self) -> Environment:
        return Environment(self.values, self.shapes, self.lists)


def names_in(node: Expr) -> set[str]:
    if isinstance(node, Name):
        return {node.name}
    if isinstance(node, BinOp):
        return names_in(node.left) | names_in(node.right)
    if isinstance(node, Subscript):
        return {node.name} | names_in(node.index)
    return set()


def evaluate(node: Expr, env: Environment) -> int:
    """Evaluate to an integer.  ``tensor_list_shape(x)`` evaluates to the list's length,
    which is what the MAX_TENSOR_LIST_SIZE level limit bounds."""
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Name):
        if node.name in env.values:
            return env.values[node.name]
        raise ExpressionError(f"name {node.name!r} is not bound")
    if isinstance(node, Call):
        if node.func in ("rank", "length"):  # length(x): the elements of shape value x
            if node.arg not in env.shapes:
                raise ExpressionError(f"shape {node.arg!r} is not bound")
            return len(env.shapes[node.arg])
        if node.arg not in env.lists:
            raise ExpressionError(f"tensor list {node.arg!r} is not bound")
        return len(env.lists[node.arg])
    if isinstance(node, Subscript):
        shape = env.shapes.get(node.name)
        if shape is None:
            raise ExpressionError(f"shape {node.name!r} is not bound")
        k = evaluate(node.index, env)
        if not 0 <= k < len(shape):
            raise ExpressionError(f"index {k} is outside {node.name} of length {len(shape)}")
        return shape[k]
    a = evaluate(node.left, env)
    b = evaluate(node.right, env)
    if node.op == "+":
        return a + b
    if node.op == "-":
        return a - b
    if node.op == "*":
        return a * b
    if b == 0:
        raise ExpressionError(f"division by zero in {node}")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q
