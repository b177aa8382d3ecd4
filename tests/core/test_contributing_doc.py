"""docs/contributing.md names real things: every repository path it gives exists, every
``tests/...::name`` it cites is defined, and every row of its operator table says which
test catches the omission or that nothing does."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "contributing.md"
TEXT = DOC.read_text(encoding="utf-8")

SUFFIXES = (".py", ".md", ".fbs", ".xml", ".xsd", ".toml", ".json", ".sh")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")
TEST_REF = re.compile(r"(tests/[\w/.-]+\.py)((?:::\w+)+)")


def _spans() -> list[str]:
    """The text of every inline code span, and every word of the fenced blocks."""
    fenced = FENCE.findall(TEXT)
    spans = INLINE.findall(FENCE.sub("", TEXT))
    return spans + [word for block in fenced for word in block.split()]


def _repository_path(token: str) -> str | None:
    """``token`` as a path relative to the repository, or None when it is not one (an
    identifier, an absolute path, a backend spec such as ``python:FILE.py:FACTORY``)."""
    token = token.split("::", 1)[0].strip("'\"(),")
    if "/" not in token or ":" in token or token.startswith(("/", "$", "-", "http")):
        return None
    if token.endswith("/") or token.endswith(SUFFIXES):
        return token
    return None


def _paths() -> set[str]:
    return {p for span in _spans() for w in span.split() if (p := _repository_path(w))}


def test_the_doc_names_many_paths() -> None:
    # Sanity: the extraction really read the page.
    paths = _paths()
    assert len(paths) > 60, sorted(paths)
    assert "conformance/sources.py" in paths and "vectors/schema/tosa.fbs" in paths


@pytest.mark.parametrize("path", sorted(_paths()))
def test_every_path_exists(path: str) -> None:
    if "<" in path:  # a placeholder (reference/ops/<group>.py): its folder must exist
        folder = path[: path.index("<")].rsplit("/", 1)[0]
        assert (ROOT / folder).is_dir(), f"docs/contributing.md: no folder {folder}/"
        return
    target = ROOT / path
    exists = target.is_dir() if path.endswith("/") else target.exists()
    assert exists, f"docs/contributing.md names {path}, which does not exist"


def _defined(path: Path, names: list[str]) -> bool:
    """Whether ``names`` (a function, or a class then its method) is defined in ``path``."""
    body: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    for name in names:
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        found = next((n for n in body if isinstance(n, kinds) and n.name == name), None)
        if found is None:
            return False
        body = found.body if isinstance(found, ast.ClassDef) else []
    return True


def _test_refs() -> list[str]:
    return sorted({m.group(0) for span in _spans() for m in TEST_REF.finditer(span)})


def test_the_doc_cites_many_tests() -> None:
    assert len(_test_refs()) > 40, _test_refs()


@pytest.mark.parametrize("ref", _test_refs())
def test_every_cited_test_exists(ref: str) -> None:
    path, *names = ref.split("::")
    assert (ROOT / path).is_file(), f"docs/contributing.md cites {ref}: no file {path}"
    assert _defined(ROOT / path, names), f"docs/contributing.md cites {ref}: not defined"


def _operator_rows() -> list[list[str]]:
    section = TEXT.split("### Every place, in order\n", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


VERDICT = re.compile(r"\*\*(caught|partly|not caught)\*\*: ")


def test_every_place_says_what_catches_its_omission() -> None:
    rows = _operator_rows()
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1)), "rows out of order"
    verdicts: dict[str, list[str]] = {"caught": [], "partly": [], "not caught": []}
    for number, place, _what, caught in rows:
        m = VERDICT.match(caught)
        assert m, f"row {number} ({place}): start with **caught**, **partly** or **not caught**"
        if m.group(1) != "not caught":
            assert TEST_REF.search(caught), f"row {number}: caught by which test?"
        verdicts[m.group(1)].append(number)
    # The rows the index lists say so in their place column, and the page counts them.
    indexed = [n for n, place, _w, _c in rows if re.search(r"; index\b", place)]
    assert f"The index lists {len(indexed)} of the {len(rows)}" in " ".join(TEXT.split())
    # The summary under the table counts the same rows.
    summary = (
        f"In all: {len(rows)} places. {len(verdicts['caught'])} are caught, "
        f"{len(verdicts['partly'])} partly caught (rows {_listed(verdicts['partly'])}), and "
        f"{len(verdicts['not caught'])} not caught:"
    )
    assert summary in " ".join(TEXT.split()), summary
    listed = " ".join(TEXT.split()).split(summary, 1)[1].split(". ", 1)[0]
    assert re.findall(r"\b\d+\b", listed) == verdicts["not caught"], listed


def _listed(numbers: list[str]) -> str:
    """Row numbers as the summary lists them: "2, 4 and 6"."""
    return numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} and {numbers[-1]}"
