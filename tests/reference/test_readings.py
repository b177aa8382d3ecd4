"""The readings table (reference.compliance.readings, docs/compliance.md "Readings"):
every row is documented and has a test, and the rows pinned here hold, with values
worked by hand."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest

from conformance.builder import single_operator_graph
from conformance.dtypes import BF16, FP16, FP32
from reference.compliance import abs_error_for, check, dot_product, for_operator, resize
from reference.compliance.readings import READINGS
from reference.engine import evaluate, to_storage
from reference.expectations import expect

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "compliance.md"


# -- the table ------------------------------------------------------------------------------


def _defined(path: Path, names: list[str]) -> bool:
    """Whether ``names`` (a function, or a class then its method) is defined in ``path``."""
    body: list[ast.stmt] = ast.parse(path.read_text()).body
    for name in names:
        found = next(
            (n for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == name),
            None,
        )
        if found is None:
            return False
        body = found.body if isinstance(found, ast.ClassDef) else []
    return True


@pytest.mark.parametrize("reading", READINGS, ids=lambda r: r.id)
def test_every_reading_has_a_test_that_exists(reading) -> None:
    path, *names = reading.test.split("::")
    assert (ROOT / path).is_file(), reading.test
    assert names and _defined(ROOT / path, names), f"{reading.id}: no {reading.test}"
    assert reading.spec and reading.decision and reading.arm


def test_every_reading_is_a_row_of_the_docs_table() -> None:
    text = DOCS.read_text()
    section = text.split("\n## Readings\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z0-9-]+)` \|", section, flags=re.MULTILINE)
    assert rows == [r.id for r in READINGS]
    for r in READINGS:
        line = next(x for x in section.splitlines() if x.startswith(f"| `{r.id}` |"))
        assert r.test.split("::")[-1] in line, f"{r.id}: the docs row does not name its test"
    assert len({r.id for r in READINGS}) == len(READINGS)


# -- SIN / COS: the truncated exponent -----------------------------------------------------------


def test_cos_fp32_truncated_exponent_is_looser_than_arms() -> None:
    # COS fp32 at x = 1: err_bnd = exp2(trunc(-23 / 2)) * |x| * (1 + |x|) = 2**-11 * 2
    # = 2**-10 = 9.765625e-4.  Arm's verifier uses 2**-11.5 * 2 = 6.905e-4.
    desc = abs_error_for("COS", FP32)
    ref = math.cos(1.0)
    ours, arms = 2.0**-10, 2.0**-11.5 * 2
    between = np.array([ref + 0.9 * ours], dtype=np.float32)  # 8.79e-4 from ref
    assert arms < abs(float(between[0]) - ref) < ours
    assert check(np.array([ref]), desc, between, np.array([1.0])).passed
    beyond = np.array([ref + 1.1 * ours], dtype=np.float32)
    assert not check(np.array([ref]), desc, beyond, np.array([1.0])).passed


# -- +-inf in dot products ------------------------------------------------------------------------


def test_dot_product_infinity_where_the_range_passes_normal_max() -> None:
    # fp16 output, fp32 accumulator, KS = 1: ksb = ceil(1 / 2**13) = 1; with the bound
    # equal to |ref|, one error unit is |ref| * 2**-11.
    desc = dot_product("MATMUL", FP16, FP32, ks=1, data_set=-1)

    def passes(ref: float, result: float) -> bool:
        actual = np.array([result], dtype=np.float16)
        return check(np.array([ref]), desc, actual, np.array([abs(ref)])).passed

    # 65519 + 65519 * 2**-11 = 65551 > 65504: the range passes normal_max, inf allowed.
    assert passes(65519.0, np.inf) and passes(65519.0, 65504.0)
    assert passes(-65519.0, -np.inf) and not passes(-65519.0, np.inf)
    # 60000 + 29.3 < 65504: inf is 'far' from the reference and fails, as does 65504
    # (5504 / 29.3 = 188 units).
    assert not passes(60000.0, np.inf) and not passes(60000.0, 65504.0)
    # 70000 is beyond fp16 (the fp32 accumulator does not overflow): only inf, 65504 is
    # 4496 / 34.2 = 131 units off (Arm's verifier accepts it).
    assert passes(70000.0, np.inf) and not passes(70000.0, 65504.0)


def test_avg_pool_sum_past_the_accumulator_has_no_limit() -> None:
    # AVG_POOL2D fp16 with fp16 accumulate, kernel 2x1 over a 2x1 input: one output, the
    # mean of the two.  KS = 2, so the slack is 1 + 2 * 2**-10.
    def judged(a: float, b: float) -> tuple[float, list[bool]]:
        x = np.array([a, b], dtype=np.float16).reshape(1, 2, 1, 1)
        graph = single_operator_graph(
            "AVG_POOL2D",
            [("x", x.shape, "fp16")],
            [("y", (1, 1, 1, 1), "fp16")],
            {"kernel": (2, 1), "stride": (1, 1), "pad": (0, 0, 0, 0), "acc_type": "FP16",
             "input_zp": 0, "output_zp": 0},
        )
        exp = expect(graph, {"x": x})
        ref = float(exp.outcome.outputs["y"].reshape(-1)[0])
        results = [np.inf, ref, 0.0]
        verdicts = [exp.check("y", np.array([r], np.float16).reshape(1, 1, 1, 1)).passed
                    for r in results]
        return ref, verdicts

    # 30000 + 40000 = 70000 > 65504: an fp16 accumulator overflows on the way, so the
    # mean 35000 has no accuracy limit (inf, the exact mean and even 0 pass).
    assert judged(30000.0, 40000.0) == (35000.0, [True, True, True])
    # 30000 + 30000 = 60000, times 1.00195 = 60117 < 65504: the sum fits, the mean
    # 30000 must be met (inf and 0 fail).
    assert judged(30000.0, 30000.0) == (30000.0, [False, True, False])


# -- RESIZE bf16 ---------------------------------------------------------------------------------


def _bf16(x: float) -> float:
    return float(to_storage(np.array([x]), BF16).astype(np.float64)[0])


def _bilinear_in_bf16(v00: float, v01: float, rx: int, scale_n: int) -> float:
    """RESIZE.tosac for one output with dy = 0, every step rounded to bf16 (resize_t
    and the out_t accumulator of the bf16 mode)."""
    dx = _bf16(_bf16(rx) / _bf16(scale_n))
    acc = _bf16(_bf16(v00 * 1.0) * _bf16(1.0 - dx))
    return _bf16(acc + _bf16(_bf16(v01 * 1.0) * dx))


def test_resize_bf16_bound_as_written() -> None:
    # A constant row of -1.0078125 (bf16), upscaled 3x: every exact result is the input.
    x = np.full((1, 1, 2, 1), -1.0078125)
    graph = single_operator_graph(
        "RESIZE",
        [
            ("x", x.shape, "bf16"),
            ("scale", (4,), "shape"),
            ("offset", (2,), "shape"),
            ("border", (2,), "shape"),
        ],
        [("y", (1, 1, 4, 1), "bf16")],
        {"mode": "BILINEAR"},
        constants={
            "scale": np.array([1, 1, 3, 1]),
            "offset": np.array([0, 0]),
            "border": np.array([0, 0]),
        },
    )
    exp = expect(graph, {"x": x})
    ref = exp.outcome.outputs["y"]
    assert ref.reshape(-1).tolist() == [-1.0078125] * 4
    desc = exp.checks["y"].descriptor
    assert desc == resize(BF16, 1.0078125)
    # err_bnd = 0.006 * 1.0078125 = 0.006046875, below the bf16 spacing 2**-7 at 1:
    # only the exact value passes at this magnitude.
    limit = 0.006 * 1.0078125
    assert limit < 2.0**-7
    # The pseudocode step by step in bf16 at ox = 1 (rx = 1 of scale 3):
    # dx = bf16(1/3) = 0.333984375; 1 - dx = 0.666015625 -> 0.6640625 (tie to even);
    # -1.0078125 * 0.6640625 = -0.66925... -> -0.66796875; -1.0078125 * dx = -0.33659...
    # -> -0.3359375; the sum -1.00390625 -> -1.0 (tie to even): 0.0078125 off.
    stepwise = _bilinear_in_bf16(-1.0078125, -1.0078125, 1, 3)
    assert stepwise == -1.0
    assert abs(stepwise - -1.0078125) > limit
    row = np.full((1, 1, 4, 1), -1.0078125)
    row[0, 0, 1, 0] = stepwise
    got = check(ref, desc, to_storage(row, BF16))
    assert not got.passed and got.failing_count == 1
    # Interpolating in fp32 and rounding once: 1/3 and 2/3 in fp32, the sum rounded to
    # bf16 at the end, is exact here and passes.
    dx = float(np.float32(1.0) / np.float32(3.0))
    once = float(np.float32(-1.0078125 * (1 - dx)) + np.float32(-1.0078125 * dx))
    assert _bf16(once) == -1.0078125
    assert check(ref, desc, to_storage(np.full((1, 1, 4, 1), _bf16(once)), BF16)).passed


# -- zero references in the bound modes -----------------------------------------------------


def test_zero_reference_accepts_either_zero_in_bound_modes() -> None:
    # RECIPROCAL(-inf): the fp64 reference is -0.0, and the behaviour table says -0; the
    # ULP interval of a zero reference is [0, normal_min], which +0.0 is in too.
    graph = single_operator_graph("RECIPROCAL", [("x", (1,), "fp32")], [("y", (1,), "fp32")])
    out = evaluate(graph, {"x": np.array([-np.inf], dtype=np.float32)}).outputs["y"]
    assert out[0] == 0 and np.signbit(out[0])
    desc = for_operator("RECIPROCAL", FP32)
    assert check(out, desc, np.array([-0.0], dtype=np.float32)).passed
    assert check(out, desc, np.array([0.0], dtype=np.float32)).passed  # the open gap
    # while an underflow (a non-zero reference) must keep its sign
    assert not check(np.array([-1e-300]), desc, np.array([0.0], dtype=np.float32)).passed
    assert FP16.normal_min == 2.0**-14
