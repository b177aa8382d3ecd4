"""A pack as test folders Arm's ``tosa_verif_run_tests`` runs.

``export_pack(pack, out)`` writes, under ``out`` (a new or empty folder), one folder per
vector of a TOSA 1.0 or 1.1-draft pack, in the form Arm's runner reads: ``desc.json``
valid against Arm's test-descriptor schema version 1.2 (``schemavalidation``; strict,
so nothing of ours goes in it), the graph as it is (``graph.tosa``: these revisions'
flatbuffers are already in the schema tosa-tools 2026.8 reads) and the inputs rewritten
in Arm's ``.npy`` convention (``tosa_serializer.numpy_utils.save_npy``: bf16 / fp8 as
their ml_dtypes, fp4 / fp6 packed).  Beside them, the vector's own ``desc.json`` is kept
as ``conformance.json`` and its expected and bound files are copied, so nothing of the
pack is lost.

Arm's runner judges a valid vector by running Arm's reference model twice, in its
normal and in its precise (fp64) mode, and checking the first against the second with
``tosa_verify`` and ``meta.compliance``; an error vector passes when the model rejects
the graph.  ``meta.compliance`` is built the way Arm's own generator builds it
(``generator.tosa_build_gen.TosaBuildGen._get_compliance_tens``, called here with the
arguments our compliance descriptor gives: the dot product's kernel size and
accumulator, the reduction's length, RESIZE's largest input, RESCALE's rounding and
``output_unsigned``), with the per-operator settings of Arm's table
(``TosaTestGen.TOSA_OP_LIST[op]["compliance"]``: ULP values, ABS_ERROR constants,
RESIZE's relative scale).  That table is Arm's convention, not the specification's, so
it is read from the installed tosa-tools when exporting.  Where Arm's verifier cannot
say what our descriptor says, the closest mode is written and the case is counted in
:attr:`ExportSummary.approximations`; a vector nothing of Arm's can judge is left out.

Left out, each with its reason in :attr:`ExportSummary.left_out`: level vectors
(reported, never judged: Arm's runner has no such kind), vectors whose graph Arm's
model cannot run (``conformance.backends.revision.native.why_not_run``) and vectors with an
output Arm's verifier cannot express.
"""

from __future__ import annotations

import functools
import importlib
import json
import math
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conformance.arm_suite.names import arm_name
from conformance.backends.revision.elements import ARM_NAMES
from conformance.backends.revision.native import why_not_run
from conformance.block_tensor import BlockScaled, scale_type, value_type
from conformance.compliance_descriptor import (
    DATA_SETS,
    ComplianceDescriptor,
    DotProductParams,
    IntRangeParams,
    Mode,
    ReduceProductParams,
    ResizeParams,
    ScaledValuesParams,
    UlpParams,
)
from conformance.dtypes import DType
from conformance.graph import Operator
from conformance.spec import load_revision
from vectors.pack import LoadedVector, Pack, PackError, open_pack
from vectors.pack_write import DESC, GRAPH, scale_file

__all__ = ["ARM_DESC_VERSION", "NATIVE_REVISIONS", "ExportSummary", "export_pack"]

PathLike = str | os.PathLike[str]

ARM_DESC_VERSION = "1.2"  # Arm's test-descriptor (and compliance-config) schema version
# Revisions whose graphs Arm's tosa-tools 2026.8 reads as they are.
NATIVE_REVISIONS = ("1.0", "1.1-draft")
OUR_DESC = "conformance.json"  # the vector's own desc.json, kept beside Arm's
# Appendix A: the dot product rule's statistical tests apply from this many dot products
# (reference.compliance.dot_product.MIN_DOT_PRODUCTS).
MIN_DOT_PRODUCTS = 1000
# A variance bound no error reaches: the statistical tests, in Arm's verifier, off.
NO_VARIANCE_BOUND = 1e30

# Arm's verifier modes that need the bounds file Arm's model writes in its precise run
# (as tosa_test_gen.TosaTestGen sets bounds_file_required).
_BOUNDS_MODES = frozenset(
    {"DOT_PRODUCT", "ABS_ERROR", "FP_SPECIAL", "RESCALE_INEXACT", "PRECOMPUTED", "FROM_BLOCK"}
)

# Arm's JSON / DType names of our types that elements.ARM_NAMES (TOSA 1.0's) lacks.
_MORE_ARM_NAMES = {
    "i64": "INT64",
    "fp4e2m1": "FP4E2M1",
    "fp6e2m3": "FP6E2M3",
    "fp6e3m2": "FP6E3M2",
    "fp8ue8m0": "FP8UE8M0",
    "mxint8": "MXINT8",
}

