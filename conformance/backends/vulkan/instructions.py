"""What the Vulkan path claims: the TOSA instructions its SPIR-V graphs can hold.

``VK_ARM_data_graph_instruction_set_tosa`` runs SPIR-V graphs of the TOSA extended
instruction set ``TOSA.001000.1``: TOSA 1.0, one SPIR-V instruction per operator.  The
model converter installed holds one ``spirv.Tosa.*`` operation per instruction it can
emit; reading them from its executable is the capability query (it changes with the
SDK's version, and no list is kept here).  An operator with no instruction is one the
device does not claim, and its vectors are skipped: the control-flow operators (the
extension EXT-CONTROLFLOW), the variable operators and CUSTOM.

CONST, CONST_SHAPE and IDENTITY need no instruction: the converter folds them into
the graph's constants and edges, so they are claimed wherever the rest is.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from conformance.operator_table import family

__all__ = ["FOLDED", "INSTRUCTION_SET", "instruction_operators", "missing_instruction"]

INSTRUCTION_SET = "TOSA.001000.1"
FOLDED = family(frozenset({"CONST", "CONST_SHAPE", "IDENTITY"}))
_NAME = re.compile(rb"spirv\.Tosa\.([A-Z][A-Za-z0-9]+)")


def _key(name: str) -> str:
    # Conv2D / CONV2D, MatMul / MATMUL, ReduceSum / REDUCE_SUM: compare without case or _
    return name.replace("_", "").upper()


@cache
def instruction_operators(converter: Path) -> frozenset[str]:
    """The instruction names (``Conv2D``, ``ReduceSum``) the converter at ``converter``
    emits, read from its executable."""
    return frozenset(m.decode() for m in _NAME.findall(converter.read_bytes()))


def missing_instruction(operators: set[str], converter: Path) -> str | None:
    """The first of ``operators`` (TOSA names) with no instruction, else None."""
    have = {_key(n) for n in instruction_operators(converter)}
    for op in sorted(operators):
        if op not in FOLDED and _key(op) not in have:
            return op
    return None
