"""Arm's names for TOSA's profiles and extensions, and back.

Arm's tools spell them in lower case with a ``tosa-`` prefix (``tosa-pro-int``,
``tosa-ext-int16``); the specification as ``PRO-INT`` and ``EXT-INT16``.  The mapping
is a spelling rule, applied to the names the revision's tosa.xml declares.
"""

from __future__ import annotations

from conformance.spec import Spec

PREFIX = "tosa-"


def arm_name(name: str) -> str:
    """``PRO-INT`` -> ``tosa-pro-int``; ``EXT-INT16`` -> ``tosa-ext-int16``."""
    return PREFIX + name.lower()


def spec_name(spec: Spec, arm: str) -> str | None:
    """The profile or extension of ``spec`` Arm's name ``arm`` spells, else None."""
    known = {arm_name(n): n for n in (*spec.profiles, *spec.extensions)}
    return known.get(arm.strip().lower())
