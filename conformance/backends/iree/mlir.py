"""From a translated flatbuffer to the TOSA MLIR that IREE compiles.

``tosa-opt`` (tosa-tools) reads the flatbuffer and prints the graph as MLIR in the
*generic* form: the two tools' TOSA dialects differ in their pretty syntax, and IREE
fails to parse about half of the pretty-printed graphs; the generic form names every
operation, property and type explicitly, which both read alike.  tosa-opt runs with
``--verify-each=false``: the verifier that judges a graph must be IREE's, not that of
tosa-tools' own MLIR.

The graph becomes a private function ``@gK`` (K: its place in the batch), called by a
public entry ``@vK`` that this module writes: it takes the inputs the runtime can pass,
makes the i4 inputs constants held behind ``util.optimization_barrier`` (so that no
folder or constant evaluation computes the graph at compile time: the kernels run), and
widens i4 results before it returns them.  Many vectors make one module, each
with its own pair of functions.
"""

from __future__ import annotations

import bisect
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from conformance.backends.iree.elements import WIDENED, barrier_held, dense_literal
from conformance.backends.iree.stages import DESERIALIZE, Rejection
from conformance.dtypes import DType

DESERIALIZE_TIMEOUT = 300.0  # seconds; the runner's per-vector timeout usually fires first


def find_tosa_opt() -> str | None:
    """The native ``tosa-opt`` of the installed tosa-tools wheel (its console script is a
    Python shim costing ~0.3 s a call), else one on PATH."""
    try:
        dist = metadata.distribution("tosa-tools")
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        native = Path(str(dist.locate_file(Path("bin") / "tosa-opt")))
        if native.is_file() and os.access(native, os.X_OK):
            return str(native)
    return shutil.which("tosa-opt")


def deserialize(tosa_opt: str, flatbuffer: bytes, workdir: Path) -> str | Rejection:
    """The graph as generic MLIR text, or tosa-opt's refusal (stage ``deserialize``)."""
    path = workdir / "graph.tosa"
    path.write_bytes(flatbuffer)
    cmd = [
        tosa_opt,
        f"--tosa-deserialize=tosa-flatbuffer-filename={path}",
        "--mlir-print-op-generic",
        "--verify-each=false",
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=DESERIALIZE_TIMEOUT
    )
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        why = lines[0] if lines else f"tosa-opt exited with status {proc.returncode}"
        if proc.returncode < 0:
            why = f"tosa-opt was killed by signal {-proc.returncode}: {why}"
        return Rejection(DESERIALIZE, why.replace(str(path), "graph.tosa"), proc.stderr)
    # tosa-opt prints its notes on a file's versions (a 1.0 file written by another
    # serializer than Arm's) on stdout, after the module: they are no MLIR.
    return "".join(ln for ln in proc.stdout.splitlines(True) if not ln.startswith("WARNING: "))


# -- the deserialized module ---------------------------------------------------------


@dataclass
class Graph:
    """One deserialized graph: its ``main`` function, renamed, and its signature."""

    body: str  # the func.func op, generic form
    inputs: list[str]  # MLIR argument types, in order
    results: list[str]  # MLIR result types, in order
    others: str  # the module's other top-level operations (tosa.variable)

    @property
    def alone(self) -> bool:
        """Whether the graph needs a module of its own (its other top-level symbols
        could clash with another graph's)."""
        return bool(self.others)


