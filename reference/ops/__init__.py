"""Operator implementations, one module per operator group of tosa.xml.

Importing this package registers every implementation with
:mod:`reference.registry`.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
