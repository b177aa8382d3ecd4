"""Compliance descriptors of ARGMAX, AVG_POOL2D, MAX_POOL2D, FFT2D and RFFT2D."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.builder import single_operator_graph
from reference.compliance import Mode
from reference.describe.tensor_pool_fft import abs_coefficient_sum
from reference.expectations import Expectation, expect

RNG = np.random.default_rng(17)


def fft_expect(
    re: np.ndarray, im: np.ndarray, *, local_bound: bool | None = None, data_set: int = -1
) -> Expectation:
    shape = tuple(re.shape)
    attrs: dict[str, object] = {"inverse": False}
    if local_bound is not None:
        attrs["local_bound"] = local_bound
    graph = single_operator_graph(
        "FFT2D",
        [("re", shape, "fp32"), ("im", shape, "fp32")],
        [("yr", shape, "fp32"), ("yi", shape, "fp32")],
        attrs,
    )
    return expect(graph, {"re": re, "im": im}, data_set=data_set)


def rfft_expect(re: np.ndarray, *, local_bound: bool | None = None) -> Expectation:
    n, h, w = re.shape
    out = (n, h, w // 2 + 1)
    attrs = {} if local_bound is None else {"local_bound": local_bound}
    graph = single_operator_graph(
        "RFFT2D", [("re", (n, h, w), "fp32")], [("yr", out, "fp32"), ("yi", out, "fp32")], attrs
    )
    return expect(graph, {"re": re})


def direct_abs_bound(
    are: np.ndarray, aim: np.ndarray | None, out_w: int
) -> tuple[np.ndarray, np.ndarray]:
    """The abs pass as the dot-product rule states it, term by term: every input
    magnitude times |cos a| or |sin a|, summed per output (O((H*W)**2))."""
    n, h, w = are.shape
    iy = np.arange(h)[:, None, None, None]
    ix = np.arange(w)[None, :, None, None]
    oy = np.arange(h)[None, None, :, None]
    ox = np.arange(out_w)[None, None, None, :]
    a = 2.0 * math.pi * (((iy * oy) % h) / h + ((ix * ox) % w) / w)
    cos = np.abs(np.cos(a)).reshape(h * w, h * out_w)
    sin = np.abs(np.sin(a)).reshape(h * w, h * out_w)
    r = are.reshape(n, h * w)
    real = r @ cos
    imag = r @ sin
    if aim is not None:
        i = aim.reshape(n, h * w)
        real = real + i @ sin
        imag = imag + i @ cos
    return real.reshape(n, h, out_w), imag.reshape(n, h, out_w)


# -- FFT2D -------------------------------------------------------------------------------


def test_fft2d_is_a_dot_product_of_2hw_terms() -> None:
    re = RNG.standard_normal((2, 4, 8)).astype(np.float32)
    e = fft_expect(re, re, data_set=3)
    for name in ("yr", "yi"):
        desc = e.checks[name].descriptor
        assert desc.mode is Mode.DOT_PRODUCT
        # Appendix A: KS = 2*H*W (the real and imaginary planes), accumulating in fp32.
        assert desc.params.ks == 2 * 4 * 8 and desc.params.data_set == 3
        assert desc.params.acc_dtype.name == "fp32"
        assert desc.params.local_bound is False  # attribute absent: false


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 1, 8), (2, 4, 1), (2, 4, 8), (1, 16, 4)])
@pytest.mark.parametrize("local_bound", [True, False])
def test_fft2d_bound_is_the_termwise_abs_pass(
    shape: tuple[int, int, int], local_bound: bool
) -> None:
    re = RNG.standard_normal(shape).astype(np.float32)
    im = RNG.standard_normal(shape).astype(np.float32)
    re[0, 0, 0] = 0.0  # zeros among the inputs change nothing
    e = fft_expect(re, im, local_bound=local_bound)
    are = np.abs(re.astype(np.float64))
    aim = np.abs(im.astype(np.float64))
    if not local_bound:
        peak = max(are.max(), aim.max())  # one maximum over both planes
        are = np.full(shape, peak)
        aim = np.full(shape, peak)
    want_r, want_i = direct_abs_bound(are, aim, shape[2])
    scale = are.sum() + aim.sum()
    assert np.max(np.abs(e.checks["yr"].bound - want_r)) <= 1e-13 * scale
    assert np.max(np.abs(e.checks["yi"].bound - want_i)) <= 1e-13 * scale


def test_fft2d_bound_by_hand() -> None:
    # 1x4 plane, local_bound true.  a = 2 pi ix ox / 4; |cos a|, |sin a| by (ix*ox mod 4):
    # 0 -> (1, 0), 1 -> (0, 1), 2 -> (1, 0), 3 -> (0, 1).
    re = np.array([[[1.0, -2.0, 0.0, 4.0]]], dtype=np.float32)
    im = np.array([[[0.0, 0.0, 3.0, 0.0]]], dtype=np.float32)
    e = fft_expect(re, im, local_bound=True)
    # ox=0: every angle 0: real = |1|+|-2|+|4| = 7 (cos 1), imag = |3| (im * cos) = 3.
    # ox=1: ix*ox mod 4 = 0,1,2,3: real = 1*1 + 2*0 + 0 + 4*0 + im: 3*|sin pi| = 0 -> 1;
    #       imag = re*|sin|: 2 + 4 = 6, + im*|cos pi| = 3 -> 9.
    # ox=2: ix*2 mod 4 = 0,2,0,2: real = 1+2+4 = 7 (+ 3*|sin 0| = 0); imag = 0 + 3 = 3.
    # ox=3: same pattern as ox=1: real 1, imag 9.
    assert e.checks["yr"].bound.tolist() == [[[7.0, 1.0, 7.0, 1.0]]]
    assert e.checks["yi"].bound.tolist() == [[[3.0, 9.0, 3.0, 9.0]]]


def fp32_fft(re: np.ndarray, im: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A correct fp32 implementation: numpy's single-precision FFT."""
    z = (re.astype(np.complex64) + 1j * im.astype(np.complex64)).astype(np.complex64)
    out = np.fft.fft2(z)
    assert out.dtype == np.complex64
    return out.real.astype(np.float32), out.imag.astype(np.float32)


