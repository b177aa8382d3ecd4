"""Reference evaluator: FFT2D and RFFT2D (the tensor group's Fourier transforms)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_helpers import assert_rule, valid

from conformance.builder import single_operator_graph
from conformance.spec import load_spec
from reference.engine import evaluate
from reference.outcome import Outcome

SPEC = load_spec()

# -- graphs and the direct sum they are checked against -----------------------------------


def run_fft(
    re: np.ndarray, im: np.ndarray, inverse: bool, dtype: str = "fp32"
) -> tuple[np.ndarray, np.ndarray]:
    outcome = fft_outcome(re, im, inverse, dtype)
    return valid(outcome, "yr"), valid(outcome, "yi")


def fft_outcome(re: np.ndarray, im: np.ndarray, inverse: bool, dtype: str = "fp32") -> Outcome:
    shape = tuple(re.shape)
    graph = single_operator_graph(
        "FFT2D",
        [("re", shape, dtype), ("im", shape, dtype)],
        [("yr", shape, dtype), ("yi", shape, dtype)],
        {"inverse": inverse},
    )
    return evaluate(graph, {"re": re, "im": im})


def rfft_outcome(re: np.ndarray, out_w: int | None = None) -> Outcome:
    n, h, w = re.shape
    out = (n, h, w // 2 + 1 if out_w is None else out_w)
    graph = single_operator_graph(
        "RFFT2D", [("re", (n, h, w), "fp32")], [("yr", out, "fp32"), ("yi", out, "fp32")]
    )
    return evaluate(graph, {"re": re})


def run_rfft(re: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    outcome = rfft_outcome(re)
    return valid(outcome, "yr"), valid(outcome, "yi")


def direct_dft(
    re: np.ndarray, im: np.ndarray, sign: float, out_w: int, *, skip: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The FFT2D / RFFT2D sums as the pseudocode writes them, as one fp64 matrix
    product per plane: O((H*W)**2), independent of numpy's FFT."""
    n, h, w = re.shape
    iy = np.arange(h)[:, None, None, None]
    ix = np.arange(w)[None, :, None, None]
    oy = np.arange(h)[None, None, :, None]
    ox = np.arange(out_w)[None, None, None, :]
    ay = (iy * oy) % h
    ax = (ix * ox) % w
    a = sign * 2.0 * math.pi * (ay / h + ax / w)  # [H, W, H, OW]: inputs by outputs
    cos = np.cos(a).reshape(h * w, h * out_w)
    sin = np.sin(a).reshape(h * w, h * out_w)
    if skip:
        keep = ((h > 1) & (ay % max(h // 2, 1) > 0)) | ((w > 1) & (ax % max(w // 2, 1) > 0))
        sin = sin * keep.reshape(h * w, h * out_w)
    r = re.reshape(n, h * w)
    i = im.reshape(n, h * w)
    real = (r @ cos + i @ sin).reshape(n, h, out_w)
    imag = (-r @ sin + i @ cos).reshape(n, h, out_w)
    return real, imag


# == FFT2D / RFFT2D ===================================================================


def test_fft2d_2x2_by_hand() -> None:
    re = np.array([[[1.0, 2.0], [3.0, 4.0]]])
    im = np.array([[[0.0, 1.0], [0.0, 0.0]]])
    # H = W = 2: a = pi * ((iy*oy mod 2) + (ix*ox mod 2)), so cos(a) = +-1 and sin(a) = 0
    # and both directions agree.  real[oy, ox] = sum re * (-1)**(iy*oy + ix*ox):
    #   [0,0] 1+2+3+4 = 10; [0,1] 1-2+3-4 = -2; [1,0] 1+2-3-4 = -4; [1,1] 1-2-3+4 = 0.
    # imag[oy, ox] = sum im * (-1)**(...) with im only at (0,1): +1, -1, +1, -1.
    for inverse in (False, True):
        real, imag = run_fft(re, im, inverse)
        assert np.allclose(real, [[[10.0, -2.0], [-4.0, 0.0]]], rtol=0, atol=1e-12)
        assert np.allclose(imag, [[[1.0, -1.0], [1.0, -1.0]]], rtol=0, atol=1e-12)


def test_fft2d_sign_convention_by_hand() -> None:
    # A single 1 at ix = 1 of a 1x4 plane: output[ox] = exp(-+i a), a = 2 pi ox / 4.
    # Forward (sign_val 1): real += cos(a), imag += -sin(a):
    #   ox 0: (1, 0); ox 1: a = pi/2: (0, -1); ox 2: a = pi: (-1, 0); ox 3: (0, 1).
    # Inverse (sign_val -1) flips the imaginary parts.  No 1/N scaling either way.
    re = np.array([[[0.0, 1.0, 0.0, 0.0]]])
    im = np.zeros_like(re)
    real, imag = run_fft(re, im, inverse=False)
    assert np.allclose(real, [[[1, 0, -1, 0]]], atol=1e-15)
    assert np.allclose(imag, [[[0, -1, 0, 1]]], atol=1e-15)
    real, imag = run_fft(re, im, inverse=True)
    assert np.allclose(real, [[[1, 0, -1, 0]]], atol=1e-15)
    assert np.allclose(imag, [[[0, 1, 0, -1]]], atol=1e-15)
    # Forward then inverse is H*W times the input: the sums are unnormalised.
    x = np.random.default_rng(2).standard_normal((1, 4, 8)).astype(np.float32)
    y = np.random.default_rng(3).standard_normal((1, 4, 8)).astype(np.float32)
    fr, fi = run_fft(x, y, inverse=False)
    br, bi = run_fft(fr, fi, inverse=True)
    assert np.allclose(br, 32 * x.astype(np.float64), rtol=0, atol=1e-4)
    assert np.allclose(bi, 32 * y.astype(np.float64), rtol=0, atol=1e-4)


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 1, 8), (2, 8, 1), (3, 4, 4), (1, 8, 16)])
@pytest.mark.parametrize("inverse", [False, True])
def test_fft2d_matches_the_direct_sum(shape: tuple[int, int, int], inverse: bool) -> None:
    rng = np.random.default_rng(sum(shape) + inverse)
    re = rng.standard_normal(shape).astype(np.float32)
    im = rng.standard_normal(shape).astype(np.float32)
    real, imag = run_fft(re, im, inverse)
    want_r, want_i = direct_dft(
        re.astype(np.float64), im.astype(np.float64), -1.0 if inverse else 1.0, shape[2]
    )
    scale = np.sum(np.abs(re)) + np.sum(np.abs(im))
    assert np.max(np.abs(real - want_r)) <= 1e-13 * scale
    assert np.max(np.abs(imag - want_i)) <= 1e-13 * scale