def split_module(text: str) -> Graph:
    """Take tosa-opt's module apart.  ValueError if it is not what tosa-opt prints."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) < 2 or not lines[0].startswith('"builtin.module"() ({'):
        raise ValueError("tosa-opt printed no generic builtin.module")
    body = lines[1:-1]
    tops = [k for k, ln in enumerate(body) if ln.startswith('  "')]
    funcs = [k for k in tops if body[k].startswith('  "func.func"()')]
    if len(funcs) != 1:
        raise ValueError(f"expected one function in the module, found {len(funcs)}")
    start = funcs[0]
    end = next((k for k in tops if k > start), len(body))
    inputs, results = function_type(body[start])
    others = body[:start] + body[end:]
    return Graph("\n".join(body[start:end]), inputs, results, "\n".join(others))


def function_type(head: str) -> tuple[list[str], list[str]]:
    """Argument and result types from a generic ``func.func`` line."""
    key = "function_type = "
    at = head.find(key)
    if at < 0:
        raise ValueError("func.func without a function_type")
    rest = head[at + len(key) :]
    args, rest = _balanced(rest)
    if not rest.startswith(" -> "):
        raise ValueError(f"malformed function_type: {head[at:][:200]}")
    rest = rest[4:]
    if rest.startswith("("):
        res, _ = _balanced(rest)
    else:
        res = _until_top_level(rest, (",", "}"))
    return _split_types(args), _split_types(res)


_OPEN, _CLOSE = "(<[{", ")>]}"


def _balanced(s: str) -> tuple[str, str]:
    """``s`` starts with "(": the text inside the matching ")" and what follows it."""
    depth = 0
    for k, ch in enumerate(s):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE and not (ch == ">" and s[k - 1] == "-"):
            depth -= 1
            if depth == 0:
                return s[1:k], s[k + 1 :]
    raise ValueError(f"unbalanced type list: {s[:200]}")


def _until_top_level(s: str, stops: tuple[str, ...]) -> str:
    depth = 0
    for k, ch in enumerate(s):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE and depth:
            depth -= 1
        elif depth == 0 and ch in stops:
            return s[:k]
    return s


def _split_types(s: str) -> list[str]:
    out, depth, start = [], 0, 0
    for k, ch in enumerate(s):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(s[start:k].strip())
            start = k + 1
    tail = s[start:].strip()
    if tail:
        out.append(tail)
    return out


# -- the program IREE compiles ---------------------------------------------------------


@dataclass
class Embedded:
    """A graph input the program holds as a constant (i4 values)."""

    position: int  # the graph function's argument number
    values: np.ndarray
    dtype: DType


def entry_name(k: int) -> str:
    return f"v{k}"


def program(k: int, graph: Graph, embedded: Sequence[Embedded]) -> str:
    """The functions of batch member ``k``: the graph as private ``@gK`` and the public
    entry ``@vK`` (arguments: the graph's other inputs, in order)."""
    inner, outer = f"g{k}", entry_name(k)
    head, _, rest = graph.body.partition("\n")
    if 'sym_name = "main"' not in head:
        raise ValueError("the graph function is not named main")
    head = head.replace('sym_name = "main"', f'sym_name = "{inner}", sym_visibility = "private"')
    by_pos = {e.position: e for e in embedded}
    params, operands, lines = [], [], []
    for pos, ty in enumerate(graph.inputs):
        if pos not in by_pos:
            params.append(f"%a{pos}: {ty}")
            operands.append(f"%a{pos}")
            continue
        e = by_pos[pos]
        lines.append(
            f'    %c{pos} = "arith.constant"() <{{value = {dense_literal(e.values, e.dtype)} : '
            f"{ty}}}> : () -> {ty}"
        )
        if barrier_held(e.dtype):
            lines.append(f'    %e{pos} = "util.optimization_barrier"(%c{pos}) : ({ty}) -> {ty}')
            operands.append(f"%e{pos}")
        else:
            operands.append(f"%c{pos}")
    n = len(graph.results)
    call = f"%r:{n} = " if n > 1 else ("%r = " if n == 1 else "")
    sig = f"({', '.join(graph.inputs)}) -> ({', '.join(graph.results)})"
    lines.append(f'    {call}"func.call"({", ".join(operands)}) <{{callee = @{inner}}}> : {sig}')
    returned, types = [], []
    for j, ty in enumerate(graph.results):
        ref = f"%r#{j}" if n > 1 else "%r"
        wide = _widened(ty)
        if wide is None:
            returned.append(ref)
            types.append(ty)
        else:
            lines.append(f'    %w{j} = "arith.extsi"({ref}) : ({ty}) -> {wide}')
            returned.append(f"%w{j}")
            types.append(wide)
    lines.append(f'    "func.return"({", ".join(returned)}) : ({", ".join(types)}) -> ()')
    entry = [f"  func.func @{outer}({', '.join(params)}) -> ({', '.join(types)}) {{", *lines, "  }"]
    return "\n".join([*([graph.others] if graph.others else []), head, rest, *entry])


def _widened(ty: str) -> str | None:
    for narrow, wide in WIDENED.items():
        if ty.endswith(f"x{narrow}>") or ty == f"tensor<{narrow}>":
            return ty[: -len(narrow) - 1] + f"{wide}>"
    return None


def module(programs: Sequence[str]) -> str:
    """One module of several vectors' functions."""
    return "module {\n" + "\n".join(programs) + "\n}\n"


_LOCATION = re.compile(r"source\.mlir:(\d+):\d+")


def owners(programs: Sequence[str], diagnostics: Sequence[str]) -> set[int]:
    """Which programs of ``module(programs)`` the errors among ``diagnostics`` point at:
    the first location of each error (the failing operation's, before any "called
    from") read as a line of the module."""
    starts, line = [], 2  # line 1 is "module {"
    for text in programs:
        starts.append(line)
        line += text.count("\n") + 1
    found: set[int] = set()
    for diagnostic in diagnostics:
        if not diagnostic.startswith("error"):
            continue
        match = _LOCATION.search(diagnostic)
        if match:
            at = int(match.group(1))
            k = bisect.bisect_right(starts, at) - 1
            if 0 <= k < len(programs) and at < line:
                found.add(k)
    return found
