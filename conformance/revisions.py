"""The TOSA specification revisions this project ships, as data.

Each revision is a folder under ``conformance/tosa_spec/`` holding that revision's own
``tosa.xml`` and ``tosa.xsd`` (as its tag has them) and the flatbuffer schema its
serializer uses. A revision is chosen per process with ``--tosa NAME``; ``--spec PATH``
takes any ``tosa.xml`` and validates it with the ``tosa.xsd`` beside it, and the file is
then matched to a revision by its content (:func:`identify`).

What differs between revisions in the *vocabulary* of a claim is here too: which profile
includes which (the draft's MI includes BI; TOSA 1.0's PRO-FP does not include PRO-INT),
and the names a user may carry over from the other revision, so that the refusal can
name the right one. Everything else is read from each revision's ``tosa.xml``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from conformance.errors import ConformanceError


class RevisionError(ConformanceError, ValueError):
    """An unknown revision, or a name that belongs to another revision."""


@dataclass(frozen=True)
class Revision:
    name: str  # what --tosa takes and a pack records: "1.0", "2024-04-draft"
    title: str  # one line for people
    source: str  # where the vendored files come from (tag or commit)
    folder: str  # under conformance/tosa_spec/
    # introduction, profile compliance: a claim of the key brings in the values.
    profile_includes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The version a target string names ("TOSA-1.0+INT"), and its profile words.
    target_version: str = ""
    target_profiles: Mapping[str, str] = field(default_factory=dict)
    # A draft moves: the commit of the specification repository its files come from
    # (full hash), recorded with the revision in every pack and certificate.
    commit: str = ""
    # introduction, "Extension Data Type Mapping" (TOSA 1.1): a mode whose requirement
    # names DEDUCE-EXT requires the extensions its concrete types deduce.
    deduced_extensions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def pinned(self) -> str:
        """The revision as a pack and a certificate record it: ``1.1-draft@cd5acdd``
        for a draft pinned to a commit, the name alone for a release."""
        return f"{self.name}@{self.commit[:7]}" if self.commit else self.name

    @property
    def directory(self) -> Path:
        return Path(str(resources.files("conformance") / "tosa_spec" / self.folder))

    @property
    def xml_path(self) -> Path:
        return self.directory / "tosa.xml"

    @property
    def xsd_path(self) -> Path:
        return self.directory / "tosa.xsd"

    @property
    def fbs_path(self) -> Path:
        return self.directory / "tosa.fbs"

    @property
    def xml_sha256(self) -> str:
        return hashlib.sha256(self.xml_path.read_bytes()).hexdigest()


DRAFT_2024 = Revision(
    name="2024-04-draft",
    title="TOSA 1.1.0 pre-release draft of April 2024 (profiles BI, MI)",
    source="the project's seed tosa.xml (April 2024)",
    folder="2024-04-draft",
    # introduction, "Main Inference Profile Compliance": an MI implementation must
    # also meet Base Inference compliance.
    profile_includes={"MI": ("BI",)},
)

TOSA_1_0 = Revision(
    name="1.0",
    title="TOSA 1.0.2, released July 2026 (profiles PRO-INT, PRO-FP)",
    source="tag v1.0.2 of the TOSA specification repository; tosa.fbs from tosa-tools 2026.8",
    folder="1.0",
    # 1.0's profiles are independent: PRO-FP does not include PRO-INT.
    profile_includes={},
    target_version="1.0",
    target_profiles={"INT": "PRO-INT", "FP": "PRO-FP"},
)

TOSA_1_1_DRAFT = Revision(
    name="1.1-draft",
    title="TOSA 1.1 draft at commit cd5acdd of 2026-08-07 (profiles PRO-INT, PRO-FP)",
    source="commit cd5acdd00c4101c2d8a45c3398abc881fdb9a1c6 of the TOSA specification "
    "repository's main branch; tosa.fbs from tosa-tools 2026.8",
    folder="1.1-draft",
    profile_includes={},
    target_version="1.1",
    target_profiles={"INT": "PRO-INT", "FP": "PRO-FP"},
    commit="cd5acdd00c4101c2d8a45c3398abc881fdb9a1c6",
    deduced_extensions={
        "i64_t": ("EXT-INT64",),
        "i16_t": ("EXT-INT16",),
        "i4_t": ("EXT-INT4",),
        "bf16_t": ("EXT-BF16",),
        "fp8e4m3_t": ("EXT-FP8E4M3",),
        "fp8e5m2_t": ("EXT-FP8E5M2",),
        "fp8ue8m0_t": ("EXT-MX-COMMON",),
        "fp4e2m1_t": ("EXT-MX-FP4E2M1",),
        "fp6e2m3_t": ("EXT-MX-FP6E2M3",),
        "fp6e3m2_t": ("EXT-MX-FP6E3M2",),
        "mxint8_t": ("EXT-MX-INT8",),
        # "Composite Block-Scaled Type Mapping": EXT-MX-COMMON and the value type's.
        # The fp8 value types deduce EXT-MX-FP8E4M3/E5M2 here, not EXT-FP8E4M3/E5M2.
        "bs32_fp8ue8m0_fp8e4m3_t": ("EXT-MX-COMMON", "EXT-MX-FP8E4M3"),
        "bs32_fp8ue8m0_fp8e5m2_t": ("EXT-MX-COMMON", "EXT-MX-FP8E5M2"),
        "bs32_fp8ue8m0_fp6e3m2_t": ("EXT-MX-COMMON", "EXT-MX-FP6E3M2"),
        "bs32_fp8ue8m0_fp6e2m3_t": ("EXT-MX-COMMON", "EXT-MX-FP6E2M3"),
        "bs32_fp8ue8m0_fp4e2m1_t": ("EXT-MX-COMMON", "EXT-MX-FP4E2M1"),
        "bs32_fp8ue8m0_mxint8_t": ("EXT-MX-COMMON", "EXT-MX-INT8"),
    },
)

REVISIONS: dict[str, Revision] = {r.name: r for r in (TOSA_1_0, TOSA_1_1_DRAFT, DRAFT_2024)}

# The revision a process uses when neither --tosa nor --spec (nor a pack) says
# otherwise: TOSA 1.0, what backends implement today.
DEFAULT_REVISION = TOSA_1_0.name
# Names another default for a whole environment (a CI job pinned to the draft); read by
# default_revision() each time, so a test session can set it before any spec loads.
DEFAULT_ENV = "TOSA_CONFORMANCE_REVISION"


def default_revision() -> str:
    """The process's default revision: $TOSA_CONFORMANCE_REVISION, else DEFAULT_REVISION.
    An unknown name in the variable is refused like --tosa's, naming the variable."""
    name = os.environ.get(DEFAULT_ENV, "").strip()
    if not name:
        return DEFAULT_REVISION
    try:
        return revision(name).name
    except RevisionError:
        known = ", ".join(REVISIONS)
        raise RevisionError(
            f"${DEFAULT_ENV}={name!r}: unknown TOSA revision; known: {known}"
        ) from None

