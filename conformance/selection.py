"""Which vectors of a pack a run takes: operators, names, exclusions, known failures, shards.

Operator names match without regard to case (Arm's lists write ``add``); vector names
and exclusions match fully, as regular expressions, against the vector's name or its
pytest id ``OPERATOR::VECTOR``, so ids copied from pytest's output work as they are.

A known-failures file is UTF-8 text, a regular file of at most the pack file size limit
(``TOSA_CONFORMANCE_MAX_FILE_MIB``, 64 MiB; a FIFO or a device is refused unread).  It
has one vector name or regular expression (Python's syntax, matched fully against the
name and the pytest id) per line, optionally followed by ``# reason``; blank lines and
lines that are only a comment are skipped.  A line that matches no vector of the pack
is an error: a stale list would otherwise hide a fixed bug or a typo.  So is a line
that Python's backtracking matcher could take too long on (see :func:`name_pattern`):
a repetition of something that can match in more than one way, such as ``(a+)+`` or
``(a|ab)*``, or more than four unbounded repetitions (``.*``, ``+``) in one line.  The
same holds for ``--ops``, ``--vectors`` and ``--exclude``.  A listed vector that fails
is ``xfail``, one that passes is ``xpass``; neither fails the run.

A shard ``K/N`` is a deterministic, cost-balanced part of the selection: vectors are
dealt out costliest first, each to the shard with the least cost so far, ties to the
lowest shard and the vectors in name order (so with more shards than vectors, shard K
holds the K-th vector of that order, and shards past the last vector are empty).  A
vector's cost is a fixed overhead (a backend's per-vector work: loading, compiling, a
process) plus the bytes of its input files (the work in proportion to the data); the
overhead counts as 64 KiB of input, so a 65,536-element vector weighs a few ordinary
ones, not the whole pack.  Shards are disjoint and together are the whole selection,
whatever machine computes them.
"""

from __future__ import annotations

import contextlib
import heapq
import importlib
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.user_files import UserFileError, read_user_text


class SelectionError(ConformanceError, ValueError):
    """A selection option or file is unusable; one line naming the option or the file."""


class NoVectors(SelectionError):
    """The selection holds no vector (exit status 5, as pytest's "no tests collected")."""


# -- patterns matched in bounded time --------------------------------------------------
#
# Python's re backtracks: (a+)+$ tries 2**n ways on a name of n a's and a '!', and a
# known-failures file is matched against every name before any vector runs, so one such
# line hangs the run.  Patterns are checked instead of timed or run by another engine:
# another engine (re2) would change what lines mean (the lists use lookaheads, which
# re2 lacks), and a time limit would refuse on a slow machine what a fast one accepts.
# From the tree Python's own parser makes, _Cost bounds the steps the matcher can take
# on a name of n characters; a pattern is matched only against names it bounds within
# MATCH_BUDGET, so the same lines are refused on every machine.

MATCH_BUDGET = 2 * 10**8  # steps: a second or two at the worst, most patterns far less
READ_LENGTH = 64  # a pattern that cannot take names this long is refused when read
_LONGEST = 1 << 20  # a pattern bounded at this length counts as bounded at any
_CAP = MATCH_BUDGET + 1
# The parser and compiler re itself uses, so that what is bounded is what re runs.
_parser: Any = importlib.import_module("re._parser")
_compiler: Any = importlib.import_module("re._compiler")
_c: Any = importlib.import_module("re._constants")
_REPEATS = (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT)
_ONE_CHAR = (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN)

# A bound (c, d): at most c * comb(n + d, d) for a name of n characters.  Tracking the
# degree d rather than multiplying (n + 1)s counts k '.*' in a row as the comb(n + k, k)
# ways to cut a name in k + 1 parts, k! times fewer than (n + 1)**k.
_Bound = tuple[int, int]
_ONE: _Bound = (1, 0)


def _mul(a: _Bound, b: _Bound) -> _Bound:
    return min(a[0] * b[0], _CAP), a[1] + b[1]


def _add(a: _Bound, b: _Bound) -> _Bound:
    return min(a[0] + b[0], _CAP), max(a[1], b[1])


def _value(b: _Bound, n: int) -> int:
    c, d = b
    if c >= _CAP or d > 64:
        return _CAP
    return min(c * math.comb(n + d, d), _CAP)


