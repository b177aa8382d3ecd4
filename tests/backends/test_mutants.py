"""The ``mutant:NAME`` backends: every mutant shows its bug on a hand-built graph (its
output fails the compliance check the reference passes, or it accepts an invalid
graph, or refuses a valid one) and behaves exactly like the reference elsewhere."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mutant_cases import Case, case, failures, rescale, run, unary

from conformance.backends.base import BackendError, BackendResult
from conformance.backends.mutants import (
    SPEC_RULES,
    MutantBackend,
    available_mutants,
    catalogue,
    helpers_installed,
)
from conformance.backends.reference import ReferenceBackend
from conformance.dtypes import dtype
from reference import registry
from reference.ops import tensor_pool_fft

DOCS = Path(__file__).resolve().parents[2] / "docs" / "mutants.md"
CATALOGUE = catalogue()
ONE_30 = 1 << 30


def binary(op: str, a: Any, b: Any, dt: str, out_dt: str | None = None) -> Case:
    a, b = np.asarray(a), np.asarray(b)
    return case(op, [("a", a, dt), ("b", b, dt)], [("y", a.shape, out_dt or dt)])


def conv(
    op: str,
    x: Any,
    w: Any,
    b: Any,
    out_shape: Sequence[int],
    types: tuple[str, str, str] = ("i8", "i8", "i32"),
    **attrs: Any,
) -> Case:
    in_t, w_t, out_t = types
    zero: int | float = 0.0 if dtype(in_t).is_float else 0
    acc = {"i32": "INT32", "i48": "INT48", "fp32": "FP32", "fp16": "FP16"}[out_t]
    full = {"input_zp": zero, "weight_zp": zero}
    if op == "TRANSPOSE_CONV2D":
        full |= {"out_pad": (0, 0, 0, 0), "stride": (1, 1), "acc_type": acc}
    elif op != "FULLY_CONNECTED":
        full |= {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1), "acc_type": acc}
    return case(
        op,
        [("x", np.asarray(x), in_t), ("w", np.asarray(w), w_t), ("b", np.asarray(b), out_t)],
        [("y", out_shape, out_t)],
        **(full | attrs),
    )


def matmul(a: Any, b: Any, in_dt: str, out_dt: str) -> Case:
    a, b = np.asarray(a), np.asarray(b)
    out = (a.shape[0], a.shape[1], b.shape[2])
    return case("MATMUL", [("a", a, in_dt), ("b", b, in_dt)], [("y", out, out_dt)], A_zp=0, B_zp=0)


def pool(op: str, x: Any, dt: str, kernel: tuple[int, int], pad: tuple[int, ...]) -> Case:
    x = np.asarray(x)
    n, ih, iw, c = x.shape
    out = (n, ih + pad[0] + pad[1] - kernel[0] + 1, iw + pad[2] + pad[3] - kernel[1] + 1, c)
    attrs: dict[str, Any] = {"kernel": kernel, "stride": (1, 1), "pad": pad}
    if op == "AVG_POOL2D":
        zero: int | float = 0.0 if dtype(dt).is_float else 0
        acc = "FP32" if dtype(dt).is_float else "INT32"
        attrs |= {"acc_type": acc, "input_zp": zero, "output_zp": zero}
    return case(op, [("x", x, dt)], [("y", out, dt)], **attrs)


def resize(x: Any, dt: str, out_dt: str, mode: str, scale: list[int], border: list[int]) -> Case:
    x = np.asarray(x)
    n, ih, iw, c = x.shape
    oh = ((ih - 1) * scale[0] + border[0]) // scale[1] + 1
    ow = ((iw - 1) * scale[2] + border[1]) // scale[3] + 1
    shapes = [("scale", scale), ("offset", [0, 0]), ("border", border)]
    return case(
        "RESIZE",
        [("x", x, dt), *((name, np.array(v), "shape") for name, v in shapes)],
        [("y", (n, oh, ow, c), out_dt)],
        consts=("scale", "offset", "border"),
        mode=mode,
    )


GRID = np.arange(1, 17).reshape(1, 4, 4, 1)
KERNEL = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)
TIE_8 = 1 + 3 * 2.0**-9  # 0.75 of a bf16 ulp above 1


def _fft(inverse: bool) -> Case:
    re = np.array([[[1.0, 2.0, 3.0, 4.0]]])
    im = np.zeros_like(re)
    return case(
        "FFT2D",
        [("re", re, "fp32"), ("im", im, "fp32")],
        [("yr", re.shape, "fp32"), ("yi", re.shape, "fp32")],
        inverse=inverse,
    )


def _i16_table() -> Case:
    table = (np.arange(513) * 4).astype(np.int16)
    return case(
        "TABLE", [("x", [1, 100], "i16"), ("t", table, "i16")], [("y", (2,), "i32")], ("t",)
    )


def _i8_table() -> Case:
    table = np.arange(256) - 128
    return case("TABLE", [("x", [0, 5], "i8"), ("t", table, "i8")], [("y", (2,), "i8")], ("t",))


# One graph per mutant where its bug is observable.
CASES: dict[str, Callable[[], Case]] = {
    "cast-round-half-away": lambda: unary("CAST", [2.5, -2.5, 0.5, 1.5, 3.2], "fp32", "i32"),
    "cast-int-narrow-saturates": lambda: unary("CAST", [300, -300, 5], "i32", "i8"),
    "cast-bf16-truncates": lambda: unary("CAST", [TIE_8, -TIE_8], "fp32", "bf16"),
    "cast-fp8-saturates": lambda: unary("CAST", [1000.0, 1.0], "fp32", "fp8e4m3"),
    "fp8-denormals-flushed": lambda: unary("CAST", [2.0**-9, 1.0], "fp8e4m3", "fp16"),
    "rescale-round-half-away": lambda: rescale([-3, 3, -5], "i8", "i8", [ONE_30], [31]),
    # 511 * 2**-10 = 0.499: one rounding gives 0; the 31-bit first step rounds up to 1
    "rescale-double-round-ignored": lambda: rescale(
        [511], "i16", "i16", [ONE_30], [40], double_round=True
    ),
    "rescale-per-channel-ignored": lambda: rescale(
        [[10, 10]], "i8", "i8", [ONE_30, ONE_30], [30, 31], per_channel=True
    ),
    "rescale-accepts-double-round-scale16": lambda: rescale(
        [10], "i8", "i8", [1 << 14], [14], scale32=False, double_round=True
    ),
    "ars-round-ignored": lambda: case(
        "ARITHMETIC_RIGHT_SHIFT",
        [("a", [5, -5], "i32"), ("b", [1, 1], "i32")],
        [("y", (2,), "i32")],
        round=True,
    ),
    "logical-right-shift-sign-extends": lambda: binary("LOGICAL_RIGHT_SHIFT", [-8], [1], "i32"),
    "intdiv-floors": lambda: binary("INTDIV", [-7, 7], [2, 2], "i32"),
    "mul-shift-truncates": lambda: case(
        "MUL",
        [("a", [3], "i32"), ("b", [1], "i32"), ("s", 1, "i8")],
        [("y", (1,), "i32")],
        consts=("s",),
    ),
    "table-i16-interpolation-rounded": _i16_table,
    "table-i8-unsigned-index": _i8_table,
    "argmax-last-max": lambda: case(
        "ARGMAX", [("x", [[1.0, 3.0, 3.0, 2.0]], "fp32")], [("y", (1,), "i32")], axis=1
    ),
    "minmax-nan-dropped": lambda: binary("MAXIMUM", [np.nan, 1.0], [2.0, 3.0], "fp32"),
    "clamp-nan-to-min": lambda: unary("CLAMP", [np.nan, 5.0], "fp32", min_val=0.0, max_val=1.0),
    "clamp-accepts-inverted-bounds": lambda: unary(
        "CLAMP", [0.5], "fp32", min_val=1.0, max_val=0.0
    ),
    "greater-equal-nan-true": lambda: binary(
        "GREATER_EQUAL", [np.nan, 1.0], [1.0, 1.0], "fp32", "bool"
    ),
    "negate-loses-negative-zero": lambda: unary(
        "NEGATE", [0.0, 1.0], "fp32", input1_zp=0.0, output_zp=0.0
    ),
    "negate-accepts-zero-point": lambda: unary("NEGATE", [5], "i16", input1_zp=1, output_zp=0),
    "exp-5-ulp": lambda: unary("EXP", [0.5, 0.1], "fp32"),
    "log-7-ulp": lambda: unary("LOG", [3.0], "fp32"),
    "reciprocal-fast-approx": lambda: unary("RECIPROCAL", [3.0], "fp32"),
    "conv-dilation-ignored": lambda: conv(
        "CONV2D", GRID, KERNEL, [0], (1, 2, 2, 1), dilation=(2, 2)
    ),
    "transpose-conv-out-pad-negated": lambda: conv(
        "TRANSPOSE_CONV2D",
        [[[[1], [2]], [[3], [4]]]],
        KERNEL,
        [0],
        (1, 4, 4, 1),
        out_pad=(1, 0, 1, 0),
    ),
    "conv-bias-first-channel": lambda: conv(
        "CONV2D",
        np.array([1, 2]).reshape(1, 1, 1, 2),
        np.array([[1, 1], [1, -1], [0, 3]]).reshape(3, 1, 1, 2),
        [100, 200, 300],
        (1, 1, 1, 3),
    ),
    "dot-input-zp-ignored": lambda: conv(
        "FULLY_CONNECTED", [[1, 2]], [[3, 4]], [0], (1, 1), input_zp=3
    ),
    "depthwise-channel-order": lambda: conv(
        "DEPTHWISE_CONV2D",
        np.array([1, 2]).reshape(1, 1, 1, 2),
        np.array([[10, 20], [30, 40]]).reshape(1, 1, 2, 2),
        [0],
        (1, 1, 1, 4),
    ),
    # 1 + 2**-15 is 1 in TF32: the dot product loses 4 * 2**-15
    "dot-fp32-inputs-tf32": lambda: matmul(
        np.full((1, 1, 4), 1 + 2.0**-15), np.ones((1, 4, 1)), "fp32", "fp32"
    ),
    # in fp16, 1 + 2**-12 rounds back to 1 at every step
    "dot-fp32-accumulated-in-fp16": lambda: matmul(
        [[[1.0, 2.0**-12, 2.0**-12, 2.0**-12]]], np.ones((1, 4, 1)), "fp16", "fp32"
    ),
    "local-bound-ignored": lambda: conv(
        "CONV2D",
        np.array([1000.0, 0.001]).reshape(1, 1, 2, 1),
        np.ones((1, 1, 1, 1)),
        [0.0],
        (1, 1, 2, 1),
        ("fp32", "fp32", "fp32"),
        local_bound=True,
    ),
    # 600 * 32767 * 127 = 2.5e9 leaves int32
    "i48-accumulator-truncated": lambda: conv(
        "FULLY_CONNECTED",
        np.full((1, 600), 32767),
        np.full((1, 600), 127),
        [0],
        (1, 1),
        ("i16", "i8", "i48"),
    ),
    "avg-pool-counts-padding": lambda: pool(
        "AVG_POOL2D", np.array([1.0, 2, 3, 4]).reshape(1, 2, 2, 1), "fp32", (2, 2), (1, 0, 1, 0)
    ),
    "avg-pool-int-floors": lambda: pool(
        "AVG_POOL2D", np.array([1, 2]).reshape(1, 1, 2, 1), "i8", (1, 2), (0, 0, 0, 0)
    ),
    "max-pool-pads-zero": lambda: pool(
        "MAX_POOL2D", -np.array([1.0, 2, 3, 4]).reshape(1, 2, 2, 1), "fp32", (2, 2), (1, 0, 1, 0)
    ),
    "reduce-sum-accumulated-in-bf16": lambda: case(
        "REDUCE_SUM", [("x", [[1.0] + [2.0**-9] * 3], "fp32")], [("y", (1, 1), "fp32")], axis=1
    ),
    "fft-inverse-ignored": lambda: _fft(True),
    "rfft-imag-negated": lambda: case(
        "RFFT2D",
        [("re", [[[1.0, 2.0, 3.0, 4.0]]], "fp32")],
        [("yr", (1, 1, 3), "fp32"), ("yi", (1, 1, 3), "fp32")],
    ),
    "resize-half-pixel-added": lambda: resize(
        np.array([0.0, 100, 0, 100]).reshape(1, 2, 2, 1),
        "fp32",
        "fp32",
        "BILINEAR",
        [4, 2, 4, 2],
        [2, 2],
    ),
    "resize-nearest-ties-down": lambda: resize(
        np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1),
        "i8",
        "i8",
        "NEAREST_NEIGHBOR",
        [2, 1, 2, 1],
        [0, 0],
    ),
    "pad-const-ignored": lambda: case(
        "PAD",
        [("x", [1.0, 2.0], "fp32"), ("p", [1, 1], "shape")],
        [("y", (4,), "fp32")],
        consts=("p",),
        pad_const=5.0,
    ),
    "slice-end-off-by-one": lambda: case(
        "SLICE",
        [("x", [1, 2, 3, 4], "i8"), ("start", [2], "shape"), ("size", [2], "shape")],
        [("y", (2,), "i8")],
        consts=("start", "size"),
    ),
    "transpose-inverse-perm": lambda: case(
        "TRANSPOSE",
        [("x", np.arange(24).reshape(2, 3, 4), "i8")],
        [("y", (3, 4, 2), "i8")],
        perms=(1, 2, 0),
    ),
    "gather-batch-ignored": lambda: case(
        "GATHER",
        [("v", np.arange(6).reshape(2, 3, 1), "i8"), ("k", [[0, 1], [1, 2]], "shape")],
        [("y", (2, 2, 1), "i8")],
    ),
    "scatter-no-copy": lambda: case(
        "SCATTER",
        [("v", [[[5], [6], [7]]], "i8"), ("k", [[1]], "shape"), ("u", [[[9]]], "i8")],
        [("y", (1, 3, 1), "i8")],
    ),
}


# -- the catalogue -------------------------------------------------------------------------


def test_catalogue_is_large_and_described() -> None:
    listed = available_mutants()
    assert len(listed) >= 25
    assert set(listed) == set(CATALOGUE)
    for name, m in CATALOGUE.items():
        assert m.name == name and m.bug and m.catches and m.modes and m.operators
        assert m.wrap is not None or m.helpers, f"{name} changes nothing"


def test_every_mutant_has_a_case() -> None:
    # The mutants that name a spec rule have their cases in test_mutants_targeted.py.
    assert set(CASES) == set(CATALOGUE) - set(SPEC_RULES)


def test_mutant_operators_exist() -> None:
    known = registry.load_all()
    for m in CATALOGUE.values():
        assert set(m.operators) <= set(known), m.name


def test_docs_list_every_mutant() -> None:
    text = DOCS.read_text()
    missing = [name for name in CATALOGUE if f"`{name}`" not in text]
    assert not missing, f"docs/mutants.md does not list {missing}"


def test_unknown_or_missing_name_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match=r"known: .*intdiv-floors"):
        MutantBackend("no-such-bug")
    with pytest.raises(BackendError, match="needs a name"):
        MutantBackend(None)


def test_named_after_the_mutant() -> None:
    assert MutantBackend("intdiv-floors").name == "mutant:intdiv-floors"


# -- each bug is observable ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_is_caught_by_its_case(name: str, tmp_path: Path) -> None:
    c = CASES[name]()
    ref = run(ReferenceBackend(), c, tmp_path)
    mut = run(MutantBackend(name), c, tmp_path)
    effect = CATALOGUE[name].effect
    if effect == "accepts invalid graph":
        assert ref.rejected is not None and "ERROR_IF" in ref.rejected, ref.rejected
        assert mut.rejected is None and set(mut.outputs) == set(c.graph.main.outputs)
        return
    assert ref.rejected is None, ref.rejected
    assert not failures(c, ref)
    if effect == "rejects valid graph":
        assert mut.rejected is not None
        return
    assert mut.rejected is None, mut.rejected
    assert failures(c, mut), f"{name}: the mutant's output passes compliance"


def test_local_bound_mutant_passes_without_local_bound(tmp_path: Path) -> None:
    # local_bound = false allows exactly the error a fast convolution makes.
    c = CASES["local-bound-ignored"]()
    c.graph.main.operators[0].attributes["local_bound"] = False
    mut = run(MutantBackend("local-bound-ignored"), c, tmp_path)
    assert not failures(c, mut)
    ref = run(ReferenceBackend(), c, tmp_path)
    assert not np.array_equal(ref.outputs["y"], mut.outputs["y"])  # still a different result


# -- and otherwise the reference ---------------------------------------------------------------


def _add_case() -> Case:
    return binary("ADD", [1.5, -0.0, np.nan], [2.25, 0.0, 1.0], "fp32")


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_mutant_matches_reference_elsewhere(name: str, tmp_path: Path) -> None:
    for c in (_add_case(), binary("SUB", [7, -7], [2, 3], "i32")):
        ref = run(ReferenceBackend(), c, tmp_path)
        mut = run(MutantBackend(name), c, tmp_path)
        assert mut.rejected == ref.rejected
        for n, v in ref.outputs.items():
            np.testing.assert_array_equal(mut.outputs[n].view(np.uint8), v.view(np.uint8))


def test_errors_are_still_reported(tmp_path: Path) -> None:
    # A mutant of RESCALE still refuses what the reference refuses (other clauses).
    c = rescale([10], "i8", "i8", [ONE_30], [30], input_unsigned=True, output_unsigned=True)
    ref = run(ReferenceBackend(), c, tmp_path)
    for name in ("rescale-round-half-away", "rescale-accepts-double-round-scale16"):
        assert run(MutantBackend(name), c, tmp_path).rejected == ref.rejected


@pytest.mark.parametrize(
    "name", sorted(n for n, m in CATALOGUE.items() if m.helpers and n in CASES)
)
def test_helper_patches_do_not_leak(name: str, tmp_path: Path) -> None:
    mutant = CATALOGUE[name]
    before = [getattr(p.owner, p.attribute) for p in mutant.helpers]
    c = CASES[name]()
    ref_before = run(ReferenceBackend(), c, tmp_path)
    run(MutantBackend(name), c, tmp_path)
    assert [getattr(p.owner, p.attribute) for p in mutant.helpers] == before
    ref_after = run(ReferenceBackend(), c, tmp_path)
    for n, v in ref_before.outputs.items():
        np.testing.assert_array_equal(ref_after.outputs[n], v)


def test_operator_wraps_never_touch_the_registry(tmp_path: Path) -> None:
    table = dict(registry.load_all())
    run(MutantBackend("intdiv-floors"), CASES["intdiv-floors"](), tmp_path)
    assert table == registry.OPERATORS


def test_other_threads_see_the_original_helpers(tmp_path: Path) -> None:
    mutant = CATALOGUE["avg-pool-counts-padding"]
    c = CASES["avg-pool-counts-padding"]()
    seen: list[BackendResult] = []
    with helpers_installed(mutant.helpers):
        # this thread gets the mutated helper ...
        assert tensor_pool_fft.valid_count(2, 2, 2, 1, 1).tolist() == [2, 2]
        # ... a reference run in another thread the original one
        worker = threading.Thread(target=lambda: seen.append(run(ReferenceBackend(), c, tmp_path)))
        worker.start()
        worker.join()
    assert seen and not failures(c, seen[0])
    assert tensor_pool_fft.valid_count(2, 2, 2, 1, 1).tolist() == [1, 2]


def test_registered_as_a_builtin_backend() -> None:
    from conformance.backends import BUILTIN, get_backend

    if "mutant" not in BUILTIN:
        pytest.skip("the mutant backend is not registered in BUILTIN yet")
    assert get_backend("mutant:intdiv-floors").name == "mutant:intdiv-floors"
    with pytest.raises(BackendError):
        get_backend("mutant:no-such-bug")
