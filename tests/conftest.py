"""Shared test settings: Hypothesis profiles.

``ci`` (used when CI is set, and by default) is derandomized with a bounded number of
examples so that a run is repeatable; ``dev`` explores more.  Choose with
``HYPOTHESIS_PROFILE=dev pytest``.
"""

import os

from hypothesis import HealthCheck, settings

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