class _Cost:
    """The cost of matching a parsed pattern at one position, as a function of n.

    Each piece has *exits* (the ways it can end, each tried by what follows it) and
    *work* (its steps, per try): a sequence multiplies exits and adds each piece's work
    times the exits before it; alternatives add up (only the largest counts when they
    start with different characters); a repetition has one exit per repeat count, and a
    power of its body's exits per count when its body can end in more than one way,
    which is what makes (a+)+ exponential.  A repetition whose body cannot start with
    what may follow it ([a-z]+_, (ab)*c) has one exit: stopping short of the longest
    run leaves a character that what follows cannot start with.
    """

    def __init__(self, tree: Any) -> None:
        self.tree = tree
        self.nested = False  # whether some repetition repeats a many-exit body
        self._runs: dict[tuple[int, frozenset[int], int], bool] = {}

    def steps(self, n: int) -> int:
        exits, work = self._seq(self.tree, n, self.tree.state.flags, frozenset())
        return _value(_add(exits, work), n)

    def _seq(
        self, items: Any, n: int, flags: int, follow: frozenset[int] | None
    ) -> tuple[_Bound, _Bound]:
        pieces = list(items)
        follows: list[frozenset[int] | None] = []
        after = follow
        for op, av in reversed(pieces):
            follows.append(after)
            after = _starts_seq([(op, av)], after, flags)
        exits, work = _ONE, (0, 0)
        for (op, av), f in zip(pieces, reversed(follows), strict=True):
            e, w = self._piece(op, av, n, flags, f)
            work = _add(work, _mul(exits, w))
            exits = _mul(exits, e)
        return exits, work

    def _piece(
        self, op: Any, av: Any, n: int, flags: int, follow: frozenset[int] | None
    ) -> tuple[_Bound, _Bound]:
        if op is _c.BRANCH:
            costs = [self._seq(alt, n, flags, follow) for alt in av[1]]
            exits = (0, 0)
            for e, _ in costs:
                exits = _add(exits, e)
            if _exclusive(av[1], follow, flags):  # one alternative gets past its start
                exits = (max(e[0] for e, _ in costs), max(e[1] for e, _ in costs))
            work = (0, 0)
            for _, w in costs:
                work = _add(work, w)
            return exits, work
        if op is _c.SUBPATTERN:
            return self._seq(av[3], n, (flags | av[1]) & ~av[2], follow)
        if op is _c.ATOMIC_GROUP:
            return _ONE, self._seq(av, n, flags, follow)[1]
        if op in (_c.ASSERT, _c.ASSERT_NOT):  # a search of its own at each try
            return _ONE, self._seq(av[1], n, flags, None)[1]
        if op is _c.GROUPREF_EXISTS:
            e, w = self._seq(av[1], n, flags, follow)
            if av[2] is not None:
                e2, w2 = self._seq(av[2], n, flags, follow)
                return _add(e, e2), _add(w, w2)
            return _add(e, _ONE), w
        if op in _REPEATS:
            return self._repeat(op, av, n, flags, follow)
        return _ONE, _ONE  # a character, a class, an anchor, a back reference

    def _repeat(
        self, op: Any, av: Any, n: int, flags: int, follow: frozenset[int] | None
    ) -> tuple[_Bound, _Bound]:
        lo, hi, body = av
        starts = _starts_seq(body, follow, flags)
        inner = None if starts is None or follow is None else starts | follow
        e, w = self._seq(body, n, flags, inner)
        # A body that consumes a character each time repeats at most n times; one that
        # can match empty still makes its lo mandatory tries ((a?){30}: 2**30 ways).
        consumes = body.getwidth()[0] > 0
        top = min(hi, n if consumes else max(lo, n + 1))
        first = min(lo, top)
        count = top - first + 1
        each = _value(e, n)
        exits: _Bound
        if each == 1:
            # An unbounded repetition has n + 1 counts (n + 2 when its body can match
            # empty): a power of n, so that k of them in a row count as comb(n + k, k).
            unbounded: _Bound = (1, 1) if consumes else (2, 1)
            exits = unbounded if hi == _c.MAXREPEAT else (count, 0)
            walk = unbounded if hi == _c.MAXREPEAT else (top, 0)
            work = _add(_mul(walk, w), exits)  # the greedy walk, then the backing off
            if consumes and self._longest_run(body, starts, follow, flags):
                exits = _ONE
        else:
            if top > 1:
                self.nested = True
            term = 1
            for _ in range(first):
                term = min(term * each, _CAP)
            total = 0
            for _ in range(first, top + 1):
                total = min(total + term, _CAP)
                term = min(term * each, _CAP)
                if total >= _CAP:
                    break
            exits = (total, 0)
            work = _mul(exits, _add(w, _ONE))
        if op is _c.POSSESSIVE_REPEAT:
            exits = _ONE
        return exits, work

    def _longest_run(
        self,
        body: Any,
        starts: frozenset[int] | None,
        follow: frozenset[int] | None,
        flags: int,
    ) -> bool:
        """Whether a repetition of ``body`` (which ends one way, and consumes) can only
        stop where its next try fails: the body starts with none of the characters that
        can follow it ((ab)*c, [a-z]+_), so stopping before a try that would succeed
        leaves a character that what follows cannot start with."""
        if follow is None:
            return False
        if starts is not None:
            return not starts & follow
        if len(body) != 1 or body[0][0] not in _ONE_CHAR:
            return False
        # One character class too large to list (\w, [^_]): ask re whether it matches
        # any character of ``follow``.
        key = (id(body), follow, flags)
        if key not in self._runs:
            try:
                one = _compiler.compile(_parser.SubPattern(self.tree.state, [body[0]]), flags)
                self._runs[key] = not any(one.fullmatch(chr(ch)) for ch in follow)
            except Exception:  # a private API that changed: assume the worst
                self._runs[key] = False
        return self._runs[key]


