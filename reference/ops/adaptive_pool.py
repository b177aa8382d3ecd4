"""AVG_POOL2D_ADAPTIVE and MAX_POOL2D_ADAPTIVE (TOSA 1.1): AVG_POOL2D and MAX_POOL2D
with ``kernel``, ``stride`` and ``pad`` passed as ``shape_t`` inputs instead of
attributes.

The 1.1 draft gives them no pseudocode of their own: tensor_ops.adoc includes
AVG_POOL2D.tosac and MAX_POOL2D.tosac under both headings, and says only that the
kernel, stride and pad arguments are inputs "rather than attributes".  So each window is
the pooling operators' (``iy = oy * stride_y - pad_top``, taps ``iy + ky`` for
``0 <= ky < kernel_y``, the same along x), its ERROR_IFs theirs (``idiv_check`` of the
padded extent by the stride, pads below the kernel), AVG's divisor the number of real
taps with reciprocal_scale / apply_scale_32 rounding and zero points for i8, MAX's
``nan_mode`` apply_max_s.  It is not the "adaptive" pooling of the frameworks, which
derives each window from IH and OH (``floor(oy * IH / OH)`` to ``ceil((oy + 1) * IH /
OH)``) and takes no kernel: that reading is the mutant ``adaptive-pool-framework-windows``.

What the inputs add: the engine's argument check leaves a ``shape_t`` operand's length
to the operator (as RESIZE's), so a kernel, stride or pad input of another length than
tosa.xml declares ([2], [2], [4]) is checked here, before the pseudocode runs.
"""

from __future__ import annotations

import numpy as np

from conformance.expressions import Environment
from reference.arguments import INPUTS_CLAUSE
from reference.context import OpContext
from reference.ops.tensor_pool_fft import Result, avg_pool2d, max_pool2d
from reference.registry import implements


def check_window_inputs(ctx: OpContext) -> None:
    """Every ``shape_t`` input (kernel, stride, pad) has the length its declaration
    gives (``[2]``, ``[2]``, ``[4]`` in tosa.xml): the argument rule, checked in
    argument order before the operator's own ERROR_IFs."""
    for arg in ctx.op_spec.inputs:
        if arg.type != "shape_t":
            continue
        want = arg.shape.evaluate(Environment())
        got = ctx.input_tensor(arg.name).shape
        values = np.asarray(ctx.arg(arg.name)).reshape(-1).tolist()
        ctx.error_if(
            tuple(got) != tuple(want),
            INPUTS_CLAUSE,
            f"{arg.name} must be a shape of {want[0]} values "
            f"({', '.join(arg.element_names)}), got {values}",
        )


@implements("AVG_POOL2D_ADAPTIVE")
def avg_pool2d_adaptive(ctx: OpContext) -> Result:
    check_window_inputs(ctx)
    # AVG_POOL2D.tosac: pool_window reads kernel, stride and pad from the inputs (an
    # attribute or a one-operand input alike, OpContext.attr), and its divisor, zero
    # points and acc_type rules are the same.
    return avg_pool2d(ctx)


@implements("MAX_POOL2D_ADAPTIVE")
def max_pool2d_adaptive(ctx: OpContext) -> Result:
    check_window_inputs(ctx)
    return max_pool2d(ctx)
