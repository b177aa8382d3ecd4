"""The tensor operators' recipes and breakers on TOSA 1.0: nan_mode drawn with NaN
placed where the two modes part, must-fail vectors for the zero-point tensors' rules,
and weights kept finite where a backend may multiply them by a skipped tap's 0."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from conformance.spec import load_revision
from reference.arguments import INPUTS_CLAUSE, TYPES_CLAUSE
from reference.engine import evaluate
from reference.ops.tensor_conv import MATMUL_ZP_INPUT_CLAUSE
from strategies.draw import draw_examples
from strategies.invalid import invalid_cases
from strategies.recipes.conv_geometry import Axis
from strategies.recipes.conv_specials import finite_where_skipped, skipped_taps
from strategies.valid import valid_cases

SPEC = load_revision("1.0")
LEVEL = SPEC.level("8K")


def _both_modes(case: object) -> tuple[np.ndarray, np.ndarray]:
    """The case's output under PROPAGATE and under IGNORE."""
    outs = []
    for mode in ("PROPAGATE", "IGNORE"):
        graph = copy.deepcopy(case.graph)  # type: ignore[attr-defined]
        graph.main.operators[0].attributes["nan_mode"] = mode
        outcome = evaluate(graph, case.inputs, spec=SPEC)  # type: ignore[attr-defined]
        assert outcome.kind == "valid", str(outcome)
        outs.append(next(iter(outcome.outputs.values())).astype(np.float64))
    return outs[0], outs[1]


@pytest.mark.parametrize("op", ["ARGMAX", "MAX_POOL2D"])
def test_nan_mode_drawn_and_the_modes_part(op: str) -> None:
    modes, differ = set(), 0
    for case in draw_examples(valid_cases(SPEC, op, "fp32", LEVEL), 30, 1):
        modes.add(case.graph.main.operators[0].attributes["nan_mode"])
        p, i = _both_modes(case)
        differ += not np.array_equal(p, i, equal_nan=True)
    assert modes == {"PROPAGATE", "IGNORE"}
    assert differ >= 3, f"{differ} of 30 {op} cases tell the modes apart"


def test_argmax_rows_with_several_nan_among_numbers() -> None:
    seen = 0
    for case in draw_examples(valid_cases(SPEC, "ARGMAX", "fp16", LEVEL), 30, 2):
        axis = case.graph.main.operators[0].attributes["axis"]
        (x,) = case.inputs.values()
        nan = np.isnan(np.moveaxis(x.astype(np.float64), axis, -1)).reshape(-1, x.shape[axis])
        count = nan.sum(axis=1)
        seen += int(np.any((count >= 2) & (count < nan.shape[1])))
    assert seen >= 1


def test_integer_modes_carry_nan_mode_too() -> None:
    for case in draw_examples(valid_cases(SPEC, "MAX_POOL2D", "signed 8", LEVEL), 5, 0):
        assert case.graph.main.operators[0].attributes["nan_mode"] in ("PROPAGATE", "IGNORE")


BREAKERS = [
    ("CONV2D", "fp32 with fp32 accumulate", "!is_same<in_t,i8_t>() && input_zp != 0"),
    ("CONV2D", "signed 8x4 with int32 accumulate", "!is_same<weight_t,i8_t>() && weight_zp != 0"),
    ("CONV3D", "signed 16x8 with int48 accumulate", "!is_same<in_t,i8_t>() && input_zp != 0"),
    (
        "DEPTHWISE_CONV2D",
        "fp16 with fp32 accumulate",
        "!is_same<weight_t,i8_t>() && weight_zp != 0",
    ),
    ("TRANSPOSE_CONV2D", "bf16 with fp32 accumulate", "!is_same<in_t,i8_t>() && input_zp != 0"),
    (
        "AVG_POOL2D",
        "signed 16 with int32 accumulate",
        "!is_same<in_out_t,i8_t>() && output_zp != 0",
    ),
    ("AVG_POOL2D", "fp16 with fp32 accumulate", "!is_same<in_out_t,i8_t>() && input_zp != 0"),
    ("MATMUL", "fp16 with fp16 accumulate", MATMUL_ZP_INPUT_CLAUSE),
    ("MATMUL", "signed 8x8 with int32 accumulate", INPUTS_CLAUSE),
    ("CONV2D", "signed 8x8 with int32 accumulate", TYPES_CLAUSE),
    ("AVG_POOL2D", "signed 8 with int32 accumulate", INPUTS_CLAUSE),
]


@pytest.mark.parametrize(("op", "mode", "clause"), BREAKERS)
def test_zero_point_breakers_fail_as_they_say(op: str, mode: str, clause: str) -> None:
    cases = draw_examples(invalid_cases(SPEC, op, mode, LEVEL, clause=clause), 4, 0)
    assert cases
    for case in cases:
        outcome = evaluate(case.graph, case.inputs, spec=SPEC)
        assert outcome.kind == "error" and outcome.rule is not None, str(outcome)
        assert outcome.rule.clause == clause, str(outcome)