# Which Arm mode each of our modes becomes when Arm's verifier says the same thing.
_SAME_MODE: dict[Mode, tuple[str, ...]] = {
    Mode.EXACT: ("EXACT",),
    Mode.EXACT_NAN: ("EXACT",),
    Mode.ULP: ("ULP",),
    Mode.ABS_ERROR: ("ABS_ERROR", "PRECOMPUTED"),
    Mode.REDUCE_PRODUCT: ("REDUCE_PRODUCT",),
    Mode.RESIZE: ("MAX_RELATIVE",),
    Mode.DOT_PRODUCT: ("DOT_PRODUCT",),
    Mode.INT_RANGE: ("RESCALE_INEXACT",),
    Mode.SCALED_VALUES: ("ULP",),
    Mode.BLOCK_SCALES: ("ULP",),
}


class _Unexpressible(Exception):
    """An output Arm's verifier cannot judge at all: the vector is left out."""


@dataclass
class ExportSummary:
    """What ``export_pack`` wrote and what it did not."""

    pack: str
    out: str
    written: int = 0
    left_out: dict[str, str] = field(default_factory=dict)  # vector name -> reason
    # "OPERATOR: our mode -> Arm mode: why" -> number of outputs so approximated
    approximations: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        """The summary for people, one line each: counts, then every approximation,
        the reasons vectors were left out, and every vector left out with its reason."""
        n = self.written
        out = [
            f"{self.out}: {n} vector{'' if n == 1 else 's'} of {self.pack} for Arm's "
            f"tosa_verif_run_tests; {len(self.left_out)} left out"
        ]
        if self.approximations:
            out.append("approximated (Arm's verifier cannot say exactly what ours does):")
            out += [f"  {count} x {what}" for what, count in sorted(self.approximations.items())]
        if self.left_out:
            reasons = Counter(self.left_out.values())
            out.append("left out, by reason:")
            out += [f"  {count} x {why}" for why, count in sorted(reasons.items())]
            out.append("left out:")
            out += [f"  {name}: {why}" for name, why in sorted(self.left_out.items())]
        return out


def export_pack(pack: PathLike, out: PathLike) -> ExportSummary:
    """Write the vectors of the TOSA 1.0 / 1.1-draft pack at ``pack`` as Arm's
    runner's test folders under ``out`` (a new or empty folder); PackError, one line,
    for a pack of another revision, a damaged pack or a non-empty ``out``."""
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise PackError(f"{target}: exists and is not an empty folder; not writing into it")
    try:
        import tosa_serializer as ts
        from tosa_serializer import numpy_utils
    except ImportError:
        raise PackError(
            "export-arm needs Arm's tosa-tools (tosa_serializer, the runner and its "
            "generator); install the tosa-tools wheel"
        ) from None
    with open_pack(pack) as opened:
        revision = opened.meta.spec_revision
        if revision not in NATIVE_REVISIONS:
            raise PackError(
                f"{opened.path}: a pack of TOSA revision {revision or '2024-04-draft'!r}; "
                f"Arm's tosa-tools 2026.8 runs {' and '.join(NATIVE_REVISIONS)} packs only "
                "(generate it again with --tosa 1.0)"
            )
        opened.check_hashes(opened.names)
        profiles = tuple(load_revision(revision).profiles)
        summary = ExportSummary(str(opened.path), str(target))
        target.mkdir(parents=True, exist_ok=True)
        for entry in opened.entries:
            if entry.kind == "level":
                summary.left_out[entry.name] = (
                    "a level vector (reported, never judged; Arm's runner has no such kind)"
                )
                continue
            vector = opened.load(entry.name)
            why = why_not_run(vector.graph)
            if why is not None:
                summary.left_out[entry.name] = f"Arm's model cannot run it: {why}"
                continue
            try:
                desc, notes = _arm_desc(vector, profiles, ts)
            except _Unexpressible as exc:
                summary.left_out[entry.name] = str(exc)
                continue
            _write_folder(opened, vector, desc, target / entry.name, ts, numpy_utils)
            summary.approximations.update(notes)
            summary.written += 1
    return summary


# ----------------------------------------------------------------------------- desc.json


