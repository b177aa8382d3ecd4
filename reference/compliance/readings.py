"""Readings of the spec that change a verdict: one row per choice, with the text it
rests on, our decision, what Arm's tools do, and the test that pins it.

docs/compliance.md ("Readings") is the same table in prose; a test checks that every
row is there and that every row's test exists.  "Arm" means tosa-tools 2026.8 (its
reference model, the ``tosa-reference-model`` backend, and its verifier library
``libtosa_reference_verify_lib``), which implements a later revision of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    id: str
    spec: str  # chapter and section, or pseudocode file
    decision: str
    arm: str
    test: str  # "tests/PATH.py::NAME" or "tests/PATH.py::CLASS::NAME"


_T = "tests/reference/test_readings.py::"
_R = "tests/app/test_rejudge.py::"
_U = "tests/reference/test_compliance_ulp.py::"

READINGS: tuple[Reading, ...] = (
    Reading(
        "argmax-nan",
        "tensor_ops, ARGMAX (prose: 'NaN values always compare as greater than non-NaN "
        "values. If an entire axis consists of NaN, the last location must be returned.'); "
        "ARGMAX.tosac with apply_max_s",
        "The reference follows the prose: an axis holding NaN gives a NaN's location, an "
        "all-NaN axis its last location.  With several NaN among numbers the prose is "
        "silent; the reference gives the first NaN, and vectors must not test it (the "
        "recipe gives each row no NaN, exactly one NaN first, in the middle or last, or "
        "only NaNs).  The "
        "loop read literally gives the first maximum after the last NaN ([NaN, 1, 2] -> 2).",
        "The model returns the first NaN on every axis that holds one, all-NaN axes "
        "included ([NaN, NaN, NaN] -> 0, where the prose says 2).",
        "tests/reference/test_ops_tensor_pool_fft.py::test_argmax_nan_follows_the_prose",
    ),
    Reading(
        "sin-cos-exponent",
        "introduction, Numeric Accuracy Helpers: calcAbsErrorBound uses "
        "exp2(-normal_frac<in_t> / normal_divisor) and exp2 takes an int",
        "The exponent is truncated toward zero, as exp2(int) does: SIN/COS use 2**-11 in "
        "fp32 and 2**-3 in bf16 (fp16: 2**-5 exactly).  This is the text as written and "
        "a looser bound never fails a backend the spec accepts.",
        "The verifier scales by 2**(-23/2) = 2**-11.5 in fp32: sqrt(2) tighter (COS at "
        "x = 1: 2**-11.5 * 2 = 6.9e-4 against our 2**-10 = 9.8e-4).",
        _T + "test_cos_fp32_truncated_exponent_is_looser_than_arms",
    ),
    Reading(
        "dot-product-infinity",
        "introduction, Dot product accuracy requirements: '(acc_t)out_bnd == infinity' has "
        "no limit, otherwise REQUIRE(abs(out_err) <= ksb)",
        "An infinity of the reference's sign is accepted where ref +- ksb error units "
        "passes normal_max<out_t>: there the correctly rounded result overflows, as "
        "tosa_reference_check_fp_bnd allows.  Finite results keep abs(out_err) <= ksb, so a "
        "reference beyond normal_max (fp16 70000, fp32 accumulator) requires the infinity."
        "  An infinite reference is met by the same infinity whatever its bound (FFT2D's "
        "bound counts an exact zero twiddle as zero beside an infinite input).",
        "The verifier accepts the infinity there too (fp16 reference 65519: inf passes; "
        "60000: inf fails), and leaves an output whose bound overflows out_t (not acc_t) "
        "unconstrained: for a 70000 reference it accepts 65504 as well.",
        _T + "test_dot_product_infinity_where_the_range_passes_normal_max",
    ),
    Reading(
        "zero-sign-selection",
        "arithmetic_helpers: apply_max_s ('if (a >= b) return a'), apply_min_s, "
        "apply_clip_s; introduction, precision table, comparison row: 'The sign of the "
        "zero is ignored'",
        "CLAMP, MAXIMUM, MINIMUM, MAX_POOL2D, REDUCE_MAX, REDUCE_MIN: a zero chosen "
        "between -0 and +0 may have either sign (the runner's zero-ties reading); the "
        "reference keeps the helpers' choice (CLAMP(-0.0) with max_val 0.0 is +0.0).  A "
        "zero whose candidates all have one sign is compared (MAXIMUM(-0, -1) = -0).",
        "The model returns the helpers' choice (CLAMP(-0.0, [-1, 0]) = +0.0, "
        "MAXIMUM(-0.0, +0.0) = -0.0); the verifier's EXACT mode ignores the sign of "
        "every zero.  IREE returns -0.0 for that CLAMP.",
        _R + "test_clamp_negative_zero_tie_accepts_either_zero",
    ),
    Reading(
        "zero-sign-defined",
        "ewise_unary, ABS and NEGATE floating-point behavior tables; ABS.tosac "
        "('value1 == -0.0' becomes 0.0); tensor_read / tensor_write of the data-movement "
        "operators",
        "Compared: ABS(+-0) = +0, NEGATE(-0) = +0, NEGATE(+0) = -0, and every copied "
        "element (data movement, CONST, IDENTITY, SELECT, PAD's pad_const) keeps its sign.",
        "The model agrees (NEGATE(+0) = -0, ABS(-0) = +0); the verifier's EXACT mode does "
        "not compare zero signs.",
        _R + "test_zero_sign_defined_by_the_spec_is_compared",
    ),
    Reading(
        "resize-bf16-bound",
        "introduction, precision table, RESIZE row: 'err_bnd = max(abs(input)) * 0.006'; "
        "Operator sequence precision requirement ('same or higher precision datatypes'); "
        "RESIZE.tosac (resize_t and the out_t accumulator are bf16 in bf16 mode)",
        "Applied as written.  Finding: for bf16 the bound is below one ulp at "
        "max(abs(input)) (0.006 < 2**-7), so the pseudocode evaluated step by step in "
        "bf16 cannot meet it: a constant input of -1.0078125 upscaled 3x gives -1.0 "
        "(error 0.0078 > 0.00605).  It is met by interpolating in fp32 and rounding once "
        "(error <= 2**-9 * max), which the sequence requirement allows.",
        "The model's bf16 bilinear outputs exceed the bound: by up to 1.03x on 30 random "
        "4x4 inputs of ours, 1.27x on Arm's own tests (the issue).  Arm's generator checks "
        "RESIZE with MAX_RELATIVE (scale 0.006, ulp_bound 20): in bf16 its verifier "
        "accepted about 0.006 * max + 20 ulp(max) in our probes, in fp32 0.006 * max.",
        _T + "test_resize_bf16_bound_as_written",
    ),
    Reading(
        "fp8-flush",
        "introduction, Supported Number Formats: fp8e4m3_t, fp8e5m2_t 'Denormal values "
        "must be supported'; Numeric Accuracy Helpers: the check functions 'assume that "
        "denormal values may be flushed to zero'",
        "Rejected.  No flushing reading applies to fp8, and for fp8 outputs the interval of "
        "tosa_reference_check_fp_bnd is not widened below normal_min (its widening is what "
        "lets a result flush), so a flushed CAST to fp8 fails; a backend cannot declare "
        "fp8 'flush'.",
        "The verifier rejects a zero for an fp8e4m3 subnormal reference in ULP and EXACT modes.",
        _R + "test_fp8_flushing_is_rejected",
    ),
    Reading(
        "fp16-bf16-fp32-flush",
        "introduction, Supported Number Formats: fp16_t, bf16_t, fp32_t 'Denormal values "
        "must either be supported or flushed to zero'",
        "Accepted in every mode, operands and results alike (docs/compliance.md, "
        "Denormals): the runner retries a failed output with the operands flushed and "
        "with subnormal results read as zeros of the same sign, unless the backend "
        "declares the type 'supported'.",
        "The verifier's EXACT and ULP modes accept a zero (of either sign) for a subnormal "
        "fp32 reference; flushed operands are not modelled (its reference is unflushed).",
        _R + "test_flushed_inputs_in_every_mode",
    ),
    Reading(
        "underflow-zero-sign",
        "introduction, precision table: ADD, SUB, MUL, CEIL, FLOOR, CAST, RECIPROCAL, LOG, "
        "ERF, REDUCE_PRODUCT rows: 'underflows must be set to zero of the correct sign'",
        "Enforced where those rows say it: a zero result for a non-zero reference must "
        "carry its sign; a zero reference accepts either zero (the interval).",
        "The verifier's ULP mode accepts +0.0 for a negative subnormal fp32 reference.",
        _U + "TestZeroSign::test_underflow_keeps_the_sign",
    ),
    Reading(
        "zero-reference-special-inputs",
        "ewise_unary floating-point behavior tables: RECIPROCAL(-inf) = -0, "
        "RECIPROCAL(+inf) = +0, CEIL/FLOOR(+-0) = +-0, SIN(+-0) = +-0, RSQRT(+inf) = +0, "
        "EXP(-inf) = +0; precision table, RECIPROCAL row: 'zero of the same sign'",
        "Not enforced yet: in the bound modes a zero reference accepts either zero "
        "(tosa_reference_check_fp_bnd); enforcing the tables needs the operator's input "
        "or a descriptor field, so it is an open gap, pinned by its test.",
        "The verifier's ULP mode accepts +0.0 for a -0.0 reference as well.",
        _T + "test_zero_reference_accepts_either_zero_in_bound_modes",
    ),
    Reading(
        "negative-zero-reference",
        "introduction, tosa_reference_check_fp_bnd: 'if (ref_value < 0)' negates",
        "Kept literally: -0.0 is not < 0, so a -0.0 reference accepts [0, normal_min]: "
        "positive subnormals pass, negative ones fail.",
        "Not measured.",
        _U + "TestSubnormals::test_negative_zero_reference_follows_the_pseudocode",
    ),
    Reading(
        "infinite-reference-infinite-bound",
        "introduction, tosa_reference_check_fp_bnd and calcAbsErrorBound (EXP of +inf)",
        "An infinite reference accepts only the same infinity, even with an infinite "
        "bound (inf - inf would make the lower end NaN and fail every result).",
        "Not measured.",
        "tests/reference/test_compliance_abs_error.py::TestExpFp16::test_exp_of_infinities",
    ),
    Reading(
        "fp8e4m3-overflow-nan",
        "introduction, precision table, CAST row: fp8 'non-saturating mode' (OCP-OFP8); "
        "fp8e4m3_t has no infinity",
        "Where the interval reaches +inf (overflow allowed or required), NaN is accepted "
        "for fp8e4m3, as its non-saturating conversion overflows to NaN.",
        "Not measured.",
        _U + "TestOverflow::test_fp8e4m3_overflow_is_nan",
    ),
    Reading(
        "dot-product-nan",
        "introduction, precision requirements: 'If any input is a NaN and the result is "
        "floating-point then the result must be a NaN'; Dot product accuracy requirements",
        "A NaN reference requires a NaN result (the rule's own arithmetic could never pass "
        "it: its bound is NaN too).",
        "Not measured.",
        "tests/reference/test_compliance_dot_product.py::TestPerElement::test_nan_reference",
    ),
    Reading(
        "dot-product-statistics-size",
        "introduction, Dot product accuracy requirements: data sets 'that have at least "
        "MIN_DOT_PRODUCT different output values'; appendix_a, MIN_DOT_PRODUCTS",
        "The error-sum and variance tests apply from 1000 outputs; below, only the "
        "per-element test.",
        "Not measured.",
        "tests/reference/test_compliance_dot_product.py::TestStatistics::"
        "test_too_few_outputs_skip_statistics",
    ),
    Reading(
        "data-movement-exact",
        "introduction, Main Inference precision requirements (the table lists no data "
        "movement operator)",
        "CONCAT, PAD, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE, GATHER, SCATTER and "
        "VARIABLE_READ do no arithmetic, so their float results must be exact "
        "(EXACT_NAN, zero sign included).",
        "Not measured.",
        "tests/reference/test_compliance_descriptor.py::test_for_operator_modes",
    ),
    Reading(
        "pow-zero-times-infinity",
        "introduction, precision table, POW row: calcAbsErrorBound(out_ref, "
        "2 * (1+abs(log(abs(x))*y)), 0, 1)",
        "log(abs(x)) * y of 0 * inf (pow(0, 0), pow(inf, 0), pow(1, inf)) is taken as 0, "
        "a bound of 2, where IEEE pow's result is exactly 1; the formula's NaN would leave "
        "the output unbounded.",
        "Not measured.",
        "tests/reference/test_compliance_abs_error.py::"
        "test_pow_bound_where_log_times_y_is_zero_times_infinity",
    ),
)