def data_set_5(shape: tuple[int, ...], ks: int) -> np.ndarray:
    # Appendix A set 5 shape: (B / sqrt(KS)) * uniform(-1, 1), B = 2**64 - 2**40 for fp32.
    b = 2.0**64 - 2.0**40
    return (b / math.sqrt(ks) * RNG.uniform(-1.0, 1.0, shape)).astype(np.float32)


@pytest.mark.parametrize("local_bound", [None, True])
@pytest.mark.parametrize("data_set", [-1, 5])
def test_fft2d_correct_fp32_result_passes(local_bound: bool | None, data_set: int) -> None:
    shape = (4, 16, 32)  # 2048 dot products per output: the statistical tests apply
    if data_set == 5:
        re, im = data_set_5(shape, 2 * 16 * 32), data_set_5(shape, 2 * 16 * 32)
    else:
        re = RNG.standard_normal(shape).astype(np.float32)
        im = RNG.standard_normal(shape).astype(np.float32)
    e = fft_expect(re, im, local_bound=local_bound, data_set=data_set)
    real, imag = fp32_fft(re, im)
    for name, actual in (("yr", real), ("yi", imag)):
        verdict = e.check(name, actual)
        assert verdict.passed, str(verdict)


def test_fft2d_systematic_error_fails() -> None:
    shape = (4, 16, 32)
    ks = 2 * 16 * 32
    re = data_set_5(shape, ks)
    im = data_set_5(shape, ks)
    e = fft_expect(re, im, local_bound=True, data_set=5)
    ref = e.outcome.outputs["yr"]
    unit = e.checks["yr"].bound * 2.0**-24  # the rule's error unit for fp32 outputs
    # Three times KS units on every element: beyond the per-element limit ksb = KS.
    far = (ref + 3 * ks * unit).astype(np.float32)
    verdict = e.check("yr", far)
    assert not verdict.passed and verdict.failing_count == verdict.count, str(verdict)
    # 4 * sqrt(KS) units everywhere passes each element (<= KS) but not the variance
    # test: sum of squares 16 * KS * T > 0.4 * KS * T.
    biased = (ref + 4 * math.sqrt(ks) * unit).astype(np.float32)
    verdict = e.check("yr", biased)
    assert not verdict.passed and verdict.failing_count == 0, str(verdict)
    stats = verdict.dot_product
    assert stats is not None and not stats.error_sumsq_passed and not stats.error_sum_passed


# -- RFFT2D ------------------------------------------------------------------------------


def test_rfft2d_descriptor_and_bound() -> None:
    re = RNG.standard_normal((2, 4, 8)).astype(np.float32)
    e = rfft_expect(re, local_bound=True)
    desc = e.checks["yr"].descriptor
    assert desc.mode is Mode.DOT_PRODUCT and desc.params.ks == 4 * 8  # KS = H*W
    assert desc.params.local_bound is True
    want_r, want_i = direct_abs_bound(np.abs(re.astype(np.float64)), None, 5)
    scale = np.abs(re).sum()
    assert np.max(np.abs(e.checks["yr"].bound - want_r)) <= 1e-13 * scale
    assert np.max(np.abs(e.checks["yi"].bound - want_i)) <= 1e-13 * scale
    # Where the imaginary sum has no term the bound is exactly 0, so the rule requires
    # an exact 0 there (the spec: those imaginary values are zero).
    assert np.all(e.checks["yi"].bound[:, [0, 2]][:, :, [0, 4]] == 0.0)
    assert np.all(e.checks["yi"].bound[:, 1] > 0.0)


