"""The litert backend: one-operator graphs as .tflite models run by LiteRT on CPU.
Skipped, with the reason, when the 'litert' extra (ai-edge-litert) is absent."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ai_edge_litert", reason="the 'litert' extra (ai-edge-litert) is absent")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.backends import get_backend
from conformance.backends.litert.model import TRANSLATORS
from conformance.capabilities import load_manifest
from conformance.runner import run_one
from conformance.spec import load_spec
from conformance.vectorize import case_to_vector
from conformance.verdicts import PASSED
from strategies.valid import valid_cases
from vectors.pack_model import LoadedVector, Provenance

SPEC = load_spec()
LEVEL = SPEC.level("8K")
NNAPI = load_manifest("nnapi", SPEC)
BACKEND = get_backend("litert")


def test_every_operator_of_the_nnapi_manifest_but_one_has_a_translation() -> None:
    # TRANSPOSE_CONV2D: out_pad has no TFLite TRANSPOSE_CONV form yet (docs/litert.md)
    assert set(NNAPI.operators) - set(TRANSLATORS) == {"TRANSPOSE_CONV2D"}


def _vector(case) -> LoadedVector:
    v = case_to_vector(
        case,
        SPEC,
        LEVEL,
        name="t",
        kind="valid",
        clause=None,
        data_set=-1,
        provenance=Provenance("test", 0, 0, "", None),
    )
    assert v is not None
    return LoadedVector(**{f: getattr(v, f) for f in v.__dataclass_fields__})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pair=st.sampled_from(
        [
            ("ADD", "fp32"),
            ("SUB", "signed 32"),
            ("MAXIMUM", "fp32"),
            ("TRANSPOSE", "fp32"),
            ("RESHAPE", "signed 8"),
            ("TANH", "fp32"),
        ]
    ),
    data=st.data(),
)
def test_exact_operators_pass_on_drawn_cases(pair, data, tmp_path_factory) -> None:
    budget = NNAPI.constrain(__import__("strategies.shapes").shapes.Budget(), pair[0])
    case = data.draw(valid_cases(SPEC, pair[0], pair[1], LEVEL, budget), label=f"{pair} case")
    vector = _vector(case)
    # NaN positions aside (TFLite's MAXIMUM does not propagate NaN: docs/litert.md)
    if any(np.isnan(np.asarray(a, np.float64)).any() for a in vector.inputs.values()):
        return
    result = run_one(BACKEND, vector)
    assert result.verdict == PASSED, result.detail


def test_a_model_refused_or_misshapen_is_a_rejection(tmp_path: Path) -> None:
    from hypothesis import find

    case = find(
        valid_cases(SPEC, "ADD", "fp32", LEVEL),
        lambda c: len(c.graph.main.tensors["output"].shape) == 2,
    )
    vector = _vector(case)
    out = vector.graph.main.tensors["output"]
    from dataclasses import replace

    vector.graph.main.tensors["output"] = replace(out, shape=(*out.shape, 1))
    result = BACKEND.run(vector, tmp_path)
    assert result.rejected and "LiteRT computes output of shape" in result.rejected


def test_a_type_no_mode_takes_is_rejected(tmp_path: Path) -> None:
    from dataclasses import replace

    from hypothesis import find

    from conformance import dtypes

    case = find(valid_cases(SPEC, "ADD", "fp32", LEVEL), lambda c: True)
    vector = _vector(case)
    t = vector.graph.main.tensors["input2"]
    vector.graph.main.tensors["input2"] = replace(t, dtype=dtypes.dtype("i32_t"))
    result = BACKEND.run(vector, tmp_path)
    assert result.rejected is not None and "in_out_t is both fp32_t and i32_t" in result.rejected


def test_avg_pool_with_padding_is_skipped_with_the_reason() -> None:
    from hypothesis import find

    case = find(
        valid_cases(SPEC, "AVG_POOL2D", "fp32 with fp32 accumulate", LEVEL),
        lambda c: any(c.graph.main.operators[0].attributes["pad"]),
    )
    reason = BACKEND.unsupported(_vector(case))
    assert reason is not None and "TFLite has only SAME/VALID padding" in reason


def test_the_backend_is_listed(capsys) -> None:
    from conformance.cli.main import main

    assert main(["backends"]) == 0
    assert "litert" in capsys.readouterr().out
