"""Generating under a manifest: the strategies draw within its limits (rank, batch,
attribute values), pairs it does not claim are not planned, and the obligations it
puts out of reach are named with the manifest's limit."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.capabilities import load_manifest
from conformance.capabilities.check import violations
from conformance.claims import make_claim
from conformance.generate import generate
from conformance.generate_plan import Options
from conformance.spec import load_spec
from strategies.shapes import Budget, shapes
from strategies.valid import valid_cases

SPEC = load_spec()
LEVEL = SPEC.level("8K")
MANIFEST = """
name = "tiny"
max_batch = 1
element_types = ["fp32_t"]

[operators.ADD]
max_rank = 3
[operators.ADD.modes]
fp32 = ["vendor_add"]

[operators.CONV2D]
attributes = { dilation = [[1, 1]] }
[operators.CONV2D.modes]
"fp32 with fp32 accumulate" = ["vendor_conv"]
"""


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("m") / "tiny.toml"
    path.write_text(MANIFEST)
    return load_manifest(str(path), SPEC)


def _tensors(case):
    block = case.graph.main
    return {n: t.shape for n, t in block.tensors.items()}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_add_draws_keep_the_rank_cap(manifest, data) -> None:
    budget = manifest.constrain(Budget(), "ADD")
    case = data.draw(valid_cases(SPEC, "ADD", "fp32", LEVEL, budget), label="ADD case")
    assert all(len(s) <= 3 for s in _tensors(case).values())
    assert violations(manifest, case.graph, SPEC) == []


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_conv_draws_batch_one_and_dilation_one(manifest, data) -> None:
    budget = manifest.constrain(Budget(), "CONV2D")
    mode = "fp32 with fp32 accumulate"
    target = data.draw(st.sampled_from([None, "large", "edge"]), label="target")
    case = data.draw(valid_cases(SPEC, "CONV2D", mode, LEVEL, budget, target=target), label="case")
    op = case.graph.main.operators[0]
    shapes_ = _tensors(case)
    assert shapes_[op.inputs[0]][0] == 1 and shapes_[op.outputs[0]][0] == 1  # N of NHWC
    assert tuple(op.attributes["dilation"]) == (1, 1)


@given(
    rank=st.integers(0, 6).flatmap(lambda r: st.just((r, r))),
    need=st.integers(1, 3000),
    data=st.data(),
)
def test_shapes_hold_a_rank_4_batch(rank, need, data) -> None:
    budget = Budget(min_elements=need, max_batch=1)
    shape = data.draw(shapes(rank[0], rank[1], budget), label="shape")
    if len(shape) == 4:
        assert shape[0] == 1
    assert len(shape) == rank[0]


def test_violations_name_rank_batch_type_and_attribute(manifest) -> None:
    from hypothesis import find

    conv = find(valid_cases(SPEC, "CONV2D", "fp32 with fp32 accumulate", LEVEL), lambda c: True)
    op = conv.graph.main.operators[0]
    block = conv.graph.main
    from dataclasses import replace

    t = block.tensors[op.inputs[0]]
    block.tensors[op.inputs[0]] = replace(t, shape=(2, *t.shape[1:]))
    op.attributes["dilation"] = [2, 1]
    found = violations(manifest, conv.graph, SPEC)
    assert any("batch 2: manifest tiny allows batch <= 1" in v for v in found)
    assert any("dilation=(2, 1): manifest tiny allows (1, 1)" in v for v in found)
    add = find(valid_cases(SPEC, "ADD", "signed 32", LEVEL), lambda c: True)
    assert any("holds no i32_t" in v for v in violations(manifest, add.graph, SPEC))


@pytest.fixture(scope="module")
def pack(manifest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack")
    claim = make_claim(SPEC, ["MI"])
    options = Options(
        examples=2, negative=False, ops="ADD|SUB|CONV2D", targeted=False, capabilities=manifest
    )
    result = generate(SPEC, claim, out, options=options, jobs=1)
    assert result.problems == []
    pytest.pack_result = result  # type: ignore[attr-defined]
    return out


def test_only_claimed_pairs_are_planned_and_the_pack_names_the_manifest(manifest, pack) -> None:
    index = json.loads((pack / "pack.json").read_text())
    pairs = {(v["operator"], v["mode"]) for v in index["vectors"]}
    assert pairs == {("ADD", "fp32"), ("CONV2D", "fp32 with fp32 accumulate")}
    assert index["options"]["capabilities"] == {
        "name": "tiny",
        "sha256": manifest.sha256,
        "origin": manifest.origin,
    }
    result = pytest.pack_result  # type: ignore[attr-defined]
    unclaimed = {(m.operator, m.mode): why for m, why in result.plan.unclaimed}
    assert unclaimed[("SUB", "fp32")] == "manifest tiny does not claim operator SUB"
    assert unclaimed[("ADD", "fp16")] == "manifest tiny does not claim ADD [fp16]"
    # ADD's rank obligations beyond 3 are named with the manifest's limit
    add = next(c for c in index["coverage"] if c["operator"] == "ADD")
    assert add["unmet"]["shape:rank=4"] == "rank:4: manifest tiny allows rank <= 3"
    assert "ADD has no MAX_RANK level vectors: manifest tiny allows rank <= 3" in result.notes


def test_every_vector_of_the_pack_keeps_to_the_manifest(manifest, pack) -> None:
    from vectors.pack import open_pack

    with open_pack(pack) as opened:
        for e in opened.entries:
            v = opened.load(e.name)
            assert violations(manifest, v.graph, SPEC) == [], e.name
