"""The graph rewrites compilers perform, as coverage obligations (:data:`REWRITES`).

Graph compilers (MLIR's TOSA canonicaliser, TFLite's converter, ONNX Runtime's and
NPU toolchains' graph optimisers, TVM's and XLA's simplifiers) fold, merge and fuse
small patterns of operators.  A rewrite that is right for most inputs and wrong for
some passes every test whose data misses that condition: CLAMP > CLAMP merged by
intersecting the ranges is right unless the ranges are disjoint, SLICE of CONCAT
folded to one input is right unless the window crosses a seam.  So each rewrite
records the condition under which a wrong rewrite changes the result, and the pack
holds chain vectors that meet it by construction:

* ``key`` names the obligation ``rewrite:KEY`` of every mode of the last operator the
  rewrite applies to (the vector is that operator's, judged by its rule);
* ``applies`` says why a mode cannot show it (an integer x * 0 is 0 whatever x is);
* ``build`` draws a chain that meets the condition, within the claim's pairs
  (:mod:`strategies.rewrite_chains`);
* ``shows`` checks the condition on a written vector's graph and data, so any chain,
  drawn for this or not, meets the obligation if its data holds the condition
  (:mod:`strategies.rewrite_conditions`).

Every intermediate result is exact (data movement, CLAMP, MINIMUM, integer CAST), so
the last operator reads the same values in every compliant backend (reading
``chain-intermediate-precision``).  The mutants of
:mod:`conformance.backends.mutants.rewrites` are the wrong rewrites.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from hypothesis import strategies as st

from conformance.dtypes import DType
from conformance.operator_table import family
from conformance.spec import Level, OperatorSpec, Spec, TypeSupport
from strategies.case import Case
from strategies.graphs import (
    CHAINABLE,
)
from strategies.obligations import Obligation
from strategies.rewrite_chains import (
    Builder,
    RewriteContext,
    build_cast_cast,
    build_clamp_clamp,
    build_conv_epilogue,
    build_min_max,
    build_mul_zero,
    build_pad_conv,
    build_pad_pad,
    build_pad_pool,
    build_reshape_transpose_reshape,
    build_reverse_reverse,
    build_slice_concat,
    build_slice_slice,
    build_sub_self,
    build_transpose_reshape,
    build_transpose_transpose,
    main_type,
)
from strategies.rewrite_conditions import (
    pool_shows,
    shows_cast_cast,
    shows_clamp_clamp,
    shows_epilogue_per_tensor,
    shows_epilogue_zp_late,
    shows_min_max,
    shows_mul_zero,
    shows_pad_conv,
    shows_pad_pad,
    shows_reshape_transpose_reshape,
    shows_reverse_reverse,
    shows_slice_concat,
    shows_slice_slice,
    shows_sub_self,
    shows_transpose_reshape,
    shows_transpose_transpose,
)
from strategies.shapes import Budget
from strategies.valid import binds_block_scaled

REWRITE_FACT = "rewrite:{key}"


REWRITE_JOBS = 2  # chain vectors per (rewrite, mode): no kill rests on one vector


Shows = Callable[[Spec, Case], bool]


Applies = Callable[[Spec, TypeSupport], str | None]


@dataclass(frozen=True)
class Rewrite:
    key: str
    operators: tuple[str, ...]  # the pattern in graph order; the last one is judged
    rewrite: str  # what a compiler does
    wrong_when: str  # the condition under which a wrong rewrite changes the result
    seen_in: str  # compilers that perform it
    rule: str  # the spec rule behind the expected result
    applies: Applies
    build: Builder | None = None  # None: no input shows it (the reason is ``applies``')
    shows: Shows | None = None
    # Kinds of chain that meet the condition, each wrong for another wrong rewrite (the
    # second CLAMP's range above the first's, or below it): REWRITE_JOBS of each.
    variants: int = 1
    # Why the claim's pairs cannot make the chain (None: they can), where its other
    # operators are not on the last one's type (default: :func:`needed_modes`).
    needs: Callable[[Spec, TypeSupport, frozenset[tuple[str, str]]], str | None] | None = None

    @property
    def fact(self) -> str:
        return REWRITE_FACT.format(key=self.key)


def _float_only(spec: Spec, mode: TypeSupport) -> str | None:
    if main_type(mode).is_float:
        return None
    return "integer arithmetic: the rewrite is exact for every integer input"


def _any_mode(spec: Spec, mode: TypeSupport) -> str | None:
    return None


def _cast_back(spec: Spec, mode: TypeSupport) -> str | None:
    a, b = mode.dtype("in_t"), mode.dtype("out_t")
    if not (a.is_int and b.is_int and a.kind == "int" and b.kind == "int"):
        return "not a cast between integer types"
    if b.bits <= a.bits:
        return "a narrowing cast: the round trip through it is exact"
    return None


def _pad_conv_applies(spec: Spec, mode: TypeSupport) -> str | None:
    if binds_block_scaled(mode):
        return "a block-scaled mode: the chain's graph holds its weight as an array"
    return None


def _epilogue_applies(spec: Spec, mode: TypeSupport) -> str | None:
    in_t, out_t = mode.dtype("in_t"), mode.dtype("out_t")
    if in_t.name == "i48" and out_t.name in ("i8", "i16"):
        return (
            "not built yet: a 48-bit accumulator's epilogue (CONV2D 16x8) needs products "
            "past the int64 arithmetic the condition is checked in"
        )
    if in_t.name != "i32" or out_t.name not in ("i8", "i16"):
        return "not a convolution's epilogue: it narrows an i32 accumulator to i8 or i16"
    return None


def _zp_epilogue_applies(spec: Spec, mode: TypeSupport) -> str | None:
    why = _epilogue_applies(spec, mode)
    if why is None and mode.dtype("out_t").bits != 8:
        return "the output zero point of a signed output wider than i8 is 0 (ERROR_IF)"
    return why


def _cast_back_claimed(
    spec: Spec, mode: TypeSupport, pairs: frozenset[tuple[str, str]]
) -> str | None:
    narrow, wide = mode.dtype("in_t"), mode.dtype("out_t")
    back = [
        m
        for m in spec.operator("CAST").modes
        if m.dtype("in_t") is wide and m.dtype("out_t") is narrow and (m.operator, m.mode) in pairs
    ]
    if not back:
        return f"its chain needs CAST {wide.name} to {narrow.name}, not among the pack's pairs"
    return None


def _conv_claimed(spec: Spec, mode: TypeSupport, pairs: frozenset[tuple[str, str]]) -> str | None:
    acc = mode.dtype("in_t")
    if not any(
        m.dtype("out_t") is acc and ("CONV2D", m.mode) in pairs
        for m in spec.operator("CONV2D").modes
    ):
        return f"its chain needs a CONV2D with {acc.name} output, not among the pack's pairs"
    return None


def _exact_identity(why: str) -> Applies:
    return lambda spec, mode: why


REWRITES: tuple[Rewrite, ...] = (
    Rewrite(
        "mul-by-zero",
        family(("MUL",)),
        "MUL(x, 0) folded to a constant 0 (a splat-zero operand)",
        "x holds NaN or an infinity where it meets the zero: NaN * 0 and inf * 0 are NaN",
        "MLIR TOSA MulOp folder (splat zero operand); TVM's arithmetic simplifier",
        "MUL.tosac: apply_mul_s; IEEE 754 multiplication (inf * 0 = NaN)",
        _float_only,
        build_mul_zero,
        shows_mul_zero,
    ),
    Rewrite(
        "sub-self",
        family(("SUB",)),
        "SUB(x, x) folded to a constant 0",
        "x holds NaN or an infinity: inf - inf and NaN - NaN are NaN",
        "TVM's and Halide's simplifiers (x - x -> 0); XLA keeps it to integers",
        "SUB.tosac: apply_sub_s; IEEE 754 subtraction (inf - inf = NaN)",
        _float_only,
        build_sub_self,
        shows_sub_self,
    ),
    Rewrite(
        "add-zero",
        family(("ADD",)),
        "ADD(x, 0) folded to x",
        "only x = -0 (the sum is +0)",
        "MLIR TOSA AddOp folder (splat zero operand)",
        "ADD.tosac: apply_add_s",
        _exact_identity(
            "no compliant check sees it: x + (+0) differs from x only for x = -0, and ADD's "
            "result is judged within its ulp bound, which does not compare the sign of a "
            "zero (introduction, precision table; reference/zero_sign.py)"
        ),
    ),
    Rewrite(
        "mul-by-one",
        family(("MUL",)),
        "MUL(x, 1) folded to x",
        "never: x * 1 is x for every x, NaN, infinities and -0 included",
        "MLIR TOSA MulOp folder (splat one operand)",
        "MUL.tosac: apply_mul_s",
        _exact_identity("x * 1 is x for every value of every type: no input makes it wrong"),
    ),
    Rewrite(
        "clamp-clamp",
        family(("CLAMP", "CLAMP")),
        "CLAMP > CLAMP merged into one CLAMP of max(min_val) and min(max_val)",
        "the two ranges are disjoint: the merged range is empty, and the right result is "
        "the second CLAMP's bound nearest the first range",
        "MLIR TOSA canonicaliser (clamp_twice_is_single_clamp); TFLite's activation fusion",
        "CLAMP.tosac: each CLAMP applies apply_clip_s with its own bounds, in order",
        _any_mode,
        build_clamp_clamp,
        shows_clamp_clamp,
        variants=2,
    ),
    Rewrite(
        "min-max-as-clamp",
        family(("MINIMUM", "MAXIMUM")),
        "MAXIMUM(MINIMUM(x, hi), lo) with constant bounds fused into CLAMP(x, lo, hi) "
        "(RELU6-style activation fusion)",
        "lo > hi: the graph gives lo everywhere, a CLAMP with min_val above max_val is no "
        "CLAMP (ERROR_IF max_val < min_val) and a fused clip gives hi",
        "TFLite converter (MINIMUM/MAXIMUM to RELU_N1_TO_1 / RELU6); NPU activation fusion",
        "MAXIMUM.tosac and MINIMUM.tosac: apply_max_s / apply_min_s per element, in order",
        _any_mode,
        build_min_max,
        shows_min_max,
    ),
    Rewrite(
        "transpose-transpose",
        family(("TRANSPOSE", "TRANSPOSE")),
        "TRANSPOSE > TRANSPOSE composed into one TRANSPOSE",
        "the permutations do not commute (rank 3 or more): composing them in the wrong "
        "order moves elements elsewhere",
        "MLIR TOSA canonicaliser (consecutive transposes); XLA algebraic simplifier",
        "TRANSPOSE.tosac: output[index] = input1[index permuted by perms], for each in turn",
        _any_mode,
        build_transpose_transpose,
        shows_transpose_transpose,
    ),
    Rewrite(
        "reverse-reverse",
        family(("REVERSE", "REVERSE")),
        "REVERSE > REVERSE cancelled",
        "the axes differ (both longer than 1): the pair reverses two axes, not none",
        "MLIR TOSA ReverseOp folder (reverse of reverse on the same axis)",
        "REVERSE.tosac: tmp_index[axis] = shape[axis] - 1 - index[axis], each on its own axis",
        _any_mode,
        build_reverse_reverse,
        shows_reverse_reverse,
    ),
    Rewrite(
        "reshape-transpose-reshape",
        family(("RESHAPE", "TRANSPOSE", "RESHAPE")),
        "RESHAPE > TRANSPOSE > RESHAPE: the two RESHAPEs merged across the TRANSPOSE",
        "the TRANSPOSE moves elements (it permutes axes longer than 1)",
        "MLIR TOSA canonicaliser (reshape of reshape); TFLite and NPU layout optimisers",
        "RESHAPE.tosac: row-major order of its input, which the TRANSPOSE permuted",
        _any_mode,
        build_reshape_transpose_reshape,
        shows_reshape_transpose_reshape,
    ),
    Rewrite(
        "transpose-reshape",
        family(("TRANSPOSE", "RESHAPE")),
        "TRANSPOSE > RESHAPE folded into one RESHAPE",
        "the TRANSPOSE moves elements (it permutes axes longer than 1)",
        "MLIR TOSA canonicaliser (transpose of size-1 axes as reshape)",
        "RESHAPE.tosac: row-major order of its input, the TRANSPOSE's output",
        _any_mode,
        build_transpose_reshape,
        shows_transpose_reshape,
    ),
    Rewrite(
        "slice-concat",
        family(("CONCAT", "SLICE")),
        "SLICE of CONCAT folded to a SLICE of the input the window starts in",
        "the window crosses a seam between two inputs",
        "MLIR TOSA canonicaliser (slice of concat); OpenVINO NPU ConcatSliceRewriter; "
        "ONNX Runtime ConcatSliceElimination",
        "SLICE.tosac: output[index] = input1[start + index], across CONCAT's seams",
        _any_mode,
        build_slice_concat,
        shows_slice_concat,
    ),
    Rewrite(
        "slice-slice",
        family(("SLICE", "SLICE")),
        "SLICE > SLICE merged into one SLICE",
        "the first slice starts past 0 on an axis: the merged start must add both",
        "MLIR tensor and TOSA canonicalisers (slice of slice); XLA algebraic simplifier",
        "SLICE.tosac: output[index] = input1[start + index], for each SLICE in turn",
        _any_mode,
        build_slice_slice,
        shows_slice_slice,
    ),
    Rewrite(
        "pad-pad",
        family(("PAD", "PAD")),
        "PAD > PAD merged into one PAD of the summed padding",
        "the pad_const values differ (and the first PAD pads something)",
        "MLIR tensor.pad canonicaliser (consecutive constant padding, equal values only); "
        "TVM's simplifier",
        "PAD.tosac: value = pad_const of each PAD at its own border",
        _any_mode,
        build_pad_pad,
        shows_pad_pad,
    ),
    Rewrite(
        "cast-cast",
        family(("CAST", "CAST")),
        "integer CAST > CAST through a narrower type folded into one CAST (or none)",
        "a value outside the narrower type: the first CAST wraps it",
        "XLA algebraic simplifier (convert of convert, only lossless); MLIR arith "
        "canonicaliser (extsi of trunci is not folded)",
        "CAST.tosac: an integer narrowed keeps its low bits (truncate), then widened",
        _cast_back,
        build_cast_cast,
        shows_cast_cast,
        needs=_cast_back_claimed,
    ),
    Rewrite(
        "pad-avg-pool",
        family(("PAD", "AVG_POOL2D")),
        "PAD (pad_const the input zero point) folded into AVG_POOL2D's own pad",
        "a window covers the PAD's border: the graph divides by the whole window, the "
        "pool's own padding is left out of the divisor",
        "TFLite converter and NPU toolchains (pad fused into pooling); MLIR TOSA PAD folding",
        "AVG_POOL2D.tosac: the divisor counts the input elements in the window; PAD's "
        "border elements are input elements",
        _any_mode,
        build_pad_pool("AVG_POOL2D"),
        lambda spec, case: pool_shows(spec, case, "AVG_POOL2D"),
    ),
    Rewrite(
        "pad-max-pool",
        family(("PAD", "MAX_POOL2D")),
        "PAD folded into MAX_POOL2D's own pad",
        "pad_const is above a window's other elements: the pool's own padding takes no "
        "part in the maximum, PAD's border does",
        "TFLite converter and NPU toolchains (pad fused into pooling)",
        "MAX_POOL2D.tosac: padding positions are skipped; PAD's border elements are input elements",
        _any_mode,
        build_pad_pool("MAX_POOL2D"),
        lambda spec, case: pool_shows(spec, case, "MAX_POOL2D"),
    ),
    Rewrite(
        "conv-epilogue-per-tensor",
        family(("CONV2D", "RESCALE")),
        "CONV2D > RESCALE fused into one convolution with a requantising epilogue (as NPUs "
        "run a quantised convolution)",
        "RESCALE is per channel and two channels' (multiplier, shift) differ: an epilogue "
        "that holds one scale applies the first channel's to all",
        "NPU toolchains (TFLite's per-channel quantised CONV_2D lowered to a per-tensor "
        "requantiser); Arm Ethos-U and other NPU compilers' fused output scaling",
        "RESCALE.tosac: apply_scale_32(value, multiplier[c], shift[c]) of each channel c",
        _epilogue_applies,
        build_conv_epilogue,
        shows_epilogue_per_tensor,
        needs=_conv_claimed,
    ),
    Rewrite(
        "conv-epilogue-zp-after-saturation",
        family(("CONV2D", "RESCALE")),
        "CONV2D > RESCALE fused, the epilogue saturating the scaled value to the output "
        "type before it adds the output zero point (which then wraps)",
        "a scaled value plus the output zero point leaves the output type, or the scaled "
        "value alone does",
        "NPU toolchains' fused requantisation (clamp, then zero point)",
        "RESCALE.tosac: value = apply_add_s(scaled, output_zp), then apply_clip_s to the "
        "output type",
        _zp_epilogue_applies,
        build_conv_epilogue,
        shows_epilogue_zp_late,
        needs=_conv_claimed,
    ),
    *(
        Rewrite(
            f"pad-{conv.lower().replace('_', '-')}",
            family(("PAD", conv)),
            f"PAD of the spatial axes folded into {conv}'s own pad",
            "pad_const is not the input zero point (0 for floats)",
            "MLIR TOSA and TFLite converters (pad fused into convolution); NPU toolchains",
            "PAD.tosac: value = pad_const at the border; the convolution reads it there",
            _pad_conv_applies,
            build_pad_conv,
            shows_pad_conv,
        )
        for conv in ("CONV2D", "DEPTHWISE_CONV2D", "CONV3D")
    ),
)


def by_key() -> dict[str, Rewrite]:
    return {r.key: r for r in REWRITES}


def rewrites_ending(spec: Spec, operator: str) -> list[Rewrite]:
    """The rewrites judged at ``operator``, whose operators the revision has."""
    return [
        r
        for r in REWRITES
        if r.operators[-1] == operator and all(o in spec.operators for o in r.operators)
    ]


def why_not(r: Rewrite, spec: Spec, mode: TypeSupport) -> str | None:
    """Why no chain of ``r`` ending in ``mode`` can show it (None: one can)."""
    if binds_block_scaled(mode):
        return "a block-scaled mode: a chain carries plain arrays from one operator to the next"
    if r.build is not None and main_type(mode) not in CHAINABLE:
        return f"{main_type(mode).name} is not a type the chains carry"
    return r.applies(spec, mode)


def rewrite_obligations(
    spec: Spec, op_spec: OperatorSpec, mode: TypeSupport
) -> tuple[list[Obligation], dict[str, str]]:
    """The pair's rewrite obligations, and those that cannot apply to its mode (why)."""
    obs, na = [], {}
    for r in rewrites_ending(spec, op_spec.name):
        why = why_not(r, spec, mode)
        if why is None and r.build is not None:
            obs.append(Obligation(r.fact, r.fact, r.wrong_when))
        else:
            na[r.fact] = why or "no input makes the rewrite wrong"
    return obs, na


