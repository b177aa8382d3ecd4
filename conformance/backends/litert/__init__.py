"""The ``litert`` backend: each vector as a one-operator .tflite model, run by the
LiteRT interpreter on CPU (the ``litert`` extra, ai-edge-litert).

LiteRT's CPU kernels are in practice the reference implementation of NNAPI's
operation semantics, so this backend runs what the built-in ``nnapi`` capability
manifest claims, and names it (``LiteRTBackend.capabilities``): run it with
``--capabilities nnapi``.  docs/litert.md triages every vector it fails.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np

from conformance import dtypes
from conformance.backends.base import BackendError, BackendResult
from conformance.backends.revision.native import is_native
from conformance.backends.revision.parameters import parameters_as_attributes
from conformance.block_tensor import arrays
from conformance.revisions import DRAFT_2024
from conformance.spec import load_revision, load_spec
from vectors.pack_model import LoadedVector

# acc_type_t enumeration names whose element type is spelt differently
ACC_TYPES = {"INT32": "i32_t", "INT48": "i48_t"}
INSTALL_HINT = "pip install 'tosa-conformance[litert]'"


def in_draft_layout(vector: LoadedVector) -> LoadedVector:
    """The vector with its graph's parameters as the 2024 draft lays them out (the
    translators' vocabulary): a TOSA 1.0 zero point is an attribute again."""
    if is_native(vector.graph):
        draft = load_revision(DRAFT_2024.name)
        graph = parameters_as_attributes(vector.graph, load_spec(), draft)
        return replace(vector, graph=graph)
    return vector


def not_translated_1_1(vector: LoadedVector) -> str | None:
    """Why a vector holding a type of TOSA 1.1 alone (i64, the OCP-MX types) is skipped,
    must-fail ones included: the translators speak the 2024 draft's types (a LiteRT
    model of them would be our invention, not NNAPI's semantics); else None.  Operators
    of 1.1 alone have no translator, which unsupported() says."""
    for block in vector.graph.blocks():
        for t in block.tensors.values():
            if t.dtype.name in dtypes.TOSA_1_1_TYPES:
                return (
                    f"no LiteRT translation of {t.dtype} tensors ({t.name!r}), a type of "
                    "TOSA 1.1 that the translators (the 2024 draft's types) do not have"
                )
    return None


def unavailable() -> str | None:
    """Why the backend cannot be made on this machine, else None (nothing is imported)."""
    try:
        found = importlib.util.find_spec("ai_edge_litert") is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"ai-edge-litert is not installed; {INSTALL_HINT}"


class LiteRTBackend:
    name = "litert"
    capabilities = "nnapi"  # the manifest its translators follow (docs/litert.md)

    def __init__(self, argument: str | None = None) -> None:
        if argument:
            raise BackendError(f"litert takes no argument, not {argument!r}")
        reason = unavailable()
        if reason:
            raise BackendError(f"the litert backend is unavailable: {reason}")

    def unsupported(self, vector: LoadedVector) -> str | None:
        from conformance.backends.litert.model import TRANSLATORS, Unsupported, build

        reason = not_translated_1_1(vector)
        if reason:
            return reason
        vector = in_draft_layout(vector)
        ops = [op.op for op in vector.graph.main.operators]
        if len(ops) != 1 or ops[0] not in TRANSLATORS:
            return f"no LiteRT translation of {' + '.join(ops)}"
        if vector.graph.main.operators[0].attributes.get("nan_mode") == "IGNORE":
            return "TFLite's kernels have no NaN-ignoring mode (nan_mode IGNORE)"
        if vector.kind != "valid":
            return None  # a must-fail graph is judged by run(): rejected or not
        try:
            build(vector.graph.main, arrays(vector.inputs))
        except Unsupported as exc:
            return f"not expressible in TFLite: {exc}"
        return None

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        from ai_edge_litert.interpreter import Interpreter

        from conformance.backends.litert.model import Unsupported, build

        vector = in_draft_layout(vector)
        block = vector.graph.main
        wrong = self._validate(vector)
        if wrong is not None:  # what NNAPI's model validation refuses
            return BackendResult.reject(wrong)
        try:
            model, feeds = build(block, arrays(vector.inputs))
        except (Unsupported, KeyError, ValueError, IndexError, OverflowError) as exc:
            return BackendResult.reject(f"not expressible in TFLite: {exc}")
        (workdir / "model.tflite").write_bytes(model.content)  # kept for a reproducer
        try:
            interpreter = Interpreter(model_content=model.content, num_threads=1)
            interpreter.allocate_tensors()
            shapes = {d["index"]: tuple(d["shape"]) for d in interpreter.get_output_details()}
            for name, index in model.outputs.items():
                if shapes[index] != tuple(block.tensors[name].shape):
                    return BackendResult.reject(
                        f"LiteRT computes {name} of shape {list(shapes[index])}, the graph "
                        f"declares {list(block.tensors[name].shape)}"
                    )
            for name, value in feeds.items():
                interpreter.set_tensor(model.inputs[name], value)
            interpreter.invoke()
        except (RuntimeError, ValueError) as exc:  # LiteRT refused the model
            return BackendResult.reject(f"LiteRT: {str(exc).strip().splitlines()[0]}")
        outputs = {}
        for name, index in model.outputs.items():
            value = interpreter.get_tensor(index)
            dt = block.tensors[name].dtype
            # fp16 was computed by the fp32 kernels: rounded once to fp16 here
            outputs[name] = value.astype(np.float16) if dt.name == "fp16" else value
        return BackendResult(outputs)

    def _validate(self, vector: LoadedVector) -> str | None:
        """The graph's element types as a mode of its operator (NNAPI validates each
        operation's operand types before it runs anything); None when they are one."""
        from conformance.builder import map_operands

        spec = load_revision(DRAFT_2024.name)  # the layout the translators read
        op = vector.graph.main.operators[0]
        op_spec = spec.operator(op.op)
        tensors = vector.graph.main.tensors
        try:
            named = map_operands(op_spec, op)
        except Exception as exc:
            return f"operands do not fit {op.op}: {exc}"
        found: dict[str, str] = {}
        for arg_name, names in {**named.inputs, **named.outputs}.items():
            et = op_spec.argument(arg_name).element_type
            for n in names:
                if n in tensors and tensors[n].dtype.kind != "shape":
                    found.setdefault(et, f"{tensors[n].dtype.name}_t")
                    if found[et] != f"{tensors[n].dtype.name}_t":
                        return f"{op.op}: {et} is both {found[et]} and {tensors[n].dtype.name}_t"
        acc = op.attributes.get("acc_type")
        if acc is not None and "acc_t" in op_spec.types:
            found["acc_t"] = ACC_TYPES.get(str(acc), f"{str(acc).lower()}_t")
        for m in op_spec.modes:
            if all(m.bindings.get(v, v) == t for v, t in found.items()):
                return None
        return f"{op.op}: no mode takes {', '.join(f'{v}={t}' for v, t in sorted(found.items()))}"
