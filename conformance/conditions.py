"""The relational conditions of the pseudocode's ERROR_IF and REQUIRE clauses.

A clause such as ``axis < 0 || axis >= rank(shape1)`` or ``pad_right >= kernel_x ||
pad_left >= kernel_x`` is a tree of *atoms* ``A op B`` (op one of ``< <= > >= ==
!=``) joined by ``||`` and ``&&`` (with parentheses); each side is an expression of
:mod:`conformance.expressions` (integers, names, ``+ - * /``, ``rank()`` /
``length()`` calls, subscripts).  What does not fit that grammar raises
:class:`~conformance.expressions.ExpressionError`: negation (``!scale32``), template
calls (``is_same<in_t,i8_t>()``), other calls (``tensor_size(shape)``,
``idiv_check(...)``, ``max(1, ...)``), shifts (``1 << 11``), ``%``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from conformance.expressions import (
    BinOp,
    Call,
    Expr,
    ExpressionError,
    Num,
    Subscript,
    names_in,
    parse_expr,
)

ORDERINGS = ("<", "<=", ">", ">=")
RELATIONS = (*ORDERINGS, "==", "!=")
JOINS = ("||", "&&")
BOOLEANS = frozenset({"true", "false"})


@dataclass(frozen=True)
class Atom:
    left: Expr
    op: str  # one of RELATIONS
    right: Expr

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"

    def names(self) -> set[str]:
        return names_in(self.left) | names_in(self.right)

    @property
    def is_integer(self) -> bool:
        """Whether it compares integers: an ordering, or an equality with an integer
        side (a number, a call, arithmetic, a subscript), never of types (``in_t !=
        i8_t``) or booleans (``input_unsigned == true``)."""
        if any(_is_type(n) or n in BOOLEANS for n in self.names()):
            return False
        return self.op in ORDERINGS or _integer_side(self.left) or _integer_side(self.right)


@dataclass(frozen=True)
class Junction:
    op: str  # "||" or "&&"
    parts: tuple[Condition, ...]

    def __str__(self) -> str:
        return f" {self.op} ".join(
            f"({p})" if isinstance(p, Junction) else str(p) for p in self.parts
        )


Condition = Union[Atom, Junction]  # noqa: UP007 - a runtime alias, as expressions.Expr


def _is_type(name: str) -> bool:
    return name.endswith("_t")


def _integer_side(node: Expr) -> bool:
    return isinstance(node, Num | Call | BinOp | Subscript)


def atoms(cond: Condition) -> list[Atom]:
    """The atoms of ``cond``, left to right."""
    if isinstance(cond, Atom):
        return [cond]
    return [a for p in cond.parts for a in atoms(p)]


def parse_condition(text: str) -> Condition:
    """Parse a clause's condition; ExpressionError when it is not of this grammar."""
    return _parse(text.strip(), text)


def _parse(text: str, whole: str) -> Condition:
    if not text:
        raise ExpressionError(f"empty condition in {whole!r}")
    inner = _unwrapped(text)
    if inner is not None:
        return _parse(inner, whole)
    for join in JOINS:  # || binds looser than &&
        parts = _split(text, join)
        if len(parts) > 1:
            return Junction(join, tuple(_parse(p.strip(), whole) for p in parts))
    return _atom(text, whole)


def _depths(text: str) -> list[int]:
    """The parenthesis / bracket depth before each character."""
    out, depth = [], 0
    for ch in text:
        out.append(depth)
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
    return out


def _unwrapped(text: str) -> str | None:
    """``text`` without a pair of parentheses that encloses all of it."""
    if not (text.startswith("(") and text.endswith(")")):
        return None
    depths = _depths(text)
    if any(d == 0 for d in depths[1:]):  # "(a) + (b)": the first closes early
        return None
    return text[1:-1].strip()


def _split(text: str, sep: str) -> list[str]:
    depths = _depths(text)
    parts, start, i = [], 0, 0
    while i < len(text):
        if depths[i] == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
        else:
            i += 1
    return [*parts, text[start:]]


def _atom(text: str, whole: str) -> Atom:
    depths = _depths(text)
    found: list[tuple[int, str]] = []
    i = 0
    while i < len(text):
        two = text[i : i + 2]
        if depths[i] == 0 and two in ("<<", ">>"):
            raise ExpressionError(f"shifts are not supported in {whole!r}")
        if depths[i] == 0 and two in ("<=", ">=", "==", "!="):
            found.append((i, two))
            i += 2
            continue
        if text[i] == "!":
            raise ExpressionError(f"negation is not supported in {whole!r}")
        if depths[i] == 0 and text[i] in "<>":
            found.append((i, text[i]))
        i += 1
    if len(found) != 1:
        raise ExpressionError(f"expected one relation in {text!r} of {whole!r}")
    at, op = found[0]
    return Atom(parse_expr(text[:at]), op, parse_expr(text[at + len(op) :]))


def relational_atoms(text: str) -> list[Atom]:
    """The integer atoms of a clause's condition; empty when it does not parse."""
    try:
        cond = parse_condition(text)
    except ExpressionError:
        return []
    return [a for a in atoms(cond) if a.is_integer]
