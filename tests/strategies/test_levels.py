"""Level cases: exactly at each 8K maximum, and just above it, for every level limit
tosa.xml gives an operator (or an exemption with its reason).

Hand-checked values: the 8K maxima are MAX_RANK 6, MAX_KERNEL 8192, MAX_STRIDE 8192,
MAX_SCALE 256, MAX_NESTING 6, MAX_TENSOR_LIST_SIZE 64 (tosa.xml's <level name="8K">).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from conformance import dtypes
from conformance.errata import IMPLICIT_LEVEL_LIMITS
from conformance.graph import Operator
from conformance.revisions import REVISIONS
from conformance.spec import load_revision, load_spec, spec_in_use
from reference.engine import evaluate
from strategies.case import Case, CaseSpec, TensorDraw
from strategies.level_limits import (
    EXEMPT,
    MAX_LEVEL_ELEMENTS,
    NESTED,
    limit_cases,
    window_axis,
)
from strategies.levels import is_level_case, level_cases, level_limits_for
from strategies.recipes import RecipeContext
from strategies.recipes.control_flow import cond_if_case
from strategies.shapes import Budget
from strategies.valid import has_recipe, valid_cases

SPEC = load_spec()
LEVEL = SPEC.level("8K")
DOCS = Path(__file__).parents[2] / "docs" / "invalid-cases.md"
I8X8 = "signed 8x8 with int32 accumulate"
# Level cases hold tensors of thousands of elements and evaluate in a second: a failure
# is reported as drawn rather than shrunk for minutes.
DRAW_ONLY = (Phase.explicit, Phase.generate)


def test_the_8k_maxima_are_the_ones_these_tests_check_by_hand() -> None:
    assert dict(LEVEL.maxima) == {
        "MAX_RANK": 6,
        "MAX_KERNEL": 8192,
        "MAX_STRIDE": 8192,
        "MAX_SCALE": 256,
        "MAX_LOG2_SIZE": 31,
        "MAX_NESTING": 6,
        "MAX_TENSOR_LIST_SIZE": 64,
    }


@pytest.mark.parametrize(
    ("op", "names"),
    [
        # weight: dilation_y * KH (so also through dilation); pad: pad_top...; stride
        ("CONV2D", ["MAX_KERNEL", "MAX_KERNEL:dilation", "MAX_KERNEL:pad", "MAX_STRIDE"]),
        ("CONV3D", ["MAX_KERNEL", "MAX_KERNEL:dilation", "MAX_KERNEL:pad", "MAX_STRIDE"]),
        # kernel_y, stride_y, pad_top: the pad case is exempt (pads stay below kernels)
        ("AVG_POOL2D", ["MAX_KERNEL", "MAX_STRIDE"]),
        ("MAX_POOL2D", ["MAX_KERNEL", "MAX_STRIDE"]),
        ("TRANSPOSE_CONV2D", ["MAX_KERNEL", "MAX_KERNEL:out_pad", "MAX_STRIDE"]),
        ("FFT2D", ["MAX_KERNEL"]),  # H, W <= MAX_KERNEL
        ("RESIZE", ["MAX_SCALE"]),  # scale_y_n/scale_y_d: a ratio of the scale input
        ("CONCAT", ["MAX_TENSOR_LIST_SIZE", "MAX_RANK"]),
        # condition (erratum max_rank-no-levellimit, as 1.0 has it); input_list and
        # output_list together
        ("COND_IF", ["MAX_RANK", "MAX_TENSOR_LIST_SIZE"]),
        ("RESHAPE", ["MAX_RANK"]),  # input1 and output together
        ("ADD", ["MAX_RANK"]),
        ("MATMUL", []),  # no <levellimit>
    ],
)
def test_limit_cases_follow_tosa_xml(op: str, names: list[str]) -> None:
    assert level_limits_for(SPEC, op) == names


def test_every_level_limit_of_tosa_xml_gets_cases_or_a_reason() -> None:
    seen: set[tuple[str, str]] = set()
    for op_spec in SPEC.operators.values():
        cases = {c.name for c in limit_cases(op_spec)}
        planned = set(level_limits_for(SPEC, op_spec.name))
        for name in cases:
            key = (op_spec.name, name)
            assert name in planned or key in EXEMPT, key
            assert not (name in planned and key in EXEMPT), key
            seen.add(key)
        if planned:
            assert has_recipe(op_spec.name), op_spec.name
        limits = {lim.limit for _, lim in op_spec.level_limits()}
        assert limits == {c.limit for c in limit_cases(op_spec)}
    # every exemption names a real case, of this revision or another one
    for rev in REVISIONS:
        seen |= {
            (o.name, c.name) for o in load_revision(rev).operators.values() for c in limit_cases(o)
        }
    assert set(EXEMPT) <= seen
    assert all(len(reason) > 40 for reason in EXEMPT.values())


def test_the_limits_without_a_levellimit_are_accounted_for() -> None:
    implicit = {i.limit for i in IMPLICIT_LEVEL_LIMITS}
    assert implicit == {"MAX_NESTING", "MAX_LOG2_SIZE"}
    # MAX_NESTING: the nested operators' list cases nest MAX_NESTING deep
    assert {"COND_IF", "WHILE_LOOP"} == NESTED
    for op in NESTED:
        assert "MAX_TENSOR_LIST_SIZE" in level_limits_for(SPEC, op)
    with_cases = {c.limit for o in SPEC.operators.values() for c in limit_cases(o)}
    assert set(LEVEL.maxima) == with_cases | implicit


def test_the_docs_table_names_every_limit_and_exemption() -> None:
    text = DOCS.read_text()
    section = text[text.index("## Level limits") :]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    for limit in LEVEL.maxima:
        assert any(f"`{limit}" in r for r in rows), limit
    for op, name in EXEMPT:
        assert any(op in r and f"`{name}`" in r for r in rows), (op, name)


# -- drawing and checking cases -----------------------------------------------------------


def _draw(data: st.DataObject, op: str, mode: str, limit: str, above: bool) -> Case:
    strategy = level_cases(SPEC, op, mode, LEVEL, above=above, limit=limit)
    case = data.draw(strategy, label=f"{op} {limit} {'above' if above else 'at'}")
    assert is_level_case(case, SPEC, LEVEL, above=above, limit=limit)
    for t in case.graph.main.tensors.values():  # tiny tensors, whatever the limit
        assert math.prod(t.shape) <= MAX_LEVEL_ELEMENTS // 2, (t.name, t.shape)
    return case


def _op(case: Case) -> Operator:
    return next(o for o in case.graph.main.operators if o.op == case.operator)


def _shape(case: Case, name: str) -> tuple[int, ...]:
    return case.graph.main.tensors[name].shape


def _clause(case: Case) -> str:
    outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "unpredictable" and outcome.rule is not None
    assert outcome.rule.kind == "LEVEL_CHECK"
    return outcome.rule.clause


def _valid(case: Case) -> None:
    assert evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL).kind == "valid"


@settings(max_examples=4, phases=DRAW_ONLY)
@given(st.data())
def test_conv2d_kernel_at_8192_and_above(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "CONV2D", I8X8, "MAX_KERNEL", above)
        _, kh, kw, _ = _shape(case, "weight")
        dil_y, dil_x = _op(case).attributes["dilation"]
        k = 8192 + above
        assert (kh, dil_y) == (k, 1) or (kw, dil_x) == (k, 1)
        if above:
            assert _clause(case) in (
                "dilation_y * KH <= MAX_KERNEL (8193 > 8192)",
                "dilation_x * KW <= MAX_KERNEL (8193 > 8192)",
            )
        else:
            _valid(case)


@settings(max_examples=4, phases=DRAW_ONLY)
@given(st.data())
def test_conv2d_dilated_kernel_at_8192_and_above(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "CONV2D", I8X8, "MAX_KERNEL:dilation", above)
        _, kh, kw, _ = _shape(case, "weight")
        dil_y, dil_x = _op(case).attributes["dilation"]
        # 8192 = K * dilation with both >= 2 (2 x 4096 ... 16 x 512); 8193 = 3 x 2731
        axis = [(k, d) for k, d in ((kh, dil_y), (kw, dil_x)) if k * d > 8191]
        assert len(axis) == 1
        k, d = axis[0]
        assert k >= 2 and d >= 2 and k * d == (8193 if above else 8192)
        if above:
            assert (k, d) in ((3, 2731), (2731, 3))


@settings(max_examples=4, phases=DRAW_ONLY)
@given(st.data())
def test_depthwise_pad_at_8192_and_above(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "DEPTHWISE_CONV2D", I8X8, "MAX_KERNEL:pad", above)
        pad = _op(case).attributes["pad"]
        assert max(pad) == 8192 + above and sorted(pad)[-2] <= 2
        if above:
            assert re.fullmatch(r"pad_\w+ <= MAX_KERNEL \(8193 > 8192\)", _clause(case))


@settings(max_examples=4, phases=DRAW_ONLY)
@given(st.data())
def test_max_pool_stride_at_8192_and_above(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "MAX_POOL2D", "signed 8", "MAX_STRIDE", above)
        op = _op(case)
        s = 8192 + above
        (j,) = [j for j, v in enumerate(op.attributes["stride"]) if v == s]
        size_in, size_out = _shape(case, "input")[1 + j], _shape(case, "output")[1 + j]
        k, pads = op.attributes["kernel"][j], op.attributes["pad"][2 * j : 2 * j + 2]
        # OH = (IH + pad_top + pad_bottom - kernel_y) / stride_y + 1 = 2: two windows
        assert size_out == 2 and size_in == s + k - sum(pads)
        if above:
            assert _clause(case) in (
                "stride_y <= MAX_STRIDE (8193 > 8192)",
                "stride_x <= MAX_STRIDE (8193 > 8192)",
            )


@settings(max_examples=4, phases=DRAW_ONLY)
@given(st.data())
def test_transpose_conv_out_pad_at_8192(data: st.DataObject) -> None:
    case = _draw(data, "TRANSPOSE_CONV2D", I8X8, "MAX_KERNEL:out_pad", False)
    op = _op(case)
    pads = op.attributes["out_pad"]
    (i,) = [i for i, p in enumerate(pads) if p == 8192]
    j = i // 2
    _, ih, iw, _ = _shape(case, "input")
    _, kh, kw, _ = _shape(case, "weight")
    size_in, k = (ih, kh) if j == 0 else (iw, kw)
    # OH = (IH - 1) * stride_y + out_pad_top + out_pad_bottom + KH
    want = (size_in - 1) * op.attributes["stride"][j] + pads[2 * j] + pads[2 * j + 1] + k
    assert _shape(case, "output")[1 + j] == want
    _valid(case)


def _scale(case: Case) -> list[int]:
    scale = _op(case).inputs[1]
    return [int(v) for v in np.asarray(case.graph.main.tensors[scale].data)]


@settings(max_examples=6, phases=DRAW_ONLY)
@given(st.data())
def test_resize_scale_at_256_and_above(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "RESIZE", "signed 8, bilinear", "MAX_SCALE", above)
        y_n, y_d, x_n, x_d = _scale(case)
        ratios = [y_n // y_d, x_n // x_d]  # integer division, as the LEVEL_CHECK's
        assert max(ratios) == 256 + above and max(y_n, x_n) <= 2048
        if above:
            assert re.fullmatch(
                r"scale_(y_n/scale_y_d|x_n/scale_x_d) <= MAX_SCALE "
                r"\(257 > 256\)",
                _clause(case),
            )


@settings(max_examples=3, phases=DRAW_ONLY)
@given(st.data())
def test_concat_lists_of_64_and_65(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "CONCAT", "signed 8", "MAX_TENSOR_LIST_SIZE", above)
        op = _op(case)
        assert len(op.inputs) == 64 + above
        axis = op.attributes["axis"]
        shapes = [_shape(case, n) for n in op.inputs]
        total = sum(s[axis] if axis < len(s) else 1 for s in shapes)
        assert _shape(case, op.outputs[0])[axis] == total


def _count(case: Case, name: str) -> int:
    return sum(o.op == name for b in case.graph.blocks() for o in b.operators)


@settings(max_examples=1, phases=DRAW_ONLY)
@given(st.data())
def test_cond_if_lists_of_64_nested_6_deep(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "COND_IF", "Boolean", "MAX_TENSOR_LIST_SIZE", above)
        op = _op(case)
        assert len(op.inputs) - 1 == 64 + above  # input_list, after the condition
        assert len(op.outputs) == 64 + above
        assert _count(case, "COND_IF") == 6


@settings(max_examples=1, phases=DRAW_ONLY)
@given(st.data())
def test_while_loop_lists_of_64_nested_6_deep(data: st.DataObject) -> None:
    case = _draw(data, "WHILE_LOOP", "Boolean", "MAX_TENSOR_LIST_SIZE", False)
    op = _op(case)
    assert len(op.inputs) == len(op.outputs) == 64
    assert _count(case, "WHILE_LOOP") == 6
    _valid(case)


@settings(max_examples=3, phases=DRAW_ONLY)
@given(st.data())
def test_fft_size_at_8192_and_the_next_power_of_two_above(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "RFFT2D", "fp32", "MAX_KERNEL", above)
        n, h, w = _shape(case, "input_real")
        assert n == 1 and max(h, w) == (16384 if above else 8192)
        if above:
            assert _clause(case) in (
                "H <= MAX_KERNEL (16384 > 8192)",
                "W <= MAX_KERNEL (16384 > 8192)",
            )


@settings(max_examples=3, phases=DRAW_ONLY)
@given(st.data())
def test_rank_6_with_every_dimension_2(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "ADD", "signed 32", "MAX_RANK", above)
        assert _shape(case, _op(case).outputs[0]) == (2,) * (6 + above)


@settings(max_examples=3, phases=DRAW_ONLY)
@given(st.data())
def test_variable_of_rank_6_and_7(data: st.DataObject) -> None:
    for above in (False, True):
        case = _draw(data, "VARIABLE", "signed 8", "MAX_RANK", above)
        shape = tuple(_op(case).attributes["var_shape"])
        assert len(shape) == 6 + above and min(shape) >= 2
        if above:
            assert _clause(case) == "rank(shape) <= MAX_RANK"


# -- what is not a level case ---------------------------------------------------------------


@settings(max_examples=2, phases=DRAW_ONLY)
@given(st.data())
def test_a_case_is_at_one_limit_case_only(data: st.DataObject) -> None:
    case = data.draw(
        level_cases(SPEC, "CONV2D", I8X8, LEVEL, limit="MAX_KERNEL"), label="kernel at"
    )
    assert is_level_case(case, SPEC, LEVEL, above=False, limit="MAX_KERNEL")
    assert not is_level_case(case, SPEC, LEVEL, above=True, limit="MAX_KERNEL")
    # dilation 1 on the long axis: not reached through the dilation
    assert not is_level_case(case, SPEC, LEVEL, above=False, limit="MAX_KERNEL:dilation")
    assert not is_level_case(case, SPEC, LEVEL, above=False, limit="MAX_KERNEL:pad")
    assert not is_level_case(case, SPEC, LEVEL, above=False, limit="MAX_STRIDE")


@settings(max_examples=3, phases=DRAW_ONLY)
@given(st.data())
def test_an_ordinary_case_is_at_no_limit(data: st.DataObject) -> None:
    case = data.draw(valid_cases(SPEC, "AVG_POOL2D", "signed 8 with int32 accumulate", LEVEL))
    for name in level_limits_for(SPEC, "AVG_POOL2D"):
        assert not is_level_case(case, SPEC, LEVEL, above=False, limit=name)
        assert not is_level_case(case, SPEC, LEVEL, above=True, limit=name)


@settings(max_examples=1, phases=DRAW_ONLY)
@given(st.data())
def test_long_lists_without_the_nesting_are_not_at_the_limit(data: st.DataObject) -> None:
    op_spec = SPEC.operator("COND_IF")
    rc = RecipeContext(SPEC, op_spec, op_spec.modes[0], LEVEL, Budget())
    flat = data.draw(
        st.composite(lambda draw: cond_if_case(draw, rc, depth=1, reach=True, lists=64))(),
        label="one COND_IF, lists of 64",
    )
    assert flat is not None and _count(flat, "COND_IF") == 1
    assert not is_level_case(flat, SPEC, LEVEL, above=False, limit="MAX_TENSOR_LIST_SIZE")


def test_unknown_and_exempt_limit_cases_are_refused() -> None:
    with pytest.raises(KeyError, match="its cases: MAX_KERNEL, MAX_KERNEL:pad, MAX_STRIDE"):
        level_cases(SPEC, "MAX_POOL2D", "signed 8", LEVEL, limit="MAX_SCALE")
    with pytest.raises(ValueError, match="a pad stays below its kernel"):
        level_cases(SPEC, "MAX_POOL2D", "signed 8", LEVEL, limit="MAX_KERNEL:pad")
    with pytest.raises(KeyError, match="none"):
        level_cases(SPEC, "MATMUL", "signed 8x8 with int32 accumulate", LEVEL, limit="MAX_RANK")


def _pool(kernel: int, pad_top: int) -> Case:
    ih = 1
    oh = ih + pad_top - kernel + 1  # (IH + pad_top + pad_bottom - kernel_y) / 1 + 1
    spec = CaseSpec(
        "MAX_POOL2D",
        "signed 8",
        [TensorDraw("input", (1, ih, 1, 1), dtypes.I8, np.zeros((1, ih, 1, 1), np.int8))],
        [TensorDraw("output", (1, oh, 1, 1), dtypes.I8)],
        {"kernel": (kernel, 1), "stride": (1, 1), "pad": (pad_top, 0, 0, 0)},
    )
    return spec.build(SPEC)


def test_a_pool_pad_cannot_sit_at_max_kernel() -> None:
    """The exemption's reason, checked: pad 8192 under a kernel of 8192 is an ERROR_IF;
    under a kernel of 8193 the kernel's LEVEL_CHECK fires first; 8191 is the most a
    valid pad can be."""
    error = evaluate(
        _pool(8192, 8192).graph, {"input": np.zeros((1, 1, 1, 1), np.int8)}, spec=SPEC, level=LEVEL
    )
    assert error.kind == "error" and error.rule is not None
    assert error.rule.clause == "pad_top >= kernel_y || pad_bottom >= kernel_y"
    above = evaluate(
        _pool(8193, 8192).graph, {"input": np.zeros((1, 1, 1, 1), np.int8)}, spec=SPEC, level=LEVEL
    )
    assert above.rule is not None and above.rule.clause.startswith("kernel_y <= MAX_KERNEL")
    valid = evaluate(
        _pool(8192, 8191).graph, {"input": np.zeros((1, 1, 1, 1), np.int8)}, spec=SPEC, level=LEVEL
    )
    assert valid.kind == "valid"


# -- the axis geometry ------------------------------------------------------------------------


# The variants each kind of window has: forward convolutions all four, transposed no
# dilation, pooling neither dilation nor pad (its pads stay below the kernel: exempt).
KINDS = [(False, False, variant) for variant in ("kernel", "dilation", "pad", "stride")] + [
    (True, False, "kernel"),
    (True, False, "pad"),
    (True, False, "stride"),
]
KINDS += [(False, True, "kernel"), (False, True, "stride")]


@settings(max_examples=200)
@given(st.data(), st.sampled_from(KINDS), st.integers(1, 10000))
def test_window_axis_meets_the_output_size_formulas(
    data: st.DataObject, kind: tuple[bool, bool, str], v: int
) -> None:
    transposed, pooled, variant = kind
    g = data.draw(window_axis(variant, v, transposed=transposed, pooled=pooled), label="axis")
    i, o, k, s, d, p0, p1 = (
        g[n] for n in ("in", "out", "kernel", "stride", "dilation", "p0", "p1")
    )
    assert i >= 1 and o >= 1 and k >= 1 and s >= 1 and d >= 1
    if transposed:
        assert p0 > -k and p1 > -k and o == (i - 1) * s + p0 + p1 + k
    else:
        span = i - 1 + p0 + p1 - (k - 1) * d
        assert span >= 0 and span % s == 0 and o == span // s + 1
        assert min(p0, p1) >= 0
    if pooled:
        assert p0 < k and p1 < k
    reached = {"kernel": k, "stride": s, "pad": max(p0, p1), "dilation": k * d}[variant]
    if variant == "dilation":
        factorable = any(v % f == 0 and v // f >= 2 for f in range(2, 17))
        # v = K * dilation where it factors so; else K = 2 and the product just above v
        assert reached == v if factorable else (k, d) == (2, -(-v // 2))
    else:
        assert reached == v
    if variant == "stride":
        assert o >= 2  # a stride only shows between two outputs


@settings(max_examples=2, phases=DRAW_ONLY)
@given(st.data())
def test_block_scaled_conv2d_pad_at_8192_binds_the_block_size(data: st.DataObject) -> None:
    # TOSA 1.1: the scale shapes divide by the block_size attribute ([N,IH,IW,IC/block_size]),
    # whose value is an enumeration name; BLOCK_SIZE_32 stands for 32, so an IC of 32
    # has scales of one block.
    spec = load_revision("1.1-draft")
    level = spec.level("8K")
    mode = spec.operator("CONV2D_BLOCK_SCALED").modes[0].mode
    with spec_in_use(spec):
        strategy = level_cases(spec, "CONV2D_BLOCK_SCALED", mode, level, limit="MAX_KERNEL:pad")
        case = data.draw(strategy, label="CONV2D_BLOCK_SCALED pad at 8192")
        assert is_level_case(case, spec, level, above=False, limit="MAX_KERNEL:pad")
    assert _op(case).attributes["block_size"] == "BLOCK_SIZE_32"
    # pad is a shape input in 1.1: a constant tensor of the graph
    pad = case.graph.main.tensors["pad"].data
    assert pad is not None and max(pad) == 8192
    ic = case.graph.main.tensors["input_data"].shape[-1]
    assert case.graph.main.tensors["input_scale"].shape[-1] == ic // 32
