"""Graph-rewrite obligations (strategies.rewrites): the table, the conditions on
hand-made chains, the chains the generator builds, and a pack's record of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from targeted_cases import rewrites as chains

from conformance.claims import make_claim
from conformance.generate import generate
from conformance.generate_plan import NOT_AIMED, Options
from conformance.mutation import mutation_score
from conformance.spec import load_revision, load_spec, spec_in_use
from reference.engine import evaluate
from strategies.draw import first_accepted
from strategies.obligations import pair_obligations
from strategies.rewrite_conditions import composed, seams
from strategies.rewrites import (
    REWRITES,
    buildable,
    by_key,
    rewrite_cases,
    rewrite_facts,
    why_not,
)
from strategies.shapes import Budget
from vectors.pack import open_pack

SPEC = load_spec()
LEVEL = SPEC.level("8K")


def shows(key: str, case: chains.Case) -> bool:
    return f"rewrite:{key}" in rewrite_facts(SPEC, case)  # type: ignore[arg-type]


# -- the conditions, by hand -----------------------------------------------------------

GRID = chains.GRID

CONDITIONS = [
    # (rewrite, chain, whether its condition holds)
    ("mul-by-zero", lambda: chains.mul_zero([1.0, np.inf], [0.0, 0.0]), True),
    ("mul-by-zero", lambda: chains.mul_zero([[np.nan, 2.0]], [[0.0]]), True),
    ("mul-by-zero", lambda: chains.mul_zero([1.0, 2.0], [0.0, 0.0]), False),  # finite
    ("mul-by-zero", lambda: chains.mul_zero([np.inf], [2.0]), False),  # no zero
    ("sub-self", lambda: chains.sub([np.inf, 1.0], "prev"), True),
    ("sub-self", lambda: chains.sub([5.0], "prev"), False),
    ("sub-self", lambda: chains.sub([np.inf], ("y", [1.0], "fp32")), False),  # not x - x
    ("clamp-clamp", lambda: chains.clamps([0], (-10, 5), (20, 30)), True),  # 5 < 20
    ("clamp-clamp", lambda: chains.clamps([0], (20, 30), (-10, 5)), True),  # 5 < 20
    ("clamp-clamp", lambda: chains.clamps([0], (-10, 5), (5, 30)), False),  # they meet at 5
    ("min-max-as-clamp", lambda: chains.min_max([0], -5, 10), True),  # lo 10 > hi -5
    ("min-max-as-clamp", lambda: chains.min_max([0], 10, -5), False),
    ("min-max-as-clamp", lambda: chains.min_max([0], 3, 3), False),  # lo = hi: one value
    ("transpose-transpose", lambda: chains.transposes(chains.CUBE, (1, 0, 2), (0, 2, 1)), True),
    ("transpose-transpose", lambda: chains.transposes(chains.CUBE, (1, 2, 0), (1, 2, 0)), False),
    ("reverse-reverse", lambda: chains.reverses([[1, 2], [3, 4]], 0, 1), True),
    ("reverse-reverse", lambda: chains.reverses([[1, 2], [3, 4]], 1, 1), False),
    # axis 0 has length 1: the pair reverses axis 1 only, still not the input
    ("reverse-reverse", lambda: chains.reverses([[1, 2, 3]], 0, 1), True),
    ("reverse-reverse", lambda: chains.reverses([[7, 7]], 0, 1), False),  # same values
    (
        "reshape-transpose-reshape",
        lambda: chains.reshape_transpose_reshape(np.arange(6), (2, 3), (1, 0), (6,)),
        True,
    ),
    (
        "reshape-transpose-reshape",
        lambda: chains.reshape_transpose_reshape(np.arange(3), (1, 3), (1, 0), (3,)),
        False,
    ),
    ("slice-concat", lambda: chains.slice_concat([1, 2, 3], [4, 5], [1], [3]), True),
    ("slice-concat", lambda: chains.slice_concat([1, 2, 3], [4, 5], [0], [3]), False),  # ends at it
    ("slice-concat", lambda: chains.slice_concat([1, 2, 3], [0, 0], [1], [3]), False),  # zeros
    ("slice-slice", lambda: chains.slices(np.arange(6), [2], [3], [1], [2]), True),
    ("slice-slice", lambda: chains.slices(np.arange(6), [0], [4], [1], [2]), False),
    ("slice-slice", lambda: chains.slices(np.zeros(6), [2], [3], [1], [2]), False),  # same data
    ("pad-pad", lambda: chains.pads([7], [1, 1], 0, [1, 1], 9), True),
    ("pad-pad", lambda: chains.pads([7], [1, 1], 9, [1, 1], 9), False),
    ("pad-pad", lambda: chains.pads([7], [0, 0], 0, [1, 1], 9), False),
    ("cast-cast", lambda: chains.casts([300, 5], "i32", "i8"), True),
    ("cast-cast", lambda: chains.casts([-128, 127], "i32", "i8"), False),  # i8's range
    ("cast-cast", lambda: chains.casts([40000], "i32", "i16"), True),
    (
        "pad-avg-pool",
        lambda: chains.pad_pool("AVG_POOL2D", GRID, [0, 0, 1, 0, 0, 0, 0, 0], 0.0, (2, 2)),
        True,
    ),
    # pad_const 3 is no zero point: a fold is no candidate (conv-folds-pad-const's case)
    (
        "pad-avg-pool",
        lambda: chains.pad_pool("AVG_POOL2D", GRID, [0, 0, 1, 0, 0, 0, 0, 0], 3.0, (2, 2)),
        False,
    ),
    # the pool's own pad 1 and PAD's 1 reach its kernel 2: no compiler can fold it
    (
        "pad-avg-pool",
        lambda: chains.pad_pool(
            "AVG_POOL2D", GRID, [0, 0, 1, 0, 0, 0, 0, 0], 0.0, (2, 2), (1, 0, 0, 0)
        ),
        False,
    ),
    (
        "pad-max-pool",
        lambda: chains.pad_pool("MAX_POOL2D", GRID, [0, 0, 0, 1, 0, 0, 0, 0], 100.0, (2, 2)),
        True,
    ),
    (
        "pad-max-pool",
        lambda: chains.pad_pool("MAX_POOL2D", GRID, [0, 0, 0, 1, 0, 0, 0, 0], -1.0, (2, 2)),
        False,
    ),
    # acc [10, 20] at scales 0.5 and 1: [5, 20]; the first channel's for both: [5, 10]
    (
        "conv-epilogue-per-tensor",
        lambda: chains.conv_rescale(10, [1, 2], [2**30] * 2, [31, 30], 0),
        True,
    ),
    (
        "conv-epilogue-per-tensor",
        lambda: chains.conv_rescale(10, [1, 2], [2**30] * 2, [31, 31], 0),
        False,
    ),
    # acc [100, 200] at scale 1, zero point 50: 150 and 250 saturate to 127
    (
        "conv-epilogue-zp-after-saturation",
        lambda: chains.conv_rescale(100, [1, 2], [2**30] * 2, [30, 30], 50),
        True,
    ),
    (
        "conv-epilogue-zp-after-saturation",
        lambda: chains.conv_rescale(10, [1, 2], [2**30] * 2, [30, 30], 50),
        False,
    ),
]


@pytest.mark.parametrize(
    ("key", "build", "holds"),
    CONDITIONS,
    ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(CONDITIONS)],
)
def test_the_condition_of_a_rewrite_on_hand_made_chains(key: str, build, holds: bool) -> None:
    case = build()
    assert evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL).valid
    assert shows(key, case) is holds


def test_composition_and_seams_by_hand() -> None:
    # (1, 0, 2) then (0, 2, 1): output axis i is input axis p1[p2[i]] = 1, 2, 0
    assert composed((1, 0, 2), (0, 2, 1)) == (1, 2, 0)
    x = np.arange(24).reshape(2, 3, 4)
    twice = np.transpose(np.transpose(x, (1, 0, 2)), (0, 2, 1))
    np.testing.assert_array_equal(twice, np.transpose(x, (1, 2, 0)))
    assert seams([3, 2, 4]) == [3, 5]


# -- the table -------------------------------------------------------------------------


def test_obligations_follow_the_mode() -> None:
    def pair(op: str, mode: str):  # type: ignore[no-untyped-def]
        op_spec = SPEC.operator(op)
        return pair_obligations(SPEC, LEVEL, op_spec, op_spec.mode(mode))

    assert "rewrite:mul-by-zero" in pair("MUL", "fp32").obligation_keys()
    integer = pair("MUL", "signed 32").not_applicable["rewrite:mul-by-zero"]
    assert "exact for every integer input" in integer
    assert "sign of a zero" in pair("ADD", "fp32").not_applicable["rewrite:add-zero"]
    assert "rewrite:add-zero" not in pair("ADD", "fp32").obligation_keys()
    assert "rewrite:cast-cast" in pair("CAST", "signed 8 to signed 32").obligation_keys()
    narrowing = pair("CAST", "signed 32 to signed 8").not_applicable["rewrite:cast-cast"]
    assert "narrowing" in narrowing
    assert "rewrite:clamp-clamp" in pair("CLAMP", "signed 8").obligation_keys()


def test_a_chain_needs_its_operators_among_the_pairs() -> None:
    r = by_key()["slice-concat"]
    mode = SPEC.operator("SLICE").mode("signed 8")
    everything = frozenset((m.operator, m.mode) for m in SPEC.modes())
    assert buildable(r, SPEC, LEVEL, mode, everything) is None
    without = frozenset(p for p in everything if p[0] != "CONCAT")
    assert "needs CONCAT on i8" in (buildable(r, SPEC, LEVEL, mode, without) or "")
    cast = by_key()["cast-cast"]
    widening = SPEC.operator("CAST").mode("signed 8 to signed 32")
    no_back = frozenset(p for p in everything if p != ("CAST", "signed 32 to signed 8"))
    assert "CAST i32 to i8" in (buildable(cast, SPEC, LEVEL, widening, no_back) or "")


@pytest.mark.parametrize("revision", ["2024-04-draft", "1.0"])
def test_every_built_chain_is_valid_and_meets_its_condition(revision: str) -> None:
    spec = SPEC if revision == SPEC.revision else load_revision(revision)
    level = spec.level("8K")
    pairs = frozenset((m.operator, m.mode) for m in spec.modes())
    built = 0
    for r in REWRITES:
        if r.build is None or r.operators[-1] not in spec.operators:
            continue
        for m in spec.operator(r.operators[-1]).modes:
            if why_not(r, spec, m) is not None or buildable(r, spec, level, m, pairs):
                continue

            def accept(case, fact=r.fact):  # type: ignore[no-untyped-def]
                valid = evaluate(case.graph, case.inputs, spec=spec, level=level).valid
                return case if valid and fact in rewrite_facts(spec, case) else None

            strategy = rewrite_cases(spec, level, Budget(), pairs, r.key, m.mode)
            found = first_accepted(strategy, accept, 0, max_tries=3)
            assert found is not None, (r.key, m.mode)
            assert found.operator == r.operators[-1] and found.mode == m.mode
            built += 1
    assert built >= 60


# -- a pack ----------------------------------------------------------------------------

OPS = "CLAMP|SLICE|CONCAT|CAST|PAD|MAX_POOL2D"


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rewrites") / "pack"
    claim = make_claim(SPEC, ["BI"], [], "8K")
    with spec_in_use(SPEC):  # a module fixture: the autouse restorer runs after it
        generate(
            SPEC, claim, out, options=Options(ops=OPS, examples=1, negative=False, levels=False)
        )
    return out


def test_a_pack_meets_its_rewrite_obligations_two_vectors_each(pack: Path) -> None:
    with open_pack(pack) as p:
        record = p.coverage or []
        names = [e.name for e in p.entries]
    met = {
        (c["operator"], c["mode"], k) for c in record for k in c["met"] if k.startswith("rewrite:")
    }
    unmet = [k for c in record for k in c["unmet"] if k.startswith("rewrite:")]
    assert not unmet
    assert ("CLAMP", "signed 8", "rewrite:clamp-clamp") in met
    assert ("SLICE", "signed 8", "rewrite:slice-concat") in met
    assert ("MAX_POOL2D", "signed 8", "rewrite:pad-max-pool") in met
    assert ("CAST", "signed 8 to signed 32", "rewrite:cast-cast") in met
    for key in ("clamp-clamp", "slice-concat", "pad-pad", "pad-max-pool"):
        assert (
            sum(n.endswith(f"rewrite-{key}_000") or n.endswith(f"rewrite-{key}_001") for n in names)
            >= 2
        )


def test_each_wrong_rewrite_fails_two_vectors_or_more(pack: Path) -> None:
    names = "clamp-clamp-merged|slice-of-concat-one-input|pad-pad-merged|max-pool-folds-pad"
    outcomes = mutation_score(pack, mutants=names)
    assert {o.name for o in outcomes} == set(names.split("|"))
    for o in outcomes:
        assert o.status == "killed" and len(o.killed_by) >= 2, (o.name, o.status)


def test_a_pack_without_targeted_jobs_says_so(tmp_path: Path) -> None:
    claim = make_claim(SPEC, ["BI"], [], "8K")
    out = tmp_path / "p"
    options = Options(
        ops="SLICE", examples=1, negative=False, levels=False, targeted=False, chains=False
    )
    generate(SPEC, claim, out, options=options)
    with open_pack(out) as p:
        record = {c["mode"]: c for c in p.coverage or []}
    i8 = record["signed 8"]
    assert i8["unmet"]["rewrite:slice-slice"] == NOT_AIMED
    # CONCAT is outside --ops: its chain cannot be made, so the obligation does not apply
    assert "needs CONCAT" in i8["not_applicable"]["rewrite:slice-concat"]


def test_the_docs_table_lists_every_rewrite_with_its_condition() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "obligations.md").read_text()
    table = text[text.index("| rewrite | pattern |") :].split("\n\n")[0].splitlines()[2:]
    rows = {line.split("|")[1].strip().strip("`"): line.replace("\\*", "*") for line in table}
    assert list(rows) == [r.key for r in REWRITES]
    for r in REWRITES:
        assert " > ".join(r.operators) in rows[r.key] and r.wrong_when in rows[r.key], r.key
