"""TOSA 1.1 vectors the pack format states in two new ways: CAST_TO_BLOCK_SCALED's
values output judged with its scale output (SCALED_VALUES naming a BLOCK_SCALES
partner), and ASSERT_EQUAL_SHAPE's graph without outputs (it must run, or be
rejected).  Each malformed pairing is one line naming the entry."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from pack_cases import edit_desc, problems_of

from conformance.builder import single_operator_graph
from conformance.claims import full_claim
from conformance.compliance_descriptor import BlockScalesParams, Mode, ScaledValuesParams
from conformance.spec import load_revision, spec_in_use
from reference.expectations import expect
from vectors.pack import (
    Check,
    PackMeta,
    Provenance,
    Requirements,
    Vector,
    open_pack,
    verify_pack,
    write_pack_index,
    write_vector,
)

SPEC = load_revision("1.1-draft")
CAST_MODE = "fp32 to fp4e2m1 with fp8ue8m0 scale"


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


def _requirements(op: str, mode: str) -> Requirements:
    return Requirements.for_mode(SPEC, SPEC.operator(op).mode(mode), "8K")


def cast_to() -> Vector:
    x = np.zeros((1, 64), np.float32)
    x[0, :3] = [6.9, 0.1, -3.0]
    x[0, 32] = 40.0
    g = single_operator_graph(
        "CAST_TO_BLOCK_SCALED",
        [("x", x.shape, "fp32")],
        [("v", (1, 64), "fp4e2m1"), ("s", (1, 2), "fp8ue8m0")],
        {"block_size": "BLOCK_SIZE_32"},
        spec=SPEC,
    )
    e = expect(g, {"x": x}, spec=SPEC)
    return Vector(
        name="CAST_TO_fp4_0",
        operator="CAST_TO_BLOCK_SCALED",
        mode=CAST_MODE,
        kind="valid",
        graph=g,
        inputs={"x": x},
        expected=dict(e.outcome.outputs),
        checks={n: Check(c.descriptor, c.bound) for n, c in e.checks.items()},
        requirements=_requirements("CAST_TO_BLOCK_SCALED", CAST_MODE),
        provenance=Provenance("hand", 0, 0, "tosa-conformance generate"),
    )


def assert_equal(kind: str = "valid") -> Vector:
    a = np.array([2, 3], np.int64)
    b = a if kind == "valid" else np.array([2, 4], np.int64)
    g = single_operator_graph(
        "ASSERT_EQUAL_SHAPE",
        [("input1", (2,), "shape"), ("input2", (2,), "shape")],
        [],
        {"allow_broadcast": False},
        constants={"input1": a, "input2": b},
        spec=SPEC,
    )
    rule = None
    if kind == "error":
        e = expect(g, {}, spec=SPEC)
        assert e.outcome.rule is not None
        rule = e.outcome.rule.to_json()
    return Vector(
        name=f"ASSERT_EQUAL_SHAPE_{kind}_0",
        operator="ASSERT_EQUAL_SHAPE",
        mode="shape",
        kind=kind,  # type: ignore[arg-type]
        graph=g,
        inputs={},
        expected={},
        checks={},
        requirements=_requirements("ASSERT_EQUAL_SHAPE", "shape"),
        provenance=Provenance("hand", 0, 1, "tosa-conformance generate"),
        rule=rule,
    )


def write(root: Path, vectors: list[Vector]) -> Path:
    root.mkdir(parents=True)
    entries = [write_vector(root, v) for v in vectors]
    write_pack_index(root, PackMeta.create(SPEC, full_claim(SPEC).to_json(), 0), entries)
    return root


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    return write(tmp_path / "pack", [cast_to(), assert_equal(), assert_equal("error")])


def test_paired_outputs_and_graphs_without_outputs_read_back(pack: Path) -> None:
    assert verify_pack(pack) == []
    with open_pack(pack) as p:
        cast = p.load("CAST_TO_fp4_0")
        ok, bad = p.load("ASSERT_EQUAL_SHAPE_valid_0"), p.load("ASSERT_EQUAL_SHAPE_error_0")
    v, s = cast.checks["v"].descriptor, cast.checks["s"].descriptor
    assert v is not None and s is not None
    assert (v.mode, v.params) == (Mode.SCALED_VALUES, ScaledValuesParams("s", 32))
    assert (s.mode, s.params) == (Mode.BLOCK_SCALES, BlockScalesParams("v"))
    assert cast.checks["s"].bound is None
    bound = cast.checks["v"].bound
    assert bound is not None and bound[0, 32] == 40.0  # the input x
    assert cast.desc["expected"][0]["compliance"]["params"] == {
        "scale_tensor_name": "s",
        "block_size": 32,
    }
    for loaded in (ok, bad):
        assert loaded.graph.main.outputs == [] and loaded.desc["ofm_file"] == []
    assert ok.expected == {} and ok.checks == {}


def _params(k: int, **changes: object) -> Callable[[dict], None]:
    def change(d: dict) -> None:
        d["expected"][k]["compliance"]["params"].update(changes)

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            _params(0, scale_tensor_name="scales"),
            "expected[0].compliance: SCALED_VALUES names scale output 'scales', which is not "
            "another output of the vector",
        ),
        (
            _params(0, scale_tensor_name="v"),
            "expected[0].compliance: SCALED_VALUES names scale output 'v', which is not "
            "another output of the vector",
        ),
        (
            lambda d: d["expected"][1].update(compliance=None),
            "expected[0].compliance: SCALED_VALUES names scale output 's', whose compliance "
            "is none, not BLOCK_SCALES naming 'v'",
        ),
        (
            _params(1, value_tensor_name="x"),
            "expected[0].compliance: SCALED_VALUES names scale output 's', whose compliance "
            "is BLOCK_SCALES, not BLOCK_SCALES naming 'v'",
        ),
        (
            _params(0, block_size=16),
            "expected[0].compliance: 'v' of shape [1, 64] in blocks of 16 does not fit its "
            "scale output 's' of shape [1, 2]",
        ),
    ],
)
def test_a_broken_pairing_is_one_line(
    pack: Path, change: Callable[[dict], None], message: str
) -> None:
    edit_desc(pack, "CAST_TO_fp4_0", change)
    problems = problems_of(pack)
    # a partner naming back wrongly is reported from both ends; the first says it
    assert problems[0] == f"CAST_TO_fp4_0/desc.json: {message}"
    assert all("\n" not in p for p in problems)


def test_a_scale_output_naming_no_output_is_one_line(pack: Path) -> None:
    edit_desc(pack, "CAST_TO_fp4_0", _params(1, value_tensor_name="values"))
    assert problems_of(pack) == [
        "CAST_TO_fp4_0/desc.json: expected[0].compliance: SCALED_VALUES names scale output "
        "'s', whose compliance is BLOCK_SCALES, not BLOCK_SCALES naming 'v'",
        "CAST_TO_fp4_0/desc.json: expected[1].compliance: BLOCK_SCALES names values output "
        "'values', which is not another output of the vector",
    ]


def test_no_outputs_only_for_an_operator_that_has_none(tmp_path: Path) -> None:
    vec = cast_to()
    vec.graph.main.outputs.clear()  # CAST_TO still writes v and s, which nobody checks
    vec.expected, vec.checks = {}, {}
    with pytest.raises(ValueError) as err:
        write(tmp_path / "pack", [vec])
    assert str(err.value) == (
        "CAST_TO_fp4_0/desc.json: the graph has no outputs, but its CAST_TO_BLOCK_SCALED "
        "writes ['v', 's']: nothing it computes would be checked"
    )


def test_a_valid_vector_with_outputs_still_needs_its_expected_results(pack: Path) -> None:
    edit_desc(pack, "CAST_TO_fp4_0", lambda d: d["expected"].clear())
    # the schema no longer requires an entry; the layout check does (and the files
    # that no entry names are reported after it)
    problems = problems_of(pack)
    assert problems[0] == "CAST_TO_fp4_0/desc.json: expected[].name is [], expected ['v', 's']"
