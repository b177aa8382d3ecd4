"""The tie detectors of strategies.ties, on hand-worked values, and the tie
constructors of strategies.tie_values checked against them."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import dtypes
from conformance.spec import load_spec
from strategies import tie_values
from strategies.ties import (
    FACTS,
    NEAR_TIE,
    ROUNDING_OPERATORS,
    TIE,
    float_classes,
    shift_classes,
    tie_facts,
    tie_kinds,
)

SPEC = load_spec()
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def facts(op: str, mode: str, inputs: dict, attributes: dict | None = None, expected=None) -> set:
    arrays = {k: np.asarray(v) for k, v in inputs.items()}
    out = {"output": np.asarray(expected)} if expected is not None else {}
    return tie_facts(op, SPEC.operator(op).mode(mode), arrays, attributes or {}, out)


def test_rounding_operators_follow_the_rule() -> None:
    # Integer rounding in the pseudocode, the 0.5-ulp rows, wide float accumulators.
    for op in ("RESCALE", "ARITHMETIC_RIGHT_SHIFT", "MUL", "INTDIV", "CAST", "RESIZE"):
        assert op in ROUNDING_OPERATORS
    for op in ("ADD", "SUB", "AVG_POOL2D", "CONV2D", "REDUCE_SUM"):
        assert op in ROUNDING_OPERATORS
    # TABLE's 16.7 interpolation is exact; CEIL/FLOOR results are integral; MAXIMUM,
    # CLAMP only pick values; MATMUL's float modes bind no wider acc_t.
    for op in ("TABLE", "CEIL", "FLOOR", "MAXIMUM", "CLAMP", "EXP", "MATMUL"):
        assert op not in ROUNDING_OPERATORS


@pytest.mark.parametrize(
    ("op", "mode", "rounds"),
    [
        ("CAST", "signed 8 to signed 16", False),
        ("CAST", "signed 8 to bf16", False),  # |i8| <= 128 = 2**7: bf16 holds 8 bits
        ("CAST", "signed 16 to bf16", True),
        ("CAST", "fp16 to fp32", False),
        ("CAST", "fp32 to fp16", True),
        ("CAST", "bf16 to signed 8", True),
        ("MUL", "signed 8", False),
        ("MUL", "signed 32", True),
        ("MUL", "fp16", True),
        ("ADD", "signed 32", False),
        ("ADD", "bf16", True),
        ("RESIZE", "signed 8, bilinear", False),
        ("RESIZE", "signed 8, nearest", True),
        ("RESIZE", "fp32", True),
        ("AVG_POOL2D", "signed 8 with int32 accumulate", True),
        ("AVG_POOL2D", "fp16 with fp16 accumulate", False),
        ("AVG_POOL2D", "fp16 with fp32 accumulate", True),
        ("CONV2D", "fp32 with fp32 accumulate", False),
        ("CONV2D", "bf16 with fp32 accumulate", True),
        ("REDUCE_SUM", "bf16", True),
        ("TABLE", "signed 16", False),
    ],
)
def test_tie_kinds_per_mode(op: str, mode: str, rounds: bool) -> None:
    assert tie_kinds(op, SPEC.operator(op).mode(mode)) == (FACTS if rounds else frozenset())


def test_arithmetic_right_shift_with_round() -> None:
    # 6 = 0b110 >> 2: shifted-out bits 10, exactly half; 7 = 0b111: 11 = half + 1;
    # 5 = 0b101: 01 = half - 1; 4 = 0b100: 00, exact.
    mode, on = "signed 8", {"round": True}
    assert facts("ARITHMETIC_RIGHT_SHIFT", mode, {"input1": [6], "input2": [2]}, on) == {TIE}
    assert facts("ARITHMETIC_RIGHT_SHIFT", mode, {"input1": [7], "input2": [2]}, on) == {NEAR_TIE}
    assert facts("ARITHMETIC_RIGHT_SHIFT", mode, {"input1": [5], "input2": [2]}, on) == {NEAR_TIE}
    assert facts("ARITHMETIC_RIGHT_SHIFT", mode, {"input1": [4], "input2": [2]}, on) == set()
    # -6 = ...11010: low bits 10 as well, the negative half.
    assert facts("ARITHMETIC_RIGHT_SHIFT", mode, {"input1": [-6], "input2": [2]}, on) == {TIE}
    # Without round nothing rounds; a shift of 0 shifts nothing out.
    off = {"round": False}
    assert facts("ARITHMETIC_RIGHT_SHIFT", mode, {"input1": [6], "input2": [2]}, off) == set()
    assert facts("ARITHMETIC_RIGHT_SHIFT", mode, {"input1": [6], "input2": [0]}, on) == set()
    # Broadcast: a shift of 1 meets 3 (0b11: half) and 4.
    both = facts("ARITHMETIC_RIGHT_SHIFT", mode, {"input1": [3, 4], "input2": [1]}, on)
    assert both == {TIE}


def test_cast_float_to_int() -> None:
    mode = "fp32 to signed 8"
    assert facts("CAST", mode, {"input": np.float32([2.5])}) == {TIE}
    assert facts("CAST", mode, {"input": np.float32([-2.5])}) == {TIE}
    above = np.nextafter(np.float32(2.5), np.float32(3))  # 2.5 + 2**-22: one fp32 ulp
    assert facts("CAST", mode, {"input": [above]}) == {NEAR_TIE}
    assert facts("CAST", mode, {"input": np.float32([2.5 + 2**-10])}) == set()  # 1024 ulp
    assert facts("CAST", mode, {"input": np.float32([3.0, np.nan, np.inf])}) == set()
    # 127.5 and -128.5 lie between a value of i8 and one beyond it: saturation decides.
    assert facts("CAST", mode, {"input": np.float32([127.5, -128.5])}) == set()
    assert facts("CAST", mode, {"input": np.float32([126.5])}) == {TIE}


def test_cast_int_to_float() -> None:
    # 2**24 + 1 is half-way between 2**24 and 2**24 + 2 in fp32; 2**25 + 1 is one off
    # the midpoint 2**25 + 2 (ulp 4); 2**24 + 2 is exact.
    mode = "signed 32 to fp32"
    assert facts("CAST", mode, {"input": np.int32([16_777_217])}) == {TIE}
    assert facts("CAST", mode, {"input": np.int32([2**25 + 1])}) == {NEAR_TIE}
    assert facts("CAST", mode, {"input": np.int32([2**24 + 2, 5])}) == set()
    # fp16: 2**11 + 1 = 2049 between 2048 and 2050; bf16: 2**8 + 1 = 257.
    assert facts("CAST", "signed 16 to fp16", {"input": np.int16([2049])}) == {TIE}
    assert facts("CAST", "signed 16 to fp16", {"input": np.int16([4097])}) == {NEAR_TIE}
    assert facts("CAST", "signed 16 to bf16", {"input": np.int16([257])}) == {TIE}
    # A mode that does not round has no facts, whatever the values.
    assert facts("CAST", "signed 8 to fp32", {"input": np.int8([1, 3])}) == set()


def test_cast_float_to_narrower_float() -> None:
    mode = "fp32 to fp16"
    # 1 + 2**-11: half an fp16 ulp above 1; one fp32 ulp (2**-23) above that is a
    # near-tie (within 2**-11 of an fp16 ulp); 2**-20 above it is not.
    assert facts("CAST", mode, {"input": np.float32([1 + 2**-11])}) == {TIE}
    assert facts("CAST", mode, {"input": np.float32([1 + 2**-11 + 2**-23])}) == {NEAR_TIE}
    assert facts("CAST", mode, {"input": np.float32([1 + 2**-11 + 2**-20])}) == set()
    # 1 + 2**-11 + 2**-30 is no fp32 value (fp32's nearest is the tie itself), but as an
    # exact result it is a near-tie: the double-rounding trap through fp32.
    tie, near = float_classes(np.array([1 + 2**-11 + 2**-30]), dtypes.FP16)
    assert not tie.any() and near.all()
    assert facts("CAST", "fp32 to bf16", {"input": np.float32([1 + 2**-8])}) == {TIE}
    # Subnormal midpoints count: 1.5 * 2**-24 between fp16's two smallest subnormals.
    assert facts("CAST", mode, {"input": np.float32([1.5 * 2**-24])}) == {TIE}
    # fp8e4m3 (ulp 32 from 256 on): 464 lies between 448, its largest value, and no
    # value (480 would be NaN's encoding): not a tie; 432 is half-way between 416 and 448.
    assert facts("CAST", "fp16 to fp8e4m3", {"input": np.float16([464.0])}) == set()
    assert facts("CAST", "fp16 to fp8e4m3", {"input": np.float16([432.0])}) == {TIE}
    assert facts("CAST", mode, {"input": np.float32([np.nan, -np.inf, 0.0])}) == set()


def test_float_error_term() -> None:
    # An exact result s + err: on the tie only when err is 0.
    x = np.array([1 + 2**-11])
    tie, near = float_classes(x, dtypes.FP16, err=np.array([0.0]))
    assert tie.all() and not near.any()
    tie, near = float_classes(x, dtypes.FP16, err=np.array([2.0**-40]))
    assert not tie.any() and near.all()


def test_add_sub_mul_float() -> None:
    # fp32: 1 + 2**-24 half-way; + 2**-47 more is 2**-24 of an ulp off (a near-tie).
    assert facts("ADD", "fp32", {"input1": np.float32([1]), "input2": np.float32([2**-24])}) == {
        TIE
    }
    b = np.float32(2**-24 + 2**-47)
    assert facts("ADD", "fp32", {"input1": np.float32([1]), "input2": [b]}) == {NEAR_TIE}
    # fp16: 1 + (2**-11 + 2**-21): the sticky bit decides.
    b16 = np.float16(2**-11 + 2**-21)
    assert facts("ADD", "fp16", {"input1": np.float16([1]), "input2": [b16]}) == {NEAR_TIE}
    # SUB: 1 - (-2**-11) is the same tie; 1 - 2**-11 is exact (0.99951171875 is fp16).
    assert facts("SUB", "fp16", {"input1": np.float16([1]), "input2": np.float16([-(2**-11)])}) == {
        TIE
    }
    assert (
        facts("SUB", "fp16", {"input1": np.float16([1]), "input2": np.float16([2**-11])}) == set()
    )
    # MUL fp16: 3 * 1025/1024 = 3075/1024, twelve bits with the last one set.
    pair = {"input1": np.float16([3]), "input2": np.float16([1025 / 1024]), "shift": np.int8(0)}
    assert facts("MUL", "fp16", pair) == {TIE}


def test_mul_i32_shift() -> None:
    def run(a: int, b: int, shift: int) -> set:
        inputs = {"input1": np.int32([a]), "input2": np.int32([b]), "shift": np.int8(shift)}
        return facts("MUL", "signed 32", inputs)

    assert run(3, 1, 1) == {TIE}  # 3 / 2
    assert run(5, 1, 2) == {NEAR_TIE}  # 5 / 4: low bits 01 = half - 1
    assert run(-6, 1, 2) == {TIE}  # -6 / 4 = -1.5
    assert run(3, 1, 0) == set()  # shift 0: the low 32 bits, no rounding
    # shift 63: (-2**31)**2 = 2**62 is exactly half of 2**63.
    assert run(I32_MIN, I32_MIN, 63) == {TIE}


def test_intdiv_truncation() -> None:
    def run(a: list[int], b: list[int]) -> set:
        return facts("INTDIV", "signed 32", {"input1": np.int32(a), "input2": np.int32(b)})

    assert run([7], [2]) == {TIE}  # 3.5
    assert run([-7], [2]) == {TIE}  # -3.5
    assert run([7], [3]) == {NEAR_TIE}  # 2 + 1/3: 2|r| - |b| = -1
    assert run([9], [4]) == {NEAR_TIE}  # 2.25: one dividend unit below 2.5
    assert run([8], [4]) == set()  # exact
    assert run([1], [0]) == set()  # not a valid vector: no facts either


def test_rescale() -> None:
    def run(values: list[int], m: int, s: int, **attrs: object) -> set:
        inputs = {
            "input": np.array(values, np.int32),
            "multiplier": np.array([m], np.int32),
            "shift": np.array([s], np.int8),
        }
        base = {"input_zp": 0, "output_zp": 0, "scale32": True, "double_round": False}
        base |= {"per_channel": False, "input_unsigned": False, "output_unsigned": False}
        return facts("RESCALE", "32-bit to 8-bit", inputs, base | attrs)

    # value * multiplier = 2 * 3 = 6 over 2**2: 1.5, the shifted-out bits 10.
    assert run([2], 3, 2) == {TIE}
    assert run([-2], 3, 2) == {TIE}
    assert run([1], 3, 2) == {NEAR_TIE}  # 3/4: bits 11 = half + 1
    assert run([4], 3, 2) == set()  # 12/4 = 3
    # The neighbours 0 and 1 plus output_zp 127 leave i8: saturation decides, no tie.
    assert run([2], 1, 2, output_zp=127) == set()
    assert run([2], 1, 2, output_zp=126) == {TIE}
    # double_round, shift 33: p = 4 * (2**30 - 2**28) = 2**32 - 2**30 is the half minus
    # the 2**30 bias: rounded up only because of it (a near-tie); without double_round
    # it is far from the half.
    v = 2**30 - 2**28
    assert run([v], 4, 33, double_round=True) == {NEAR_TIE}
    assert run([v], 4, 33) == set()
    assert run([2**30], 4, 33, double_round=True) == {TIE}  # 2**32 over 2**33
    # Unsigned input with a zero point: stored -128 reads 128; 128 - 126 = 2.
    i8 = {"input": np.int8([-128]), "multiplier": np.int16([3]), "shift": np.int8([2])}
    attrs = {"input_zp": 126, "output_zp": 0, "scale32": False, "double_round": False}
    attrs |= {"per_channel": False, "input_unsigned": True, "output_unsigned": False}
    assert facts("RESCALE", "8-bit to 16-bit", i8, attrs) == {TIE}


def test_rescale_per_channel() -> None:
    # Channel 0: 2 * 1 / 4 = 0.5 (tie); channel 1: 2 * 2 / 4 = 1 (exact).
    inputs = {
        "input": np.array([[2, 2]], np.int16),
        "multiplier": np.array([1, 2], np.int16),
        "shift": np.array([2, 2], np.int8),
    }
    attrs = {"input_zp": 0, "output_zp": 0, "scale32": False, "double_round": False}
    attrs |= {"input_unsigned": False, "output_unsigned": False}
    assert facts("RESCALE", "16-bit to 16-bit", inputs, attrs | {"per_channel": True}) == {TIE}
    inputs["multiplier"] = np.array([2, 1], np.int16)  # per-tensor: only the first one
    assert facts("RESCALE", "16-bit to 16-bit", inputs, attrs | {"per_channel": False}) == set()


def test_resize_nearest_positions() -> None:
    def run(scale: list[int], offset: list[int], border: list[int], in_hw: tuple[int, int]):
        x = np.zeros((1, *in_hw, 1), np.int8)
        inputs = {"input": x, "scale": scale, "offset": offset, "border": border}
        return facts("RESIZE", "signed 8, nearest", inputs, {"mode": "NEAREST_NEIGHBOR"})

    # Upscale by 2 along x (OW = (2 - 1) * 2 + 1 = 3): column 1 samples at x = 1/2,
    # between input columns 0 and 1.
    assert run([1, 1, 2, 1], [0, 0], [0, 0], (1, 2)) == {TIE}
    # Upscale by 3 (OW = 4): remainders 1 and 2 of 3, 2r = n -+ 1: a grid step off.
    assert run([1, 1, 3, 1], [0, 0], [0, 0], (1, 2)) == {NEAR_TIE}
    assert run([1, 1, 1, 1], [0, 0], [0, 0], (2, 2)) == set()  # every position exact
    # Half-way past the last column (offset 1, border 1: OW = 1, x = 1/2 with IW = 1),
    # where both neighbours are the same column: no tie.
    assert run([1, 1, 2, 1], [0, 1], [0, 1], (1, 1)) == set()
    assert run([1, 1, 2, 1], [0, 1], [0, 1], (1, 2)) == {TIE}  # IW = 2: columns 0 and 1


def test_facts_without_expected_outputs() -> None:
    # A drawn case not yet evaluated: the inputs decide every fact but the ones read
    # from fp64 results (RESIZE BILINEAR, accumulations), which then are none.
    inputs = {"input": np.zeros((1, 1, 2, 1), np.float16), "scale": [1, 1, 2, 1]}
    inputs |= {"offset": [0, 0], "border": [0, 0]}
    assert facts("RESIZE", "fp16", inputs, {"mode": "NEAREST_NEIGHBOR"}) == {TIE}
    assert facts("RESIZE", "fp16", inputs, {"mode": "BILINEAR"}) == set()
    assert facts("CONV2D", "bf16 with fp32 accumulate", {}) == set()


def test_resize_bilinear_float_values() -> None:
    inputs = {"input": np.zeros((1, 1, 2, 1), np.float16), "scale": [1, 1, 2, 1]}
    inputs |= {"offset": [0, 0], "border": [0, 0]}
    # (1 + (1 + 2**-10)) / 2 is half-way between two fp16 values.
    out = np.array([1.0, 1 + 2**-11, 1 + 2**-10]).reshape(1, 1, 3, 1)
    assert facts("RESIZE", "fp16", inputs, {"mode": "BILINEAR"}, out) == {TIE}
    assert facts("RESIZE", "fp16", inputs, {"mode": "BILINEAR"}, out[..., :1, :]) == set()


def test_avg_pool2d_integer_means() -> None:
    def run(values: list[int], kernel: list[int], pad: list[int], zp: int = 0) -> set:
        x = np.array(values, np.int8).reshape(1, 1, -1, 1)
        attrs = {"kernel": kernel, "stride": [1, 1], "pad": pad, "input_zp": zp, "output_zp": 0}
        return facts("AVG_POOL2D", "signed 8 with int32 accumulate", {"input": x}, attrs)

    assert run([1, 2], [1, 2], [0, 0, 0, 0]) == {TIE}  # (1 + 2) / 2 = 1.5
    assert run([1, 1, 1, 2], [1, 4], [0, 0, 0, 0]) == {NEAR_TIE}  # 5/4, 1/4 under 1.5
    assert run([1, 1, 2], [1, 3], [0, 0, 0, 0]) == {NEAR_TIE}  # 4/3, 1/6 under 1.5
    # Padding does not count: the window [pad, 3] averages 3 alone.
    assert run([3], [1, 2], [0, 0, 1, 0]) == set()
    assert run([4, 5], [1, 2], [0, 0, 0, 0], zp=1) == {TIE}  # (3 + 4) / 2


@given(seed=st.integers(0, 2**32 - 1))
def test_constructed_float_partners_are_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for dt in (dtypes.FP16, dtypes.BF16, dtypes.FP32):
        a = tie_values.mul_factors(rng, (64,), dt)
        b = tie_values.mul_partner(rng, a, dt)
        for v in (a, b):  # the type holds every constructed operand
            assert (v.astype(dt.storage).astype(np.float64) == v).all()
        tie, near = float_classes(a * b, dt)
        assert tie[0] and near[1] and (tie | near).mean() > 0.5
        x = np.float64(rng.uniform(-4, 4, 64).astype(dt.storage))
        tie, near = float_classes(x + tie_values.add_partner(rng, x, dt), dt)
        assert tie[0] and (tie | near).mean() > 0.7


@given(seed=st.integers(0, 2**32 - 1), shift=st.integers(1, 63))
def test_constructed_shifted_products_are_ties_and_fit(seed: int, shift: int) -> None:
    rng = np.random.default_rng(seed)
    a = tie_values.shifted_product_factors(rng, (64,), shift)
    b = tie_values.shifted_product_partner(rng, a, shift)
    for v in (a, b):
        assert ((v >= I32_MIN) & (v <= I32_MAX)).all()
    # The reference's rounded product: (p + 2**(s-1)) >> s, kept in i32 (the REQUIRE).
    p = a * b
    result = (p >> shift) + ((p & ((1 << shift) - 1)) >= (1 << (shift - 1)))
    assert ((result >= I32_MIN) & (result <= I32_MAX)).all()
    tie, near = shift_classes(p, np.int64(shift), lo=I32_MIN, hi=I32_MAX)
    assert (tie | near).all()


@given(seed=st.integers(0, 2**32 - 1), bits=st.sampled_from([8, 16, 32]))
def test_constructed_shifted_values_are_ties(seed: int, bits: int) -> None:
    rng = np.random.default_rng(seed)
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    shift = rng.integers(1, bits, 64)
    v = tie_values.shifted_ties(rng, shift, lo, hi)
    assert ((v >= lo) & (v <= hi)).all()
    tie, near = shift_classes(v, shift)
    assert (tie | near).all() and tie[0]


def test_inverse_mod_pow2() -> None:
    a = np.array([1, 3, -5, 2**31 - 1, 12345679])
    for bits in (1, 11, 24, 31, 62):
        inv = tie_values.inverse_mod_pow2(a, bits)
        assert all(
            (int(x) * int(y)) % (1 << bits) == 1 % (1 << bits) for x, y in zip(a, inv, strict=True)
        )