def _arm_desc(
    vector: LoadedVector, profiles: tuple[str, ...], ts: Any
) -> tuple[dict[str, Any], list[str]]:
    """Arm's desc.json for the vector, and the approximations it makes."""
    main = vector.graph.main
    ours = vector.desc
    outputs = [main.tensors[n] for n in main.outputs]
    reqs = vector.requirements
    requirements: dict[str, Any] = {
        # Arm's schema wants at least one profile; ours lists none when any will do.
        "profiles_supported": [arm_name(p) for p in (reqs.profiles or profiles)],
        "bounds_file_required": False,
    }
    if reqs.extensions:
        requirements["extensions_required"] = [arm_name(e) for e in reqs.extensions]
    desc: dict[str, Any] = {
        "version": ARM_DESC_VERSION,
        "tosa_file": GRAPH,
        "ifm_name": [i["name"] for i in ours["inputs"]],
        "ifm_file": [i["file"] for i in ours["inputs"]],
        "ofm_name": list(ours["ofm_name"]),
        "ofm_file": list(ours["ofm_file"]),
        "expected_failure": vector.expected_failure,
        "test_requirements": requirements,
        "test_details": {
            "operator": vector.operator,
            "output_types": [_json_name(t.dtype) for t in outputs],
            "output_shapes": [list(t.shape) for t in outputs],
        },
    }
    notes: list[str] = []
    if vector.expected_failure:
        if ours.get("expected_failure_desc"):
            desc["expected_failure_desc"] = ours["expected_failure_desc"]
        return desc, notes
    tensors: dict[str, Any] = {}
    for t in outputs:
        check = vector.checks.get(t.name)
        if check is None or check.descriptor is None:
            raise _Unexpressible(
                f"output {t.name!r} is not checked by the pack (its value is not "
                "specified), and Arm's runner checks every output"
            )
        info, note = _arm_tensor(vector, t.name, check.descriptor, ts)
        tensors[t.name] = info
        if note is not None:
            notes.append(note)
        if info["mode"] in _BOUNDS_MODES:
            requirements["bounds_file_required"] = True
    desc["meta"] = {"compliance": {"version": ARM_DESC_VERSION, "tensors": tensors}}
    return desc, notes


def _json_name(dt: DType) -> str:
    """Arm's JSON name of one of our types (INT32, FP16, BF16, SHAPE, ...)."""
    name = ARM_NAMES.get(dt.name) or _MORE_ARM_NAMES.get(dt.name)
    if name is None:
        if dt.kind == "block":  # bs32_fp8ue8m0_fp8e4m3 -> BS32_FP8UE8M0_FP8E4M3
            return dt.name.upper()
        raise _Unexpressible(f"type {dt.name} has no name in Arm's tools")
    return name


def _arm_dtype(ts: Any, dt: DType) -> Any:
    value = getattr(ts.DType, _json_name(dt), None)
    if value is None:
        raise _Unexpressible(f"type {dt.name} is not in Arm's DType enumeration")
    return value


@functools.cache
def _arm_op_table() -> dict[str, dict[str, Any]]:
    """Arm's per-operator table entry of each operator (by TOSA name), the first that
    gives compliance settings when several test the same operator."""
    # import_module: tosa-tools has no type information (and needs no mypy override)
    TosaTestGen = importlib.import_module("generator.tosa_test_gen").TosaTestGen

    table: dict[str, dict[str, Any]] = {}
    for entry in TosaTestGen.TOSA_OP_LIST.values():
        op = entry.get("op")
        if op is None:
            continue
        name = op.name
        if name not in table or ("compliance" in entry and "compliance" not in table[name]):
            table[name] = entry
    return table


def _operator(vector: LoadedVector) -> Operator | None:
    """The operator under test: the first of the entry block named as the vector's."""
    for op in vector.graph.main.operators:
        if op.op == vector.operator:
            return op
    return None


