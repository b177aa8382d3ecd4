"""The mutants of TOSA 1.1's shape operators against the cases the 1.1 recipes draw:
each one gives a result the compliance check fails (or refuses a valid graph) on some
drawn valid case, agrees with the reference on the others' errors (the must-fail
cases of its operators are still refused, by the reference's rule), and leaves the
2024 draft's operators alone."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from mutant_cases import Case, failures, run

from conformance.backends.mutants import MutantBackend, catalogue
from conformance.backends.reference import ReferenceBackend
from conformance.spec import load_revision, spec_in_use
from strategies.draw import draw_examples
from strategies.invalid import invalid_cases
from strategies.valid import valid_cases

SPEC = load_revision("1.1-draft")
# mutant -> (the operators it changes, the level its bug shows at)
MUTANTS = {
    "div-ceil-shape-sum-overflows": (("DIV_CEIL_SHAPE",), "8K"),
    "div-floor-shape-fp32": (("DIV_FLOOR_SHAPE",), "8K"),
    "mod-shape-mask": (("MOD_SHAPE",), "8K"),
    "min-max-shape-unsigned": (("MIN_SHAPE", "MAX_SHAPE"), "8K"),
    # 1 << input in 32 bits: only exponents of 31 and more, which level none allows
    "exp2-shape-int32-shift": (("EXP2_SHAPE",), "none"),
    # EXP2 in fp16: 2**16 and above overflow, which 8K's exponents up to 30 reach
    "exp2-shape-fp16-path": (("EXP2_SHAPE",), "8K"),
    "log2-ceil-shape-bit-length": (("LOG2_CEIL_SHAPE",), "8K"),
    "log2-floor-shape-fp32": (("LOG2_FLOOR_SHAPE",), "8K"),
    "slice-shape-innermost-first": (("SLICE_SHAPE",), "8K"),
    "assert-equal-shape-one-sided-broadcast": (("ASSERT_EQUAL_SHAPE",), "8K"),
}
NEW_OPERATORS = {
    "ASSERT_EQUAL_SHAPE",
    "DIV_CEIL_SHAPE",
    "DIV_FLOOR_SHAPE",
    "EXP2_SHAPE",
    "LOG2_CEIL_SHAPE",
    "LOG2_FLOOR_SHAPE",
    "MAX_SHAPE",
    "MIN_SHAPE",
    "MOD_SHAPE",
    "SLICE_SHAPE",
}


@cache
def recipe_cases(op: str, level: str, kind: str = "valid") -> list[Case]:
    """Cases the 1.1 recipes (or breakers) draw, as the mutant tests run them."""
    lv = SPEC.level(level)
    with spec_in_use(SPEC):
        if kind == "valid":
            drawn = draw_examples(valid_cases(SPEC, op, "shape", lv), 24, 7)
        else:
            drawn = draw_examples(invalid_cases(SPEC, op, "shape", lv), 24, 7)
    assert drawn
    return [Case(c.graph, c.inputs, SPEC, level) for c in drawn]


def test_every_new_operator_has_a_mutant_of_its_own() -> None:
    mutants = catalogue()
    covered = {op for name in MUTANTS for op in mutants[name].operators}
    assert covered >= NEW_OPERATORS
    for name, (ops, _) in MUTANTS.items():
        assert mutants[name].operators == ops


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_mutant_fails_a_case_the_recipes_make(name: str, tmp_path: Path) -> None:
    ops, level = MUTANTS[name]
    effect = catalogue()[name].effect
    caught = 0
    for op in ops:
        for c in recipe_cases(op, level):
            ref = run(ReferenceBackend(), c, tmp_path)
            assert ref.rejected is None and not failures(c, ref), ref.rejected
            mut = run(MutantBackend(name), c, tmp_path)
            if effect == "rejects valid graph":
                caught += mut.rejected is not None
            else:
                assert mut.rejected is None, mut.rejected
                caught += bool(failures(c, mut))
    assert caught, f"{name}: no drawn {'/'.join(ops)} case tells it from the reference"


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_mutant_refuses_what_the_reference_refuses(name: str, tmp_path: Path) -> None:
    ops, level = MUTANTS[name]
    for op in ops:
        for c in recipe_cases(op, level, "error"):
            ref = run(ReferenceBackend(), c, tmp_path)
            mut = run(MutantBackend(name), c, tmp_path)
            assert ref.rejected is not None and mut.rejected == ref.rejected


def test_exp2_shift_is_compliant_at_8k(tmp_path: Path) -> None:
    """At 8K every exponent is below 31: the 32-bit shift is exact there."""
    for c in recipe_cases("EXP2_SHAPE", "8K"):
        mut = run(MutantBackend("exp2-shape-int32-shift"), c, tmp_path)
        assert mut.rejected is None and not failures(c, mut)


@cache
def edge_cases(op: str, level: str) -> list[Case]:
    """The cases of the "edge" target (values placed by construction), as a pack's edge
    and aimed jobs draw them."""
    lv = SPEC.level(level)
    with spec_in_use(SPEC):
        drawn = draw_examples(valid_cases(SPEC, op, "shape", lv, target="edge"), 8, 5)
    assert drawn
    return [Case(c.graph, c.inputs, SPEC, level) for c in drawn]


@pytest.mark.parametrize("name", sorted(n for n, (_, lv) in MUTANTS.items() if lv == "8K"))
def test_every_edge_case_kills_the_8k_mutants(name: str, tmp_path: Path) -> None:
    """Each 8K mutant fails every edge case of its operators (that holds the values
    where its bug shows: an EXP2_SHAPE part of exponents 16 and above for the fp16
    path), whatever the part or rotation drawn."""
    ops, _ = MUTANTS[name]
    rejects = catalogue()[name].effect == "rejects valid graph"
    tried = 0
    for op in ops:
        for c in edge_cases(op, "8K"):
            main = c.graph.main
            exponents = main.tensors[main.operators[0].inputs[0]].data
            if name == "exp2-shape-fp16-path" and max(exponents) < 16:
                continue  # the part of exponents 0..14: exact in fp16
            if name == "assert-equal-shape-one-sided-broadcast" and not bool(
                c.graph.main.operators[0].attributes["allow_broadcast"]
            ):
                continue  # no broadcast: nothing one-sided to refuse
            if name == "slice-shape-innermost-first":
                n = main.tensors[main.operators[0].inputs[0]].shape[0]
                start, size = (int(main.tensors[t].data[0]) for t in main.operators[0].inputs[1:])
                if start == n - start - size:
                    continue  # a centred slice (the whole shape): the same both ways
            mut = run(MutantBackend(name), c, tmp_path)
            tried += 1
            if rejects:
                assert mut.rejected is not None, c.graph
            else:
                assert mut.rejected is None and failures(c, mut), c.graph
    assert tried, f"{name}: no edge case of {ops} holds its bug"


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("exp2-shape-int32-shift", ("EXP2_SHAPE",)),
        ("shape-values-int32", ("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "CONCAT_SHAPE")),
    ],
)
def test_int32_mutants_are_compliant_on_the_8k_edge_cases(
    name: str, ops: tuple[str, ...], tmp_path: Path
) -> None:
    """At 8K tensor_size_t is int32's range and every exponent is below 31: the edge
    cases (every exponent, the range's ends) hold nothing a 32-bit backend gets wrong;
    at no level they kill both."""
    for op in ops:
        for c in edge_cases(op, "8K"):
            mut = run(MutantBackend(name), c, tmp_path)
            assert mut.rejected is None and not failures(c, mut)
        assert any(
            failures(c, run(MutantBackend(name), c, tmp_path)) for c in edge_cases(op, "none")
        )
