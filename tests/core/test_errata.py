"""Every erratum: the quirk is in the XML, and the model corrects it."""

from pathlib import Path

import numpy as np
from lxml import etree

from conformance import dtypes, errata
from conformance.builder import find_mode
from conformance.spec import default_spec_path, load_revision, load_spec

SPEC = load_spec()
ROOT = etree.parse(str(default_spec_path())).getroot()


def _xml_operator(name: str) -> etree._Element:
    for op in ROOT.iter("operator"):
        if op.findtext("name") == name:
            return op
    raise KeyError(name)


def test_every_erratum_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "errata.md").read_text()
    for e in errata.ERRATA:
        assert e.id in doc, f"docs/errata.md does not explain {e.id}"
        assert e.xml_says and e.we_use and e.why


def test_undeclared_acc_t() -> None:
    for name in ("CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"):
        declared = [t.get("name") for t in _xml_operator(name).iter("type")]
        assert "acc_t" not in declared  # the quirk is in the XML ...
        assert "acc_t" in SPEC.operator(name).types  # ... and corrected in the model
        assert "undeclared-acc_t" in SPEC.operator(name).errata
    assert "undeclared-acc_t" not in SPEC.operator("CONV2D").errata


def test_every_binding_is_declared_after_errata() -> None:
    for op in SPEC.operators.values():
        for m in op.modes:
            assert set(m.bindings) <= set(op.types), (op.name, m.mode)


def test_transpose_conv2d_fp8_modes() -> None:
    op = SPEC.operator("TRANSPOSE_CONV2D")
    e4 = op.mode("fp8e4m3 with fp16 accumulate")
    assert e4.dtype("weight_t") is dtypes.FP8E4M3 and e4.dtype("acc_t") is dtypes.FP16
    e5 = op.mode("fp8e5m2")
    assert e5.dtype("weight_t") is dtypes.FP8E5M2 and e5.dtype("acc_t") is dtypes.FP16
    xml = {
        ts.get("mode"): ts.attrib for ts in _xml_operator("TRANSPOSE_CONV2D").iter("typesupport")
    }
    assert "weight_t" not in xml["fp8e5m2"]


def test_variable_operators_use_var_t() -> None:
    for name, arg in (
        ("VARIABLE", "initial_value"),
        ("VARIABLE_WRITE", "input1"),
        ("VARIABLE_READ", "output1"),
    ):
        xml_type = next(
            a.get("tensor-element-type")
            for a in _xml_operator(name).iter("argument")
            if a.get("name") == arg
        )
        assert xml_type in ("in_t", "out_t")
        assert SPEC.operator(name).argument(arg).element_type == "var_t"


def test_rescale_mul_t_follows_scale32() -> None:
    assert not any("mul_t" in m.bindings for m in SPEC.operator("RESCALE").modes)
    assert SPEC.operator("RESCALE").argument("multiplier").element_type == "mul_t"
    op = SPEC.operator("RESCALE")
    bound = {"in_t": dtypes.I8, "out_t": dtypes.I8, "mul_t": dtypes.I16}
    assert find_mode(op, bound, {"scale32": False}) is not None
    assert find_mode(op, bound, {"scale32": True}) is None
    bound["mul_t"] = dtypes.I32
    assert find_mode(op, bound, {"scale32": True}).mode == "8-bit to 8-bit"


def test_no_levellimit_mentions_log2_size_or_nesting() -> None:
    used = {lim.get("limit") for lim in ROOT.iter("levellimit")}
    assert "MAX_LOG2_SIZE" not in used and "MAX_NESTING" not in used
    implicit = {i.limit for i in errata.IMPLICIT_LEVEL_LIMITS}
    assert implicit == {"MAX_LOG2_SIZE", "MAX_NESTING"}


def test_mode_case() -> None:
    spellings = {ts.get("mode") for ts in ROOT.iter("typesupport")}
    assert {"boolean", "Boolean"} <= spellings
    assert SPEC.operator("CONCAT").mode("Boolean").mode == "boolean"  # kept as the XML has it
    assert SPEC.operator("CAST").mode("BOOL TO SIGNED 8").mode == "bool to signed 8"
    assert errata.same_mode("Boolean", "boolean")


