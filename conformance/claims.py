"""Claims (profiles + extensions + level) and the (operator, mode) pairs they require."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from conformance import revisions
from conformance.errors import ConformanceError
from conformance.spec import Level, Spec, TypeSupport

DEFAULT_LEVEL = "8K"


class ClaimError(ConformanceError, ValueError):
    """A claim that names unknown things or an extension without a profile it extends."""


@dataclass(frozen=True)
class Claim:
    profiles: tuple[str, ...]
    extensions: tuple[str, ...]
    level: Level
    # Profiles the claimed ones bring in, by the revision's rule (the draft's MI
    # includes BI; TOSA 1.0's profiles include none).
    implied: tuple[str, ...] = ()
    revision: str = ""  # the spec revision whose names these are (conformance.revisions)

    @property
    def names(self) -> frozenset[str]:
        """Every profile/extension name in force, implied profiles included."""
        return frozenset(self.profiles) | frozenset(self.extensions) | frozenset(self.implied)

    def requires(self, mode: TypeSupport) -> bool:
        return mode.required_by(self.names)

    def describe(self) -> str:
        parts = [*self.profiles, *self.extensions]
        of = f" of TOSA {revisions.pinned(self.revision)}" if self.revision else ""
        return f"{'+'.join(parts)} @ level {self.level.name}{of}"

    def to_json(self) -> dict[str, object]:
        return {
            "profiles": list(self.profiles),
            "extensions": list(self.extensions),
            "level": self.level.name,
        }


def profile_includes(spec: Spec) -> dict[str, tuple[str, ...]]:
    """Which profile brings in which, by the rule of the spec's revision."""
    fam = revisions.family(spec.revision)
    return dict(fam.profile_includes) if fam else {}


def _canonical(spec: Spec, name: str, known: Iterable[str], what: str) -> str:
    for k in known:
        if k.casefold() == name.strip().casefold():
            return k
    other = revisions.counterpart(name, spec.revision)
    if other:
        raise ClaimError(other)
    raise ClaimError(f"unknown {what} {name!r}; known: {', '.join(known)}")


def make_claim(
    spec: Spec,
    profiles: Iterable[str],
    extensions: Iterable[str] = (),
    level: str | None = None,
) -> Claim:
    """Validate and build a claim; errors say what is wrong and what would fix it."""
    includes = profile_includes(spec)
    profs = tuple(dict.fromkeys(_canonical(spec, p, spec.profiles, "profile") for p in profiles))
    extensions = list(extensions)
    implied_profiles = set(profs) | {i for p in profs for i in includes.get(p, ())}
    if any(e.strip().casefold() == "all" for e in extensions):
        # "all": every extension of the claimed profiles (and of the ones they include)
        extensions = [e for e in extensions if e.strip().casefold() != "all"] + [
            name for name, ext in spec.extensions.items() if implied_profiles & set(ext.profiles)
        ]
    exts = tuple(
        dict.fromkeys(_canonical(spec, e, spec.extensions, "extension") for e in extensions)
    )
    if not profs:
        raise ClaimError(
            f"a claim needs at least one profile (--profile {'/'.join(spec.profiles)})"
        )
    for e in exts:
        extended = spec.extensions[e].profiles
        if not implied_profiles & set(extended):
            want = " or ".join(extended)
            raise ClaimError(f"extension {e} extends {want}; add --profile {extended[0]}")
    try:
        lv = spec.level(level or DEFAULT_LEVEL)
    except KeyError as exc:
        raise ClaimError(str(exc.args[0])) from None
    implied = tuple(sorted(implied_profiles - set(profs)))
    return Claim(profs, exts, lv, implied, spec.revision)


def full_claim(spec: Spec, level: str | None = None) -> Claim:
    """Every profile and every extension of the spec."""
    return make_claim(spec, spec.profiles, spec.extensions, level)


def required_modes(spec: Spec, claim: Claim) -> list[TypeSupport]:
    """The (operator, mode) pairs the claim requires, in tosa.xml order."""
    return [m for m in spec.modes() if claim.requires(m)]
