"""The iree backend's pieces that need no IREE: types, MLIR text, stage labels, bisection.

The MLIR lines here are written by hand in the form tosa-opt prints (generic), so each
expectation is checked against text read with one's own eyes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import dtypes
from conformance.backends.iree.compiler import Answer
from conformance.backends.iree.elements import (
    MLIR_ELEMENT,
    dense_literal,
    embedded,
    from_runtime,
    returned_type,
    tensor_type,
)
from conformance.backends.iree.mlir import Embedded, function_type, module, program, split_module
from conformance.backends.iree.pipeline import Member, Suspects, build
from conformance.backends.iree.stages import (
    LOWERING,
    NO_VERIFIER,
    RUNTIME,
    STAGES,
    VERIFY,
    Rejection,
    stage_of,
)
from conformance.graph import Tensor

# -- types -----------------------------------------------------------------------------


def test_every_tosa_element_type_but_shape_and_block_scaled_has_an_mlir_type() -> None:
    # shape values are no tensors in MLIR's TOSA dialect; a block-scaled composite
    # (bs32_...) is two tensors, values and scales, which the graph IR does not hold yet
    tensors = {d.name for d in dtypes.ALL if d.kind != "block"} - {"shape"}
    assert set(MLIR_ELEMENT) == tensors
    assert {d.name for d in dtypes.BLOCK_SCALED} & set(MLIR_ELEMENT) == set()
    assert {d.name for d in dtypes.ALL if embedded(d)} == {"i4", "shape"}


def test_tosa_1_1_element_types_by_hand() -> None:
    # the names tosa-opt (tosa-tools 2026.8) prints for a 1.1 file's tensors
    assert tensor_type(Tensor("a", (2,), dtypes.I64)) == "tensor<2xi64>"
    assert tensor_type(Tensor("a", (1, 32), dtypes.FP4E2M1)) == "tensor<1x32xf4E2M1FN>"
    assert tensor_type(Tensor("a", (3,), dtypes.FP6E2M3)) == "tensor<3xf6E2M3FN>"
    assert tensor_type(Tensor("a", (3,), dtypes.FP6E3M2)) == "tensor<3xf6E3M2FN>"
    assert tensor_type(Tensor("a", (1, 1), dtypes.FP8UE8M0)) == "tensor<1x1xf8E8M0FNU>"
    assert tensor_type(Tensor("a", (4,), dtypes.MXINT8)) == "tensor<4x!tosa.mxint8>"


def test_tensor_types_by_hand() -> None:
    assert tensor_type(Tensor("a", (2, 3), dtypes.I8)) == "tensor<2x3xi8>"
    assert tensor_type(Tensor("a", (), dtypes.FP32)) == "tensor<f32>"
    assert tensor_type(Tensor("a", (4,), dtypes.FP8E4M3)) == "tensor<4xf8E4M3FN>"
    # Results the runtime cannot carry come back sign-extended.
    assert returned_type(Tensor("a", (5,), dtypes.I4)) == "tensor<5xi8>"
    # IREE itself returns i48 as i64.
    assert returned_type(Tensor("a", (1, 2), dtypes.I48)) == "tensor<1x2xi48>"
    assert returned_type(Tensor("a", (1, 2), dtypes.BF16)) == "tensor<1x2xbf16>"


def test_dense_literals() -> None:
    assert dense_literal(np.array(-7), dtypes.I4) == "dense<-7>"
    assert dense_literal(np.full((2, 2), 3), dtypes.I4) == "dense<3>"  # a splat
    assert dense_literal(np.array([[1, -2], [3, 4]]), dtypes.I4) == "dense<[[1,-2],[3,4]]>"
    big = (1 << 47) - 1
    assert dense_literal(np.array([big, -big]), dtypes.I48) == f"dense<[{big},{-big}]>"
    assert dense_literal(np.zeros((0, 2)), dtypes.I8) == "dense<[]>"
    with pytest.raises(ValueError, match="outside i4"):
        dense_literal(np.array([8, 1]), dtypes.I4)
    with pytest.raises(ValueError, match="integer types only"):
        dense_literal(np.array([1.5]), dtypes.FP32)


@given(st.data())
def test_runtime_results_come_back_in_storage_exactly(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from([dtypes.I4, dtypes.I8, dtypes.I16, dtypes.I48]), label="dt")
    shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=3), label="shape"))
    assert dt.min is not None and dt.max is not None
    values = data.draw(
        st.lists(st.integers(int(dt.min), int(dt.max)), min_size=int(np.prod(shape))),
        label="values",
    )
    wide = np.array(values[: int(np.prod(shape))], dtype=np.int64).reshape(shape)
    out = from_runtime(wide, Tensor("r", shape, dt))
    assert out.dtype == dt.storage and np.array_equal(out.astype(np.int64), wide)


def test_a_widened_value_outside_the_type_is_handed_on_wide() -> None:
    # -8 fits a 4-bit two's complement value but not int4_t (-7..7): the runner must see it.
    out = from_runtime(np.array([-8, 7], np.int8), Tensor("r", (2,), dtypes.I4))
    assert out.dtype == np.int64 and out.tolist() == [-8, 7]
    with pytest.raises(ValueError, match="shape"):
        from_runtime(np.zeros((2,), np.float32), Tensor("r", (3,), dtypes.FP32))
    # The translation's declaration of an output (FULLY_CONNECTED as CONV2D) is read back.
    assert from_runtime(
        np.ones((2, 1, 1, 3), np.float32), Tensor("r", (2, 3), dtypes.FP32)
    ).shape == (2, 3)
    with pytest.raises(ValueError, match="float64"):
        from_runtime(np.zeros((2,), np.float64), Tensor("r", (2,), dtypes.FP32))


# -- tosa-opt's module -----------------------------------------------------------------

HEAD = (
    '  "func.func"() <{arg_attrs = [{tosa.tensor_name = "a"}, {tosa.tensor_name = "w"}], '
    "function_type = (tensor<2x3xi8>, tensor<3xi4>) -> (tensor<2xi4>, tensor<i48>), "
    'res_attrs = [{tosa.tensor_name = "x"}, {tosa.tensor_name = "y"}], sym_name = "main"}> ({'
)
MODULE = "\n".join(
    [
        '"builtin.module"() ({',
        HEAD,
        "  ^bb0(%arg0: tensor<2x3xi8>, %arg1: tensor<3xi4>):",
        '    "func.return"(%0, %1) : (tensor<2xi4>, tensor<i48>) -> ()',
        "  }) : () -> ()",
        '}) {tosa.description = "TOSA FBS Converted"} : () -> ()',
    ]
)


def test_function_types_by_hand() -> None:
    assert function_type(HEAD) == (
        ["tensor<2x3xi8>", "tensor<3xi4>"],
        ["tensor<2xi4>", "tensor<i48>"],
    )
    one = '"func.func"() <{function_type = () -> tensor<f32>, sym_name = "main"}> ({'
    assert function_type(one) == ([], ["tensor<f32>"])
    shaped = '<{function_type = (!tosa.shape<2>) -> tensor<1x2xf16>, sym_name = "main"}>'
    assert function_type(shaped) == (["!tosa.shape<2>"], ["tensor<1x2xf16>"])
    with pytest.raises(ValueError, match="function_type"):
        function_type('"func.func"() <{sym_name = "main"}>')


def test_split_module_and_the_entry_function() -> None:
    graph = split_module(MODULE)
    assert not graph.alone and graph.inputs == ["tensor<2x3xi8>", "tensor<3xi4>"]
    text = program(7, graph, [Embedded(1, np.array([1, -2, 3]), dtypes.I4)])
    # The graph is private @g7; the entry @v7 takes only the i8 input.
    assert 'sym_name = "g7", sym_visibility = "private"' in text
    assert "func.func @v7(%a0: tensor<2x3xi8>) -> (tensor<2xi8>, tensor<i48>)" in text
    # The i4 input is a constant behind an optimization barrier: no folder sees through it.
    assert '%c1 = "arith.constant"() <{value = dense<[1,-2,3]> : tensor<3xi4>}>' in text
    assert '%e1 = "util.optimization_barrier"(%c1)' in text
    assert '"func.call"(%a0, %e1) <{callee = @g7}>' in text
    assert '%w0 = "arith.extsi"(%r#0) : (tensor<2xi4>) -> tensor<2xi8>' in text
    assert "%w1" not in text  # i48 crosses the runtime as i64 by itself
    assert module([text, text]).count("func.func @v7") == 2


def test_modules_tosa_opt_did_not_print() -> None:
    with pytest.raises(ValueError, match=r"no generic builtin\.module"):
        split_module("module {\n}\n")
    two = MODULE.replace("  }) : () -> ()", "  }) : () -> ()\n" + HEAD + "\n  }) : () -> ()", 1)
    with pytest.raises(ValueError, match="one function"):
        split_module(two)
    var = MODULE.replace(HEAD, '  "tosa.variable"() <{sym_name = "v"}> : () -> ()\n' + HEAD)
    assert split_module(var).alone


# -- stages ----------------------------------------------------------------------------


def test_rejections_name_their_stage() -> None:
    verify = Rejection(VERIFY, "'tosa.add' op operands don't have matching ranks")
    assert verify.text("valid") == "verify: 'tosa.add' op operands don't have matching ranks"
    assert verify.text("error") == verify.text("valid")
    lowering = Rejection(LOWERING, "failed to legalize operation 'tosa.cond_if'")
    assert lowering.text("valid") == "lowering: failed to legalize operation 'tosa.cond_if'"
    # A must-fail graph that only a failing compile stopped is marked as such.
    marked = f"lowering ({NO_VERIFIER}): failed to legalize operation 'tosa.cond_if'"
    assert lowering.text("error") == marked
    assert Rejection(RUNTIME, "").text("error") == f"runtime ({NO_VERIFIER}): no diagnostic"
    with pytest.raises(ValueError, match="unknown stage"):
        Rejection("parse", "x")


@pytest.mark.parametrize("stage", STAGES)
def test_the_stage_reads_back_from_a_result_detail(stage: str) -> None:
    rejection = Rejection(stage, "why: because")
    assert stage_of("rejected: " + rejection.text("error")) == stage
    assert stage_of("rejected a valid graph: " + rejection.text("valid")) == stage
    assert stage_of("output: 2.7 of 3 ulp used") is None


# -- batches and bisection -------------------------------------------------------------


class FakeCompiler:
    """Compiles a module unless it holds an entry named in ``bad``; counts the calls."""

    def __init__(self, bad: set[str], located: bool = False) -> None:
        self.bad = bad
        self.located = located  # errors give the module line of the failing entry
        self.modules: list[list[str]] = []

    def compile(self, text: str) -> Answer:
        entries = [w.split("(")[0] for w in text.split("func.func @")[1:]]
        self.modules.append(entries)
        failing = sorted(self.bad & set(entries))
        if not failing:
            return Answer("ok", vmfb=",".join(entries).encode())
        lines = text.split("\n")
        where = [
            f"source.mlir:{k + 1}:3: " if self.located else ""
            for k, ln in enumerate(lines)
            if any(ln.startswith(f"  func.func @{e}(") for e in failing)
        ]
        return Answer(LOWERING, diagnostics=[f"error: {w}cannot lower {failing}" for w in where])


class FakeRuntime:
    def load(self, vmfb: bytes) -> Any:
        return vmfb.decode().split(",")


def _members(n: int, alone: frozenset[int] = frozenset()) -> list[Member]:
    # The vector is a stand-in name: build() only hands it back.
    return [
        Member(f"vec{k}", f"  func.func @v{k}()", [], [], k in alone, f"v{k}")  # type: ignore[arg-type]
        for k in range(n)
    ]


@pytest.mark.parametrize(("n", "bad"), [(1, set()), (8, set()), (8, {"v5"}), (7, {"v0", "v6"})])
def test_a_failed_batch_is_bisected_down_to_the_vectors_that_fail(n: int, bad: set[str]) -> None:
    compiler = FakeCompiler(bad)
    prepared = build(_members(n), compiler, FakeRuntime())  # type: ignore[arg-type]
    assert sorted(str(p.vector) for p in prepared) == sorted(f"vec{k}" for k in range(n))
    for p in prepared:
        entry = "v" + str(p.vector).removeprefix("vec")
        if entry in bad:
            assert p.rejection is not None and p.rejection.stage == LOWERING
            assert "cannot lower" in p.rejection.message
        else:
            assert p.rejection is None and p.entry == entry and entry in p.loaded
    # One compile when nothing fails; 7 for one bad vector in 8: the module of 8, then
    # 4 + 4, then 2 + 2 of the failing half, then 1 + 1.
    if n == 8:
        assert len(compiler.modules) == {0: 1, 1: 7}[len(bad)]


def test_errors_that_name_their_line_spare_the_halving() -> None:
    compiler = FakeCompiler({"v5"}, located=True)
    prepared = build(_members(8), compiler, FakeRuntime())  # type: ignore[arg-type]
    # The module of 8 fails at v5's line: the other 7 compile together, v5 alone fails.
    assert compiler.modules == [
        [f"v{k}" for k in range(8)],
        ["v0", "v1", "v2", "v3", "v4", "v6", "v7"],
        ["v5"],
    ]
    rejected = [p for p in prepared if p.rejection is not None]
    assert [p.entry or str(p.vector) for p in rejected] == ["vec5"]


def test_graphs_with_other_symbols_get_a_module_each() -> None:
    compiler = FakeCompiler(set())
    build(_members(5, alone=frozenset({1, 3})), compiler, FakeRuntime())  # type: ignore[arg-type]
    assert sorted(map(tuple, compiler.modules)) == [("v0", "v2", "v4"), ("v1",), ("v3",)]


@dataclass(frozen=True)
class PairVector:
    name: str
    operator: str
    mode: str


def _pair_members(modes: list[str], start: int = 0) -> list[Member]:
    return [
        Member(PairVector(f"vec{k}", "CAST", mode), f"  func.func @v{k}()", [], [], False, f"v{k}")  # type: ignore[arg-type]
        for k, mode in enumerate(modes, start)
    ]


def test_a_pair_that_failed_to_lower_is_compiled_vector_by_vector_afterwards() -> None:
    # v1 fails in the first batch: its pair (CAST, fp8) is a suspect from then on.
    compiler = FakeCompiler({"v1", "v6", "v7"}, located=True)
    suspects = Suspects()
    first = build(_pair_members(["i8", "fp8", "i8"]), compiler, FakeRuntime(), suspects)  # type: ignore[arg-type]
    assert suspects.pairs == {("CAST", "fp8")}
    assert {p.vector.name: p.rejection is None for p in first} == {
        "vec0": True,
        "vec1": False,
        "vec2": True,
    }
    compiler.modules.clear()
    second = build(
        _pair_members(["i8", "fp8", "i8", "fp8", "fp8"], 3), compiler, FakeRuntime(), suspects
    )  # type: ignore[arg-type]
    # The fp8 vectors are compiled one by one (v4 passes, v6 and v7 fail alone); the
    # others share a module that they never break.
    assert sorted(map(tuple, compiler.modules)) == [("v3", "v5"), ("v4",), ("v6",), ("v7",)]
    verdicts = {p.vector.name: p.rejection is None for p in second}
    assert verdicts == {"vec3": True, "vec4": True, "vec5": True, "vec6": False, "vec7": False}


def test_without_suspects_a_batch_is_never_split_before_it_fails() -> None:
    compiler = FakeCompiler(set())
    build(_pair_members(["fp8", "fp8", "i8"]), compiler, FakeRuntime())  # type: ignore[arg-type]
    assert compiler.modules == [["v0", "v1", "v2"]]


def test_pipeline_files_stay_small() -> None:
    folder = Path(__file__).resolve().parents[3] / "conformance" / "backends" / "iree"
    sizes = {p.name: len(p.read_text().splitlines()) for p in folder.glob("*.py")}
    assert sizes and max(sizes.values()) < 500, sizes


# -- the compiler helper ----------------------------------------------------------------


def test_a_compiler_that_dies_is_a_lowering_rejection_and_is_replaced() -> None:
    import os
    import signal

    from conformance.backends.iree.compiler import CompilerClient

    client = CompilerClient()
    first = client._helper()
    os.kill(first.pid, signal.SIGKILL)  # as a segfault in a conversion would end it
    first.wait()
    # The helper dies while the request is under way (not before: a dead helper is
    # replaced before a request is sent).
    client._helper = lambda: first  # type: ignore[method-assign]
    answer = client.check("module {}\n")
    del client._helper
    assert answer.crashed and answer.step == LOWERING
    assert answer.message == "the compiler crashed (killed by signal 9)"
    assert client._helper() is not first  # the next request gets a new helper
    client.close()
