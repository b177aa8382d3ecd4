"""Hostile results files: a real one (``run --json``) mutated, and the commands that read
one (``merge``, ``certify --results``, ``run --resume``) run on it in process.

Shared by the Hypothesis test (tests/reliability/test_results_files.py) and the fuzz
benchmark (benchmarks/fuzz_results_files.py): each mutation takes its choices from a
``choose(low, high, label)`` function, which the test backs with labelled draws and the
benchmark with a seeded ``random.Random``.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

# choose(low, high, label) -> an integer in [low, high]
Choose = Callable[[int, int, str], int]

# What a field may be swapped for, as raw JSON text: every type, and what JSON allows
# but no results file holds (NaN, 5000 digits, deep nesting, lone surrogates).
HOSTILE_VALUES: tuple[str, ...] = (
    "[]",
    "{}",
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    '""',
    '"x"',
    '"line\\nbreak"',
    '"\\ud800"',
    "[1, 2]",
    '{"a": 1}',
    '["passed"]',
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "9" * 5000,
    "0." + "1" * 5000,
    "[" * 5000 + "]" * 5000,
    "[[" + "], [" * 20000 + "]]",
    '"' + "x" * 100000 + '"',
    '{"a": 1, "a": 2}',
)
_SLOT = "\x00HOSTILE\x00"


def _choice(choose: Choose, items: Sequence[Any], label: str) -> Any:
    return items[choose(0, len(items) - 1, label)]


def _swap_field(doc: Any, choose: Choose) -> str | None:
    """``doc`` as JSON text with one field (top level, or of an output, or of the
    options) replaced by a hostile value; None when it has no field."""
    if not isinstance(doc, dict) or not doc:
        return None
    holder: dict[str, Any] = doc
    nested = [v for v in doc.values() if isinstance(v, dict) and v]
    nested += [o for v in doc.values() if isinstance(v, list) for o in v if isinstance(o, dict)]
    nested = [o for o in nested if o]
    if nested and choose(0, 2, "nested field") == 0:
        holder = _choice(choose, nested, "which object")
    key = _choice(choose, sorted(holder), "field")
    how = choose(0, 3, "swap how")
    value = _choice(choose, HOSTILE_VALUES, "hostile value")
    if how == 0:  # the key given twice (at the top), the first time hostile
        return "{" + f'"{key}": {value}, ' + json.dumps(doc, sort_keys=True)[1:]
    if how == 1:  # dropped
        del holder[key]
    elif how == 2:  # renamed: an unknown field
        holder[key + "_"] = holder.pop(key)
    else:
        holder[key] = _SLOT
    return json.dumps(doc, sort_keys=True).replace(json.dumps(_SLOT), value)


def mutate(data: bytes, choose: Choose) -> bytes:
    """``data`` (a results file) after one to three mutations."""
    for _ in range(choose(1, 3, "mutations")):
        lines = data.split(b"\n")
        kind = choose(0, 9, "mutation")
        if kind == 0 and data:  # a byte flipped
            at = choose(0, len(data) - 1, "flip at")
            data = data[:at] + bytes([data[at] ^ (1 << choose(0, 7, "bit"))]) + data[at + 1 :]
        elif kind == 1:  # cut short
            data = data[: choose(0, len(data), "cut at")]
        elif kind == 2:  # a line twice
            line = choose(0, len(lines) - 1, "line")
            lines.insert(choose(0, len(lines), "insert at"), lines[line])
            data = b"\n".join(lines)
        elif kind == 3:  # a line gone
            del lines[choose(0, len(lines) - 1, "line")]
            data = b"\n".join(lines)
        elif kind == 4:  # two lines swapped (the header not first)
            a, b = choose(0, len(lines) - 1, "line a"), choose(0, len(lines) - 1, "line b")
            lines[a], lines[b] = lines[b], lines[a]
            data = b"\n".join(lines)
        elif kind in (5, 6, 7):  # a field of a line swapped for a hostile value
            line = choose(0, len(lines) - 1, "line")
            try:
                doc = json.loads(lines[line])
            except ValueError:
                continue
            text = _swap_field(doc, choose)
            if text is not None:
                lines[line] = text.encode("utf-8", "surrogatepass")
                data = b"\n".join(lines)
        elif kind == 8:  # a whole line replaced by a hostile value, or bytes not UTF-8
            line = choose(0, len(lines) - 1, "line")
            raw = [*HOSTILE_VALUES, "\xff\xfe", "\x00", " "]
            value = _choice(choose, raw, "line value")
            lines[line] = value.encode("latin-1") if value.startswith("\xff") else value.encode()
            data = b"\n".join(lines)
        else:  # a number made huge
            at = data.find(b'"seconds": ', choose(0, max(0, len(data) - 1), "number near"))
            if at >= 0:
                at += len(b'"seconds": ')
                digits = choose(1, 6000, "digits")
                data = data[:at] + b"7" * digits + data[at:]
    return data


# ----------------------------------------------------------------------------- the readers


@dataclass
class Outcome:
    command: str
    code: int | None  # None: an exception left main()
    stderr: str
    trace: str = ""

    def problem(self) -> str | None:
        """What is wrong with this outcome, or None: exit 0, 1 or 2, and with 2 one
        line on standard error; never an exception."""
        if self.code is None or "Traceback" in self.stderr:
            return f"{self.command}: a traceback:\n{self.trace or self.stderr}"
        if self.code not in (0, 1, 2):
            return f"{self.command}: exit status {self.code}:\n{self.stderr}"
        # certify warns about the pack (it lacks the targeted and level vectors): those
        # lines are not the error's.
        lines = [x for x in self.stderr.splitlines() if x and not x.startswith("warning: ")]
        if self.code == 2 and len(lines) != 1:
            return f"{self.command}: exit 2 with not one line:\n{self.stderr}"
        return None


def run_main(command: str, argv: list[str]) -> Outcome:
    """``tosa-conformance ARGV`` in this process: its exit status and standard error."""
    from conformance.cli.main import main

    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code: int | None = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # what the user would see as a traceback
        if isinstance(exc, KeyboardInterrupt):
            raise
        return Outcome(command, None, err.getvalue(), traceback.format_exc())
    return Outcome(command, code, err.getvalue())


@dataclass
class Setup:
    """A small pack, the ADD-only spec it was made from, and a real results file."""

    spec: Path
    pack: Path
    results: Path

    def commands(self, hostile: Path, work: Path, resumed: Path) -> dict[str, list[str]]:
        """merge and certify --results reading ``hostile``, run --resume on ``resumed``."""
        spec = ["--spec", str(self.spec)]
        certify = [*spec, "certify", "--backend", "reference", "--profile", "BI", "--quiet"]
        certify += ["--pack", str(self.pack), "--results", str(hostile), "-o", str(work / "c")]
        run = [*spec, "run", "--pack", str(self.pack), "--backend", "reference", "--quiet"]
        run += ["--jobs", "1", "--json", str(resumed), "--resume"]
        return {
            "merge": ["merge", str(hostile), "--json", str(work / "merged.jsonl")],
            "certify --results": certify,
            "run --resume": run,
        }

    def readers(self, hostile: Path, work: Path) -> list[Outcome]:
        """merge, certify --results and run --resume, each on ``hostile``, in process."""
        resumed = work / "resumed.jsonl"
        shutil.copyfile(hostile, resumed)  # run --resume repairs the file it is given
        return [run_main(k, v) for k, v in self.commands(hostile, work, resumed).items()]


def add_only_spec(to: Path) -> Path:
    """The default tosa.xml with ADD its only operator: a claim on it needs a small
    pack (as tests/app/test_merge.py)."""
    from conformance.spec import default_spec_path

    root = etree.parse(str(default_spec_path())).getroot()
    for group in list(root.iter("operatorgroup")):
        for op in list(group.iter("operator")):
            if op.findtext("name") != "ADD":
                group.remove(op)
        if not len(group):
            parent = group.getparent()
            assert parent is not None
            parent.remove(group)
    to.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    return to


def make_setup(folder: Path) -> Setup:
    """The spec, a pack (one example per ADD mode of BI) and ``run --json`` of it."""
    spec = add_only_spec(folder / "tosa.xml")
    pack, results = folder / "pack", folder / "results.jsonl"
    common = ["--spec", str(spec)]
    generate = [*common, "generate", "--profile", "BI", "--examples", "1", "--no-levels"]
    generate += ["--no-targeted", "--quiet", "--jobs", "1", "-o", str(pack)]
    run = [*common, "run", "--pack", str(pack), "--backend", "reference", "--quiet"]
    run += ["--jobs", "1", "--json", str(results)]
    for outcome in (run_main("generate", generate), run_main("run", run)):
        assert outcome.code == 0, outcome
    return Setup(spec, pack, results)