# Names that one revision uses for what the other calls something else: a claim that
# uses one on the wrong revision is refused with the right name.
_COUNTERPARTS: tuple[tuple[str, str, str, str], ...] = (
    # (revision that has the name, name, revision of the counterpart, its name)
    ("2024-04-draft", "BI", "1.0", "PRO-INT"),
    ("2024-04-draft", "MI", "1.0", "PRO-FP"),
    ("2024-04-draft", "BI", "1.1-draft", "PRO-INT"),
    ("2024-04-draft", "MI", "1.1-draft", "PRO-FP"),
    ("1.0", "PRO-INT", "2024-04-draft", "BI"),
    ("1.0", "PRO-FP", "2024-04-draft", "MI"),
)


def revision(name: str) -> Revision:
    """The revision called ``name``; one line naming the known ones otherwise."""
    for r in REVISIONS.values():
        if r.name.casefold() == name.strip().casefold():
            return r
    known = ", ".join(REVISIONS)
    raise RevisionError(f"--tosa {name!r}: unknown TOSA revision; known: {known}")


def identify(sha256: str, version: tuple[int, int, int], profiles: set[str]) -> str:
    """The revision name of a tosa.xml: a vendored file by content, another by what it
    says of itself (a 1.0.x release is "1.0"; a file with BI/MI is the 2024 draft's
    family); an unknown family keeps its own version string, prefixed ``custom-``."""
    for r in REVISIONS.values():
        if r.xml_sha256 == sha256:
            return r.name
    if version[:2] == (1, 0) and {"PRO-INT", "PRO-FP"} <= profiles:
        return TOSA_1_0.name
    if version[:2] == (1, 1) and {"PRO-INT", "PRO-FP"} <= profiles:
        return TOSA_1_1_DRAFT.name
    if {"BI", "MI"} & profiles:
        return DRAFT_2024.name
    return "custom-" + ".".join(str(v) for v in version)


