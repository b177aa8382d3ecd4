"""A :class:`~vectors.pack_model.Vector` as the files of its folder, in memory.

Nothing here touches the disk: :func:`vector_files` returns file name -> bytes, so the
caller can hash, re-read and check them before anything is written, and so the same
bytes come out whatever the machine or the order vectors are written in.
"""

from __future__ import annotations

import re
from typing import Any

from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from conformance.dtypes import DType
from conformance.graph import Block
from vectors import npy, pack_json
from vectors.flatbuffer import FlatbufferError, format_for, serialize
from vectors.pack_errors import PackError
from vectors.pack_model import FORMAT_VERSION, KINDS, Check, Vector

DESC = "desc.json"
GRAPH = "graph.tosa"

# Same pattern as the schemas' vector name: a folder name that is safe on every file
# system, not "pack.json", and that cannot climb out of the pack ("..", "/").
NAME_RE = re.compile(
    r"(?![Pp][Aa][Cc][Kk]\.[Jj][Ss][Oo][Nn]$)[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
)
MAX_NAME = 160


def input_file(k: int) -> str:
    return f"input-{k}.npy"


def expected_file(k: int) -> str:
    return f"expected-{k}.npy"


def bound_file(k: int) -> str:
    return f"bound-{k}.npy"


def result_file(k: int) -> str:
    return f"result-{k}.npy"


def scale_file(file: str) -> str:
    """The scale file of a block-scaled tensor whose values are in ``file``: the same
    name with ``_scale`` (Arm's convention: ``input-0.npy``, ``input-0_scale.npy``)."""
    stem, dot, ext = file.rpartition(".")
    return f"{stem}_scale{dot}{ext}" if dot else f"{file}_scale"


def rule_text(rule: dict[str, Any]) -> str:
    """``expected_failure_desc``: the rule in the form ``Rule.__str__`` prints it."""
    text = f"{rule['operator']}: {rule['kind']}({rule['clause']})"
    return f"{text}: {rule['detail']}" if rule.get("detail") else text


def check_name(name: str) -> None:
    if len(name) > MAX_NAME or not NAME_RE.fullmatch(name):
        raise PackError(
            f"{name!r}: not a usable vector name (letters, digits, '_', '.', '-'; "
            f"at most {MAX_NAME} characters; not starting or ending with '.' or '-')"
        )


def vector_files(vector: Vector) -> dict[str, bytes]:
    """Every file of the vector's folder: desc.json, graph.tosa and the .npy files."""
    check_name(vector.name)
    name = vector.name
    if vector.kind not in KINDS:
        raise PackError(f"{name}: kind must be one of {', '.join(KINDS)}, got {vector.kind!r}")
    try:
        graph_bytes = serialize(vector.graph, revision=format_for(vector.graph))
        main = vector.graph.main
    except (FlatbufferError, ValueError) as exc:
        raise PackError(f"{name}/{GRAPH}: {exc}") from None
    files: dict[str, bytes] = {GRAPH: graph_bytes}
    inputs = _inputs(vector, main, files)
    expected = _expected(vector, main, files)
    # Not validated here: write_vector reads every file back, desc.json's schema included.
    files[DESC] = pack_json.dumps(_desc(vector, main, inputs, expected), f"{name}/{DESC}")
    return files


def _inputs(vector: Vector, main: Block, files: dict[str, bytes]) -> list[dict[str, Any]]:
    _same_names(vector.name, "inputs", list(vector.inputs), main.inputs)
    out = []
    for k, tname in enumerate(main.inputs):
        t = main.tensors[tname]
        fname = input_file(k)
        item: dict[str, Any] = {
            "name": tname,
            "file": fname,
            "dtype": t.dtype.name,
            "shape": list(t.shape),
        }
        item.update(_tensor_files(vector.name, vector.inputs[tname], t.dtype, fname, files))
        out.append(item)
    return out


def _tensor_files(
    vector: str, value: TensorValue, dt: DType, fname: str, files: dict[str, bytes]
) -> dict[str, str]:
    """Write an input (or an exact block-scaled result) into ``files``: one file, or a
    block-scaled tensor's values and scales; its ``scale_file`` entry, if any."""
    source = f"{vector}/{fname}"
    if not is_block_scaled(dt):
        if isinstance(value, BlockScaled):
            raise PackError(f"{source}: block-scaled values for a {dt} tensor")
        files[fname] = npy.encode_array(value, dt, source=source)
        return {}
    sname = scale_file(fname)
    if not isinstance(value, BlockScaled) or value.dtype is not dt:
        raise PackError(f"{source}: a {dt} tensor is values and scales (a BlockScaled)")
    files[fname], files[sname] = npy.encode_block_scaled(
        value, source=source, scale_source=f"{vector}/{sname}"
    )
    return {"scale_file": sname}


def _expected(vector: Vector, main: Block, files: dict[str, bytes]) -> list[dict[str, Any]]:
    name = vector.name
    if vector.kind != "valid":
        # An error or level vector has no defined result to compare with.
        if vector.expected or vector.checks:
            raise PackError(f"{name}: a {vector.kind} vector has no expected outputs or checks")
        return []
    _same_names(name, "expected outputs", list(vector.expected), main.outputs)
    unknown = sorted(set(vector.checks) - set(main.outputs))
    if unknown:
        raise PackError(f"{name}: checks for tensors that are not graph outputs: {unknown}")
    out = []
    for k, tname in enumerate(main.outputs):
        t = main.tensors[tname]
        fname = expected_file(k)
        value = vector.expected[tname]
        scales: dict[str, str] = {}
        if is_block_scaled(t.dtype):  # exact results: values and scales, as inputs are
            scales = _tensor_files(name, value, t.dtype, fname, files)
        elif isinstance(value, BlockScaled):
            raise PackError(f"{name}/{fname}: block-scaled values for a {t.dtype} output")
        else:
            files[fname] = npy.encode_expected(value, t.dtype, source=f"{name}/{fname}")
        check = vector.checks.get(tname, Check(None, None))
        bname = None
        if check.bound is not None:
            bname = bound_file(k)
            files[bname] = npy.encode_bound(check.bound, source=f"{name}/{bname}")
        out.append(
            {
                "name": tname,
                "file": fname,
                "dtype": t.dtype.name,
                "shape": list(t.shape),
                "bound_file": bname,
                "compliance": None if check.descriptor is None else check.descriptor.to_json(),
                **scales,
            }
        )
    return out


def _desc(
    vector: Vector, main: Block, inputs: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "name": vector.name,
        "operator": vector.operator,
        "mode": vector.mode,
        "kind": vector.kind,
        "requirements": vector.requirements.to_json(),
        "tosa_file": GRAPH,
        "ifm_name": list(main.inputs),
        "ifm_file": [i["file"] for i in inputs],
        "ofm_name": list(main.outputs),
        "ofm_file": [result_file(k) for k in range(len(main.outputs))],
        "expected_failure": vector.kind == "error",
        "inputs": inputs,
        "expected": expected,
        "rule": vector.rule,
        "data_set": vector.data_set,
        "provenance": vector.provenance.to_json(),
    }
    if vector.kind == "error" and vector.rule is not None:
        desc["expected_failure_desc"] = rule_text(vector.rule)
    return desc


def _same_names(name: str, what: str, given: list[str], graph: list[str]) -> None:
    if set(given) != set(graph) or len(given) != len(graph):
        raise PackError(f"{name}: {what} {sorted(given)} do not match the graph's {sorted(graph)}")
