"""Claims and the (operator, mode) pairs they require, with the counts of the seed."""

import pytest

from conformance.claims import ClaimError, full_claim, make_claim, required_modes
from conformance.spec import load_spec

SPEC = load_spec()


def _count(profiles, extensions=()):
    modes = required_modes(SPEC, make_claim(SPEC, profiles, extensions))
    return len(modes), len({m.operator for m in modes})


def test_bi() -> None:
    assert _count(["BI"]) == (143, 64)


def test_mi_includes_bi() -> None:
    # introduction, "Main Inference Profile Compliance": MI must also meet BI.
    assert _count(["MI"]) == (264, 77)
    assert _count(["MI"]) == _count(["BI", "MI"])


def test_everything() -> None:
    assert _count(["BI", "MI"], list(SPEC.extensions)) == (410, 82)
    assert len(required_modes(SPEC, full_claim(SPEC))) == 410
    assert _count(["MI"], ["all"]) == (410, 82)


def test_and_name_needs_both() -> None:
    bi_var = required_modes(SPEC, make_claim(SPEC, ["BI"], ["EXT-VARIABLE"]))
    variable = [m.mode for m in bi_var if m.operator == "VARIABLE"]
    assert variable == ["signed 8"]  # the fp16/fp32 modes need MI too
    # CAST bf16 -> fp8e4m3 needs EXT-BF16 and EXT-FP8E4M3
    one = required_modes(SPEC, make_claim(SPEC, ["MI"], ["EXT-BF16"]))
    both = required_modes(SPEC, make_claim(SPEC, ["MI"], ["EXT-BF16", "EXT-FP8E4M3"]))
    assert ("CAST", "bf16 to fp8e4m3") not in {m.key for m in one}
    assert ("CAST", "bf16 to fp8e4m3") in {m.key for m in both}


def test_extension_alone_adds_its_modes() -> None:
    n_bi, _ = _count(["BI"])
    n_int16, _ = _count(["BI"], ["EXT-INT16"])
    assert n_int16 > n_bi
    modes = required_modes(SPEC, make_claim(SPEC, ["BI"], ["EXT-INT16"]))
    assert ("RESCALE", "48-bit to 8-bit") in {m.key for m in modes}


def test_names_are_case_insensitive_and_deduplicated() -> None:
    claim = make_claim(SPEC, ["bi", "BI"], ["ext-int16"], "8k")
    assert claim.profiles == ("BI",)
    assert claim.extensions == ("EXT-INT16",)
    assert claim.level.name == "8K"
    assert claim.to_json() == {"profiles": ["BI"], "extensions": ["EXT-INT16"], "level": "8K"}


@pytest.mark.parametrize(
    ("profiles", "extensions", "level", "message"),
    [
        (["XI"], [], None, "unknown profile 'XI'; known: BI, MI"),
        (["BI"], ["EXT-INT9"], None, "unknown extension 'EXT-INT9'"),
        (["BI"], ["EXT-BF16"], None, "extension EXT-BF16 extends MI; add --profile MI"),
        (["MI"], ["EXT-INT16"], None, None),  # MI includes BI, which EXT-INT16 extends
        ([], [], None, "a claim needs at least one profile"),
        (["BI"], [], "16K", "unknown level '16K'"),
    ],
)
def test_claim_validation(profiles, extensions, level, message) -> None:
    if message is None:
        make_claim(SPEC, profiles, extensions, level)
        return
    with pytest.raises(ClaimError, match=message):
        make_claim(SPEC, profiles, extensions, level)


def test_level_resolves_limits() -> None:
    claim = make_claim(SPEC, ["BI"], level="none")
    assert claim.level["MAX_RANK"] == 32
    assert make_claim(SPEC, ["BI"]).level["MAX_KERNEL"] == 8192
