"""Domain obligations (issue 25): the float functions' inputs in every binade up to
where the result stops changing in the type, found by the reference itself."""

from __future__ import annotations

import numpy as np
import pytest

from conformance import dtypes
from conformance.spec import load_revision
from strategies.domain import (
    PER_BINADE,
    domain_argument,
    domain_facts,
    domain_values,
    required_binades,
)
from strategies.obligations import pair_obligations

SPEC = load_revision("1.0")


def _sides(op: str, mode: str) -> dict[int, tuple[int, int]]:
    binades = required_binades(SPEC, op, mode)
    out = {}
    for sign in (1, -1):
        exps = [e for s, e in binades if s == sign]
        if exps:
            out[sign] = (min(exps), max(exps))
    return out


def test_sigmoid_fp32_binades_by_hand() -> None:
    # sigmoid(16) = 1 - 1.13e-7: below 1 fp32 steps by 2**-24 = 5.96e-8, so it rounds to
    # 1 - 2**-23, not 1: the binade [16, 32) is needed; sigmoid(32) = 1 - 1.3e-14 is 1.0.
    # On the negative side sigmoid(-64) = 1.6e-28 is an fp32 normal; sigmoid(-128) =
    # 2.6e-56 underflows to 0 like sigmoid(-max): [64, 128) is the last binade.  Both
    # sides start at the smallest subnormal, 2**-149.
    assert _sides("SIGMOID", "fp32") == {1: (-149, 4), -1: (-149, 6)}


def test_exp_and_log_binades_by_hand() -> None:
    # exp(64) = 6.2e27 is finite in fp32, exp(128) overflows as exp(max) does; exp(-64) =
    # 1.6e-28, exp(-128) underflows to 0 as exp(-max).
    assert _sides("EXP", "fp32") == {1: (-149, 6), -1: (-149, 6)}
    # LOG of a negative is NaN on the whole side: only the positive binades, all of them
    # (log keeps changing up to the largest fp16, 65504 in [2**15, 2**16)).
    assert _sides("LOG", "fp16") == {1: (-24, 15)}


def test_which_operators_sweep_a_domain() -> None:
    for op, mode, arg in [("TANH", "fp16", "input"), ("CEIL", "fp32", "input1")]:
        o = SPEC.operator(op)
        assert domain_argument(SPEC, o, o.mode(mode)) == arg
        keys = pair_obligations(SPEC, SPEC.level("8K"), o, o.mode(mode)).obligation_keys()
        assert f"domain:{arg}:binades" in keys
    for op, mode in [("ABS", "fp32"), ("ADD", "fp32"), ("CAST", "fp32 to fp16")]:
        o = SPEC.operator(op)
        assert domain_argument(SPEC, o, o.mode(mode)) is None  # exact, binary, a conversion


def test_domain_values_stay_in_their_binades() -> None:
    # fp16's smallest subnormal binade [2**-24, 2**-23) holds one value: 4 copies of it.
    values = domain_values(dtypes.FP16, ((1, -24), (-1, 3)))
    assert values.dtype == np.float16 and values.size == 2 * PER_BINADE
    assert np.all(values[:4].astype(np.float64) == 2.0**-24)
    assert list(values[4:].astype(np.float64)) == [-8.0, -10.0, -12.0, -14.0]


def test_the_fact_needs_every_binade() -> None:
    required = required_binades(SPEC, "TANH", "fp16")
    full = domain_values(dtypes.FP16, required)
    assert domain_facts(SPEC, "TANH", "fp16", "input", full) == {"domain:input:binades"}
    short = full[PER_BINADE - 1 :]  # one element short in the first binade
    assert domain_facts(SPEC, "TANH", "fp16", "input", short) == set()


@pytest.mark.parametrize("op", ["SIGMOID", "RSQRT"])
def test_a_large_case_carries_the_sweep(op: str) -> None:
    from conformance.spec import spec_in_use
    from strategies.domain import fill_domain
    from strategies.draw import draw_examples
    from strategies.obligations import vector_facts
    from strategies.shapes import Budget
    from strategies.valid import valid_cases

    # the reference reads the process's spec; leave the session's behind
    with spec_in_use(SPEC):
        level = SPEC.level("8K")
        # a large job's budget (conformance.generate_jobs.job_budget); the first draw is
        # Hypothesis's simplest, which generate skips too
        budget = Budget(max_elements=2 * 65537, max_dim=2048, min_elements=65537)
        cases = draw_examples(valid_cases(SPEC, op, "fp32", level, budget, target="large"), 3, 1)
        case = max(cases, key=lambda c: sum(np.asarray(v).size for v in c.inputs.values()))
        swept = fill_domain(SPEC, case)
        assert swept is not None
        arg = domain_argument(SPEC, SPEC.operator(op), SPEC.operator(op).mode("fp32"))
        assert f"domain:{arg}:binades" in vector_facts(SPEC, swept, level)
