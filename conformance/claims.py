"""Claims (profiles + extensions + level) and the (operator, mode) pairs they require."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from conformance.errors import ConformanceError
from conformance.spec import Level, Spec, TypeSupport

# introduction, "Main Inference Profile Compliance": an MI implementation must also
# meet Base Inference compliance, so claiming a profile brings in the ones it builds on.
PROFILE_INCLUDES: dict[str, tuple[str, ...]] = {"MI": ("BI",)}

DEFAULT_LEVEL = "8K"


class ClaimError(ConformanceError, ValueError):
    """A claim that names unknown things or an extension without a profile it extends."""


@dataclass(frozen=True)
class Claim:
    profiles: tuple[str, ...]
    extensions: tuple[str, ...]
    level: Level

    @property
    def names(self) -> frozenset[str]:
        """Every profile/extension name in force, implied profiles included."""
        out = set(self.profiles) | set(self.extensions)
        for p in self.profiles:
            out |= set(PROFILE_INCLUDES.get(p, ()))
        return frozenset(out)

    def requires(self, mode: TypeSupport) -> bool:
        return mode.required_by(self.names)

    def describe(self) -> str:
        parts = [*self.profiles, *self.extensions]
        return f"{'+'.join(parts)} @ level {self.level.name}"

    def to_json(self) -> dict[str, object]:
        return {
            "profiles": list(self.profiles),
            "extensions": list(self.extensions),
            "level": self.level.name,
        }


def _canonical(name: str, known: Iterable[str], what: str) -> str:
    for k in known:
        if k.casefold() == name.strip().casefold():
            return k
    raise ClaimError(f"unknown {what} {name!r}; known: {', '.join(known)}")


def make_claim(
    spec: Spec,
    profiles: Iterable[str],
    extensions: Iterable[str] = (),
    level: str | None = None,
) -> Claim:
    """Validate and build a claim; errors say what is wrong and what would fix it."""
    profs = tuple(dict.fromkeys(_canonical(p, spec.profiles, "profile") for p in profiles))
    extensions = list(extensions)
    if any(e.strip().casefold() == "all" for e in extensions):
        # "all": every extension of the claimed profiles (and of the ones they include)
        implied_profiles = set(profs) | {i for p in profs for i in PROFILE_INCLUDES.get(p, ())}
        extensions = [e for e in extensions if e.strip().casefold() != "all"] + [
            name for name, ext in spec.extensions.items() if implied_profiles & set(ext.profiles)
        ]
    exts = tuple(dict.fromkeys(_canonical(e, spec.extensions, "extension") for e in extensions))
    if not profs:
        raise ClaimError(
            f"a claim needs at least one profile (--profile {'/'.join(spec.profiles)})"
        )
    implied = set(profs)
    for p in profs:
        implied |= set(PROFILE_INCLUDES.get(p, ()))
    for e in exts:
        extended = spec.extensions[e].profiles
        if not implied & set(extended):
            want = " or ".join(extended)
            raise ClaimError(f"extension {e} extends {want}; add --profile {extended[0]}")
    try:
        lv = spec.level(level or DEFAULT_LEVEL)
    except KeyError as exc:
        raise ClaimError(str(exc.args[0])) from None
    return Claim(profs, exts, lv)


def full_claim(spec: Spec, level: str | None = None) -> Claim:
    """Every profile and every extension of the spec."""
    return make_claim(spec, spec.profiles, spec.extensions, level)


def required_modes(spec: Spec, claim: Claim) -> list[TypeSupport]:
    """The (operator, mode) pairs the claim requires, in tosa.xml order."""
    return [m for m in spec.modes() if claim.requires(m)]
