"""tosa-conformance: TOSA conformance vector packs, backends and certification.

Importing the package is cheap; the spec model is in :mod:`conformance.spec`.
"""

from pkgutil import extend_path

__version__ = "0.1.0"

# Arm's tosa-tools installs modules in a top-level 'conformance' folder too (no
# __init__.py); its tools import e.g. conformance.model_files.  Extending the path lets
# both live side by side (docs/architecture.md, "The conformance name clash").
__path__ = extend_path(__path__, __name__)
