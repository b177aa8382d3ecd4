"""tosa-conformance: TOSA conformance vector packs, backends and certification.

Importing the package is cheap; the spec model is in :mod:`conformance.spec`.
"""

__version__ = "0.1.0"