def _fold(chars: set[int], flags: int) -> frozenset[int] | None:
    """``chars`` and, when case is ignored, their other case (None past ASCII)."""
    if not flags & re.IGNORECASE:
        return frozenset(chars)
    if any(ch >= 128 for ch in chars):
        return None
    return frozenset(ord(x) for ch in chars for x in (chr(ch).lower(), chr(ch).upper()))


def _starts_seq(items: Any, follow: frozenset[int] | None, flags: int) -> frozenset[int] | None:
    """The characters a match of ``items`` then ``follow`` can start with (the empty set:
    only the end of the name); None when that is not known or not small."""
    chars: set[int] = set()
    for op, av in items:
        got = _starts_piece(op, av, flags)
        if got is None:
            return None
        first, empty = got
        chars |= first
        if not empty:
            return frozenset(chars)
    return None if follow is None else frozenset(chars | follow)


def _starts_piece(op: Any, av: Any, flags: int) -> tuple[frozenset[int], bool] | None:
    """What one piece can start with, and whether it can match the empty string."""
    none: frozenset[int] = frozenset()
    if op is _c.LITERAL:
        got = _fold({av}, flags)
        return None if got is None else (got, False)
    if op is _c.IN:
        chars: set[int] = set()
        for o, v in av:
            if o is _c.LITERAL:
                chars.add(v)
            elif o is _c.RANGE and v[1] - v[0] < 1024:
                chars |= set(range(v[0], v[1] + 1))
            else:  # a negated class, a category such as \d: too many to list
                return None
        got = _fold(chars, flags)
        return None if got is None else (got, False)
    if op is _c.AT:
        return none, True
    if op is _c.SUBPATTERN:
        flags = (flags | av[1]) & ~av[2]
        inner = _starts_seq(av[3], none, flags)
        return None if inner is None else (inner, av[3].getwidth()[0] == 0)
    if op is _c.ATOMIC_GROUP:
        inner = _starts_seq(av, none, flags)
        return None if inner is None else (inner, av.getwidth()[0] == 0)
    if op is _c.BRANCH:
        chars = set()
        for alt in av[1]:
            inner = _starts_seq(alt, none, flags)
            if inner is None:
                return None
            chars |= inner
        return frozenset(chars), any(alt.getwidth()[0] == 0 for alt in av[1])
    if op in _REPEATS:
        lo, _, body = av
        inner = _starts_seq(body, none, flags)
        return None if inner is None else (inner, lo == 0 or body.getwidth()[0] == 0)
    return None  # any character, a lookaround, a back reference


