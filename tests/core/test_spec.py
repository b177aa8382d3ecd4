"""The spec model read from the vendored tosa.xml, and errors for bad XML."""

from pathlib import Path

import pytest

from conformance import revisions
from conformance.spec import SpecError, default_spec_path, load_revision, load_spec

SPEC = load_spec()


def test_counts_from_the_seed() -> None:
    assert len(SPEC.operators) == 82
    assert len(SPEC.modes()) == 410
    assert SPEC.version_string == "1.1.0-draft"
    assert len(SPEC.sha256) == 64


def test_groups_and_arguments() -> None:
    conv = SPEC.operator("conv2d")
    assert conv.group == "tensor"
    assert [a.name for a in conv.inputs] == ["input", "weight", "bias"]
    assert [a.name for a in conv.outputs] == ["output"]
    pad = conv.argument("pad")
    assert pad.category == "attribute" and pad.element_type == "i32_t"
    assert pad.element_names == ("pad_top", "pad_bottom", "pad_left", "pad_right")
    assert conv.argument("local_bound").optional
    assert conv.argument("weight").shape.text == "[OC,KH,KW,IC]"
    limits = [lim.text for _, lim in conv.level_limits()]
    assert "dilation_y * KH" in limits and "stride_x" in limits


def test_rank_ranges_follow_the_level() -> None:
    out = SPEC.operator("ARGMAX").argument("output")
    assert out.rank_range(SPEC.level("8K")) == (0, 5)
    assert out.rank_range(SPEC.level("none")) == (0, 31)
    assert SPEC.operator("PAD").argument("padding").rank_range(SPEC.level("8K")) is None


def test_element_names_of_shape_inputs() -> None:
    scale = SPEC.operator("RESIZE").argument("scale")
    assert scale.type == "shape_t"
    assert scale.element_names == ("scale_y_n", "scale_y_d", "scale_x_n", "scale_x_d")


def test_modes_and_requirements() -> None:
    rescale = SPEC.operator("RESCALE")
    assert len(rescale.modes) == 12
    m = rescale.mode("48-bit to 8-bit")
    assert m.requirements == (frozenset({"EXT-INT16"}),)
    var = SPEC.operator("VARIABLE").mode("signed 8")
    # and_name: both names are needed
    assert var.requirements == (frozenset({"BI", "EXT-VARIABLE"}),)
    assert not var.required_by({"BI"})
    assert var.required_by({"BI", "EXT-VARIABLE"})
    assert SPEC.operator("CONV2D").mode("fp16 with fp32 accumulate").dtype("acc_t").name == "fp32"
    with pytest.raises(KeyError, match="no mode 'int3'"):
        rescale.mode("int3")


def test_profiles_extensions_levels_enums() -> None:
    assert list(SPEC.profiles) == ["BI", "MI"]
    assert SPEC.extensions["EXT-VARIABLE"].profiles == ("BI", "MI")
    assert SPEC.extensions["EXT-FP8E4M3"].status == "Unstable"
    assert SPEC.level("8k")["MAX_RANK"] == 6
    assert SPEC.level("none")["MAX_SCALE"] == 2048
    assert SPEC.enums["acc_type_t"].names() == ["INT32", "FP16", "FP32", "INT48"]
    assert SPEC.enums["resize_mode_t"].names() == ["NEAREST_NEIGHBOR", "BILINEAR"]
    with pytest.raises(KeyError, match="unknown level '4K'"):
        SPEC.level("4K")


def _corrupt(tmp_path: Path, old: str, new: str) -> Path:
    text = default_spec_path().read_text()
    assert old in text
    bad = tmp_path / "bad.xml"
    bad.write_text(text.replace(old, new, 1))
    return bad


def test_malformed_xml_names_file_and_line(tmp_path: Path) -> None:
    bad = _corrupt(tmp_path, '<level name="8K"', '<level name="8K" <<')
    with pytest.raises(SpecError) as info:
        load_spec(bad)
    assert info.value.path == str(bad)
    assert info.value.line == 35
    assert str(info.value).startswith(f"{bad}:35: malformed XML")


def test_schema_invalid_xml_names_file_and_line(tmp_path: Path) -> None:
    bad = _corrupt(tmp_path, 'max_rank="6"', 'max_rank="six"')
    with pytest.raises(SpecError, match=r"bad.xml:35: does not match the 2024-04-draft revision's"):
        load_spec(bad)
    (tmp_path / "tosa.xsd").write_bytes(revisions.DRAFT_2024.xsd_path.read_bytes())
    with pytest.raises(SpecError, match=r"bad.xml:35: does not match tosa.xsd: .*max_rank"):
        load_spec(bad)


def test_bad_expression_names_file_and_line(tmp_path: Path) -> None:
    bad = _corrupt(tmp_path, 'shape="[N,OH,OW,C*M]"', 'shape="[N,OH,,C*M]"')
    with pytest.raises(SpecError, match=r"bad.xml:\d+: argument 'output': empty dimension"):
        load_spec(bad)


def test_unknown_type_in_mode(tmp_path: Path) -> None:
    bad = _corrupt(
        tmp_path,
        'mode="signed 8" in_t="i8_t" out_t="i32_t"',
        'mode="signed 8" in_t="i8_t" out_t="i32_t" table_t="-"',
    )
    load_spec(bad)  # '-' bindings are allowed (CUSTOM uses one)


def test_a_shared_mode_name_is_made_unique(tmp_path: Path) -> None:
    # Erratum mode-name-shared (TOSA 1.1 does this): the first keeps the name, the later
    # one is named by the types it differs in.
    shared = _corrupt(
        tmp_path,
        'mode="signed 16" in_t="i16_t" out_t="i32_t"',
        'mode="signed 8" in_t="i16_t" out_t="i32_t"',
    )
    spec = load_spec(shared)
    argmax = spec.operator("ARGMAX")
    assert argmax.mode("signed 8").bindings["in_t"] == "i8_t"
    assert argmax.mode("signed 8 (in_t=i16_t)").family == "signed 8"
    assert "mode-name-shared" in argmax.errata


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read file"):
        load_spec(tmp_path / "nope.xml")


def test_an_enumeration_value_by_name_and_by_number() -> None:
    # TOSA 1.1's block_size_t: <enumval value="32" name="BLOCK_SIZE_32"> and value 1
    # BLOCK_SIZE_1 (the 1.1 draft's tosa.xml).

    enum = load_revision("1.1-draft").enums["block_size_t"]
    assert enum.value_of("BLOCK_SIZE_32") == 32 and enum.value_of("BLOCK_SIZE_1") == 1
    assert enum.name_of(32) == "BLOCK_SIZE_32"
    with pytest.raises(KeyError, match="block_size_t has no value 'BLOCK_SIZE_16'"):
        enum.value_of("BLOCK_SIZE_16")
    with pytest.raises(KeyError, match="block_size_t has no value 16"):
        enum.name_of(16)
