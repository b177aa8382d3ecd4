"""Speed of the reference evaluator, the compliance checker and the Arm backend.

These were timing tests in the unit suite (printing, or asserting wall-clock limits that
flake on a loaded machine); a benchmark measures instead, and reports:

    python benchmarks/reference_speed.py            # every measurement
    python benchmarks/reference_speed.py conv fft   # some of them

Each measurement warms up once (loading the spec and the operator modules), then
reports the best of ``--repeat`` runs in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# The graphs here are the 2024 draft's (CONV2D's zero points as attributes, RESCALE's
# double_round), as in the results below; TOSA 1.0, the default, takes them as inputs.
os.environ.setdefault("TOSA_CONFORMANCE_REVISION", "2024-04-draft")

from conformance.builder import single_operator_graph
from conformance.dtypes import FP32
from reference.compliance import check, dot_product, ulp
from reference.engine import evaluate
from reference.expectations import expect
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

RNG = np.random.default_rng(0)


Inputs = list[tuple[str, np.ndarray, str]]


def _run(
    op: str,
    ins: Inputs,
    outs: list[Any],
    attrs: dict[str, Any] | None = None,
    consts: tuple[str, ...] = (),
) -> Callable[[], Any]:
    """An evaluation of one operator; inputs named in ``consts`` are constant tensors."""
    constants = {n: a for n, a, _ in ins if n in consts}
    graph = single_operator_graph(
        op, [(n, a.shape, t) for n, a, t in ins], outs, attrs or {}, constants=constants
    )
    inputs = {n: a for n, a, _ in ins if n not in consts}
    return lambda: evaluate(graph, inputs)


def add_1m_fp32() -> Callable[[], Any]:
    a, b = (RNG.normal(size=(1000, 1000)).astype(np.float32) for _ in range(2))
    return _run("ADD", [("a", a, "fp32"), ("b", b, "fp32")], [("y", a.shape, "fp32")])


def conv2d_fp32() -> Callable[[], Any]:
    x = RNG.standard_normal((1, 64, 64, 32)).astype(np.float32)
    w = RNG.standard_normal((64, 3, 3, 32)).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    ins: Inputs = [("x", x, "fp32"), ("w", w, "fp32"), ("b", b, "fp32")]
    attrs: dict[str, Any] = {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1)}
    attrs |= {"acc_type": "FP32", "input_zp": 0.0, "weight_zp": 0.0}
    return _run("CONV2D", ins, [("y", (1, 62, 62, 64), "fp32")], attrs)


def matmul_fp32() -> Callable[[], Any]:
    a = RNG.standard_normal((8, 256, 256)).astype(np.float32)
    ins = [("a", a, "fp32"), ("b", a, "fp32")]
    return _run("MATMUL", ins, [("y", (8, 256, 256), "fp32")], {"A_zp": 0.0, "B_zp": 0.0})


def fft2d_fp32() -> Callable[[], Any]:
    re, im = (RNG.standard_normal((4, 64, 64)).astype(np.float32) for _ in range(2))
    outs = [("yr", re.shape, "fp32"), ("yi", re.shape, "fp32")]
    return _run("FFT2D", [("re", re, "fp32"), ("im", im, "fp32")], outs, {"inverse": False})


def reduce_sum_fp16() -> Callable[[], Any]:
    x = RNG.standard_normal((64, 1024)).astype(np.float16)
    return _run("REDUCE_SUM", [("x", x, "fp16")], [("y", (64, 1), "fp16")], {"axis": 1})


def rescale_1m_i32() -> Callable[[], Any]:
    x = RNG.integers(-(2**31), 2**31, (1000, 1000)).astype(np.int32)
    ins: Inputs = [
        ("x", x, "i32"),
        ("multiplier", np.array([1 << 30], np.int32), "i32"),
        ("shift", np.array([40], np.int8), "i8"),
    ]
    attrs: dict[str, Any] = {"input_zp": 0, "output_zp": 0, "scale32": True}
    attrs |= {"double_round": True, "per_channel": False}
    attrs |= {"input_unsigned": False, "output_unsigned": False}
    return _run("RESCALE", ins, [("y", x.shape, "i8")], attrs, ("multiplier", "shift"))


def resize_bilinear_fp32() -> Callable[[], Any]:
    # 1 x 256 x 256 x 8 upscaled 2x: about 2M outputs, which must not loop per element.
    x = RNG.normal(0, 1, (1, 256, 256, 8)).astype(np.float32)
    ins: Inputs = [
        ("x", x, "fp32"),
        ("scale", np.array([2, 1, 2, 1], np.int64), "shape"),
        ("offset", np.array([0, 0], np.int64), "shape"),
        ("border", np.array([0, 0], np.int64), "shape"),
    ]
    outs = [("y", (1, 511, 511, 8), "fp32")]
    return _run("RESIZE", ins, outs, {"mode": "BILINEAR"}, ("scale", "offset", "border"))


def check_1m_fp32() -> Callable[[], Any]:
    expected = RNG.standard_normal(1_000_000) * 1e3
    actual = expected.astype(np.float32)
    desc = ulp(FP32, 0.5, "benchmark")
    dp = dot_product("MATMUL", FP32, FP32, ks=16, data_set=3)
    bound = np.abs(expected) * 4

    def both() -> None:
        assert check(expected, desc, actual).passed
        assert check(expected, dp, actual, bound).passed

    return both


def arm_small_vectors() -> Callable[[], Any]:
    from conformance.backends.arm import ArmBackend  # needs tosa-tools

    backend = ArmBackend()
    x = RNG.integers(-8, 8, (2, 3)).astype(np.int32)
    graph = single_operator_graph(
        "ADD", [("a", x.shape, "i32"), ("b", x.shape, "i32")], [("y", x.shape, "i32")]
    )
    inputs = {"a": x, "b": x}
    exp = expect(graph, inputs)
    vector = LoadedVector(
        name="ADD-bench",
        operator="ADD",
        mode="",
        kind="valid",
        graph=graph,
        inputs=inputs,
        expected=dict(exp.outcome.outputs),
        checks={n: Check(c.descriptor, c.bound) for n, c in exp.checks.items()},
        requirements=Requirements((), (), "8K"),
        provenance=Provenance("benchmark", 0, 0, ""),
        rule=None,
    )
    work = Path(tempfile.mkdtemp(prefix="arm-bench-"))

    def hundred() -> None:
        for k in range(100):
            d = work / str(k)
            d.mkdir(exist_ok=True)
            backend.run(vector, d)

    return hundred


MEASUREMENTS: dict[str, tuple[str, Callable[[], Callable[[], Any]]]] = {
    "add": ("ADD [1000,1000] fp32", add_1m_fp32),
    "conv": ("CONV2D [1,64,64,32] x [64,3,3,32] fp32", conv2d_fp32),
    "matmul": ("MATMUL [8,256,256] x [8,256,256] fp32", matmul_fp32),
    "fft": ("FFT2D [4,64,64] fp32", fft2d_fp32),
    "reduce": ("REDUCE_SUM [64,1024] fp16 -> [64,1]", reduce_sum_fp16),
    "rescale": ("RESCALE [1000,1000] i32 -> i8, double_round", rescale_1m_i32),
    "resize": ("RESIZE bilinear [1,256,256,8] -> [1,511,511,8] fp32", resize_bilinear_fp32),
    "check": ("compliance check of 1M fp32 elements: ULP + DOT_PRODUCT", check_1m_fp32),
    "arm": ("tosa-reference-model: 100 small ADD vectors in process", arm_small_vectors),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", help=f"some of: {', '.join(MEASUREMENTS)}")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement")
    args = parser.parse_args(argv)
    unknown = [w for w in args.which if w not in MEASUREMENTS]
    if unknown:
        parser.error(f"unknown measurement {', '.join(unknown)}; known: {', '.join(MEASUREMENTS)}")
    for key in args.which or list(MEASUREMENTS):
        title, make = MEASUREMENTS[key]
        try:
            fn = make()
        except ImportError as exc:
            print(f"{title}: skipped ({exc})")
            continue
        first = fn()  # warm up, and check that it measures a valid evaluation
        if getattr(first, "valid", True) is False:
            print(f"{title}: not measured, the graph is not valid: {first}")
            continue
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        print(f"{title}: best {min(times):.1f} ms, median {sorted(times)[len(times) // 2]:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
