"""Inputs of an Arm test that are generated when it runs, not stored: ``meta.data_gen``.

Arm's runner calls the data generator library of ``tosa-tools``
(``libtosa_reference_generate_lib.so``, through ``generator.datagenerator``) for every
``ifm_name`` whose ``.npy`` file is absent.  Importing does the same, with the same
library, so the values are bit-identical to the ones Arm's own run would use.
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from conformance.errors import ConformanceError

INSTALL_HINT = "install tosa-tools: pip install -e '.[arm]'"
LIBRARY = Path("tosa_reference_model") / "libtosa_reference_generate_lib.so"


class DataGenError(ConformanceError):
    """Arm's data generator is missing, or refused a tensor's configuration."""


def tosa_tools_version() -> str | None:
    try:
        return metadata.version("tosa-tools")
    except metadata.PackageNotFoundError:
        return None


@cache
def _library() -> Any:
    try:
        arm = importlib.import_module("generator.datagenerator")  # untyped: tosa-tools
    except ImportError as exc:
        why = f"Arm's data generator is not importable ({exc}); {INSTALL_HINT}"
        raise DataGenError(why) from None
    dist = metadata.distribution("tosa-tools")
    path = Path(str(dist.locate_file(LIBRARY)))
    try:
        return arm.GenerateLibrary(path), arm.GenerateError
    except arm.GenerateError as exc:
        raise DataGenError(f"{exc}; {INSTALL_HINT}") from None


def generate(data_gen: dict[str, Any], tensor: str) -> np.ndarray:
    """The values Arm's library generates for ``tensor`` of a ``meta.data_gen`` block, in
    Arm's numpy convention (ml_dtypes for the narrow floats; fp4 / fp6 one code per
    element, unpacked)."""
    lib, generate_error = _library()
    try:
        return np.asarray(lib.get_tensor_data(tensor, data_gen, use_packed_data=False))
    except generate_error as exc:
        raise DataGenError(f"Arm's data generator: {exc}") from None
    except Exception as exc:  # the schema validator's or ctypes' own errors
        raise DataGenError(f"Arm's data generator refused {tensor!r}: {exc}") from None