def _exclusive(alts: Any, follow: frozenset[int] | None, flags: int) -> bool:
    """Whether every alternative must start with a known character, none shared."""
    seen: set[int] = set()
    for alt in alts:
        first = _starts_seq(alt, follow, flags)
        if first is None or not first or first & seen:
            return False
        seen |= first
    return True


@dataclass(frozen=True)
class NamePattern:
    """A regular expression, with the longest name it is matched against in bounded time."""

    regex: re.Pattern[str]
    label: str  # "known.txt:3: 'ADD_.*'", "--exclude 'ADD_.*'": for messages
    max_length: int

    @property
    def pattern(self) -> str:
        return self.regex.pattern

    def fullmatch(self, name: str) -> bool:
        if len(name) > self.max_length:
            raise SelectionError(
                f"{self.label} cannot be matched in bounded time against a name of "
                f"{len(name)} characters ({self.max_length} at most); simplify it"
            )
        return self.regex.fullmatch(name) is not None


def name_pattern(
    label: str, text: str, flags: int = 0, what: str = "a regular expression"
) -> NamePattern:
    """``text`` compiled; SelectionError starting with ``label`` when it is not ``what``,
    or when it could take too long on a name of READ_LENGTH characters."""
    try:
        regex = re.compile(text, flags)
        cost = _Cost(_parser.parse(text, flags))
        max_length = _max_length(cost)
    except re.error as exc:
        raise SelectionError(f"{label} is not {what}: {exc}") from None
    except RecursionError:  # nesting too deep for the parser or the bound
        raise SelectionError(f"{label} is not {what}: nested too deeply") from None
    if max_length < READ_LENGTH:
        why = (
            "it repeats something that can match in more than one way, as (a+)+ or "
            "(a|ab)* do, which takes time exponential in the length of the name"
            if cost.nested
            else "each unbounded repetition (.*, +) multiplies the time by the length of "
            "the name; use fewer"
        )
        raise SelectionError(f"{label} could take too long to match: {why}")
    return NamePattern(regex, label, max_length)


def _max_length(cost: _Cost) -> int:
    """The longest name ``cost`` bounds within MATCH_BUDGET (steps grow with n); -1 if none."""
    if cost.steps(_LONGEST) <= MATCH_BUDGET:
        return sys.maxsize
    lo, hi = -1, _LONGEST  # steps(lo) within the budget (or lo = -1), steps(hi) not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if cost.steps(mid) <= MATCH_BUDGET:
            lo = mid
        else:
            hi = mid
    return lo


def compile_option(flag: str, value: str, flags: int = 0) -> re.Pattern[str]:
    return name_pattern(f"{flag} {value!r}", value, flags).regex


def _option(flag: str, value: str | None, flags: int = 0) -> NamePattern | None:
    return name_pattern(f"{flag} {value!r}", value, flags) if value else None


def _names_of(entry: Any) -> tuple[str, str]:
    return entry.name, f"{entry.operator}::{entry.name}"


def _matches(pattern: NamePattern, entry: Any) -> bool:
    return any(pattern.fullmatch(n) for n in _names_of(entry))


@dataclass(frozen=True)
class KnownFailure:
    pattern: NamePattern
    reason: str
    line: int


class KnownFailures:
    """A parsed known-failures file; :meth:`reason` says why a vector is listed."""

    def __init__(self, path: Path, items: list[KnownFailure]) -> None:
        self.path = path
        self.items = items

    @classmethod
    def read(cls, path: Path) -> KnownFailures:
        try:
            text = read_user_text(path, "a known-failures file")
        except UserFileError as exc:
            raise SelectionError(str(exc)) from None
        items = []
        for number, raw in enumerate(text.splitlines(), 1):
            body, _, reason = raw.partition("#")
            body = body.strip()
            if not body:
                continue
            what = "a vector name or regular expression"
            pattern = name_pattern(f"{path}:{number}: {body!r}", body, what=what)
            items.append(KnownFailure(pattern, reason.strip(), number))
        return cls(path, items)

    def check(self, entries: Iterable[Any], where: str) -> None:
        """Refuse a line that matches no vector of ``entries`` (the pack at ``where``)."""
        listed = list(entries)
        for item in self.items:
            if not any(_matches(item.pattern, e) for e in listed):
                raise SelectionError(
                    f"{self.path}:{item.line}: {item.pattern.pattern!r} matches no vector "
                    f"of {where}"
                )

    def reason(self, entry: Any) -> str | None:
        """Why the vector is a known failure ("" when the line gives no reason), or None."""
        for item in self.items:
            if _matches(item.pattern, entry):
                return item.reason
        return None


