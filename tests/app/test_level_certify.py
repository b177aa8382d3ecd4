"""A backend that implements only half of one 8K maximum must not certify as 8K.

The pack holds the operators carrying each limit, and the claim is certified over
their pairs (the spec model cut down to them); the reference certifies on it, and
each half-level backend (tests/app/data/half_level_backend.py) fails exactly the
pairs that hold a vector at that limit, with that vector among the failures.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.certify import check_pack, make_certificate
from conformance.claims import Claim
from conformance.generate import GenerateResult, generate
from conformance.generate_plan import Options
from conformance.runner import run_pack
from conformance.spec import Spec, load_spec
from strategies.level_limits import NESTED, limit_case

# One or two operators per limit: pooling and CONV2D (kernel, pad, dilation, stride),
# RESIZE (scale), CONCAT and the control-flow operators (lists; nesting).
KEEP = {"MAX_POOL2D", "CONV2D", "RESIZE", "CONCAT", "COND_IF", "WHILE_LOOP"}
HALF = Path(__file__).parent / "data" / "half_level_backend.py"
FACTORIES = {
    "MAX_KERNEL": "half_kernel",
    "MAX_STRIDE": "half_stride",
    "MAX_SCALE": "half_scale",
    "MAX_TENSOR_LIST_SIZE": "half_list",
    "MAX_NESTING": "half_nesting",
}


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> tuple[Spec, Claim, GenerateResult]:
    """A BI pack of the KEEP operators, and the spec model cut down to them: the claim
    then requires their pairs only (the control-flow blocks' operators stay in the
    spec the reference evaluates with)."""
    spec = load_spec()
    claim = Claim(("BI",), (), spec.level("8K"))
    out = tmp_path_factory.mktemp("pack") / "pack"
    ops = "|".join(sorted(KEEP))
    options = Options(examples=1, negative=False, targeted=False, ops=ops)
    result = generate(spec, claim, out, options=options)
    level_problems = [p for p in result.problems if "-at_" in p or "-above_" in p]
    assert not level_problems
    kept = replace(spec, operators={n: o for n, o in spec.operators.items() if n in KEEP})
    check_pack(kept, claim, out)  # every required pair has valid vectors
    return kept, claim, result


def _certify(pack: tuple[Spec, Claim, GenerateResult], backend: str):
    spec, claim, result = pack
    report = run_pack(result.out, backend, timeout=120)
    return make_certificate(spec, claim, backend, result.pack_sha256, report)


def _at_vectors(spec: Spec, result: GenerateResult, limit: str) -> dict[tuple[str, str], set[str]]:
    """The at-limit vectors of ``limit`` by pair: MAX_NESTING's are the list cases of
    the nested operators (they nest MAX_NESTING deep)."""
    out: dict[tuple[str, str], set[str]] = {}
    for job in result.plan.jobs:
        if job.level_case != "at":
            continue
        case = limit_case(spec.operator(job.operator), job.limit)
        nested = limit == "MAX_NESTING" and job.operator in NESTED
        if case.limit == limit or (nested and case.limit == "MAX_TENSOR_LIST_SIZE"):
            out.setdefault((job.operator, job.mode), set()).add(job.name)
    return out


def test_the_reference_certifies(pack) -> None:
    cert = _certify(pack, "reference")
    assert cert.passed, [(p.operator, p.mode, p.status) for p in cert.pairs if p.status != "met"]
    # the pack holds level vectors of every limit the half backends are tried on
    spec, _, result = pack
    for limit in FACTORIES:
        assert _at_vectors(spec, result, limit), limit


@pytest.mark.parametrize("limit", sorted(FACTORIES))
def test_half_of_one_maximum_fails_on_the_level_vector(pack, limit: str) -> None:
    spec, _, result = pack
    cert = _certify(pack, f"python:{HALF}:{FACTORIES[limit]}")
    assert not cert.passed
    at = _at_vectors(spec, result, limit)
    failed = {(p.operator, p.mode): p for p in cert.pairs if p.status != "met"}
    assert set(failed) == set(at)  # exactly the pairs with a vector at that limit
    for key, pair in failed.items():
        assert pair.status == "failed"
        failures = {r.vector for r in pair.failures}
        assert at[key] <= failures, (key, at[key], failures)
