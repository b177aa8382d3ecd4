"""Which vectors of a pack a claim covers: a vector of a required pair that needs more
than the claim (an extension it does not name) is the claim's neither to pass nor to
fail (certify skips it with :data:`CLAIM_SKIP`, and the tally leaves it out)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance.claims import Claim
from vectors import pack_json
from vectors.pack_errors import PackError
from vectors.pack_model import Requirements

# How a vector outside the claim is marked (SKIPPED, never counted for or against it).
CLAIM_SKIP = "not in the claim: "


def beyond_claim(claim: Claim, pack: Any, names: Iterable[str]) -> dict[str, str]:
    """Vector name -> why ``claim`` does not cover it, for each of ``names`` whose own
    requirements (its desc.json) need more than the claim: a vector of a required pair
    that also needs an extension (TOSA 1.0's EXT-DYNAMIC, for a zero point fed by a
    graph input) is not the claim's to pass or fail.  Read from desc.json alone, so no
    array is loaded; PackError for a desc.json that does not say."""
    names_in_force = claim.names
    out: dict[str, str] = {}
    for name in names:
        label = f"{name}/desc.json"
        raw = pack.source.read(label)
        if raw is None:
            raise PackError(f"{label}: missing")
        try:
            req = Requirements.from_json(pack_json.loads(raw, label)["requirements"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise PackError(f"{label}: no readable requirements ({exc})") from None
        needs = req.missing(names_in_force)
        if needs:
            out[name] = f"{CLAIM_SKIP}needs {', '.join(needs)}"
    return out
