"""A parser of Android NNAPI's ``OperationType.aidl``: per operation its code, the HAL
version it appeared in, its supported operand types (each with the HAL version that
added it and the roles it may take) and its supported tensor ranks.

Only the doc-comment phrases the file uses throughout are read ("Supported tensor
{@link OperandType}", "Available since HAL version", "Supported tensor rank"); a
changed file shows up in tests/capabilities/test_aidl.py, which counts them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

AIDL_PATH = Path(__file__).parent / "data" / "OperationType.aidl"

# A doc comment, any line comments (ARGMAX has two), then ``NAME = CODE,``.
_ENTRY = re.compile(
    r"/\*\*(?P<doc>(?:(?!\*/).)*?)\*/\s*(?://[^\n]*\n\s*)*"
    r"(?P<name>[A-Z][A-Z0-9_]*) = (?P<code>\d+),",
    re.S,
)
_TYPE = re.compile(r"OperandType::([A-Z0-9_]+)")
_SINCE = re.compile(r"since (?:HAL version (\d+\.\d+)|NNAPI feature level (\d+))")
_AVAILABLE = re.compile(r"^Available since (?:HAL version (\d+\.\d+)|NNAPI feature level (\d+))")
_SINCE_HEADING = re.compile(r"^Since (?:HAL version (\d+\.\d+)|NNAPI feature level (\d+)),")
_ROLES = ("input", "filter", "output", "bias")
# The HAL version of an operand type the file gives no version for.
FIRST_HAL = "1.0"


@dataclass(frozen=True)
class OperandSupport:
    type: str  # "TENSOR_FLOAT32"
    since: str  # "1.0", "1.2", "FL6"
    roles: frozenset[str]  # of input/filter/output/bias; all four when the file names none


@dataclass(frozen=True)
class Operation:
    name: str
    code: int
    since: str  # the earliest HAL version of its operand types
    operands: tuple[OperandSupport, ...]
    rank_text: str | None  # what follows "Supported tensor rank:", None when absent
    rank_min: int | None
    rank_max: int | None  # None: no upper bound stated

    def supports(self, operand_type: str, role: str) -> OperandSupport | None:
        for o in self.operands:
            if o.type == operand_type and role in o.roles:
                return o
        return None


def _version(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) else f"FL{m.group(2)}"


def _lines(doc: str) -> list[str]:
    return [re.sub(r"^\s*\*\s?", "", line).rstrip() for line in doc.splitlines()]


def _ranks(text: str | None) -> tuple[int | None, int | None]:
    """``up to 4`` -> (0, 4); ``4, with "NHWC"...`` -> (4, 4); ``from 1`` -> (1, None);
    ``at least 2 and up to 4`` -> (2, 4)."""
    if text is None:
        return None, None
    if m := re.match(r"at least (\d+) and up to (\d+)", text):
        return int(m.group(1)), int(m.group(2))
    if m := re.match(r"up to (\d+)", text):
        return 0, int(m.group(1))
    if m := re.match(r"from (\d+)", text):
        return int(m.group(1)), None
    if m := re.match(r"(\d+)\b", text):
        return int(m.group(1)), int(m.group(1))
    raise ValueError(f"unrecognised tensor rank statement {text!r}")


def _operands(lines: list[str], op_since: str) -> tuple[OperandSupport, ...]:
    """The operand types of the "Supported ... {@link OperandType}" blocks: a type's
    version is its line's "(since ...)", else the "Available since" heading above it,
    else the operation's."""
    out: dict[tuple[str, frozenset[str]], OperandSupport] = {}
    inside = False
    same_only = False
    heading = op_since
    for line in lines:
        text = line.strip().lstrip("* ").strip()
        if re.match(r"Supported (?:\w+ )*(?:tensor )?\{@link OperandType\}", text):
            inside, heading = True, op_since
            continue
        if not inside:
            continue
        if text.startswith(("Supported tensor rank", "Inputs", "Outputs")):
            inside = False
            continue
        if m := _AVAILABLE.match(text):
            heading = _version(m)
            continue
        if m := _SINCE_HEADING.match(text):
            # CAST: "Since HAL version 1.3, casting tensors of the following
            # {@link OperandType} to the same {@link OperandType} is supported:"
            heading = _version(m)
            continue
        if "to the same {@link OperandType}" in text:  # the heading's second line
            same_only = True
            continue
        if (m := re.search(r"\(since (?:HAL version|NNAPI feature level)", text)) is None and (
            m2 := _SINCE.search(text)
        ):
            heading = _version(m2)  # a heading such as "Quantized signed (since HAL 1.3):"
        found = _TYPE.findall(text)
        if not found:
            continue
        since_m = _SINCE.search(text)
        since = _version(since_m) if since_m else heading
        named = frozenset(r for r in _ROLES if re.search(rf"\b{r}\b", text.split("for", 1)[-1]))
        roles = named if " for " in f" {text} " and named else frozenset(_ROLES)
        if same_only:  # only an identity cast: no role of a cast between two types
            roles = frozenset({"same type"})
        for t in found:
            out.setdefault((t, roles), OperandSupport(t, since, roles))
    return tuple(out.values())


def _first(operands: tuple[OperandSupport, ...]) -> str:
    """The file states no version per operation: the earliest of its operand types'."""
    order = sorted((o.since for o in operands), key=lambda v: (v.startswith("FL"), v))
    return order[0] if order else FIRST_HAL


def parse_aidl(text: str) -> list[Operation]:
    """Every operation of the ``OperationType`` enum, in the file's order."""
    ops: list[Operation] = []
    for m in _ENTRY.finditer(text):
        lines = _lines(m.group("doc"))
        rank_text = None
        for line in lines:
            if r := re.match(r"\s*Supported tensor rank:\s*(.*)", line):
                rank_text = r.group(1).strip()
                break
        lo, hi = _ranks(rank_text)
        operands = _operands(lines, FIRST_HAL)
        ops.append(
            Operation(
                m.group("name"), int(m.group("code")), _first(operands), operands, rank_text, lo, hi
            )
        )
    return ops


def load_aidl(path: Path = AIDL_PATH) -> dict[str, Operation]:
    return {op.name: op for op in parse_aidl(path.read_text(encoding="utf-8"))}
