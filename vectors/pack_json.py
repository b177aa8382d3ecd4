"""JSON of a vector pack: the written form, the hashes, and the published schemas.

Both JSON files of a pack (``pack.json``, each vector's ``desc.json``) are written in
one fixed form -- sorted keys, indent 1, UTF-8 without escapes, a trailing newline --
so equal content gives equal bytes.  The pack hash is taken over a second, compact
canonical form, so it does not depend on the indentation chosen for humans.

The schemas in ``vectors/schemas/`` are the contract for other tools; they are enforced
here on every write and read, so the files never drift from what they publish.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from vectors.pack_errors import PackError, one_line

SCHEMAS = {"pack": "pack.schema.json", "desc": "desc.schema.json"}
_MAX_MESSAGE = 240  # jsonschema quotes whole instances; a problem must stay one readable line


def dumps(doc: Any, source: str = "<json>") -> bytes:
    """The written form of a pack JSON file."""
    try:
        # allow_nan=False: NaN/Infinity are not JSON and other readers reject them.
        text = json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:  # e.g. a numpy scalar, a NaN in the options
        raise PackError(one_line(f"{source}: cannot be written as JSON: {exc}")) from None
    return (text + "\n").encode("utf-8")


def canonical(doc: Any, source: str = "<json>") -> bytes:
    """The compact form hashed for ``pack_sha256``."""
    try:
        text = json.dumps(
            doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise PackError(one_line(f"{source}: cannot be written as JSON: {exc}")) from None
    return text.encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_MAX_DIGITS = 40  # no number a pack writes is longer; Python's own limit raises past 4300


class _Refused(ValueError):
    """Something valid JSON may hold and a pack file never does."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:  # one reader would take the first, another the last
            raise _Refused(f"the key {key!r} is given twice in one object")
        doc[key] = value
    return doc


def _number(text: str, kind: type) -> Any:
    if len(text) > _MAX_DIGITS:
        raise _Refused(f"a number of {len(text)} characters")
    return kind(text)


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name}, which is not JSON")


def strict_loads(text: str, *, allow_nan: bool = True) -> Any:
    """``json.loads`` refusing, with a ValueError, a key given twice in one object, a
    number longer than any this project writes, and (unless ``allow_nan``) NaN and
    Infinity; RecursionError for nesting too deep.  Also for results files
    (conformance.results_file), which a second reader may read differently too."""
    return json.loads(
        text,
        object_pairs_hook=_unique_keys,
        parse_int=lambda t: _number(t, int),
        parse_float=lambda t: _number(t, float),
        parse_constant=None if allow_nan else _no_constant,
    )


def loads(data: bytes, source: str) -> Any:
    """Parse a pack JSON file; a PackError names the file and the position. Duplicate
    keys and over-long numbers are refused: the hash covers the parsed content, so
    content that two readers could parse differently must not pass."""
    try:
        return strict_loads(data.decode("utf-8"))
    except _Refused as exc:
        raise PackError(f"{source}: not a pack file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise PackError(f"{source}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise PackError(
            f"{source}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise PackError(f"{source}: not valid JSON: nested too deeply") from None


@cache
def schema(which: str) -> dict[str, Any]:
    """The published JSON Schema ``which`` ("pack" or "desc")."""
    text = resources.files("vectors").joinpath("schemas", SCHEMAS[which]).read_text("utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


@cache
def _validator(which: str) -> Draft202012Validator:
    # Every vector is validated on write and on read, so this is on the hot path:
    # resolving "$ref" on each use costs about half of jsonschema's time, and the
    # schemas have no recursive references, so they are validated with refs inlined.
    doc = schema(which)
    return Draft202012Validator(inline_refs(doc, doc.get("$defs", {})))


def inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every local ``{"$ref": "#/$defs/x"}`` replaced by ``x`` itself."""
    if isinstance(node, list):
        return [inline_refs(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: inline_refs(v, defs) for k, v in node.items() if k not in ("$ref", "$defs")}
    ref = node.get("$ref")
    if ref is None:
        return out
    target = inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
    # A $ref beside other keywords means both apply (draft 2020-12).
    return {"allOf": [target], **out} if out else target


def schema_problems(doc: Any, which: str, source: str) -> list[str]:
    """Every way ``doc`` breaks the schema, one line each, in document order."""
    errors = sorted(_validator(which).iter_errors(doc), key=lambda e: list(map(str, e.path)))
    out = []
    for err in errors:
        where = _json_path(list(err.absolute_path))
        message = one_line(err.message)
        if len(message) > _MAX_MESSAGE:
            message = message[: _MAX_MESSAGE - 3] + "..."
        out.append(f"{source}: does not match {SCHEMAS[which]}: at {where}: {message}")
    return out


def validate(doc: Any, which: str, source: str) -> None:
    """Raise a PackError for the first schema violation of ``doc``."""
    problems = schema_problems(doc, which, source)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PackError(problems[0] + more)


def _json_path(parts: list[Any]) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out
