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
_V1 = "tests/reference/test_compliance_1_0.py::"

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
        "avg-pool-acc-range",
        "tensor_ops, AVG_POOL2D.tosac: acc = apply_add_s<acc_t>(acc, value) over the "
        "window, then the division; introduction, Dot product accuracy requirements "
        "(Appendix A: weights 1/KS)",
        "Where the window's sum of magnitudes, with KS roundings of slack, passes acc_t's "
        "largest value, the output has no accuracy limit: the pseudocode's acc_t sum "
        "overflows there (fp16 accumulate: 30000 + 40000), which the dot-product form "
        "(weights 1/KS, a bound that is a mean) cannot show, while REDUCE_SUM's bound "
        "(weights 1) does.  Read literally, every implementation that sums in acc_t as "
        "written fails such data.",
        "The model sums in acc_t and returns an infinity there; 6 vectors on free data "
        "(S = -1: 5 of the 1.1 pack, 1 of the 1.0 pack) disagreed before this reading.",
        _T + "test_avg_pool_sum_past_the_accumulator_has_no_limit",
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
    # TOSA 1.0 (vectors of the 1.0 revision; docs/compliance.md, "TOSA 1.0").
    Reading(
        "v1-ksb-exponent",
        "1.0 tosa_reference_check_dotproduct.tosac: ksb = ceil(KS / pow(2, "
        "(normal_frac<acc_t>() - normal_frac<out_t>())/2)) + ...",
        "normal_frac returns int, so the quotient is C's int division, truncated: fp32 "
        "accumulator and fp16 output divide KS by 2**6 (not 2**6.5 = 90.5).  A looser "
        "ksb never fails a backend the spec accepts: KS = 65 gives ksb 2 (ABS_BOUND 4), "
        "where the real quotient gives 1 (ABS_BOUND 2).",
        "Not measured.",
        _V1 + "test_dot_product_ksb_and_abs_bound",
    ),
    Reading(
        "v1-bias-ksb",
        "1.0 tosa_reference_check_dotproduct.tosac: bias_abs = apply_max_s(abs(bias), "
        "normal_min<in_t>()), ksb + ((max_value(bias_abs) > 0) ? 1 : 0); introduction: "
        "'If the operation does not specify a bias then bias is taken to be zero'",
        "An operator that declares a bias (CONV2D, CONV3D, DEPTHWISE_CONV2D, "
        "TRANSPOSE_CONV2D) always adds 1 to ksb, even for an all-zero bias (its floored "
        "magnitude is normal_min > 0); operators without one (MATMUL, REDUCE_SUM, "
        "AVG_POOL2D, FFT2D, RFFT2D, whose check passes an empty bias) add nothing.",
        "Not measured.",
        _V1 + "test_a_declared_bias_always_counts_in_ksb_in_1_0",
    ),
    Reading(
        "v1-underflow-zero-sign",
        "1.0 tosa_reference_check.tosac: 'if (test_value == 0) return (ref_min < "
        "normal_min())' (either zero); ADD, SUB, MUL: results 'may be flushed to zero of "
        "the appropriate sign'; CAST: 'a zero of the appropriate sign', 'x must have the "
        "correct sign'",
        "The sign is enforced for ADD, SUB, MUL and CAST, whose text names it: a zero "
        "result for a non-zero reference carries the reference's sign.  CEIL, FLOOR, "
        "RECIPROCAL, ERF, LOG and REDUCE_PRODUCT, whose 1.0 text no longer says it, accept "
        "either zero as the check function does (RECIPROCAL fp32, reference -1e-40: +0.0 "
        "passes in 1.0, fails in the draft).",
        "Not measured.",
        _V1 + "test_zero_sign_operators",
    ),
    Reading(
        "v1-infinite-reference",
        "1.0 tosa_reference_check.tosac: 'if (!is_finite(err_bnd)) return true'; "
        "calcAbsErrorBound of an infinite reference is infinite; ewise_unary EXP "
        "behavior table: EXP(+inf) = +inf",
        "An infinite reference needs the same infinity even where err_bnd is infinite "
        "(the behavior tables give the value); other non-finite bounds accept any result.  "
        "Read literally, EXP(+inf) would accept 5.0.",
        "Not measured.",
        _V1 + "test_infinite_reference_keeps_its_infinity_in_1_0",
    ),
    Reading(
        "v1-cast-x",
        "1.0 type_conversion, CAST: 'Let x be an input element' ... 'abs(out_ref) - ulp "
        "<= abs(x) <= abs(out_ref) + 0.5*ulp must be true and x must have the correct sign'",
        "x in the inequality is the implementation's output (out_ref is the input's exact "
        "value, so the input would always pass): a cast between float types may round "
        "toward zero by up to one ulp, away from zero by half an ulp (fp32 to fp16 of "
        "1 + 3 * 2**-12: 1.0 passes).",
        "Not measured.",
        _V1 + "test_cast_between_floats_may_round_toward_zero_in_1_0",
    ),
    Reading(
        "v1-pow-err-base",
        "1.0 ewise_binary, POW: 'Let err_base = is_same<T, fp32_t> ? 3 : 1' (POW has no type T)",
        "T is POW's in_out_t: fp32 POW uses err_base 3, as EXP and TANH do for fp32.",
        "Not measured.",
        _V1 + "test_pow_err_base_is_that_of_in_out_t",
    ),
    Reading(
        "v1-flush-normal-min",
        "1.0 tosa_reference_check.tosac: 'return (ref_min < normal_min())' names no type",
        "normal_min of the checked type (in_t): a zero result passes where the interval's "
        "lower end is below that type's smallest normal (fp16 ADD, reference 2**-20: "
        "zero passes; with fp64's normal_min it would fail).",
        "Not measured.",
        _V1 + "test_flushed_zero_is_judged_against_normal_min_of_the_output_type",
    ),
    Reading(
        "v1-dot-product-other-data",
        "1.0 introduction, Dot product accuracy requirements: 'Data sets defined for the "
        "operation in Appendix A must pass' (the draft also named 'data sets that have at "
        "least MIN_DOT_PRODUCT different output values', S = -1)",
        "Data of no Appendix A set (S = -1) is checked with the same rule, as the draft "
        "said: the per-element test always, the variance test from MIN_DOT_PRODUCTS "
        "outputs, the error sum never.  The operators' text requires every output to meet "
        "the dot product accuracy requirements, which only the check defines.",
        "Not measured.",
        _V1 + "test_other_data_is_checked_as_the_draft_said",
    ),
    Reading(
        "v1-matmul-zp-rule",
        "1.0.2 MATMUL.tosac: 'ERROR_IF(is_same<in_t,i8_t> && (A_zp != 0 || B_zp != 0))' "
        "(no '!'), beside its comment and argument text: zero points are for i8 only",
        "Read as meant, as every other operator spells it: '!is_same<in_t,i8_t>() && "
        "(A_zp != 0 || B_zp != 0)'.  Read literally, an i8 MATMUL with a zero point would "
        "be an error and a float one with a non-zero zero point valid.",
        "Not measured.",
        "tests/reference/test_ops_tensor_1_0.py::test_matmul_zero_points_read_as_meant",
    ),
    Reading(
        "v1-rescale-unsigned-zp-bits",
        "1.0 RESCALE: input_zp/output_zp are [1] tensors of in_t/out_t; with "
        "input_unsigned (output_unsigned) the ERROR_IFs bound the zero point as uint8/uint16",
        "A uint16 zero point 32768 is held in the i16 tensor as its bits (0x8000) and read "
        "unsigned wherever its side is unsigned: the ERROR_IF compares 32768, not -32768, and "
        "the arithmetic subtracts 32768.",
        "Not measured.",
        "tests/reference/test_ops_type_conversion_rescale_1_0.py::test_uint16_zero_point_stored_a"
        "s_its_bits",
    ),
    Reading(
        "v1-rescale-sign-extend",
        "1.0 RESCALE.tosac, signed branch: 'value = sign_extend<in_t>(value)' where the "
        "draft (and the unsigned branch) read in_value",
        "Read as in_value: value is not yet set there, and the draft and the unsigned branch "
        "both extend the input element.",
        "Not measured.",
        "tests/reference/test_ops_type_conversion_rescale_1_0.py::test_single_and_double_round",
    ),
    Reading(
        "v1-inexact-round-require",
        "1.0 RESCALE.tosac with scale_helpers apply_scale_16 'REQUIRE(result >= "
        "minimum<int32_t> && result <= maximum<int32_t>)' and apply_add_s's REQUIRE, under "
        "the INEXACT_ROUND precision requirement (any integer within err_bnd of out_ref)",
        "The REQUIREs hold only where they hold for every result INEXACT_ROUND allows: "
        "where out_ref +/- err_bnd (plus output_zp) crosses the int32 limits, a compliant "
        "implementation may break them, so the graph is unpredictable and is not a valid "
        "vector.",
        "Arm's model computes INEXACT_ROUND in floating point: next to the int32 limit it "
        "wraps (-32768 for 32767) or stops on the REQUIRE; the 22 RESCALE disagreements of "
        "the 1.0 pack were such vectors.",
        "tests/reference/test_ops_type_conversion_rescale_1_0.py::test_inexact_round_require"
        "s_every_allowed_result_to_fit_int32",
    ),
    Reading(
        "v1-inexact-round-range",
        "1.0 RESCALE.tosac, INEXACT_ROUND: the result range is clipped to "
        "minimum_s<out_t>()/maximum_s<out_t>() whatever output_unsigned says",
        "Clipped to the output's unsigned range when output_unsigned, as the exact path "
        "does; the compliance mode INT_RANGE accepts exactly the integers from "
        "ceil(scaled - err_bnd) to floor(scaled + err_bnd) within that range.",
        "Not measured.",
        "tests/reference/test_ops_type_conversion_rescale_1_0.py::test_inexact_round_accepts_exac"
        "tly_its_range",
    ),
    Reading(
        "v11-deduce-ext-nothing",
        "1.1 draft introduction, 'Extension Data Type Mapping': DEDUCE-EXT marks a mode "
        "whose extensions are deduced from its concrete types; tosa.xml's CONV2D, CONV3D, "
        "TRANSPOSE_CONV2D 'Mixed precision fp ...' modes require DEDUCE-EXT alone",
        "A combination whose types deduce no extension (CONV2D with fp16 input, fp32 "
        "weights, fp32 output) is required by PRO-FP: every such combination is "
        "floating-point, and with no requirement at all every claim, PRO-INT's included, "
        "would have to run it.",
        "Not measured (tosa-tools 2026.8 names no profile per mode).",
        "tests/core/test_revision_1_1.py::test_deduce_ext_takes_the_extensions_of_the_types",
    ),
    Reading(
        "v11-dp-mixed-either",
        "1.1 draft introduction, dot product accuracy: the ABS_BOUND and VARIANCE_ERROR_BOUND "
        "tables test in_t only",
        "In a mixed mode the relaxed row applies when either operand is fp8/fp6/fp4/mxint8 (a "
        "block-scaled operand by its value type) with an fp32 accumulator, the fp32 row when "
        "either operand is fp32; the first matching row wins (fp32 data with fp8 weights is "
        "relaxed).",
        "Not measured.",
        "tests/reference/test_compliance_dot_product_1_1.py::test_abs_bound_by_types",
    ),
    Reading(
        "v11-dp-matmul-roles",
        "1.1 draft introduction, the same tables (in_t, weight_t, acc_t)",
        "MATMUL and MATMUL_T have no in_t or acc_t: A plays in_t, B weight_t, and the accumulator"
        " test reads out_t, as the tables' note does for MATMUL.",
        "Not measured.",
        "tests/reference/test_compliance_dot_product_1_1.py::test_variance_units_by_types",
    ),
    Reading(
        "v11-dp-floor-per-type",
        "1.1 draft tosa_reference_check_dotproduct.tosac against 1.0.2's: the bound pass floors "
        "each operand by normal_min of its own type",
        "Keyed by revision: under 1.1 the weight is floored at its own type's normal_min and the "
        "bias at out_t's; 1.0 and the draft keep one floor, the input type's.",
        "Not measured.",
        "tests/reference/test_compliance_dot_product_1_1.py::test_expect_records_the_types_and_fl"
        "oors_each_by_its_own",
    ),
    Reading(
        "v11-dp-bf16-acc-literal",
        "1.1 draft introduction, ABS_BOUND table: the relaxed row names an fp32 accumulator",
        "fp8 inputs with a bf16 or fp16 accumulator take the 'all other cases' row, 2 x ksb, as "
        "written (it may be an oversight of the draft).",
        "Not measured.",
        "tests/reference/test_compliance_dot_product_1_1.py::test_abs_bound_by_types",
    ),
    Reading(
        "v11-zp-operand-type",
        "1.1 draft CONV2D.tosac, MATMUL.tosac, MATMUL_T.tosac: zero points typed in_zp_t / "
        "A_zp_t, ERROR_IFs on !is_same<in_t,i8_t>()",
        "A zero-point rule tests the type of the operand it belongs to (in_t, weight_t, A_t, "
        "B_t), not the zero point's own type (fp32_t for a block-scaled operand).",
        "Not measured.",
        "tests/reference/test_ops_matmul_t_1_1.py::test_zero_point_rules_test_the_operand_type_no"
        "t_the_zero_points",
    ),
    Reading(
        "v11-mx-check-scale-arguments",
        "1.1 draft tosa_reference_check_scale (numeric accuracy helpers), its last line",
        "The implementation's value is checked against x / test_scale with the arguments in their"
        " places; as written (swapped) correct results fail (fp4: 6 for 6.9, 0 for 0.1).",
        "Measured on the 1.1 draft's CAST_TO_BLOCK_SCALED pack (110 valid vectors, values judged"
        " with their scale output): as written, the reference's own correct results fail in 56"
        " of them (20,470 values; fp4e2m1 19 vectors, fp6e2m3 15, fp6e3m2 11, fp8e4m3 6, mxint8 4,"
        " fp8e5m2 1); read so, none fail, and Arm's model passes all 110.",
        "tests/reference/test_ops_block_scaled_1_1.py::test_check_scale_reading_and_nan_scale",
    ),
    Reading(
        "v11-mx-nan-scale-block-free",
        "1.1 draft tosa_reference_check_scale: 'if (is_a_NaN(ref_scale)) return true'",
        "A block whose reference scale is NaN accepts any scale and any values, as written; a NaN"
        " scale returned for a finite block fails (has_Inf<fp8ue8m0_t>() is true as written, so "
        "the check does not skip it).",
        "45 of the 110 valid CAST_TO_BLOCK_SCALED vectors of the 1.1 draft hold NaN-scale blocks"
        " (79 blocks); Arm's model passes them all.  A NaN scale returned for an all-zero block "
        "(mutant block-scale-zero-block-nan) fails 40 vectors.",
        "tests/reference/test_ops_block_scaled_1_1.py::test_check_scale_reading_and_nan_scale",
    ),
    Reading(
        "v11-mx-cast-to-scale-shape",
        "1.1 draft CAST_TO_BLOCK_SCALED: output_scale's shape is declared 'out_scale_shape', "
        "tied to nothing; the pseudocode writes scale_index (index with the innermost "
        "dimension over block_size) into it; operators.adoc: 'The shape of each output "
        "argument must be derivable from operator input arguments and attributes'",
        "out_scale_shape is read as shape with its innermost dimension divided by block_size "
        "(the one shape the pseudocode's writes derive), and any other shape breaks the "
        "output argument rule (ERROR_IF).  As written no ERROR_IF states it: a longer scale "
        "tensor leaves scales unwritten, a shorter one breaks tensor_write's REQUIRE.",
        "The model accepts output_scale one to three scales too long: 5 must-fail vectors of "
        "the 1.1 draft's CAST_TO_BLOCK_SCALED pack (the other 37 it runs are rejected).",
        "tests/reference/test_ops_block_scaled_1_1.py::test_cast_to_error_ifs",
    ),
    Reading(
        "v11-mx-no-value-encode",
        "1.1 draft round_to_nearest_float into fp4e2m1, fp6e2m3, fp6e3m2, mxint8 (no NaN, no "
        "infinity)",
        "Values past the range saturate, a NaN is stored as +0; the text gives no value "
        "(ml_dtypes stores -0). Only NaN-scale blocks reach it, where any value passes.",
        "Not measured.",
        "tests/reference/test_mx_1_1.py::test_values_without_a_representation",
    ),
    Reading(
        "v11-mx-dot-abs-floor",
        "1.1 draft tosa_reference_check_dotproduct, 'In a block-scaled dot product'",
        "The bound pass floors each data value at normal_min of its value type and multiplies by "
        "its scale unchanged, and floors the bias at out_t's; flooring the scaled product at "
        "fp4's normal_min (1.0) would ignore the scale.",
        "Not measured.",
        "tests/reference/test_ops_block_scaled_1_1.py::test_block_scaled_dot_products_take_the_re"
        "laxed_bound",
    ),
    Reading(
        "v11-mx-matmul-block-loop",
        "1.1 draft MATMUL_T_BLOCK_SCALED.tosac: 'for (0 <= b <= C/block_size)'",
        "Read as b < C/block_size: as written the loop reads one block past the end of the scales.",
        "Not measured.",
        "tests/reference/test_ops_block_scaled_1_1.py::test_matmul_t_by_hand",
    ),
    Reading(
        "v11-mx-conv-padded-nan-scale",
        "1.1 draft CONV2D_BLOCK_SCALED.tosac: the scales multiply the block sum at every tap, "
        "padded taps included",
        "As written: a NaN weight scale reaches outputs through padding; recipes keep weight "
        "scales non-NaN wherever there is padding, and the edge fill refuses to place one "
        "there (strategies.fill.REFUSALS), so no vector depends on it.",
        "The model skips padded taps: finite where the pseudocode gives NaN (1 vector of the "
        "1.1 pack, before the edge fill refused such scales).",
        "tests/reference/test_ops_block_scaled_1_1.py::test_conv2d_nan_weight_scale_reaches_throu"
        "gh_padding",
    ),
    Reading(
        "v11-mx-ue8m0-rounding",
        "1.1 draft round_to_nearest_float into fp8ue8m0 (an exponent only)",
        "1.5 x 2**e, the tie, goes to the even exponent; values below 2**-127 saturate to it; "
        "zero, negatives and values past 2**127 have no encoding and give NaN.",
        "Not measured.",
        "tests/reference/test_mx_1_1.py::test_ue8m0_rounding",
    ),
    Reading(
        "v11-tensor-size-t-range",
        "1.1 draft introduction, 'Tensor Definitions': tensor_size_t 'must be able to "
        "hold integers in the range [-(1 << MAX_LOG2_SIZE) .. (1 << MAX_LOG2_SIZE) - "
        "1]'; apply_add_s / apply_sub_s REQUIRE the result within minimum_s / "
        "maximum_s<tensor_size_t>; apply_mul_s casts its int64_t product unchecked",
        "minimum_s / maximum_s<tensor_size_t> are the range the level guarantees "
        "(int32's at 8K, int64's at no level).  A shape operand outside it is beyond "
        "the level (a LEVEL_CHECK), a result outside it fails the helper's REQUIRE, "
        "MUL_SHAPE's product included (computed exactly, so an int64 overflow is seen):"
        " unpredictable either way, and the 1.1 recipes keep inside.  The draft's "
        "size_t stays int64.",
        "The test generator draws 8K shape values in [-(1 << 31), (1 << 31) - 1] "
        "(generator/tosa_tensor_gen.py, tgEwiseBinaryShape, "
        "TOSA_8K_LEVEL_MAX_LOG2_SIZE).",
        "tests/reference/test_ops_shape_1_1.py::test_tensor_size_t_is_int32_at_8k",
    ),
    Reading(
        "v11-assert-equal-shape-input",
        "1.1 draft ASSERT_EQUAL_SHAPE.tosac: 'ERROR_IF(input2[index] != 1 && "
        "input2[index] != input[index])': the operator has no argument named input",
        "Read as input1[index]: with allow_broadcast a pair is compatible where either "
        "value is 1 or both agree (the Broadcasting rule the prose names).",
        "The generator's evAssertShapeNotEqual expects an error exactly where input1 !="
        " input2 and neither is 1, the same reading.",
        "tests/reference/test_ops_shape_1_1.py::test_assert_equal_shape_with_broadcast",
    ),
    Reading(
        "v11-slice-shape-exact-end",
        "1.1 draft SLICE_SHAPE.tosac: 'ERROR_IF(start_value + size_value > "
        "length(input))' with int32_t start_value and size_value",
        "The sum is compared exactly: a start near 2**31 with a positive size is the "
        "error the clause names, not an int32_t overflow (breakers keep the sum an "
        "int32_t all the same).",
        "Not measured (the generator's agSliceShape keeps start + size within the shape).",
        "tests/reference/test_ops_shape_1_1.py::test_slice_shape_rules",
    ),
    Reading(
        "v11-ars-round-pro-int",
        "1.1 draft ARITHMETIC_RIGHT_SHIFT.tosac: 'ERROR_IF(round && !PRO-INT)'; its i64 mode "
        "requires EXT-INT64 only, which PRO-FP may claim",
        "The reference implements every profile, so the clause never fires there and a round = "
        "true case is valid; its vector requires PRO-INT on top of its mode's requirements, so "
        "certify leaves it out of a PRO-FP + EXT-INT64 claim rather than failing a backend that "
        "rightly raises the error.  No must-fail vector: a vector's requirements cannot say 'a "
        "claim without PRO-INT' (as for EXT-DYNAMIC).",
        "Not measured.",
        "tests/reference/test_ops_int64_1_1.py::test_ars_i64_round_is_valid_in_the_reference_and_"
        "needs_pro_int",
    ),
    Reading(
        "chain-intermediate-precision",
        "introduction, Operator sequence precision requirement: each M[k] implements A[k] "
        "'with same or higher precision datatypes' and meets A[k]'s accuracy once its output "
        "is rounded to A[k]'s precision",
        "A chain vector whose float results are exact before the last operator (data "
        "movement, ABS, NEGATE, MAXIMUM, MINIMUM, CLAMP, SELECT, comparisons) is judged by "
        "its last operator's rule.  Where a rounding result (ADD, SUB, MUL) feeds later "
        "operators, the output is judged by the composed bound: each operator's allowance "
        "carried through the chain as an interval of the reals a wider M[k] may pass on "
        "(reference/compliance/chain_bound.py), as ABS_ERROR with err_bnd the far end's "
        "distance from the reference.  Other rounding operators (CAST between floats, EXP "
        "...) and a comparison or CAST of a rounded value only end a chain.  Earlier packs "
        "judged ADD > SUB by SUB's rule alone, which failed a compliant fp16-in-fp32 "
        "backend.",
        "Arm's conformance tests are single operators: no chains.",
        "tests/reference/test_chain_bound.py::test_the_bound_of_add_then_sub_by_hand",
    ),
    Reading(
        "v11-cast-fp-to-mx-condition",
        "1.1 draft CAST.tosac, the block-scaled out_t branch: 'ERROR_IF(is_floating_point<in_t>"
        "()); // Only allow FP to cast to Mx'",
        "Read as its comment says: an error for an in_t that is not floating point.  As written "
        "the condition refuses every fp-to-MX mode tosa.xml lists (all 30 have an fp8, fp16, "
        "bf16 or fp32 in_t); the clause is recorded in its own words.  No mode binds a "
        "non-float in_t there, so no must-fail vector reaches it (the type check fires first).",
        "Not measured (the model's CAST has no block-scaled output).",
        "tests/reference/test_ops_cast_block_scaled_1_1.py::test_is_floating_point_is_read_as_its_"
        "comment_says",
    ),
)
