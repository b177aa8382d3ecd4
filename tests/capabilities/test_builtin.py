"""The built-in manifests: nnapi derived from OperationType.aidl through the one
mapping table, mobilint from its IR operation list."""

import pytest

from conformance.capabilities import load_manifest
from conformance.capabilities.aidl import load_aidl
from conformance.capabilities.mobilint import COMPOSITE, LIST_PATH, NATIVE, operation_names
from conformance.capabilities.nnapi import NNAPI_OPERATIONS, OPERAND_TYPES
from conformance.spec import load_spec

SPEC = load_spec()


def test_every_row_of_the_nnapi_table_names_real_operations() -> None:
    aidl = load_aidl()
    for row in NNAPI_OPERATIONS:
        assert row.operator in SPEC.operators, row
        assert row.operation in aidl, row
    assert len({r.operator for r in NNAPI_OPERATIONS}) == len(NNAPI_OPERATIONS)


@pytest.mark.parametrize(
    ("operator", "mode", "claimed"),
    [
        ("ADD", "fp32", True),  # ADD TENSOR_FLOAT32, FusedActivationFunc NONE
        ("ADD", "signed 32", True),  # TENSOR_INT32 since HAL 1.3
        ("ADD", "bf16", False),  # NNAPI has no bfloat16 operand
        ("CONV2D", "fp32 with fp32 accumulate", True),
        # NNAPI's quantized CONV_2D outputs TENSOR_QUANT8_*, never the int32 TOSA returns
        ("CONV2D", "signed 8x8 with int32 accumulate", False),
        ("AVG_POOL2D", "fp32 with fp32 accumulate", True),
        ("MAX_POOL2D", "signed 8", True),  # TENSOR_QUANT8_ASYMM_SIGNED, scale 1, zp 0
        ("SIGMOID", "fp16", True),  # LOGISTIC
        ("MATMUL", "fp32 with fp32 accumulate", True),  # BATCH_MATMUL
        ("CAST", "fp32 to signed 32", True),
        ("CAST", "bool to signed 8", False),  # BOOL8: casts to the same type only
    ],
)
def test_nnapi_claims_what_the_aidl_supports(operator: str, mode: str, claimed: bool) -> None:
    m = load_manifest("nnapi", SPEC)
    assert m.claims(SPEC.operator(operator).mode(mode)) is claimed


def test_nnapi_targets_ranks_and_types() -> None:
    m = load_manifest("nnapi", SPEC)
    assert m.targets("ADD", "fp32") == [
        "ADD (TENSOR_FLOAT32; since HAL 1.0; input 2 FusedActivationFunc NONE)"
    ]
    assert m.targets("AVG_POOL2D", "fp16 with fp32 accumulate")[0].startswith("AVERAGE_POOL_2D")
    assert m.max_rank == 4 and m.max_batch is None
    assert m.element_types == set(OPERAND_TYPES)
    assert m.limits("MAXIMUM").min_rank == 1  # aidl MAXIMUM: "Supported tensor rank: from 1."
    assert m.limits("CONV2D").min_rank == 0  # "4, NHWC" is the operand's own rank
    assert len(m.operators) == 40
    assert sum(len(e["modes"]) for e in m.operators.values()) == 108


def test_the_mobilint_list_and_its_table() -> None:
    names = operation_names(LIST_PATH.read_text(encoding="utf-8"))
    assert len(names) == 81 and len(set(names)) == 81
    assert set(NATIVE) <= set(names) and set(COMPOSITE) <= set(names)
    m = load_manifest("mobilint", SPEC)
    assert (m.max_rank, m.max_batch, m.data["layout"]) == (4, 1, "NHWC")
    assert m.targets("CONV2D", "fp32 with fp32 accumulate") == ["Convolution"]
    assert m.targets("MAX_POOL2D", "signed 8") == ["Pooling"]
    assert m.data["composites"]["Gelu"]["subgraph"] == ["ERF", "MUL", "ADD"]
    assert not m.claims(SPEC.operator("CONV2D").mode("fp16 with fp32 accumulate"))


def test_a_cut_down_spec_keeps_the_rows_it_has(tmp_path) -> None:
    from lxml import etree

    from conformance.spec import default_spec_path

    root = etree.parse(str(default_spec_path())).getroot()
    for group in list(root.iter("operatorgroup")):
        for op in list(group.iter("operator")):
            if op.findtext("name") not in ("ADD", "SUB"):
                group.remove(op)
        if not len(group):
            group.getparent().remove(group)
    path = tmp_path / "tosa.xml"
    path.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    small = load_spec(path)
    assert set(load_manifest("nnapi", small).operators) == {"ADD", "SUB"}
    assert set(load_manifest("mobilint", small).operators) == {"ADD", "SUB"}