def rewrite_facts(spec: Spec, case: Case) -> set[str]:
    """The rewrite obligations a chain's graph and data meet (checked, not assumed)."""
    out = set()
    for r in REWRITES:
        if r.shows is not None and r.shows(spec, case):
            out.add(r.fact)
    return out


def needed_modes(r: Rewrite, mode: TypeSupport) -> list[tuple[str, DType]]:
    """(operator, type) of the chain's other operators: the claim must have them on the
    last operator's type (CAST > CAST's first CAST is the reverse cast, apart)."""
    return [(o, main_type(mode)) for o in dict.fromkeys(r.operators[:-1]) if o != r.operators[-1]]


def buildable(
    r: Rewrite, spec: Spec, level: Level, mode: TypeSupport, pairs: frozenset[tuple[str, str]]
) -> str | None:
    """Why a chain of ``r`` ending in ``mode`` cannot be made within ``pairs`` (None: it
    can)."""
    if r.needs is not None:
        return r.needs(spec, mode, pairs)
    ctx = RewriteContext(spec, level, Budget(), pairs, mode)
    for o, dt in needed_modes(r, mode):
        if ctx.same_type(o, dt) is None:
            return f"its chain needs {o} on {dt.name}, which is not among the pack's pairs"
    return None


def rewrite_cases(
    spec: Spec,
    level: Level,
    budget: Budget,
    pairs: Iterable[tuple[str, str]],
    key: str,
    mode: str,
    index: int = 0,
) -> st.SearchStrategy[Case]:
    """Chains of rewrite ``key`` that end in ``mode`` of its last operator; the job's
    ``index`` picks the variant."""
    r = by_key()[key]
    m = spec.operator(r.operators[-1]).mode(mode)
    ctx = RewriteContext(spec, level, budget, frozenset(pairs), m, index % r.variants)
    assert r.build is not None
    build = r.build

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        case = build(draw, ctx)
        return replace(case, strategy=f"rewrite:{key}")

    return draw_case()
