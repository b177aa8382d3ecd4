"""Shared test settings: Hypothesis profiles, and the spec revision.

The tests were written for the 2024 draft, which stays fully supported: they run with
it as the default revision (``$TOSA_CONFORMANCE_REVISION``, inherited by the commands
they start). The tests of TOSA 1.0 name their revision, and ``tests/core/
test_revisions.py`` checks the real default with the variable unset.

``ci`` (used when CI is set, and by default) is derandomized with a bounded number of
examples so that a run is repeatable; ``dev`` explores more.  Choose with
``HYPOTHESIS_PROFILE=dev pytest``.
"""

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# Before any test module loads a spec (several do at import).
os.environ.setdefault("TOSA_CONFORMANCE_REVISION", "2024-04-draft")

from conformance import spec as spec_module

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _process_spec_restored() -> Iterator[None]:
    """A test that makes another revision the process's spec (``use_spec``) must not
    leave it to the next test on the same worker: each starts with the session's."""
    before = spec_module._active
    yield
    spec_module._active = before
