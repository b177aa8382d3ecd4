"""Reference evaluator, the dot-product operators against a literal transcription of
their pseudocode: every output, and the loop order of the running-sum REQUIREs."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from reference_helpers import (
    ALL_OPS,
    fully_connected,
    matmul,
    output,
    run,
    transpose_conv,
)

from conformance.dtypes import DType
from reference.ops import tensor_conv

# -- against a literal transcription of the pseudocode ---------------------------------


def literal_conv(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
    pads: Sequence[int], strides: Sequence[int], dils: Sequence[int], izp: int, wzp: int,
) -> np.ndarray:  # fmt: skip
    """CONV2D / CONV3D as the pseudocode loops (rank from the stride count)."""
    rank = len(strides)
    n_, oc_ = out_shape[0], out_shape[-1]
    ins, ks = x.shape[1:-1], w.shape[1:-1]
    out = np.zeros(out_shape, np.int64)
    for n, *o, oc in itertools.product(*(range(d) for d in (n_, *out_shape[1:-1], oc_))):
        acc = 0
        for *k, ic in itertools.product(*(range(d) for d in (*ks, x.shape[-1]))):
            pos = [o[j] * strides[j] - pads[2 * j] + k[j] * dils[j] for j in range(rank)]
            if all(0 <= pos[j] < ins[j] for j in range(rank)):
                acc += (int(x[(n, *pos, ic)]) - izp) * (int(w[(oc, *k, ic)]) - wzp)
        out[(n, *o, oc)] = acc + int(b[0 if b.size == 1 else oc])
    return out


def literal_depthwise(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
    pads: Sequence[int], strides: Sequence[int], dils: Sequence[int], izp: int, wzp: int,
) -> np.ndarray:  # fmt: skip
    n_, oh, ow, _ = out_shape
    _, ih, iw, c_ = x.shape
    kh, kw, _, m_ = w.shape
    out = np.zeros(out_shape, np.int64)
    for n, oy, ox, c, m in itertools.product(range(n_), range(oh), range(ow), range(c_), range(m_)):
        acc = 0
        for ky, kx in itertools.product(range(kh), range(kw)):
            y = oy * strides[0] - pads[0] + ky * dils[0]
            xx = ox * strides[1] - pads[2] + kx * dils[1]
            if 0 <= y < ih and 0 <= xx < iw:
                acc += (int(x[n, y, xx, c]) - izp) * (int(w[ky, kx, c, m]) - wzp)
        out[n, oy, ox, c * m_ + m] = acc + int(b[0 if b.size == 1 else c * m_ + m])
    return out


def literal_transpose(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
    out_pad: Sequence[int], strides: Sequence[int], izp: int, wzp: int,
) -> np.ndarray:  # fmt: skip
    """Every input element scaled by every weight, scattered to iy*stride + pad + ky."""
    n_, oh, ow, oc_ = out_shape
    _, ih, iw, ic_ = x.shape
    _, kh, kw, _ = w.shape
    out = np.zeros(out_shape, np.int64)
    out += b.reshape(1, 1, 1, -1)
    for n, iy, ix, oc, ic, ky, kx in itertools.product(
        range(n_), range(ih), range(iw), range(oc_), range(ic_), range(kh), range(kw)
    ):
        oy = iy * strides[0] + out_pad[0] + ky
        ox = ix * strides[1] + out_pad[2] + kx
        if 0 <= oy < oh and 0 <= ox < ow:
            out[n, oy, ox, oc] += (int(x[n, iy, ix, ic]) - izp) * (int(w[oc, ky, kx, ic]) - wzp)
    return out


def _geometry(data: st.DataObject, rank: int, label: str) -> tuple[list[int], ...]:
    """Input sizes, kernel sizes, pads, strides and dilations with exact output sizes."""
    ins, ks, pads, strides, dils, outs = [], [], [], [], [], []
    for j in range(rank):
        k = data.draw(st.integers(1, 3), label=f"{label} kernel[{j}]")
        d = data.draw(st.integers(1, 2), label=f"{label} dilation[{j}]")
        s = data.draw(st.integers(1, 3), label=f"{label} stride[{j}]")
        before = data.draw(st.integers(0, 2), label=f"{label} pad before[{j}]")
        extent = (k - 1) * d + 1
        i = data.draw(st.integers(max(1, extent - before), 6), label=f"{label} input[{j}]")
        span = i - 1 + before - (k - 1) * d
        after = (-span) % s  # the smallest pad_after that makes idiv_check exact
        after += s * data.draw(st.integers(0, 1), label=f"{label} extra pad[{j}]")
        ins.append(i)
        ks.append(k)
        pads += [before, after]
        strides.append(s)
        dils.append(d)
        outs.append((span + after) // s + 1)
    return ins, ks, pads, strides, dils, outs


def _i8(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    return rng.integers(-128, 128, size=shape)


@given(data=st.data())
def test_conv2d_and_conv3d_match_the_pseudocode(data: st.DataObject) -> None:
    op = data.draw(st.sampled_from(["CONV2D", "CONV3D"]), label="op")
    rank = 2 if op == "CONV2D" else 3
    ins, ks, pads, strides, dils, outs = _geometry(data, rank, op)
    n = data.draw(st.integers(1, 2), label="N")
    ic = data.draw(st.integers(1, 3), label="IC")
    oc = data.draw(st.integers(1, 3), label="OC")
    bc = data.draw(st.sampled_from([1, oc]), label="BC")
    izp = data.draw(st.integers(-128, 127), label="input_zp")
    wzp = data.draw(st.integers(-128, 127), label="weight_zp")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x, w = _i8(rng, (n, *ins, ic)), _i8(rng, (oc, *ks, ic))
    b = rng.integers(-(10**6), 10**6, size=bc)
    out_shape = (n, *outs, oc)
    attrs = {"pad": tuple(pads), "stride": tuple(strides), "dilation": tuple(dils)}
    out = run(
        op, [("x", x, "i8"), ("w", w, "i8"), ("b", b, "i32")], out_shape, "i32",
        acc_type="INT32", input_zp=izp, weight_zp=wzp, **attrs,
    )  # fmt: skip
    want = literal_conv(x, w, b, out_shape, pads, strides, dils, izp, wzp)
    assert np.array_equal(output(out), want)
    # The same geometry in fp32 agrees to fp64 rounding.
    xf, wf = (rng.standard_normal(v.shape).astype(np.float32) for v in (x, w))
    bf = rng.standard_normal(bc).astype(np.float32)
    out = run(
        op, [("x", xf, "fp32"), ("w", wf, "fp32"), ("b", bf, "fp32")], out_shape, "fp32",
        acc_type="FP32", input_zp=0.0, weight_zp=0.0, **attrs,
    )  # fmt: skip
    scale = 2.0**20  # literal_conv is integer: scale the floats up and compare loosely
    want_f = literal_conv(
        np.round(xf * scale), np.round(wf * scale), np.round(bf * scale * scale), out_shape,
        pads, strides, dils, 0, 0,
    ) / scale**2  # fmt: skip
    np.testing.assert_allclose(output(out), want_f, atol=1e-4)


@given(data=st.data())
def test_depthwise_conv2d_matches_the_pseudocode(data: st.DataObject) -> None:
    ins, ks, pads, strides, dils, outs = _geometry(data, 2, "DEPTHWISE")
    c = data.draw(st.integers(1, 3), label="C")
    m = data.draw(st.integers(1, 3), label="M")
    izp = data.draw(st.integers(-128, 127), label="input_zp")
    wzp = data.draw(st.integers(-128, 127), label="weight_zp")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x, w = _i8(rng, (1, *ins, c)), _i8(rng, (*ks, c, m))
    b = rng.integers(-1000, 1000, size=c * m)
    out_shape = (1, *outs, c * m)
    out = run(
        "DEPTHWISE_CONV2D", [("x", x, "i8"), ("w", w, "i8"), ("b", b, "i32")], out_shape, "i32",
        pad=tuple(pads), stride=tuple(strides), dilation=tuple(dils), acc_type="INT32",
        input_zp=izp, weight_zp=wzp,
    )  # fmt: skip
    want = literal_depthwise(x, w, b, out_shape, pads, strides, dils, izp, wzp)
    assert np.array_equal(output(out), want)


@given(data=st.data())
def test_transpose_conv2d_matches_the_scatter_form(data: st.DataObject) -> None:
    kh = data.draw(st.integers(1, 3), label="KH")
    kw = data.draw(st.integers(1, 3), label="KW")
    ih = data.draw(st.integers(1, 4), label="IH")
    iw = data.draw(st.integers(1, 4), label="IW")
    sy = data.draw(st.integers(1, 3), label="stride_y")
    sx = data.draw(st.integers(1, 3), label="stride_x")
    pad = [
        data.draw(st.integers(1 - kh, 2), label="out_pad_top"),
        data.draw(st.integers(1 - kh, 2), label="out_pad_bottom"),
        data.draw(st.integers(1 - kw, 2), label="out_pad_left"),
        data.draw(st.integers(1 - kw, 2), label="out_pad_right"),
    ]
    oh = (ih - 1) * sy + pad[0] + pad[1] + kh
    ow = (iw - 1) * sx + pad[2] + pad[3] + kw
    if oh < 1 or ow < 1:
        return  # no tensor has a zero dimension
    ic = data.draw(st.integers(1, 2), label="IC")
    oc = data.draw(st.integers(1, 2), label="OC")
    izp = data.draw(st.integers(-128, 127), label="input_zp")
    wzp = data.draw(st.integers(-128, 127), label="weight_zp")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x, w = _i8(rng, (1, ih, iw, ic)), _i8(rng, (oc, kh, kw, ic))
    b = rng.integers(-1000, 1000, size=oc)
    out = transpose_conv(
        x, w, b, (1, oh, ow, oc), stride=(sy, sx), out_pad=tuple(pad), input_zp=izp, weight_zp=wzp
    )
    want = literal_transpose(x, w, b, (1, oh, ow, oc), pad, (sy, sx), izp, wzp)
    assert np.array_equal(output(out), want)


@given(data=st.data())
def test_fully_connected_and_matmul_match_the_pseudocode(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 4), label="N")
    c = data.draw(st.integers(1, 6), label="IC / C")
    oc = data.draw(st.integers(1, 4), label="OC / W")
    izp = data.draw(st.integers(-128, 127), label="input_zp")
    wzp = data.draw(st.integers(-128, 127), label="weight_zp")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x, w, b = _i8(rng, (n, c)), _i8(rng, (oc, c)), rng.integers(-1000, 1000, size=oc)
    want = (x - izp) @ (w - wzp).T + b
    got = output(fully_connected(x, w, b, input_zp=izp, weight_zp=wzp))
    assert np.array_equal(got, want)
    a, bb = _i8(rng, (2, n, c)), _i8(rng, (2, c, oc))
    want = np.array([(a[i] - izp) @ (bb[i] - wzp) for i in range(2)])
    assert np.array_equal(output(matmul(a, bb, A_zp=izp, B_zp=wzp)), want)


# -- running sums, against the pseudocode's loop order ------------------------------------

# An accumulator narrow enough that a few i8 products leave it, so the running-sum
# REQUIRE is exercised on small tensors (the real i32/i48 need 2**15+ products).
NARROW = DType("narrow", "int", 16, np.dtype(np.int64), -3000, 2999)


def loop_products(
    op: str, x: np.ndarray, w: np.ndarray, out_shape: Sequence[int], geo: dict[str, Any]
) -> Any:
    """Per output, in the order the pseudocode visits outputs, the products its
    accumulator adds, in the order it adds them (x and w have zero points applied)."""
    if op in ("FULLY_CONNECTED", "MATMUL"):
        for index in itertools.product(*(range(d) for d in out_shape)):
            if op == "MATMUL":
                n, h, col = index
                yield index, [int(x[n, h, c]) * int(w[n, c, col]) for c in range(x.shape[2])]
            else:
                n, oc = index
                yield index, [int(x[n, c]) * int(w[oc, c]) for c in range(x.shape[1])]
        return
    if op == "DEPTHWISE_CONV2D":
        kh, kw, _, m_ = w.shape
        for n, oy, ox, ch in itertools.product(*(range(d) for d in out_shape)):
            c, m = divmod(ch, m_)
            terms = []
            for ky, kx in itertools.product(range(kh), range(kw)):
                y = oy * geo["stride"][0] - geo["pad"][0] + ky * geo["dilation"][0]
                xx = ox * geo["stride"][1] - geo["pad"][2] + kx * geo["dilation"][1]
                if 0 <= y < x.shape[1] and 0 <= xx < x.shape[2]:
                    terms.append(int(x[n, y, xx, c]) * int(w[ky, kx, c, m]))
            yield (n, oy, ox, ch), terms
        return
    rank = x.ndim - 2
    ks, ins = w.shape[1:-1], x.shape[1:-1]
    for n, *o, oc in itertools.product(*(range(d) for d in out_shape)):
        terms = []
        for *k, ic in itertools.product(*(range(d) for d in (*ks, x.shape[-1]))):
            if op == "TRANSPOSE_CONV2D":
                # The gather form: output o takes input (o - out_pad - k) / stride.
                t = [o[j] - geo["out_pad"][2 * j] - k[j] for j in range(rank)]
                if any(t[j] % geo["stride"][j] for j in range(rank)):
                    continue
                pos = [t[j] // geo["stride"][j] for j in range(rank)]
            else:
                pos = [
                    o[j] * geo["stride"][j] - geo["pad"][2 * j] + k[j] * geo["dilation"][j]
                    for j in range(rank)
                ]
            if all(0 <= pos[j] < ins[j] for j in range(rank)):
                terms.append(int(x[(n, *pos, ic)]) * int(w[(oc, *k, ic)]))
        yield (n, *o, oc), terms


def first_overflow(products: Any, lo: int, hi: int) -> tuple[int, ...] | None:
    for index, terms in products:
        acc = 0
        for t in terms:
            acc += t
            if not lo <= acc <= hi:
                return tuple(index)
    return None


@pytest.mark.parametrize("op", ALL_OPS)
@given(data=st.data())
def test_running_sums_follow_the_loop_order(op: str, data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    izp = data.draw(st.integers(-20, 20), label="input_zp")
    wzp = data.draw(st.integers(-20, 20), label="weight_zp")
    small = lambda shape: rng.integers(-10, 61, size=shape)  # noqa: E731  (mostly positive)
    geo: dict[str, Any] = {}
    attrs: dict[str, Any] = {"input_zp": izp, "weight_zp": wzp}
    if op in ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D"):
        rank = 3 if op == "CONV3D" else 2
        ins, ks, pads, strides, dils, outs = _geometry(data, rank, op)
        geo = {"pad": pads, "stride": strides, "dilation": dils}
        c = data.draw(st.integers(1, 3), label="channels")
        oc = data.draw(st.integers(1, 2), label="OC / M")
        x = small((1, *ins, c))
        w = small((*ks, c, oc) if op == "DEPTHWISE_CONV2D" else (oc, *ks, c))
        out_shape = (1, *outs, c * oc if op == "DEPTHWISE_CONV2D" else oc)
        attrs |= {k: tuple(v) for k, v in geo.items()} | {"acc_type": "INT32"}
    elif op == "TRANSPOSE_CONV2D":
        kh, kw = (data.draw(st.integers(1, 3), label=f"K{a}") for a in "HW")
        ih, iw = (data.draw(st.integers(1, 3), label=f"I{a}") for a in "HW")
        stride = [data.draw(st.integers(1, 2), label=f"stride {a}") for a in "yx"]
        pad = [data.draw(st.integers(1 - k, 1), label=f"out_pad {i}") for i, k in
               enumerate((kh, kh, kw, kw))]  # fmt: skip
        geo = {"out_pad": pad, "stride": stride}
        c = data.draw(st.integers(1, 3), label="IC")
        x, w = small((1, ih, iw, c)), small((2, kh, kw, c))
        oh = (ih - 1) * stride[0] + pad[0] + pad[1] + kh
        ow = (iw - 1) * stride[1] + pad[2] + pad[3] + kw
        if oh < 1 or ow < 1:
            return
        out_shape = (1, oh, ow, 2)
        attrs |= {"out_pad": tuple(pad), "stride": tuple(stride), "acc_type": "INT32"}
    elif op == "FULLY_CONNECTED":
        c = data.draw(st.integers(1, 8), label="IC")
        x, w = small((2, c)), small((3, c))
        out_shape = (2, 3)
    else:
        c = data.draw(st.integers(1, 8), label="C")
        x, w = small((2, 2, c)), small((2, c, 3))
        out_shape = (2, 2, 3)
        attrs = {"A_zp": izp, "B_zp": wzp}
    names = ("x", "w") if op != "MATMUL" else ("a", "b")
    inputs = [(names[0], x, "i8"), (names[1], w, "i8")]
    if op != "MATMUL":
        inputs.append(("bias", np.zeros(1, np.int64), "i32"))
    want = first_overflow(
        loop_products(op, x - izp, w - wzp, out_shape, geo), int(NARROW.min), int(NARROW.max)
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tensor_conv, "_acc_of", lambda ctx, var: NARROW)
        out = run(op, inputs, out_shape, "i32", **attrs)
    event("overflows" if want else "fits")
    if want is None:
        assert out.kind == "valid", str(out)
        return
    assert out.kind == "unpredictable" and out.rule is not None, str(out)
    assert out.rule.clause.startswith("acc = apply_add_s<"), str(out)
    if op != "TRANSPOSE_CONV2D":  # its loop visits outputs in another order
        assert f"at index {list(want)}" in out.rule.detail, (str(out), want)