def _arm_tensor(
    vector: LoadedVector, name: str, d: ComplianceDescriptor, ts: Any
) -> tuple[dict[str, Any], str | None]:
    """``meta.compliance.tensors[name]`` as Arm's generator would write it for our
    descriptor ``d``, and the approximation it makes (None: it says the same)."""
    gtu = importlib.import_module("generator.tosa_utils")
    TosaBuildGen = importlib.import_module("generator.tosa_build_gen").TosaBuildGen

    op_name = vector.operator
    main = vector.graph.main
    tensor = main.tensors[name]
    if tensor.dtype.kind == "block":
        raise _Unexpressible(
            f"output {name!r} is block-scaled ({tensor.dtype.name}): not exported yet"
        )
    entry = dict(_arm_op_table().get(op_name) or {"op": getattr(ts.Op, op_name, None)})
    graph_op = _operator(vector)
    in_types = _input_types(vector, graph_op, d, ts)
    args: dict[str, Any] = {"dg_type": gtu.DataGenType.PSEUDO_RANDOM}
    if graph_op is not None and op_name == "RESCALE":
        rounding = str(graph_op.attributes.get("rounding_mode", ""))
        args["rounding_mode"] = getattr(ts.RoundingMode, rounding, rounding)
        unsigned = graph_op.attributes.get("output_unsigned")
        if unsigned is None and isinstance(d.params, IntRangeParams):
            unsigned = d.params.unsigned
        args["output_unsigned"] = bool(unsigned)
    if d.mode in (Mode.EXACT, Mode.EXACT_NAN):
        args["compliance_exact"] = True
    elif isinstance(d.params, DotProductParams):
        p = d.params
        args["dg_type"] = gtu.DataGenType.DOT_PRODUCT
        args["acc_type"] = _arm_dtype(ts, p.acc_dtype)
        args["ks"] = p.ks
        args["ksb_increment"] = 1 if p.bias_abs_max > 0 else 0
        args["s"] = vector.data_set if vector.data_set in DATA_SETS - {-1} else p.data_set
    elif isinstance(d.params, ReduceProductParams):
        args["n"] = d.params.n
    elif isinstance(d.params, ResizeParams):
        args["max_abs_value"] = d.params.input_abs_max
    elif isinstance(d.params, ScaledValuesParams):
        args["block_size"] = d.params.block_size
        args["scale_tensor_name"] = d.params.scale_tensor_name
    if d.mode is not Mode.INT_RANGE and op_name == "RESCALE":
        args["rounding_mode"] = None  # not INEXACT_ROUND: Arm's EXACT
    try:
        info: dict[str, Any] = TosaBuildGen._get_compliance_tens(
            entry,
            in_types,
            args,
            name,
            _arm_dtype(ts, tensor.dtype),
            list(tensor.shape),
        )
    except (KeyError, ValueError, AssertionError) as exc:
        raise _Unexpressible(
            f"output {name!r}: Arm's generator cannot describe {d.mode.value} for {op_name}: {exc}"
        ) from None
    info["shape"] = [int(s) for s in info["shape"]]
    return _closest(op_name, d, info)


def _input_types(
    vector: LoadedVector, op: Operator | None, d: ComplianceDescriptor, ts: Any
) -> list[Any]:
    """The input types Arm's generator passes: the rule's (in_t, weight_t) where our
    descriptor names them, else the operator's inputs' (the data inputs, in order)."""
    if isinstance(d.params, DotProductParams) and d.params.input_dtypes:
        return [_arm_dtype(ts, t) for t in d.params.input_dtypes]
    main = vector.graph.main
    names = op.inputs if op is not None else main.inputs
    types = []
    for n in names:
        t = main.tensors.get(n)
        if t is None or t.dtype.kind == "shape":
            continue
        try:
            types.append(_arm_dtype(ts, t.dtype))
        except _Unexpressible:
            continue
    if not types:
        types = [_arm_dtype(ts, d.dtype)]
    return types


