"""Cases for the level-limit mutants (MAX_KERNEL, MAX_STRIDE, MAX_SCALE halved; MAX_RANK 4)."""

from __future__ import annotations

import numpy as np
from mutant_cases import binary, pool, resize

from targeted_cases import Cases

CASES: Cases = {
    "max-kernel-halved": (
        [lambda: pool("MAX_POOL2D", np.ones((1, 4097, 1, 1)), (4097, 1), (1, 1), (0,) * 4)],
        [lambda: pool("MAX_POOL2D", np.ones((1, 4096, 1, 1)), (4096, 1), (1, 1), (0,) * 4)],
    ),
    "max-stride-halved": (
        [lambda: pool("MAX_POOL2D", np.ones((1, 4098, 1, 1)), (1, 1), (4097, 1), (0,) * 4)],
        [lambda: pool("MAX_POOL2D", np.ones((1, 4097, 1, 1)), (1, 1), (4096, 1), (0,) * 4)],
    ),
    "max-scale-halved": (
        [lambda: resize(np.ones((1, 2, 1, 1)), [129, 1, 1, 1], [0, 0], [0, 0])],
        [lambda: resize(np.ones((1, 2, 1, 1)), [128, 1, 1, 1], [0, 0], [0, 0])],
    ),
    "max-rank-4": (
        [lambda: binary("ADD", np.ones((1, 1, 1, 1, 2)), np.ones((1, 1, 1, 1, 2)), "fp32")],
        [lambda: binary("ADD", np.ones((1, 1, 1, 2)), np.ones((1, 1, 1, 2)), "fp32")],
    ),
}
