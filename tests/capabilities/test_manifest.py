"""The manifest format: TOML checked against schema.json and the spec model, every
problem one line naming the file, the key and what is wrong (exit status 2)."""

import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.capabilities import ManifestError, load_manifest
from conformance.capabilities.manifest import from_data, to_toml
from conformance.cli.main import main
from conformance.spec import load_spec

SPEC = load_spec()

GOOD = """
name = "tiny"
max_rank = 3
max_batch = 1
element_types = ["fp32_t"]

[operators.ADD.modes]
fp32 = ["vendor_add"]
"signed 32" = ["vendor_add_i32"]

[operators.CONV2D]
attributes = { dilation = [[1, 1]] }
[operators.CONV2D.modes]
"fp32 with fp32 accumulate" = ["vendor_conv"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(text)
    return path


def test_a_manifest_file_claims_its_pairs_within_its_types(tmp_path: Path) -> None:
    m = load_manifest(str(write(tmp_path, GOOD)), SPEC)
    add = SPEC.operator("ADD")
    assert m.claims(add.mode("fp32"))
    # listed, but i32_t is not among its element types
    assert m.unclaimed_reason(add.mode("signed 32")) == "manifest tiny holds no i32_t"
    assert "does not claim operator SUB" in str(m.unclaimed_reason(SPEC.operator("SUB").modes[0]))
    assert m.targets("ADD", "fp32") == ["vendor_add"]
    lim = m.limits("CONV2D")
    assert (lim.max_rank, lim.max_batch, lim.allowed("dilation")) == (3, 1, ((1, 1),))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = ", "not TOML"),
        ('name = "x"\n', "(top level): 'operators' is a required property"),
        (
            'name = "x"\nmax_rank = -1\n[operators.ADD.modes]\nfp32 = ["a"]\n',
            "max_rank: -1 is less",
        ),
        ('name = "x"\n[operators.ADD.modes]\nfp32 = []\n', "operators.ADD.modes.fp32: [] should"),
        ('name = "x"\n[operators.NOPE.modes]\nfp32 = ["a"]\n', "operators.NOPE: no such TOSA"),
        ('name = "x"\n[operators.ADD.modes]\nbf17 = ["a"]\n', "operators.ADD.modes.bf17: ADD has"),
        (
            'name = "x"\nelement_types = ["fp33_t"]\n[operators.ADD.modes]\nfp32 = ["a"]\n',
            "element_types.0: 'fp33_t' is not a TOSA element type",
        ),
        (
            'name = "x"\n[operators.ADD]\nattributes = {pad = [1]}\n[operators.ADD.modes]\n'
            'fp32 = ["a"]\n',
            "operators.ADD.attributes.pad: ADD has no argument 'pad'",
        ),
        (
            'name = "x"\n[operators.ADD]\nmin_rank = 3\nmax_rank = 2\n[operators.ADD.modes]\n'
            'fp32 = ["a"]\n',
            "operators.ADD.min_rank: 3 is above max_rank 2",
        ),
        (
            'name = "x"\n[operators.ADD.modes]\nfp32 = ["a"]\n[composites.G]\nsubgraph = ["X"]\n',
            "composites.G.subgraph.0: no such TOSA operator 'X'",
        ),
    ],
)
def test_a_malformed_manifest_is_one_line_naming_file_and_key(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ManifestError) as info:
        load_manifest(str(path), SPEC)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)
    assert main(["capabilities", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_an_unknown_name_or_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["generate", "--profile", "BI", "--capabilities", "nope", "-o", "/tmp/x-none"])
    assert code == 2
    assert "--capabilities 'nope': no such file and no built-in manifest" in capsys.readouterr().err


def test_the_cli_lists_and_shows_the_built_in_manifests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capabilities"]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("mobilint") and "\nnnapi" in listed
    assert main(["capabilities", "show", "nnapi"]) == 0
    shown = capsys.readouterr().out
    m = load_manifest("nnapi", SPEC)
    assert shown.splitlines()[0] == f"# built-in nnapi; sha256 {m.sha256}"
    # what it prints is a manifest file with the same content and sha256
    again = from_data(tomllib.loads(shown), "shown.toml", SPEC)
    assert again.data == m.data and again.sha256 == m.sha256


_keys = st.text(st.sampled_from("abz_- 19."), min_size=1, max_size=6)
_values = st.one_of(
    st.integers(-5, 5), st.booleans(), st.text(max_size=5), st.lists(st.integers(0, 3), max_size=3)
)
_tables = st.recursive(
    st.dictionaries(_keys, _values, max_size=3),
    lambda inner: st.dictionaries(_keys, st.one_of(_values, inner), max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(_keys, st.one_of(_values, _tables), max_size=4))
def test_to_toml_round_trips(data: dict) -> None:
    assert tomllib.loads(to_toml(data)) == data