def _closest(
    op: str, d: ComplianceDescriptor, info: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """Arm's entry for our descriptor, corrected where Arm's table says nothing for
    it; the approximation it still makes, if any."""
    ours = d.mode.value
    arm = info["mode"]
    if arm not in _SAME_MODE[d.mode]:
        if isinstance(d.params, UlpParams):
            # Arm's table gives this operator no ULP setting: our own ulp, in Arm's mode.
            info = {k: v for k, v in info.items() if not k.endswith("_info")}
            info["mode"] = "ULP"
            info["ulp_info"] = {"ulp": d.params.ulp}
            if d.params.toward_zero is not None:
                info["ulp_info"]["ulp_lower"] = d.params.toward_zero
                return info, _toward_zero_note(op)
            return info, None
        if arm == "FROM_BLOCK":
            return info, (
                f"{op}: {ours} -> FROM_BLOCK: Arm's verifier judges a cast from block-scaled "
                "values its own way"
            )
        if d.dtype.is_float and arm == "EXACT":
            raise _Unexpressible(
                f"{op}: our {ours} has no setting in Arm's table; Arm's verifier would "
                "demand exact results"
            )
        return info, f"{op}: {ours} -> {arm}: Arm's table judges this operator so"
    if d.mode is Mode.EXACT_NAN:
        return info, None  # Arm's EXACT matches NaN with NaN
    if isinstance(d.params, UlpParams):
        return info, _ulp_note(op, d.params, info["ulp_info"])
    if d.mode is Mode.ABS_ERROR:
        return info, (
            f"{op}: {ours} -> {arm}: Arm's verifier takes the bound from its own model's "
            "bounds run with Arm's table's constants, not our per-element bound-K.npy"
        )
    if isinstance(d.params, DotProductParams):
        return _dot_product(op, d.params, info)
    return info, None


def _dot_product(
    op: str, p: DotProductParams, info: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """Arm's verifier runs its statistical tests (error sum and variance) on every
    output; the rule (Appendix A) only from MIN_DOT_PRODUCTS dot products.  Below that
    the variance bound, which Arm's error-sum limit also scales with, is lifted out of
    reach, so that only the per-element test judges, as ours does."""
    notes = []
    if math.prod(info["shape"]) < MIN_DOT_PRODUCTS:
        info["dot_product_info"]["variance_error_bound"] = NO_VARIANCE_BOUND
        notes.append(
            f"statistical tests off below {MIN_DOT_PRODUCTS} outputs (variance_error_bound "
            f"{NO_VARIANCE_BOUND:g}): Arm's verifier applies them to any output"
        )
    if not p.local_bound:
        notes.append(
            "our bound is the abs pass over the whole tensor, Arm's model computes its "
            "per-element abs pass"
        )
    if not notes:
        return info, None
    return info, f"{op}: DOT_PRODUCT -> DOT_PRODUCT: " + "; ".join(notes)


def _ulp_note(op: str, ours: UlpParams, arm: dict[str, Any]) -> str | None:
    upper, lower = float(arm["ulp"]), float(arm.get("ulp_lower") or arm["ulp"])
    if ours.toward_zero is not None:
        if (upper, lower) == (ours.ulp, ours.toward_zero):
            return _toward_zero_note(op)
        return (
            f"{op}: ULP -> ULP: Arm's table allows {upper:g} ulp above and {lower:g} below, "
            f"ours {ours.ulp:g} away from zero and {ours.toward_zero:g} toward it"
        )
    if (upper, lower) != (ours.ulp, ours.ulp):
        below = f" ({lower:g} below)" if lower != upper else ""
        return f"{op}: ULP -> ULP: Arm's table allows {upper:g} ulp{below}, ours {ours.ulp:g}"
    return None


def _toward_zero_note(op: str) -> str:
    return (
        f"{op}: ULP -> ULP: our wider bound is toward zero, Arm's ulp_lower is below the "
        "result (away from zero for negative results)"
    )


# ----------------------------------------------------------------------------- files


def _write_folder(
    pack: Pack,
    vector: LoadedVector,
    desc: dict[str, Any],
    folder: Path,
    ts: Any,
    numpy_utils: Any,
) -> None:
    """The test folder: Arm's desc.json, the graph, the inputs in Arm's convention,
    and our desc.json (as conformance.json), expected and bound files beside them."""
    tmp = folder.with_name(f".{folder.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        entry = pack.entry(vector.name)
        inputs = {i["file"] for i in vector.desc["inputs"]}
        inputs |= {i["scale_file"] for i in vector.desc["inputs"] if i.get("scale_file")}
        for file in sorted(entry.files):
            if file in inputs:
                continue
            data = pack.source.read(f"{vector.name}/{file}")
            assert data is not None  # check_hashes saw every file
            (tmp / (OUR_DESC if file == DESC else file)).write_bytes(data)
        main = vector.graph.main
        for item in vector.desc["inputs"]:
            dt = main.tensors[item["name"]].dtype
            _save_input(tmp, item["file"], vector.inputs[item["name"]], dt, ts, numpy_utils)
        (tmp / DESC).write_text(json.dumps(desc, indent=2) + "\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    tmp.rename(folder)


def _save_input(folder: Path, file: str, value: Any, dt: DType, ts: Any, numpy_utils: Any) -> None:
    if isinstance(value, BlockScaled):
        values_dt, scales_dt = _block_parts(dt)
        _save(folder / file, value.values, values_dt, ts, numpy_utils)
        _save(folder / scale_file(file), value.scales, scales_dt, ts, numpy_utils)
        return
    _save(folder / file, np.asarray(value), dt, ts, numpy_utils)


def _block_parts(dt: DType) -> tuple[DType, DType]:
    return value_type(dt), scale_type(dt)


def _save(path: Path, arr: np.ndarray, dt: DType, ts: Any, numpy_utils: Any) -> None:
    """One array in Arm's .npy convention; our storage is Arm's compute dtype for every
    type but bool's 0/1 bytes and mxint8's codes."""
    arm = _arm_dtype(ts, dt)
    arr = np.ascontiguousarray(arr)
    if dt.name == "bool":
        arr = arr.astype(np.bool_)
    elif dt.name == "mxint8":
        arr = arr.view(numpy_utils.TOSA_DTYPE_MAPPING[arm]["storage_type"])
    elif arr.dtype != dt.storage:
        arr = arr.astype(dt.storage)
    numpy_utils.save_npy(str(path), arr, arm)