def revision_commit(name: str) -> str:
    """The commit a pinned draft's files come from; "" for a release or another name."""
    rev = REVISIONS.get(name)
    return rev.commit if rev else ""


def pinned(name: str) -> str:
    """A revision name as reports show it: with its commit when it is a pinned draft."""
    rev = REVISIONS.get(name)
    return rev.pinned if rev else name


def family(name: str) -> Revision | None:
    """The vendored revision whose rules (profile includes, names) a spec follows."""
    return REVISIONS.get(name)


def counterpart(name: str, known_revision: str) -> str | None:
    """For a name the current revision does not know: the line that says which
    revision has it and what this revision calls it, or None."""
    for rev, other, mine, mine_name in _COUNTERPARTS:
        if other.casefold() == name.strip().casefold() and mine == known_revision:
            return (
                f"{other} is the {rev} revision's name; TOSA {known_revision} says "
                f"{mine_name} (or pass --tosa {rev})"
            )
    return None


_TARGET = re.compile(r"^TOSA-(\d+\.\d+)(?:\.\d+)?(?:\.draft)?((?:\+[A-Za-z0-9_-]+)*)$", re.I)


@dataclass(frozen=True)
class Target:
    """A target string as ExecuTorch and MLIR write it: ``TOSA-1.0+INT+int16``."""

    version: str
    profiles: tuple[str, ...]
    extensions: tuple[str, ...]


def parse_target(text: str, rev: Revision, extensions: Mapping[str, object]) -> Target:
    """Read a target string against a revision: its profile words (INT, FP) name the
    revision's profiles, the rest name extensions (``int16`` -> ``EXT-INT16``)."""
    m = _TARGET.match(text.strip())
    if not m:
        raise RevisionError(
            f"--target {text!r}: expected TOSA-<major>.<minor>+<profile>[+<extension>...], "
            "e.g. TOSA-1.0+INT+int16"
        )
    version, rest = m.group(1), m.group(2)
    if not rev.target_version:
        raise RevisionError(
            f"--target {text!r}: the {rev.name} revision has no target strings; "
            "use --profile and --extension"
        )
    if version != rev.target_version:
        ships = [r.name for r in REVISIONS.values() if r.target_version == version]
        hint = f"pass --tosa {ships[0]}" if ships else "this project ships no such revision"
        raise RevisionError(
            f"--target {text!r} names TOSA {version}, but this run uses TOSA {rev.name} "
            f"({hint})"
        )
    profiles: list[str] = []
    exts: list[str] = []
    by_fold = {e.casefold(): e for e in extensions}
    for word in (w for w in rest.split("+") if w):
        prof = rev.target_profiles.get(word.upper())
        if prof:
            profiles.append(prof)
            continue
        ext = by_fold.get(f"ext-{word}".casefold()) or by_fold.get(word.casefold())
        if ext is None:
            known = ", ".join([*rev.target_profiles, *(e[4:].lower() for e in extensions)])
            raise RevisionError(f"--target {text!r}: unknown word {word!r}; known: {known}")
        exts.append(ext)
    if not profiles:
        words = "/".join(rev.target_profiles)
        raise RevisionError(f"--target {text!r} names no profile ({words})")
    return Target(version, tuple(profiles), tuple(exts))