def test_rfft2d_correct_fp32_result_passes() -> None:
    re = RNG.standard_normal((8, 16, 16)).astype(np.float32)
    e = rfft_expect(re)
    out = np.fft.rfft2(re)
    assert out.dtype == np.complex64
    assert e.check("yr", out.real.astype(np.float32)).passed
    assert e.check("yi", out.imag.astype(np.float32)).passed


def test_abs_coefficient_sum_is_exact_for_a_single_term() -> None:
    # One input at (iy, ix) = (1, 3) in a 4x8 plane: B[oy, ox] = |cos(2 pi (oy/4 + 3 ox/8))|.
    w = np.zeros((1, 4, 8))
    w[0, 1, 3] = 1.0
    got = abs_coefficient_sum(w, 8, np.cos)
    oy, ox = np.meshgrid(np.arange(4), np.arange(8), indexing="ij")
    want = np.abs(np.cos(2 * math.pi * (((oy * 1) % 4) / 4 + ((3 * ox) % 8) / 8)))
    assert np.allclose(got[0], want, rtol=0, atol=1e-15)


# -- AVG_POOL2D, MAX_POOL2D, ARGMAX ------------------------------------------------------


def test_avg_pool2d_dot_product_with_the_attribute_accumulator() -> None:
    x = np.array([[1.0, -2.0], [3.0, -5.0]], dtype=np.float16).reshape(1, 2, 2, 1)
    graph = single_operator_graph(
        "AVG_POOL2D",
        [("x", (1, 2, 2, 1), "fp16")],
        [("y", (1, 2, 2, 1), "fp16")],
        {
            "kernel": (2, 2),
            "stride": (1, 1),
            "pad": (0, 1, 0, 1),
            "acc_type": "FP32",
            "input_zp": 0.0,
            "output_zp": 0.0,
        },
    )
    e = expect(graph, {"x": x}, data_set=2)
    check = e.checks["y"]
    desc = check.descriptor
    assert desc.mode is Mode.DOT_PRODUCT
    # KS = kernel_y * kernel_x; acc_t is fp32 as acc_type says (fp16 input allows both).
    assert desc.params.ks == 4 and desc.params.acc_dtype.name == "fp32"
    assert desc.params.data_set == 2 and desc.params.local_bound is True
    # The abs pass: the mean of |x| over the real taps.
    # [0,0]: (1+2+3+5)/4 = 2.75; [0,1]: (2+5)/2 = 3.5; [1,0]: (3+5)/2 = 4; [1,1]: 5.
    assert check.bound.reshape(-1).tolist() == [2.75, 3.5, 4.0, 5.0]
    # Reference: (1-2+3-5)/4 = -0.75; (-2-5)/2 = -3.5; (3-5)/2 = -1; -5.
    assert e.outcome.outputs["y"].reshape(-1).tolist() == [-0.75, -3.5, -1.0, -5.0]
    assert e.check("y", np.array([-0.75, -3.5, -1.0, -5.0], np.float16).reshape(1, 2, 2, 1)).passed
    assert not e.check(
        "y", np.array([-0.7, -3.5, -1.0, -5.0], np.float16).reshape(1, 2, 2, 1)
    ).passed


def test_avg_pool2d_integer_is_exact() -> None:
    graph = single_operator_graph(
        "AVG_POOL2D",
        [("x", (1, 2, 2, 1), "i8")],
        [("y", (1, 1, 1, 1), "i8")],
        {
            "kernel": (2, 2),
            "stride": (1, 1),
            "pad": (0, 0, 0, 0),
            "acc_type": "INT32",
            "input_zp": 0,
            "output_zp": 0,
        },
    )
    e = expect(graph, {"x": np.array([1, 2, 3, 4], np.int8).reshape(1, 2, 2, 1)})
    assert e.checks["y"].descriptor.mode is Mode.EXACT
    assert e.outcome.outputs["y"].item() == 3  # 10/4 = 2.5 rounds up


def test_max_pool2d_and_argmax_are_exact() -> None:
    graph = single_operator_graph(
        "MAX_POOL2D",
        [("x", (1, 2, 2, 1), "fp32")],
        [("y", (1, 1, 1, 1), "fp32")],
        {"kernel": (2, 2), "stride": (1, 1), "pad": (0, 0, 0, 0)},
    )
    e = expect(graph, {"x": np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1)})
    assert e.checks["y"].descriptor.mode is Mode.EXACT_NAN
    assert e.check("y", np.array([4], np.float32).reshape(1, 1, 1, 1)).passed
    graph = single_operator_graph("ARGMAX", [("x", (3,), "fp16")], [("y", (), "i32")], {"axis": 0})
    e = expect(graph, {"x": np.array([1, 5, 2], np.float16)})
    assert e.checks["y"].descriptor.mode is Mode.EXACT
    assert e.check("y", np.array(1, np.int32)).passed
