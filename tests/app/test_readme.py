"""README.md runs as written: its ``$ tosa-conformance ...`` commands, in order, in a
fresh folder, with the exit status and the output it shows.

A README block is fenced; in it a line ``$ tosa-conformance ARGS`` is a command and the
lines after it, up to the next ``$`` line, are its output.  A trailing
``# exit status N`` on the command gives its exit status (0 otherwise).  The output
shown must appear in order in what the command prints (stdout and stderr, without the
progress lines, which depend on the terminal); ``...`` in it stands for any lines,
and the numbers of seconds (``in 5.7 s``, ``12.3 examples/s``) are not compared.  A
fenced block whose info string names a file (````text known-failures.txt````) is
written to that file first, so commands can use it.

Set-up command 1 (``generate --profile PRO-INT -o pack``, the main job on the real defaults)
takes minutes on a 2-core machine, so this test makes ``pack`` with a smaller
equivalent (the same claim, one valid vector a pair: ``--examples 1 --no-targeted
--no-levels --no-negative``) and ignores the ``warning:`` lines that depend on the
pack's options.  Everything else runs as written.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conformance.revisions import DEFAULT_ENV

README = Path(__file__).resolve().parents[2] / "README.md"
MAIN_JOB = ["generate", "--profile", "PRO-INT", "-o", "pack"]
SMALLER_MAIN_JOB = [*MAIN_JOB, "--examples", "1", "--no-targeted", "--no-levels"]
SMALLER_MAIN_JOB += ["--no-negative", "--quiet"]
PROGRESS = re.compile(r"^(generate|run): \d+/\d+ vectors|^fuzz: pair \d+ of \d+")
SECONDS = re.compile(r"\d+(\.\d+)?( s\b| examples/s)")
EXIT = re.compile(r"#\s*exit status (\d+)\s*$")


@dataclass
class Command:
    argv: list[str]
    status: int
    expected: list[str] = field(default_factory=list)
    line: int = 0


@dataclass
class Readme:
    files: dict[str, str]
    commands: list[Command]
    setup: list[str]


def parse(text: str) -> Readme:
    files: dict[str, str] = {}
    commands: list[Command] = []
    setup: list[str] = []
    block: list[tuple[int, str]] | None = None
    info = ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if block is None:
                block, info = [], line[3:].strip()
                continue
            words = info.split()
            if len(words) == 2 and words[0] == "text":
                files[words[1]] = "".join(x + "\n" for _, x in block)
            elif words[:1] == ["sh"]:
                setup += [x for _, x in block if x.strip() and not x.startswith("#")]
            else:
                commands += _commands(block)
            block = None
            continue
        if block is not None:
            block.append((number, line))
    return Readme(files, commands, setup)


def _commands(block: list[tuple[int, str]]) -> list[Command]:
    out: list[Command] = []
    current: Command | None = None
    for number, line in block:
        if line.startswith("$ "):
            current = None
            if line.startswith("$ tosa-conformance "):
                m = EXIT.search(line)
                status = int(m.group(1)) if m else 0
                argv = shlex.split(line[2:], comments=True)[1:]
                current = Command(argv, status, line=number)
                out.append(current)
        elif current is not None:
            current.expected.append(line)
    return out


def _normal(line: str) -> str:
    return SECONDS.sub(lambda m: "N" + m.group(2), line.rstrip())


def missing_lines(expected: list[str], actual: list[str]) -> str | None:
    """None when ``expected`` (with ``...`` for any lines) appears in order in
    ``actual``; else the first expected line not found."""
    at = 0
    gap = False
    for want in expected:
        if want.strip() == "...":
            gap = True
            continue
        want = _normal(want)
        while at < len(actual) and actual[at] != want:
            if not gap:
                return f"{want!r} (found {actual[at]!r} instead)"
            at += 1
        if at == len(actual):
            return want
        at += 1
        gap = False
    return None


def test_the_readme_parses() -> None:
    readme = parse(README.read_text(encoding="utf-8"))
    # The two set-up commands, each in a virtualenv, as .ci/run runs the second's install
    # and tests (in a virtualenv of its own, made fresh).
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    assert readme.setup[0].startswith(venv + "python -m pip install -e . ")
    assert readme.setup[0].endswith("&& tosa-conformance " + " ".join(MAIN_JOB))
    tests = (
        "python -m pip install -e '.[test,all]' --config-settings editable_mode=compat "
        "&& python -m pytest -n auto"
    )
    assert readme.setup[1] == venv + tests
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv" in ci and tests in ci.replace("pip install -q ", "pip install ")
    assert len(readme.commands) >= 10 and "known-failures.txt" in readme.files


def test_missing_lines_matches_in_order_with_gaps() -> None:
    actual = ["a", "b in 1.0 s", "c", "d"]
    assert missing_lines(["a", "...", "c"], actual) is None
    assert missing_lines(["a", "b in 9.9 s", "c"], [_normal(x) for x in actual]) is None
    assert missing_lines(["a", "c"], actual) is not None  # no gap without "..."
    assert missing_lines(["d", "a"], actual) is not None  # order matters


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command's output as a terminal shows it: stderr and stdout interleaved."""
    cmd = [sys.executable, "-m", "conformance.cli.main", *argv]
    # As a newcomer runs it: the real default revision, not the test session's pin.
    env = {k: v for k, v in os.environ.items() if k != DEFAULT_ENV}
    env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        timeout=900,
    )


def test_the_readme_runs_as_written(tmp_path: Path) -> None:
    readme = parse(README.read_text(encoding="utf-8"))
    for name, content in readme.files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    made = _run(SMALLER_MAIN_JOB, tmp_path)  # set-up command 1, smaller (see the docstring)
    assert made.returncode == 0, made.stdout
    for command in readme.commands:
        proc = _run(command.argv, tmp_path)
        where = f"README.md:{command.line}: tosa-conformance {shlex.join(command.argv)}"
        assert proc.returncode == command.status, f"{where}: exit {proc.returncode}\n{proc.stdout}"
        lines = proc.stdout.splitlines()
        actual = [_normal(x) for x in lines if not PROGRESS.match(x)]
        expected = command.expected
        if "pack" in command.argv:  # the smaller main job's pack: other warnings
            actual = [x for x in actual if not x.startswith("warning:")]
            expected = [x for x in expected if not x.startswith("warning:")]
        problem = missing_lines(expected, actual)
        if problem is not None:
            shown = "\n".join(lines)
            pytest.fail(f"{where}: the output lacks {problem}; it printed:\n{shown}")