def test_a_fixed_xml_needs_no_errata(tmp_path) -> None:
    indent = "\n          "
    declared = indent.join(f"<type name='{t}' />" for t in ("in_t", "weight_t", "out_t"))
    text = default_spec_path().read_text()
    assert text.count(declared + "\n        </types>") == 4  # + FULLY_CONNECTED
    text = text.replace(declared, declared + indent + "<type name='acc_t' />")
    fixed = tmp_path / "fixed.xml"
    fixed.write_text(text)
    spec = load_spec(fixed)
    # CONV3D, DEPTHWISE_CONV2D and TRANSPOSE_CONV2D now declare acc_t themselves.
    for name in ("CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"):
        assert "undeclared-acc_t" not in spec.operator(name).errata
    assert "undeclared-acc_t" not in spec.errata_applied


def test_row_gather_block_scaled_lists_have_rank_3() -> None:
    spec = load_revision("1.1-draft")
    xml = etree.parse(str(spec.path)).getroot()
    declared = {
        a.get("name"): (a.find("rank").get("min"), a.find("rank").get("max"))
        for op in xml.iter("operator")
        if op.findtext("name") == "ROW_GATHER_BLOCK_SCALED"
        for a in op.iter("argument")
        if a.find("rank") is not None
    }
    # The quirk: the lists say 4..4, where the descriptions say [N,K,C] ...
    assert declared["values"] == ("4", "4") and declared["output"] == ("4", "4")
    op = spec.operator("ROW_GATHER_BLOCK_SCALED")
    assert "row_gather_block_scaled-rank" in op.errata
    level = spec.level("8K")
    # ... and the model has 3..3; indices keeps its own [N,W] rank 2.
    assert op.argument("values").rank_range(level) == (3, 3)
    assert op.argument("output").rank_range(level) == (3, 3)
    assert op.argument("indices").rank_range(level) == (2, 2)
    assert "row_gather_block_scaled-rank" not in spec.operator("ROW_GATHER").errata


def test_max_rank_level_limit_of_the_reductions_const_and_identity() -> None:
    from reference_helpers import assert_rule, run_with_constants, valid

    spec = load_revision("1.0")
    xml = etree.parse(str(spec.path)).getroot()
    reduce_sum = next(op for op in xml.iter("operator") if op.findtext("name") == "REDUCE_SUM")
    # The quirk: a rank range to MAX_RANK and no levellimit naming it ...
    ranks = {a.get("name"): a.find("rank") for a in reduce_sum.iter("argument")}
    assert ranks["input"].get("max") == "MAX_RANK"
    assert not [lim for lim in reduce_sum.iter("levellimit") if lim.get("limit") == "MAX_RANK"]
    fired = {n for n in spec.operators if "max_rank-no-levellimit" in spec.operator(n).errata}
    assert fired == {f"REDUCE_{k}" for k in ("ALL", "ANY", "MAX", "MIN", "PRODUCT", "SUM")} | {
        "CONST",
        "IDENTITY",
    }
    # ... ADD has its own, so the fix leaves it alone.
    assert "max_rank-no-levellimit" not in spec.operator("ADD").errata
    # 8K's MAX_RANK is 6: a rank-6 REDUCE_SUM is valid, a rank-7 one a LEVEL_CHECK (Arm's
    # generator's WrongRank test, 5x9x12x3x4x9x1 along axis 4, expects it to fail).
    six = np.ones((1, 2, 1, 1, 3, 1), np.float32)
    got = valid(
        run_with_constants(
            "REDUCE_SUM", [("input", six, "fp32")], (1, 2, 1, 1, 1, 1), "fp32", spec=spec, axis=4
        )
    )
    assert got.reshape(-1).tolist() == [3.0, 3.0]
    seven = np.ones((1, 2, 1, 1, 3, 1, 1), np.float32)
    outcome = run_with_constants(
        "REDUCE_SUM", [("input", seven, "fp32")], (1, 2, 1, 1, 1, 1, 1), "fp32", spec=spec, axis=4
    )
    assert_rule(outcome, "LEVEL_CHECK", "rank(shape1) <= MAX_RANK (7 > 6)")
