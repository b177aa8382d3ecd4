"""REDUCE_SUM (a dot product with a vector of ones) and REDUCE_PRODUCT."""

from __future__ import annotations

from reference import compliance
from reference.expectations import DescribeContext, OutputCheck, describes


@describes("REDUCE_SUM")
def reduce_sum(ctx: DescribeContext) -> OutputCheck:
    # Appendix A treats REDUCE_SUM as a dot product over the reduced axis, KS = its
    # length; the operator has no local_bound attribute, so the abs pass is per element.
    axis = int(ctx.attr("axis"))
    ks = int(ctx.arg("input").shape[axis])
    desc = compliance.dot_product(
        "REDUCE_SUM", ctx.dtype, ctx.type_of("acc_t"), ks=ks, data_set=ctx.data_set
    )
    return OutputCheck(desc, ctx.abs_pass(["input"], local_bound=True))


@describes("REDUCE_PRODUCT")
def reduce_product(ctx: DescribeContext) -> OutputCheck:
    n = int(ctx.arg("input").shape[int(ctx.attr("axis"))])
    return OutputCheck(compliance.reduce_product(ctx.dtype, n))
