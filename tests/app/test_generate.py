"""`tosa-conformance generate`: deterministic packs that verify, and clear errors."""

import json
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.generate_plan import NOT_AIMED
from vectors.pack import verify_pack

OPS = "ADD|SUB"


@pytest.fixture(scope="module")
def packs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("packs")
    one, two, other = base / "one", base / "two", base / "other"
    common = ["generate", "--profile", "MI", "--ops", OPS, "--examples", "2", "--quiet"]
    assert main([*common, "-o", str(one), "--jobs", "1"]) == 0
    assert main([*common, "-o", str(two), "--jobs", "2"]) == 0
    assert main([*common, "-o", str(other), "--jobs", "1", "--seed", "7"]) == 0
    return one, two, other


def _index(pack: Path) -> dict:
    return json.loads((pack / "pack.json").read_text())


def test_same_seed_same_pack_whatever_the_jobs(packs) -> None:
    one, two, _ = packs
    assert (one / "pack.json").read_bytes() == (two / "pack.json").read_bytes()
    for entry in _index(one)["vectors"]:
        for name in entry["files"]:
            a = (one / entry["name"] / name).read_bytes()
            assert a == (two / entry["name"] / name).read_bytes(), f"{entry['name']}/{name}"


def test_another_seed_another_pack(packs) -> None:
    one, _, other = packs
    assert _index(one)["pack_sha256"] != _index(other)["pack_sha256"]
    assert _index(other)["seed"] == 7


def test_pack_covers_each_pair_with_valid_error_and_level_vectors(packs) -> None:
    index = _index(packs[0])
    pairs = {(v["operator"], v["mode"]) for v in index["vectors"]}
    # MI requires ADD and SUB in signed 32, fp16, fp32 (BI's signed 32 included)
    assert pairs == {(op, m) for op in ("ADD", "SUB") for m in ("signed 32", "fp16", "fp32")}
    kinds = {(v["operator"], v["mode"], v["kind"]) for v in index["vectors"]}
    for op, mode in pairs:
        assert {(op, mode, k) for k in ("valid", "error", "level")} <= kinds
    assert index["claim"] == {"profiles": ["MI"], "extensions": [], "level": "8K"}


def test_error_vectors_name_the_rule(packs) -> None:
    pack = packs[0]
    for entry in _index(pack)["vectors"]:
        desc = json.loads((pack / entry["name"] / "desc.json").read_text())
        if entry["kind"] == "error":
            assert desc["expected_failure"] is True
            assert desc["rule"]["kind"] == "ERROR_IF"
            assert desc["provenance"]["rule_broken"] == desc["rule"]["clause"]
        elif entry["kind"] == "level":
            assert desc["rule"]["kind"] == "LEVEL_CHECK" and not desc["expected_failure"]
        else:
            assert desc["expected"] and not desc["expected_failure"]


