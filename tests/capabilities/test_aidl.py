"""The parser of the vendored OperationType.aidl, on the whole file: if the file
changes, these counts change and the nnapi manifest's derivation is looked at again."""

import re
from collections import Counter

from conformance.capabilities.aidl import AIDL_PATH, load_aidl, parse_aidl


def test_every_operation_of_the_file_is_parsed() -> None:
    ops = load_aidl()
    text = AIDL_PATH.read_text(encoding="utf-8")
    # 103 "NAME = CODE," lines in the enum (ARGMAX's has two // comments before it).
    assert len(re.findall(r"^    [A-Z][A-Z0-9_]* = \d+,", text, re.M)) == 103
    assert len(ops) == 103
    assert sorted(o.code for o in ops.values()) == list(range(103))
    assert ops["ARGMAX"].code == 39 and ops["BATCH_MATMUL"].code == 102


def test_rank_statements() -> None:
    ops = load_aidl().values()
    stated = [o for o in ops if o.rank_text is not None]
    assert len(stated) == 86  # "Supported tensor rank:" lines in the file
    assert sum(o.rank_max == 4 for o in ops) == 48
    kinds = Counter((o.rank_min, o.rank_max) for o in stated)
    # 30 "up to 4", 17 "4, with NHWC or NCHW", 36 "from 1", 2 "3, either time-major
    # or batch-major" and 1 "at least 2 and up to 4".
    assert kinds == {(0, 4): 30, (4, 4): 17, (1, None): 36, (3, 3): 2, (2, 4): 1}


def test_operand_types_with_their_hal_versions() -> None:
    add = load_aidl()["ADD"]
    # aidl ADD: FLOAT16 since 1.2, FLOAT32, QUANT8_ASYMM, QUANT8_ASYMM_SIGNED since 1.3,
    # INT32 since 1.3.
    assert {o.type: o.since for o in add.operands} == {
        "TENSOR_FLOAT16": "1.2",
        "TENSOR_FLOAT32": "1.0",
        "TENSOR_QUANT8_ASYMM": "1.0",
        "TENSOR_QUANT8_ASYMM_SIGNED": "1.3",
        "TENSOR_INT32": "1.3",
    }
    assert add.supports("TENSOR_INT32", "output") is not None


def test_configurations_keep_their_roles() -> None:
    conv = load_aidl()["CONV_2D"]
    # "TENSOR_INT32 for bias": a convolution never outputs int32 in NNAPI.
    assert conv.supports("TENSOR_INT32", "bias") is not None
    assert conv.supports("TENSOR_INT32", "output") is None
    # "Available since HAL version 1.2:" heads the 16-bit float configuration.
    assert conv.supports("TENSOR_FLOAT16", "output").since == "1.2"  # type: ignore[union-attr]
    assert conv.rank_min == conv.rank_max == 4


def test_casts_to_the_same_type_only() -> None:
    cast = load_aidl()["CAST"]
    # "Since HAL version 1.3, casting tensors of the following {@link OperandType} to
    # the same {@link OperandType} is supported: ... TENSOR_BOOL8 ..."
    assert cast.supports("TENSOR_BOOL8", "input") is None
    assert cast.supports("TENSOR_BOOL8", "same type").since == "1.3"  # type: ignore[union-attr]
    assert cast.supports("TENSOR_INT32", "output").since == "1.0"  # type: ignore[union-attr]


def test_a_feature_level_version_and_a_changed_file() -> None:
    reshape = load_aidl()["RESHAPE"]
    assert reshape.supports("TENSOR_INT32", "input").since == "FL6"  # type: ignore[union-attr]
    doc = (
        "/**\n * Supported tensor {@link OperandType}:\n * * {@link OperandType::TENSOR_FLOAT32}\n"
    )
    doc += " *\n * Supported tensor rank: up to 3\n */\n    NEW_OP = 200,\n"
    (op,) = parse_aidl(doc)
    assert (op.name, op.code, op.rank_max) == ("NEW_OP", 200, 3)
