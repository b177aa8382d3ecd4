"""The TOSA 1.1 draft as a revision: pinned to a commit, its type sets expanded into
concrete modes, DEDUCE-EXT resolved, the repeated modes corrected, and the mode table
pinned beside the vendored files."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from lxml import etree

from conformance import mode_table, revisions
from conformance.claims import ClaimError, make_claim, required_modes
from conformance.cli.main import main
from conformance.expressions import Environment, evaluate, parse_expr, parse_shape
from conformance.spec import load_revision, load_spec, vendored_spec

V11 = load_revision("1.1-draft")
V10 = load_revision("1.0")
REV = revisions.TOSA_1_1_DRAFT


def _xml_entries() -> list[etree._Element]:
    root = etree.parse(str(REV.xml_path)).getroot()
    return list(root.iter("typesupport"))


def test_the_draft_is_pinned_to_its_commit() -> None:
    assert V11.revision == "1.1-draft" and V11.version_string == "1.1.0-draft"
    assert REV.commit == "cd5acdd00c4101c2d8a45c3398abc881fdb9a1c6"
    assert REV.pinned == "1.1-draft@cd5acdd" and revisions.TOSA_1_0.pinned == "1.0"
    assert make_claim(V11, ["PRO-INT"]).describe() == "PRO-INT @ level 8K of TOSA 1.1-draft@cd5acdd"
    assert "Licensed under the Apache License" in REV.fbs_path.read_text()


def test_counts_measured_from_the_file() -> None:
    # 100 operators and 601 <typesupport> entries; 25 operators that 1.0 does not have.
    assert len(V11.operators) == 100 and len(_xml_entries()) == 601
    new = sorted(set(V11.operators) - set(V10.operators))
    assert len(new) == 25 and "MATMUL_T" in new and "ASSERT_EQUAL_SHAPE" in new
    # Every entry is a family of one or more concrete modes. 9 entries repeat a mode with
    # the same types (GATHER, SCATTER, ROW_GATHER_BLOCK_SCALED: signed 8/16/32) and are
    # merged; 40 more share a name with an entry of other types (ARGMAX's i64 outputs,
    # the i64 indices), so 552 mode names head the 1,941 concrete modes.
    seen: dict[tuple[str, str], set[tuple[tuple[str, str], ...]]] = {}
    for ts in _xml_entries():
        op = ts.getparent().findtext("name")
        types = tuple(sorted((k, v) for k, v in ts.attrib.items() if k.endswith("_t")))
        seen.setdefault((op, ts.get("mode")), set()).add(types)
    assert sum(len(v) for v in seen.values()) == 601 - 9 and len(seen) == 552
    families = {(m.operator, m.family or m.mode) for m in V11.modes()}
    assert len(families) == 552
    assert len(V11.modes()) == 1941


def test_type_sets_expand_into_concrete_modes() -> None:
    cast = {m.mode: m for m in V11.operator("CAST").modes}
    # "bool to signed": in_t fixed, out_t from S_CAST_SIGNED = i8, i16, i32.
    names = [n for n in cast if n.startswith("bool to signed")]
    assert names == [f"bool to signed (out_t={t})" for t in ("i8_t", "i16_t", "i32_t")]
    m = cast["bool to signed (out_t=i16_t)"]
    assert dict(m.bindings) == {"in_t": "bool_t", "out_t": "i16_t"}
    assert m.family == "bool to signed" and m.requirements == (frozenset({"PRO-INT"}),)
    # same_as: RESIZE's fp8 mode ties out_t to in_t (2 modes, not 4).
    fp8 = [m for m in V11.operator("RESIZE").modes if m.family == "fp8"]
    assert [(m.bindings["in_t"], m.bindings["out_t"]) for m in fp8] == [
        ("fp8e4m3_t", "fp8e4m3_t"),
        ("fp8e5m2_t", "fp8e5m2_t"),
    ]
    # access_elem_type: a zero point of a block-scaled input has its access type, fp32_t.
    conv = V11.operator("CONV2D").mode(
        "Mixed precision fp with fp32 accumulate "
        "(in_t=bs32_fp8ue8m0_fp4e2m1_t, weight_t=fp16_t)"
    )
    assert conv.bindings["in_zp_t"] == "fp32_t" and conv.bindings["weight_zp_t"] == "fp16_t"


def test_deduce_ext_takes_the_extensions_of_the_types() -> None:
    cast = V11.operator("CAST")
    # introduction, "Extension Data Type Mapping": bf16 -> EXT-BF16; the composite
    # bs32_fp8ue8m0_fp4e2m1 -> EXT-MX-COMMON and EXT-MX-FP4E2M1.
    m = cast.mode("fp to MX (in_t=bf16_t, out_t=bs32_fp8ue8m0_fp4e2m1_t)")
    assert m.requirements == (frozenset({"EXT-BF16", "EXT-MX-COMMON", "EXT-MX-FP4E2M1"}),)
    # An fp8 value type inside a composite deduces the MX extension, not EXT-FP8E4M3.
    m = cast.mode("fp to MX (in_t=fp32_t, out_t=bs32_fp8ue8m0_fp8e4m3_t)")
    assert m.requirements == (frozenset({"EXT-MX-COMMON", "EXT-MX-FP8E4M3"}),)
    # PRO-INT and DEDUCE-EXT: the profile plus what the types deduce (none for i8/i32).
    rg = V11.operator("ROW_GATHER")
    assert rg.mode("Base INT (in_out_t=i8_t, index_t=i32_t)").requirements == (
        frozenset({"PRO-INT"}),
    )
    assert rg.mode("Base INT (in_out_t=i64_t, index_t=i64_t)").requirements == (
        frozenset({"PRO-INT", "EXT-INT64"}),
    )
    # Reading deduce-ext-nothing: fp16 x fp32 into fp32 deduces nothing; PRO-FP's.
    conv = V11.operator("CONV2D").mode(
        "Mixed precision fp with fp32 accumulate (in_t=fp16_t, weight_t=fp32_t)"
    )
    assert conv.requirements == (frozenset({"PRO-FP"}),)
    assert "DEDUCE-EXT" not in {n for m in V11.modes() for r in m.requirements for n in r}


def test_repeated_modes_are_merged_and_shared_names_made_unique() -> None:
    gather = V11.operator("GATHER")
    # repeated-mode: 'signed 8' i8/i32 is listed for PRO-INT (1.0) and PRO-FP (1.1).
    m = gather.mode("signed 8")
    assert dict(m.bindings) == {"in_out_t": "i8_t", "index_t": "i32_t"}
    assert set(m.requirements) == {frozenset({"PRO-INT"}), frozenset({"PRO-FP"})}
    assert make_claim(V11, ["PRO-FP"]).requires(m) and make_claim(V11, ["PRO-INT"]).requires(m)
    # mode-name-shared: the i64 index mode is named by the type it differs in.
    wide = gather.mode("signed 8 (index_t=i64_t)")
    assert wide.bindings["index_t"] == "i64_t" and wide.family == "signed 8"
    assert V11.operator("ARGMAX").mode("signed 8 (out_t=i64_t)").requirements == (
        frozenset({"EXT-INT64"}),
    )
    assert {"repeated-mode", "mode-name-shared"} <= set(V11.errata_applied)
    names = [(m.operator, m.mode.casefold()) for m in V11.modes()]
    assert len(names) == len(set(names))
    # 1.0 has no such quirk: nothing fires, its modes keep their names.
    assert not {"repeated-mode", "mode-name-shared"} & set(V10.errata_applied)


def test_every_named_requirement_counts() -> None:
    # 1.1's op_profile has and_name2: CONV2D_BLOCK_SCALED needs all three extensions.
    conv = V11.operator("CONV2D_BLOCK_SCALED").mode("fp4e2m1 with fp8ue8m0 scale factor")
    assert conv.requirements == (
        frozenset({"EXT-MX-COMMON", "EXT-MX-FP4E2M1", "EXT-MXFP-CONV"}),
    )
    # Erratum cast_to_block_scaled-bf16: the one bf16 mode the XML leaves EXT-BF16 out of.
    cast = V11.operator("CAST_TO_BLOCK_SCALED")
    fp4 = cast.mode("bf16 to fp4e2m1 with fp8ue8m0 scale")
    fp6 = cast.mode("bf16 to fp6e2m3 with fp8ue8m0 scale")
    assert fp4.requirements == (frozenset({"EXT-MX-COMMON", "EXT-MX-FP4E2M1", "EXT-BF16"}),)
    assert fp6.requirements == (frozenset({"EXT-MX-COMMON", "EXT-MX-FP6E2M3", "EXT-BF16"}),)
    assert "cast_to_block_scaled-bf16" in cast.errata


def test_the_mode_table_is_the_pinned_one() -> None:
    pinned = (REV.directory / "modes.txt").read_text()
    now = mode_table.render(V11)
    if now != pinned:
        diff = "".join(
            list(difflib.unified_diff(pinned.splitlines(True), now.splitlines(True), n=0))[:40]
        )
        pytest.fail(
            "the 1.1 draft's mode table changed; review and rewrite it with "
            "`tosa-conformance --tosa 1.1-draft spec modes -o "
            f"conformance/tosa_spec/1.1-draft/modes.txt`:\n{diff}"
        )
    head = pinned.splitlines()[0]
    assert REV.commit in head and V11.sha256 in head


def test_target_strings_name_the_draft() -> None:
    t = revisions.parse_target("TOSA-1.1+FP+int64+mx-fp4e2m1", REV, V11.extensions)
    assert (t.profiles, t.extensions) == (("PRO-FP",), ("EXT-INT64", "EXT-MX-FP4E2M1"))
    t = revisions.parse_target("TOSA-1.1.draft+INT", REV, V11.extensions)
    assert t.profiles == ("PRO-INT",)
    with pytest.raises(revisions.RevisionError, match=r"pass --tosa 1\.1-draft"):
        revisions.parse_target("TOSA-1.1+INT", revisions.TOSA_1_0, V10.extensions)
    with pytest.raises(ClaimError, match=r"BI is the 2024-04-draft revision's name; TOSA 1\.1"):
        make_claim(V11, ["BI"])


def test_profiles_are_independent_and_shape_ops_need_ext_shape() -> None:
    fp = {m.key for m in required_modes(V11, make_claim(V11, ["PRO-FP"]))}
    assert ("CONV2D", "signed 8x8 with int32 accumulate") not in fp
    shape = {m.key for m in required_modes(V11, make_claim(V11, ["PRO-INT"], ["EXT-SHAPE"]))}
    assert any(op == "ADD_SHAPE" for op, _ in shape)
    assert not any(op == "ADD_SHAPE" for op, _ in fp)


def test_a_custom_copy_is_identified_as_the_draft(tmp_path: Path) -> None:
    text = REV.xml_path.read_text().replace("Shape calcuation", "Shape calculation")
    (tmp_path / "tosa.xml").write_text(text)
    (tmp_path / "tosa.xsd").write_bytes(REV.xsd_path.read_bytes())
    spec = load_spec(tmp_path / "tosa.xml")
    assert spec.revision == "1.1-draft" and len(spec.modes()) == len(V11.modes())


def test_a_pack_of_another_commit_is_refused() -> None:
    assert vendored_spec("1.1-draft", V11.sha256) is V11
    with pytest.raises(revisions.RevisionError, match=r"another commit.*vendors commit cd5acdd"):
        vendored_spec("1.1-draft", "0" * 64)
    assert vendored_spec("1.0", "0" * 64) is V10  # a release does not move


def test_length_in_level_limits() -> None:
    # length(x): the number of values of shape x; length(tensor_list_shape(x)): the
    # number of tensors in list x.
    env = Environment(shapes={"input1": (4, 5, 6)}, lists={"input_list": [(1,), (2,), (3,)]})
    assert evaluate(parse_expr("length(input1)"), env) == 3
    assert evaluate(parse_expr("length(tensor_list_shape(input_list))"), env) == 3
    pair = parse_shape("(value_shape1, scale_shape1)")
    assert (pair.kind, pair.members, pair.rank) == ("pair", ("value_shape1", "scale_shape1"), None)
    assert pair.bind((2, 32), Environment()) != []  # two shapes, not one


def test_spec_modes_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--tosa", "1.1-draft", "spec", "modes", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data) == 1941 and data[0]["operator"] == "ARGMAX"
    out = tmp_path / "modes.txt"
    assert main(["--tosa", "1.1-draft", "spec", "modes", "-o", str(out)]) == 0
    assert out.read_text() == (REV.directory / "modes.txt").read_text()
    assert main(["--tosa", "1.1-draft", "spec", "modes", "-o", str(tmp_path / "no" / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the mode table" in err