def test_verify_pack_passes_then_fails_on_one_flipped_byte(packs, tmp_path: Path) -> None:
    import shutil

    pack = tmp_path / "copy"
    shutil.copytree(packs[0], pack)
    assert verify_pack(pack) == []
    victim = next(p for p in sorted(pack.rglob("input-0.npy")))
    data = bytearray(victim.read_bytes())
    data[-1] ^= 0x01
    victim.write_bytes(bytes(data))
    problems = verify_pack(pack)
    assert problems and any(victim.parent.name in p and "input-0.npy" in p for p in problems)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--profile", "BI", "--ops", "NOPE"], "matches no operator"),
        (["--profile", "BI", "--ops", "("], "is not a regular expression"),
        (["--profile", "BI", "--examples", "0"], "--examples must be at least 1"),
        (["--profile", "XX"], "unknown profile 'XX'"),
    ],
)
def test_bad_arguments_are_one_line_errors(capsys, tmp_path: Path, argv, message) -> None:
    code = main(["generate", *argv, "-o", str(tmp_path / "p"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_refuses_a_non_empty_output(capsys, tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "x").write_text("keep me")
    code = main(["generate", "--profile", "BI", "--ops", "ADD", "-o", str(tmp_path / "p")])
    assert code == 2 and "is not empty" in capsys.readouterr().err
    assert (tmp_path / "p" / "x").read_text() == "keep me"


def test_pack_records_its_coverage_obligations_per_pair(packs) -> None:
    index = _index(packs[0])
    record = {(c["operator"], c["mode"]): c for c in index["coverage"]}
    assert set(record) == {(op, m) for op in ("ADD", "SUB") for m in ("signed 32", "fp16", "fp32")}
    fp16 = record[("ADD", "fp16")]
    # every special value in both operands, every rank, large tensors: met by construction
    for key in ("value:input1:nan", "value:input2:-inf", "value:input2:subnormal-min",
                "shape:rank=0", "shape:rank=6", "shape:input>=65536", "shape:output>=1024",
                "shape:broadcast=input1", "shape:broadcast=input2"):  # fmt: skip
        assert key in fp16["met"], key
    assert fp16["unmet"] == {}
    i32 = record[("ADD", "signed 32")]
    assert {"value:input1:min", "value:input2:max"} <= set(i32["met"])


def test_generate_names_every_unmet_obligation_with_its_reason(tmp_path: Path, capsys) -> None:
    out = tmp_path / "p"
    assert main(["generate", "--profile", "BI", "--ops", "INTDIV", "--examples", "1",
                 "--no-negative", "--quiet", "-o", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    # INTDIV's divisor can never be 0: REQUIRE(value2 != 0) refuses every such case
    assert "INTDIV [signed 32] value:input2:zero: REQUIRE value2 != 0" in printed
    record = _index(out)["coverage"][0]
    assert record["unmet"] == {"value:input2:zero": "REQUIRE value2 != 0"}


def test_a_smaller_pack_only_by_an_explicit_option(tmp_path: Path) -> None:
    small, full = tmp_path / "small", tmp_path / "full"
    common = ["generate", "--profile", "BI", "--ops", "ABS", "--quiet", "--no-negative"]
    assert main([*common, "--no-targeted", "-o", str(small)]) == 0
    assert main([*common, "-o", str(full)]) == 0
    small_index, full_index = _index(small), _index(full)
    assert small_index["options"]["targeted"] is False
    assert len(small_index["vectors"]) < len(full_index["vectors"])
    unmet = small_index["coverage"][0]["unmet"]
    assert unmet  # and the pack says what it lacks, and why: nothing aimed at it
    assert set(unmet.values()) == {NOT_AIMED}
    assert not full_index["coverage"][0]["unmet"] or all(
        "REQUIRE" in why for why in full_index["coverage"][0]["unmet"].values()
    )


def test_an_attribute_value_the_spec_forbids_is_named_by_its_rule(tmp_path: Path) -> None:
    # RESCALE 8-bit to 32-bit: ERROR_IF(out_t == i32_t && input_unsigned) and
    # make_unsigned's ERROR_IF(in_t != i8_t && in_t != i16_t) for an i32 output refuse
    # every case with either flag set, so the aimed jobs cannot meet them.
    out = tmp_path / "p"
    assert main(["generate", "--profile", "BI", "--ops", "RESCALE", "--examples", "1",
                 "--no-negative", "--no-levels", "--quiet", "-o", str(out)]) == 0  # fmt: skip
    record = {(c["operator"], c["mode"]): c for c in _index(out)["coverage"]}
    unmet = record[("RESCALE", "8-bit to 32-bit")]["unmet"]
    assert unmet["attr:input_unsigned=true"] == "ERROR_IF out_t == i32_t && input_unsigned"
    assert unmet["attr:output_unsigned=true"].startswith("ERROR_IF")
    assert "attr:input_unsigned=true" in record[("RESCALE", "8-bit to 8-bit")]["met"]


def _chain_entries(pack: Path) -> list[dict]:
    return [v for v in _index(pack)["vectors"] if "_chain-" in v["name"]]


def test_chain_vectors_are_written_within_the_claim(packs) -> None:
    from conformance.builder import check_operator
    from conformance.spec import load_spec
    from vectors.pack import open_pack

    spec = load_spec()
    claimed = {(op, m) for op in ("ADD", "SUB") for m in ("signed 32", "fp16", "fp32")}
    one, two, _ = packs
    chains = _chain_entries(one)
    # CHAINS_PER_START of the one operator group ADD and SUB start in
    assert len(chains) == 4 and chains == _chain_entries(two)  # whatever the jobs
    with open_pack(one) as opened:
        for entry in chains:
            vector = opened.load(entry["name"])
            main = vector.graph.main
            assert entry["kind"] == "valid" and len(main.operators) >= 2
            assert entry["name"].startswith(f"{entry['operator']}_")
            assert "_chain-elementwise-binary_" in entry["name"]
            for op in main.operators:  # every operator in a mode of the claim
                mode, _ = check_operator(spec, op, main.tensors)
                assert mode is not None and (op.op, mode.mode) in claimed, entry["name"]
            assert main.operators[-1].op == entry["operator"]
            assert vector.provenance.strategy.startswith("graph:ADD") or (
                vector.provenance.strategy.startswith("graph:SUB")
            )
            assert vector.provenance.regenerate.endswith("--ops 'ADD|SUB'")


def test_no_chains_writes_none(tmp_path: Path) -> None:
    common = ["generate", "--profile", "BI", "--ops", "TRANSPOSE|RESHAPE", "--examples", "1",
              "--no-negative", "--no-levels", "--no-targeted", "--quiet"]  # fmt: skip
    assert main([*common, "--no-chains", "-o", str(tmp_path / "none")]) == 0
    assert main([*common, "-o", str(tmp_path / "some")]) == 0
    none, some = _index(tmp_path / "none"), _index(tmp_path / "some")
    assert none["options"]["chains"] is False and _chain_entries(tmp_path / "none") == []
    names = [v["name"] for v in _chain_entries(tmp_path / "some")]
    # the data-layout group's chains, and TRANSPOSE -> RESHAPE ones that end in RESHAPE
    assert sum("_chain-data-layout_" in n for n in names) == 4
    folds = [n for n in names if "_chain-transpose-reshape_" in n]
    assert len(folds) == 4 and all(n.startswith("RESHAPE_") for n in folds)
    assert len(some["vectors"]) == len(none["vectors"]) + len(names)
    assert verify_pack(tmp_path / "some") == []


def test_a_worker_that_dies_is_one_line(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A crash in native code kills a worker process outright: generate says so in one
    # line (which vector, what to do), not with the process pool's traceback.
    import os
    import signal

    from conformance import generate_jobs

    real = generate_jobs._run_job

    def crashing(job, jc):  # type: ignore[no-untyped-def]
        if job.kind == "error":  # forked workers inherit the patched module
            os.kill(os.getpid(), signal.SIGKILL)
        return real(job, jc)

    monkeypatch.setattr(generate_jobs, "_run_job", crashing)
    out = tmp_path / "p"
    code = main(["generate", "--profile", "BI", "--ops", "ABS", "--examples", "1",
                 "--no-targeted", "--no-chains", "--jobs", "2", "-o", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "a generate worker died abruptly" in err and "--jobs 1" in err
    assert not (out / "pack.json").exists()


def test_a_long_mode_is_cut_to_a_usable_vector_name() -> None:
    from conformance.generate_plan import Job, fitted_slug
    from vectors.pack_write import MAX_NAME

    # A TOSA 1.1 mixed block-scaled mode of TRANSPOSE_CONV2D: its slug alone is 129
    # characters, 192 with the operator and a level job's tail (kernel-out-pad-above).
    mode = (
        "Mixed precision fp with bf16/fp32 accumulate (in_t=bs32_fp8ue8m0_fp6e2m3_t, "
        "weight_t=bs32_fp8ue8m0_fp8e5m2_t, acc_t=fp32_t)"
    )
    job = Job("TRANSPOSE_CONV2D", mode, "level", 0, level_case="above", limit="MAX_KERNEL")
    name = job.name
    assert len(name) <= MAX_NAME and name.startswith("TRANSPOSE_CONV2D_mixed-precision-fp")
    assert name.endswith("_kernel-above_000")
    other = mode.replace("acc_t=fp32_t", "acc_t=bf16_t")  # differs past the cut only
    assert (
        Job("TRANSPOSE_CONV2D", other, "level", 0, level_case="above", limit="MAX_KERNEL").name
        != name
    )
    # a short mode keeps its whole slug, so the names of earlier packs do not move
    assert fitted_slug("signed 8 with int32 accumulate", 30) == "signed-8-with-int32-accumulate"


def test_level_vectors_no_tensor_can_hold_are_one_line_per_operator() -> None:
    from conformance.generate import grouped_problems

    # TOSA 1.1's block-scaled CONV2D: IC is a whole block of 32, so MAX_KERNEL = 8192
    # taps need an input of 8193 * 32 = 262,176 elements (the cap is 65,536).
    def unholdable(name: str, shape: str) -> str:
        return (
            f"{name}: ValueError: CONV2D: the limit needs input of shape {shape}, "
            "more than 65536 elements: no vector can hold it"
        )

    lines = grouped_problems(
        [
            unholdable("CONV2D_m1_kernel-at_000", "[1, 8193, 1, 32]"),
            "CONV2D_m2_valid_000: no valid case drawn",
            unholdable("CONV2D_m2_kernel-above_000", "[1, 8194, 1, 32]"),
        ]
    )
    assert lines == [
        "CONV2D_m2_valid_000: no valid case drawn",
        "CONV2D: 2 level vectors cannot be made: the limit needs input past 65536 elements, "
        "more than a vector holds (e.g. CONV2D_m1_kernel-at_000: input of shape "
        "[1, 8193, 1, 32])",
    ]