SHARD_DIGITS = 100  # of K and N in --shard: far past any number of vectors


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as the user writes it
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        shown = repr(text) if len(text) <= 60 else repr(text[:40] + "...")
        m = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text)
        if m and max(len(m.group(1)), len(m.group(2))) > SHARD_DIGITS:
            # int() refuses past 4300 digits, and a huge number is not worth printing.
            raise SelectionError(f"--shard {shown}: K and N have at most {SHARD_DIGITS} digits")
        if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
            raise SelectionError(f"--shard {shown} is not K/N with 1 <= K <= N, e.g. 2/3")
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def take(self, names: Sequence[str], cost: dict[str, int]) -> list[str]:
        """This shard's names, in the order given; O(names log names) whatever N is."""
        order = sorted(names, key=lambda n: (-cost.get(n, 0), n))
        # The first vectors go one to each shard in turn (every load is 0 until then, and
        # each vector adds at least 1), so shards past the number of vectors get none:
        # only the others are made, and the heap's least (load, shard) is the least
        # loaded, lowest-numbered one, as a scan of every shard would find.
        if self.index > len(order):
            return []
        heap = [(0, k) for k in range(min(self.count, len(order)))]  # sorted: a heap
        mine: set[str] = set()
        for name in order:
            load, k = heap[0]
            heapq.heapreplace(heap, (load + max(1, cost.get(name, 0)), k))
            if k == self.index - 1:
                mine.add(name)
        return [n for n in names if n in mine]


OVERHEAD_BYTES = 65536  # a vector's fixed cost, in bytes of input (see the docstring)


def vector_costs(pack: Any) -> dict[str, int]:
    """Per vector, OVERHEAD_BYTES plus the bytes of its input files (its graph when it
    has none), from the pack's folder or zip directory, without reading the files."""
    source = pack.source
    sizes: dict[str, int] = {}
    members = getattr(source, "members", None)  # a zipped pack: name -> ZipInfo
    root = getattr(source, "root", None)  # a folder pack
    for e in pack.entries:
        files = [f for f in e.files if f.startswith("input-")] or sorted(e.files)
        total = OVERHEAD_BYTES
        for f in files:
            rel = f"{e.name}/{f}"
            if members is not None and rel in members:
                total += members[rel].file_size
            elif root is not None:
                # A damaged pack fails at that vector, not here.
                with contextlib.suppress(OSError):
                    total += (Path(root) / rel).stat().st_size
        sizes[e.name] = total
    return sizes


@dataclass
class Selection:
    """The options that choose vectors; empty options choose everything."""

    ops: str | None = None
    vectors: str | None = None
    exclude: str | None = None
    known: KnownFailures | None = None
    shard: Shard | None = None

    def describe(self) -> str:
        parts = [
            f"{flag} {value!r}"
            for flag, value in (
                ("--ops", self.ops),
                ("--vectors", self.vectors),
                ("--exclude", self.exclude),
            )
            if value
        ]
        if self.shard is not None:
            parts.append(f"--shard {self.shard}")
        return " ".join(parts) or "the selection"

    def select(self, pack: Any) -> list[str]:
        """The selected vector names of an open pack, in pack order; NoVectors when none."""
        entries = list(pack.entries)
        if self.known is not None:
            self.known.check(entries, str(pack.path))
        ops = _option("--ops", self.ops, re.IGNORECASE)
        by_name = _option("--vectors", self.vectors)
        skip = _option("--exclude", self.exclude)
        names = [
            e.name
            for e in entries
            if (ops is None or ops.fullmatch(e.operator))
            and (by_name is None or _matches(by_name, e))
            and (skip is None or not _matches(skip, e))
        ]
        if self.shard is not None and names:
            names = self.shard.take(names, vector_costs(pack))
        if not names:
            raise NoVectors(f"{self.describe()} selects no vector of {pack.path}")
        return names
