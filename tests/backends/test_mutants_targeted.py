"""The value- and shape-driven mutants (those that name a spec rule in
``conformance.backends.mutants.SPEC_RULES``): each one shows its bug on a hand-made
graph where the bug is present (its output fails the compliance check the reference
passes, or a valid graph is refused) and gives the reference's result bit for bit on a
graph of the same operator where the bug cannot show.  The cases all live in
tests/targeted_cases/, one module per mutant group (the module its registration is in);
the case helpers follow tests/backends/test_mutants.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutant_cases import (
    ARANGE_2X2,
    ONE_30,
    Case,
    binary,
    case,
    failures,
    rescale,
    resize,
    run,
    unary,
)
from targeted_cases import Build, collected
from targeted_cases.data_layout import pad
from targeted_cases.elementwise_binary import mul, row
from targeted_cases.reduction import reduce
from targeted_cases.tensor_conv import GRID_4X4, ONE_1X1, conv2d

from conformance.backends.mutants import SPEC_RULES, Mutant, MutantBackend, catalogue
from conformance.backends.mutants.elementwise_binary import LANES
from conformance.backends.reference import ReferenceBackend
from conformance.dtypes import I32_MAX, I32_MIN
from reference.expectations import expect

DOCS = Path(__file__).resolve().parents[2] / "docs" / "mutants.md"
CATALOGUE = catalogue()
# Per mutant: (graphs where the bug shows, graphs of its operators where it cannot).
CASES = collected()


def same_as_reference(c: Case, tmp_path: Path, name: str) -> None:
    ref = run(ReferenceBackend(), c, tmp_path)
    mut = run(MutantBackend(name), c, tmp_path)
    assert mut.rejected == ref.rejected
    for n, v in ref.outputs.items():
        bits = np.atleast_1d(mut.outputs[n]).view(np.uint8)
        np.testing.assert_array_equal(bits, np.atleast_1d(v).view(np.uint8))


def cases(which: int) -> list[tuple[str, int]]:
    return [(name, i) for name, pair in sorted(CASES.items()) for i in range(len(pair[which]))]


def defined_in(mutant: Mutant) -> str:
    fn = mutant.wrap if mutant.wrap is not None else mutant.helpers[0].replace
    return fn.__module__


# The mutants added beside the stronger packs name the spec rule they break; the
# denormal ones (which name theirs too) have their own tests.
# CAST_TO_BLOCK_SCALED's precision rule checks its two outputs together, which the
# per-output check used here cannot state (reference/describe/block_scaled.py): its
# mutants are killed in tests/strategies/test_recipes_block_scaled_1_1.py.
PAIRED_OUTPUTS = frozenset({"CAST_TO_BLOCK_SCALED"})
# A compliant behaviour (chain-pairs-in-fp64) must pass, not show: its tests are its own
# (tests/reference/test_chain_bound.py).
TARGETED = {
    n
    for n in SPEC_RULES
    if defined_in(CATALOGUE[n]) != "conformance.backends.mutants.denormals"
    and CATALOGUE[n].effect != "compliant behaviour"
    and not set(CATALOGUE[n].operators) <= PAIRED_OUTPUTS
}


def test_every_targeted_mutant_has_cases_and_a_spec_rule() -> None:
    assert set(CASES) == TARGETED
    assert set(SPEC_RULES) >= TARGETED
    assert len(TARGETED) >= 20
    for name, (shows, hidden) in CASES.items():
        assert shows and hidden, name


def test_docs_row_names_operators_and_spec_rule() -> None:
    # the table escapes | and * for markdown
    text = DOCS.read_text().replace("\\|", "|").replace("\\*", "*")
    rows = {
        m.group(1): line
        for line in text.splitlines()
        if (m := re.match(r"\| `([a-z0-9-]+)` \|", line))
    }
    for name in TARGETED:
        rule = SPEC_RULES[name]
        assert name in rows, f"docs/mutants.md has no row for {name}"
        assert rule in rows[name], f"{name}: the docs row does not quote its spec rule"
        for op in CATALOGUE[name].operators[:3]:
            assert op in rows[name] or "..." in rows[name], f"{name}: {op} not in its row"


@pytest.mark.parametrize(("name", "index"), cases(0))
def test_mutant_shows_its_bug(name: str, index: int, tmp_path: Path) -> None:
    c = CASES[name][0][index]()
    ref = run(ReferenceBackend(), c, tmp_path)
    mut = run(MutantBackend(name), c, tmp_path)
    if CATALOGUE[name].effect == "accepts invalid graph":  # a must-fail graph it runs
        assert ref.rejected is not None and "ERROR_IF" in ref.rejected, ref.rejected
        assert mut.rejected is None and set(mut.outputs) == set(c.graph.main.outputs)
        return
    assert ref.rejected is None, ref.rejected
    assert not failures(c, ref)
    if CATALOGUE[name].effect == "rejects valid graph":
        assert mut.rejected is not None and "backend" in mut.rejected
        return
    assert mut.rejected is None, mut.rejected
    assert failures(c, mut), f"{name}: the mutant's output passes compliance"


@pytest.mark.parametrize(("name", "index"), cases(1))
def test_mutant_agrees_where_its_bug_cannot_show(name: str, index: int, tmp_path: Path) -> None:
    c = CASES[name][1][index]()
    assert CATALOGUE[name].touches(c.graph)
    same_as_reference(c, tmp_path, name)


@pytest.mark.parametrize("name", sorted(n for n in CASES if CATALOGUE[n].helpers), ids=str)
def test_helper_patches_are_restored(name: str, tmp_path: Path) -> None:
    mutant = CATALOGUE[name]
    before = [getattr(p.owner, p.attribute) for p in mutant.helpers]
    c = CASES[name][0][0]()
    ref_before = run(ReferenceBackend(), c, tmp_path)
    run(MutantBackend(name), c, tmp_path)
    assert [getattr(p.owner, p.attribute) for p in mutant.helpers] == before
    ref_after = run(ReferenceBackend(), c, tmp_path)
    for n, v in ref_before.outputs.items():
        np.testing.assert_array_equal(ref_after.outputs[n], v)


def _fp_fully_connected_with_weight_zp() -> Case:
    return case(
        "FULLY_CONNECTED",
        [("x", [[1.0, 2.0]], "fp32"), ("w", [[3.0, 4.0]], "fp32"), ("b", [0.0], "fp32")],
        [("y", (1, 1), "fp32")],
        input_zp=0.0,
        weight_zp=1.0,
    )


# Graphs the spec says are in error: each mutant refuses them with the reference's rule.
ERRORS: list[tuple[str, Build]] = [
    ("dot-weight-zp-ignored", _fp_fully_connected_with_weight_zp),
    ("negate-input-zp-ignored", lambda: unary("NEGATE", [5], "i16", input1_zp=1, output_zp=0)),
    ("negate-output-zp-ignored", lambda: unary("NEGATE", [5], "i16", input1_zp=0, output_zp=1)),
    (
        "rescale-input-unsigned-ignored",
        lambda: rescale([5], "i8", "i8", ONE_30, 30, input_unsigned=True, output_unsigned=True),
    ),
    ("rescale-output-zp-after-clamp", lambda: rescale([5], "i8", "i32", ONE_30, 30, output_zp=3)),
    ("pad-before-after-swapped", lambda: pad([1.0, 2.0], [1, 0, 0, 0], out=(3,))),
    ("pad-top-bottom-swapped", lambda: conv2d(GRID_4X4, ONE_1X1, (5, 4), pad=(2, -1, 0, 0))),
    ("reduce-minmax-nan-first-only", lambda: reduce("REDUCE_MAX", [[1.0, np.nan]], 2)),
    (
        "broadcast-by-cycling",
        lambda: binary("ADD", np.zeros((2, 3)), np.zeros((1, 2)), "fp32", out=(2, 3)),
    ),
    ("resize-border-ignored", lambda: resize(ARANGE_2X2, [4, 2, 4, 2], [0, 0], [4, 0])),
]


@pytest.mark.parametrize(("name", "build"), ERRORS, ids=[n for n, _ in ERRORS])
def test_error_ifs_are_kept(name: str, build: Build, tmp_path: Path) -> None:
    c = build()
    outcome = expect(c.graph, c.inputs).outcome
    assert outcome.kind == "error" and outcome.rule is not None, str(outcome)
    rejected = run(MutantBackend(name), c, tmp_path).rejected
    # the same rule (its detail may show the values as the buggy backend read them)
    assert rejected is not None and f"ERROR_IF({outcome.rule.clause})" in rejected


def test_level_limit_mutants_refuse_only_above_half(tmp_path: Path) -> None:
    # MAX_POOL2D at 8K: MAX_KERNEL 8192, so kernel_y 4097 is refused and 4096 is not;
    # a stride of 4097 is no kernel (only max-stride-halved refuses it).
    over = CASES["max-kernel-halved"][0][0]()
    assert run(MutantBackend("max-kernel-halved"), over, tmp_path).rejected is not None
    assert run(MutantBackend("max-stride-halved"), over, tmp_path).rejected is None
    stride = CASES["max-stride-halved"][0][0]()
    assert run(MutantBackend("max-kernel-halved"), stride, tmp_path).rejected is None


# -- properties: where the bug cannot show, the mutant is the reference ----------------------

I32_VALUES = st.integers(I32_MIN // 2, I32_MAX // 2)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_row_remainder_agrees_on_whole_vectors(data: st.DataObject, tmp_path: Path) -> None:
    width = data.draw(st.sampled_from([1, 3, 8, 16, 24]), label="innermost dimension")
    rows = data.draw(st.integers(1, 3), label="rows")
    shape = (rows, width)
    a = data.draw(st.lists(I32_VALUES, min_size=rows * width, max_size=rows * width), label="a")
    b = data.draw(st.lists(I32_VALUES, min_size=rows * width, max_size=rows * width), label="b")
    op = data.draw(st.sampled_from(["ADD", "SUB", "MAXIMUM"]), label="operator")
    c = binary(op, np.reshape(a, shape), np.reshape(b, shape), "i32")
    same_as_reference(c, tmp_path, "elementwise-row-remainder-stale")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_row_remainder_shows_on_every_partial_row(data: st.DataObject, tmp_path: Path) -> None:
    width = data.draw(
        st.integers(9, 40).filter(lambda w: w % LANES != 0), label="innermost dimension"
    )
    # distinct values along the row, so the stale lanes always differ
    c = binary("ADD", row(1, width), np.zeros((1, width), int), "i32")
    mut = run(MutantBackend("elementwise-row-remainder-stale"), c, tmp_path)
    assert failures(c, mut)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_cycling_agrees_on_leading_broadcasts(data: st.DataObject, tmp_path: Path) -> None:
    out = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=4), label="shape"))
    lead = data.draw(st.integers(0, len(out)), label="leading broadcast axes")
    small = tuple(1 if i < lead else d for i, d in enumerate(out))
    a = np.arange(int(np.prod(out)), dtype=np.float64).reshape(out)
    b = -np.arange(int(np.prod(small)), dtype=np.float64).reshape(small) - 0.5
    op = data.draw(st.sampled_from(["ADD", "SUB", "MINIMUM"]), label="operator")
    same_as_reference(binary(op, a, b, "fp32"), tmp_path, "broadcast-by-cycling")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_sub_negation_agrees_unless_input2_is_min(data: st.DataObject, tmp_path: Path) -> None:
    b = data.draw(st.integers(I32_MIN + 1, I32_MAX), label="input2")
    # any input1 whose difference stays in range
    a = data.draw(st.integers(max(I32_MIN, I32_MIN + b), min(I32_MAX, I32_MAX + b)), label="input1")
    same_as_reference(binary("SUB", [a], [b], "i32"), tmp_path, "sub-negation-saturates")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_mul_ties_down_shows_on_every_tie(data: st.DataObject, tmp_path: Path) -> None:
    shift = data.draw(st.integers(1, 20), label="shift")
    q = data.draw(st.integers(-(1 << 10), 1 << 10), label="quotient")
    # q * 2**shift + 2**(shift - 1) is exactly half-way; its factors are it and 1
    a = q * (1 << shift) + (1 << (shift - 1))
    c = mul([a], [1], shift)
    assert failures(c, run(MutantBackend("mul-shift-ties-down"), c, tmp_path))
    # one off the tie rounds the same way either rule
    same_as_reference(mul([a + 1], [1], shift), tmp_path, "mul-shift-ties-down")
