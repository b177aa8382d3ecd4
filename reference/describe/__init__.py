"""Compliance describers for operators whose rule needs parameters (dot products,
REDUCE_PRODUCT, RESIZE, ...), one module per operator group.

Importing this package registers them with :func:`reference.expectations.describes`.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