def test_rfft2d_by_hand() -> None:
    re = np.array([[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]])
    # Only (iy, ix) = (0, 1) is non-zero: ay = 0, a = 2 pi ox / 4 for both output rows.
    # Columns 0 .. W/2 = 2: real cos(a) = [1, 0, -1], imag -sin(a) = [0, -1, 0]; at
    # (oy, ox) in {0, H/2} x {0, W/2} the imaginary sum adds no term: exactly 0.
    real, imag = run_rfft(re)
    assert real.shape == (1, 2, 3)
    assert np.allclose(real, [[[1, 0, -1], [1, 0, -1]]], atol=1e-15)
    assert np.allclose(imag, [[[0, -1, 0], [0, -1, 0]]], atol=1e-15)
    assert imag[0, :, [0, 2]].tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 1, 8), (2, 8, 1), (3, 4, 4), (1, 8, 16)])
def test_rfft2d_matches_the_direct_sum(shape: tuple[int, int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    re = rng.standard_normal(shape).astype(np.float32)
    real, imag = run_rfft(re)
    _, h, w = shape
    want_r, want_i = direct_dft(re.astype(np.float64), np.zeros(shape), 1.0, w // 2 + 1, skip=True)
    scale = np.sum(np.abs(re))
    assert np.max(np.abs(real - want_r)) <= 1e-13 * scale
    assert np.max(np.abs(imag - want_i)) <= 1e-13 * scale
    # The four skipped positions are exactly zero (not ~1e-16).
    rows = sorted({0, h // 2})
    cols = sorted({0, w // 2})
    assert np.all(imag[:, rows][:, :, cols] == 0.0)
    # RFFT2D is the first W/2+1 columns of FFT2D with a zero imaginary input.
    fr, fi = run_fft(re, np.zeros_like(re), inverse=False)
    assert np.allclose(real, fr[:, :, : w // 2 + 1], rtol=0, atol=1e-13 * scale)
    assert np.allclose(imag, fi[:, :, : w // 2 + 1], rtol=0, atol=1e-13 * scale)


def test_fft_non_finite_planes() -> None:
    re = np.zeros((3, 2, 2))
    im = np.zeros((3, 2, 2))
    re[0, 0, 0] = np.inf  # plane 0: one infinity
    im[1, 1, 0] = np.nan  # plane 1: one NaN
    re[2] = [[1.0, 2.0], [3.0, 4.0]]  # plane 2: finite, unaffected by the others
    real, imag = run_fft(re, im, inverse=False)
    # Plane 0: re[0,0] meets angle 0 in every output: real += inf * cos(0) = inf, and
    # imag += -inf * sin(0) = -inf * 0 = NaN.
    assert np.all(real[0] == np.inf) and np.all(np.isnan(imag[0]))
    # Plane 1: the NaN reaches every sum.
    assert np.all(np.isnan(real[1])) and np.all(np.isnan(imag[1]))
    assert real[2].tolist() == [[10.0, -2.0], [-4.0, 0.0]]
    # RFFT2D: a NaN reaches every sum but the four skipped imaginary ones, which stay 0.
    x = np.zeros((1, 2, 4))
    x[0, 1, 1] = np.nan
    real, imag = run_rfft(x)
    assert np.all(np.isnan(real))
    assert imag[0, :, [0, 2]].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert np.all(np.isnan(imag[0, :, 1]))


@pytest.mark.parametrize(
    ("shape", "clause"),
    [
        ((1, 3, 4), "!power_of_two(H)"),
        ((1, 4, 6), "!power_of_two(W)"),
        ((2, 12, 8), "!power_of_two(H)"),
    ],
)
def test_fft_sizes_must_be_powers_of_two(shape: tuple[int, int, int], clause: str) -> None:
    x = np.zeros(shape)
    outcome = fft_outcome(x, x, inverse=False)
    assert_rule(outcome, "error", clause)
    assert_rule(rfft_outcome(x), "error", clause)


# == every mode =======================================================================


@pytest.mark.parametrize(
    ("op", "mode"),
    [(op, m.mode) for op in ("FFT2D", "RFFT2D") for m in SPEC.operator(op).modes],
)
def test_every_mode_evaluates(op: str, mode: str) -> None:
    dt = SPEC.operator(op).mode(mode).dtype("in_out_t")
    x = np.random.default_rng(3).uniform(-4.0, 4.0, size=(2, 4, 8)).astype(dt.storage)
    if op == "FFT2D":
        for inverse in (False, True):
            real, imag = run_fft(x, x[::-1].copy(), inverse)
            assert real.shape == imag.shape == (2, 4, 8)
    else:
        real, imag = run_rfft(x)
        assert real.shape == imag.shape == (2, 4, 5)