def test_draft_zero_point_breakers_stay_off_in_1_0() -> None:
    # The draft's spellings and its attribute-range breaker do not apply where the zero
    # points are input tensors.
    from strategies.invalid import breakers_for
    from strategies.recipes import RecipeContext
    from strategies.shapes import Budget

    op_spec = SPEC.operator("AVG_POOL2D")
    rc = RecipeContext(
        SPEC, op_spec, op_spec.mode("signed 16 with int32 accumulate"), LEVEL, Budget()
    )
    clauses = {b.clause for b in breakers_for("AVG_POOL2D", rc)}
    assert "in_out_t != i8_t && input_zp != 0" not in clauses
    assert "!is_same<in_out_t,i8_t>() && input_zp != 0" in clauses


def test_skipped_taps_by_hand() -> None:
    # Forward: IH 3, OH 3, kernel 3, pad_top 1: output 0 reads rows -1, 0, 1 and output 2
    # rows 1, 2, 3, so offsets 0 and 2 read padding somewhere, offset 1 never.
    assert skipped_taps(Axis(3, 3, 3, pad_before=1, pad_after=1), False).tolist() == [
        True,
        False,
        True,
    ]
    # No padding: every tap reads the input.
    assert not skipped_taps(Axis(4, 2, 3), False).any()
    # Transposed, stride 2 (IW 2, KW 3, OW 5): output ox reads x = ox - kx only where x
    # is even: offset 0 is skipped at ox 1, offset 1 at ox 0, offset 2 at ox 1.
    assert skipped_taps(Axis(2, 5, 3, stride=2), True).all()
    # Transposed, stride 1, KW 1, no out_pad: output o reads input o, always.
    assert not skipped_taps(Axis(3, 3, 1), True).any()


def test_finite_where_skipped_zeroes_only_those_weights() -> None:
    # CONV2D 3x3 kernel with 'same' padding on both axes: only the centre offset (1, 1)
    # is never skipped, so its inf survives and the inf at (0, 0) becomes 0.
    axis = Axis(3, 3, 3, pad_before=1, pad_after=1)
    w = np.ones((1, 3, 3, 1), np.float32)
    w[0, 1, 1, 0] = np.inf
    w[0, 0, 0, 0] = np.nan
    out = {"weight": w}
    finite_where_skipped(out, "CONV2D", [axis, axis], "weight")
    assert np.isinf(out["weight"][0, 1, 1, 0]) and out["weight"][0, 0, 0, 0] == 0.0
    # DEPTHWISE_CONV2D's [KH, KW, C, M] layout.
    d = np.full((3, 3, 1, 1), np.inf, np.float32)
    out = {"weight": d}
    finite_where_skipped(out, "DEPTHWISE_CONV2D", [axis, axis], "weight")
    assert np.isinf(out["weight"][1, 1]).all() and np.isfinite(out["weight"]).sum() == 8


def _weights(case: object) -> np.ndarray:
    main = case.graph.main  # type: ignore[attr-defined]
    values = case.inputs.get("weight")  # type: ignore[attr-defined]
    with np.errstate(invalid="ignore"):
        return np.asarray(main.tensors["weight"].data if values is None else values, np.float64)


@pytest.mark.parametrize("op", ["CONV2D", "TRANSPOSE_CONV2D"])
def test_1_0_weights_are_finite_where_taps_are_skipped(op: str) -> None:
    # Every non-finite weight sits at a kernel offset that no output skips.
    mode = "fp32 with fp32 accumulate"
    specials = 0
    # Edge cases place every special value in the weights (where they may go).
    for case in draw_examples(valid_cases(SPEC, op, mode, LEVEL, target="edge"), 40, 4):
        main = case.graph.main
        operator = main.operators[0]
        attrs = operator.attributes
        _, ih, iw, _ = main.tensors[operator.inputs[0]].shape
        _, oh, ow, _ = main.tensors[operator.outputs[0]].shape
        w = _weights(case)
        _, kh, kw, _ = w.shape
        pads = attrs["out_pad"] if op == "TRANSPOSE_CONV2D" else attrs["pad"]
        dil = attrs.get("dilation", (1, 1))
        axes = [
            Axis(ih, oh, kh, attrs["stride"][0], dil[0], pads[0], pads[1]),
            Axis(iw, ow, kw, attrs["stride"][1], dil[1], pads[2], pads[3]),
        ]
        skipped = np.logical_or.outer(*(skipped_taps(a, op == "TRANSPOSE_CONV2D") for a in axes))
        bad = ~np.isfinite(w)
        specials += int(bad.any())
        assert not (bad & skipped[None, :, :, None]).any()
    assert specials >= 1, "no case drawn with a non-finite weight"
