"""Mutated packs, and what the pack readers make of them: the fuzz test
(test_pack_fuzz.py) and its benchmark (benchmarks/fuzz_pack_readers.py) share this.

A mutation changes one file of one vector of a small real pack, or its pack.json: it
flips bytes, cuts the file, extends it, splices in bytes of another vector's file,
overwrites a 32-bit word (a flatbuffer offset, a length), rewrites an .npy header,
replaces a JSON value with one of another type or of the same type, edits the decoded
graph and writes it back well-formed (a shape, a type, an attribute, an operator, its
inputs), or deletes the file.  Then the hashes in pack.json are fixed up or not (a pack
whose hashes agree must still be refused cleanly or judged), and the pack is a folder
or a zip, whose own bytes may be damaged too.  :func:`run_mutation` reads the result as
``verify-pack``, ``run --backend reference`` and ``certify`` read it, in this process,
and says what each stage gave: a verdict, a clean error, or a traceback.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import signal
import tempfile
import traceback
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from conformance.errors import ConformanceError
from vectors import pack_json

# data.draw(strategy, label=...) of a Hypothesis test, or of the benchmark's loop.
Draw = Callable[[st.SearchStrategy[Any], str], Any]

INDEX = "pack.json"
OPERATIONS = (
    "flip",
    "truncate",
    "extend",
    "splice",
    "word",
    "npy-header",
    "json",
    "graph",
    "delete",
)
# Operators a graph edit may turn one into, and words a JSON value may become.
OPERATORS = ["ADD", "SUB", "ABS", "CONV2D", "MATMUL", "CONCAT", "EXP", "RESHAPE", "CONST"]
WORDS = ["valid", "error", "level", "fp32", "fp16", "bf16", "i32", "i8", "8K", "ADD", "exact"]
CONTAINERS = ("folder", "zip", "zip-in-folder")
SECONDS = 30  # one reference run: a mutated but consistent graph must not take longer


@dataclass(frozen=True)
class Base:
    """A small real pack, held in memory: its revision and every file by path."""

    revision: str
    files: dict[str, bytes]  # "pack.json", "VECTOR/desc.json", ...


@dataclass(frozen=True)
class Mutation:
    """What was done to a base, enough to do it again (the benchmark prints it)."""

    base: int
    target: str  # the file changed
    operation: str
    details: tuple[Any, ...]
    rehash: bool
    container: str
    # Bytes of the zip itself changed afterwards: (offset, xor) pairs, the offsets taken
    # modulo its size, or ("cut", offset): its headers and deflate streams are read too.
    zip_damage: tuple[Any, ...] = ()

    def __str__(self) -> str:
        shown = ", ".join(repr(d)[:60] for d in self.details)
        hashes = "hashes fixed up" if self.rehash else "hashes as they were"
        damage = f", zip damaged {self.zip_damage}" if self.zip_damage else ""
        return f"{self.target}: {self.operation}({shown}), {hashes}, {self.container}{damage}"


@dataclass
class Outcome:
    stage: str  # "verify-pack", "run", "certify"
    kind: str  # what it gave, with names and numbers taken out
    traceback: str = ""  # set when it raised anything but a one-line ConformanceError

    @property
    def clean(self) -> bool:
        return not self.traceback


# ----------------------------------------------------------------------------- bases


def load_base(root: Path, revision: str, keep: list[str] | None = None) -> Base:
    """The pack folder ``root`` in memory; only the vectors in ``keep`` when given, with
    pack.json made to list just those (its hashes still agree)."""
    doc = json.loads((root / INDEX).read_bytes())
    if keep is not None:
        doc["vectors"] = [v for v in doc["vectors"] if v["name"] in keep]
        _seal(doc)
    files = {INDEX: pack_json.dumps(doc)}
    for v in doc["vectors"]:
        for name in v["files"]:
            files[f"{v['name']}/{name}"] = (root / v["name"] / name).read_bytes()
    return Base(revision, files)


def make_bases(root: Path) -> list[Base]:
    """Two small packs: tests/pack_cases.py's seven hand-made draft vectors (integer,
    bf16, fp8, a bound file, an error and a level vector), and four vectors of a
    generated TOSA 1.0 pack (CONV2D with its attributes, ADD), in 1.0's own format."""
    import pack_cases  # tests/, on the path in pytest and in the benchmark

    from conformance.cli.main import main

    draft = load_base(pack_cases.write_pack(root / "draft"), "2024-04-draft")
    out = root / "tosa-1.0"
    argv = ["--tosa", "1.0", "generate", "--profile", "PRO-FP", "--ops", "ADD|CONV2D"]
    argv += ["--examples", "1", "--no-targeted", "--no-levels", "--no-chains", "--quiet"]
    with redirect_stdout(io.StringIO()):  # its summary is not the caller's output
        status = main([*argv, "--jobs", "1", "-o", str(out)])
    if status != 0:
        raise RuntimeError(f"cannot generate the TOSA 1.0 pack in {out}")
    names = sorted(p.name for p in out.iterdir() if p.is_dir())
    keep = [
        next(n for n in names if n.startswith("CONV2D") and "_valid_" in n),
        next(n for n in names if n.startswith("CONV2D") and "_error_" in n),
        next(n for n in names if n.startswith("ADD") and "_valid_" in n),
        next(n for n in names if n.startswith("ADD") and "_error_" in n),
    ]
    return [draft, load_base(out, "1.0", keep)]


def _seal(doc: Any) -> None:
    """pack_sha256 recomputed over the rest, as the writer does (when it can be)."""
    if not isinstance(doc, dict):
        return
    doc.pop("pack_sha256", None)
    with suppress(ConformanceError):  # a value canonical JSON cannot hold: no hash
        doc["pack_sha256"] = pack_json.sha256(pack_json.canonical(doc))


# ----------------------------------------------------------------------------- mutations


def draw_mutation(draw: Draw, bases: list[Base]) -> Mutation:
    base = draw(st.integers(0, len(bases) - 1), "base")
    files = bases[base].files
    target = draw(st.sampled_from(sorted(files)), "file")
    data = files[target]
    json_file = target.endswith(".json")
    ops = [op for op in OPERATIONS if op != "npy-header" or target.endswith(".npy")]
    ops = [op for op in ops if op != "json" or json_file]
    ops = [op for op in ops if op != "graph" or target.endswith(".tosa")]
    # The edits that keep a file well-formed reach the deeper checks: twice as likely.
    ops += [op for op in ops if op in ("json", "graph")]
    op = draw(st.sampled_from(ops), "operation")
    details = _draw_details(draw, op, data, target, files)
    # Three in four fixed up: a hash mismatch stops every reader at the first check.
    rehash = draw(st.sampled_from([True, True, True, False]), "fix up the hashes")
    container = draw(st.sampled_from(CONTAINERS), "container")
    damage: tuple[Any, ...] = ()
    if container != "folder" and draw(st.sampled_from([False, False, False, True]), "zip"):
        if draw(st.booleans(), "cut the zip"):
            damage = (("cut", draw(st.integers(0, 1 << 20), "at")),)
        else:
            flips = st.tuples(st.integers(0, 1 << 20), st.integers(1, 255))
            damage = tuple(draw(st.lists(flips, min_size=1, max_size=4), "flips"))
    return Mutation(base, target, op, details, rehash, container, damage)


def _position(draw: Draw, data: bytes, label: str) -> int:
    return int(draw(st.integers(0, max(0, len(data) - 1)), label))


def _draw_details(
    draw: Draw, op: str, data: bytes, target: str, files: dict[str, bytes]
) -> tuple[Any, ...]:
    if op == "flip":
        n = draw(st.integers(1, 8), "bytes flipped")
        return tuple(
            (_position(draw, data, "at"), draw(st.integers(1, 255), "xor")) for _ in range(n)
        )
    if op == "truncate":
        return (_position(draw, data, "keep"),)
    if op == "extend":
        tail = draw(st.binary(min_size=1, max_size=64) | st.just(data[-64:] * 4), "tail")
        return (tail,)
    if op == "splice":
        same = target.split("/")[-1]
        donors = sorted(p for p in files if p != target and p.split("/")[-1] == same)
        donor = draw(st.sampled_from(donors or sorted(p for p in files if p != target)), "donor")
        other = files[donor]
        start = _position(draw, other, "from")
        stop = draw(st.integers(start, len(other)), "to")
        at = _position(draw, data, "at")
        over = draw(st.integers(0, 64), "bytes replaced")
        whole = draw(st.booleans(), "the whole file")
        return (donor, (0, len(other)) if whole else (start, stop), at, 0 if whole else over)
    if op == "word":
        n = draw(st.integers(1, 3), "words")
        words = []
        for _ in range(n):
            at = _position(draw, data, "at") & ~3
            value = draw(
                st.sampled_from([0, 1, 4, len(data), len(data) - 4, 0x7FFFFFFF, 0xFFFFFFFF])
                | st.integers(0, 0xFFFFFFFF),
                "value",
            )
            words.append((at, value))
        return tuple(words)
    if op == "npy-header":
        descr = draw(
            st.sampled_from(
                ["<i4", "<f4", ">f2", "|b1", "<f8", "<u8", "|i1", "<i8", "|O", "<c8", "|V8", "<U2"]
            )
            | st.just([("a", "<i4")]),
            "descr",
        )
        shape = draw(
            st.lists(st.integers(-2, 8) | st.sampled_from([2**31, 2**62, 10**12]), max_size=4).map(
                tuple
            ),
            "shape",
        )
        return (descr, shape, draw(st.booleans(), "fortran order"))
    if op == "json":
        try:
            doc = json.loads(data)
        except ValueError:
            return ("unparsed",)
        paths = list(_json_paths(doc))
        path = draw(st.sampled_from(paths), "path")
        action = draw(st.sampled_from(["replace", "revalue", "delete", "copy"]), "action")
        if action == "copy":
            return (path, action, draw(st.sampled_from(paths), "from"))
        if action == "revalue":  # another value of the same type: past the schema
            value = draw(_same_type(_get(doc, path), doc), "value")
            return (path, "replace", value)
        value = draw(_json_values(), "value")
        return (path, action, value)
    if op == "graph":
        return _draw_graph_edit(draw, data)
    return ()  # delete


def _same_type(value: Any, doc: Any) -> st.SearchStrategy[Any]:
    if isinstance(value, bool):
        return st.just(not value)
    if isinstance(value, int):
        return st.sampled_from([0, 1, -1, value + 1, value - 1, 2**31 - 1, 2**31, 255, 65536])
    if isinstance(value, float):
        return st.sampled_from([0.0, -0.0, 1e-300, 1e300, value * 2, -value])
    if isinstance(value, str):
        texts = sorted({v for p in _json_paths(doc) if isinstance(v := _get(doc, p), str)})
        return st.sampled_from([*texts, *WORDS])
    if isinstance(value, list) and value:
        return st.sampled_from([value[:-1], [*value, value[-1]], value[::-1], [value[0]] * 3])
    return _json_values()


def _draw_graph_edit(draw: Draw, data: bytes) -> tuple[Any, ...]:
    """An edit of the decoded graph, written back as a well-formed flatbuffer: a tensor's
    shape or type, an attribute's value, an operator's name or inputs."""
    from vectors.flatbuffer import deserialize

    graph = deserialize(data)
    blocks = list(graph.blocks())
    tensors = sorted(t for b in blocks for t in b.tensors)
    ops = [(i, k) for i, b in enumerate(blocks) for k in range(len(b.operators))]
    what = draw(st.sampled_from(["shape", "dtype", "attribute", "operator", "inputs"]), "edit")
    if what == "shape" and tensors:
        shape = draw(st.lists(st.integers(0, 9) | st.sampled_from([-1, 2**16]), max_size=7), "to")
        return (what, draw(st.sampled_from(tensors), "tensor"), tuple(shape))
    if what == "dtype" and tensors:
        from conformance.dtypes import ALL

        name = draw(st.sampled_from([d.name for d in ALL]), "to")
        return (what, draw(st.sampled_from(tensors), "tensor"), name)
    if not ops:
        return ("none",)
    i, k = draw(st.sampled_from(ops), "operator")
    op = blocks[i].operators[k]
    if what == "attribute" and op.attributes:
        name = draw(st.sampled_from(sorted(op.attributes)), "attribute")
        old = op.attributes[name]
        if isinstance(old, bool):
            return (what, i, k, name, not old)
        if isinstance(old, int):
            value = draw(st.sampled_from([0, 1, -1, 2, 7, 2**31 - 1, -(2**31)]), "to")
            return (what, i, k, name, value)
        if isinstance(old, tuple):
            value = draw(st.lists(st.integers(-2, 9) | st.just(2**20), max_size=6), "to")
            return (what, i, k, name, tuple(value))
        return ("none",)
    if what == "operator":
        return (what, i, k, draw(st.sampled_from(OPERATORS), "to"))
    if what == "inputs" and op.inputs:
        names = draw(st.lists(st.sampled_from([*tensors, "nowhere"]), max_size=3), "to")
        return ("inputs", i, k, tuple(names))
    return ("none",)


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.sampled_from(
        [None, True, False, 0, -1, 1, 2**31, -(2**63), 2**64, 0.5, -0.0, 1e308, "", "x"]
    )
    texts = st.sampled_from(
        ["../../etc/passwd", "valid", "error", "fp32", "i32", "8K", "input-0.npy", "ADD"]
    )
    return st.one_of(
        scalars, texts, st.lists(scalars, max_size=3), st.dictionaries(texts, scalars, max_size=2)
    )


def _json_paths(doc: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _json_paths(v, (*at, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _json_paths(v, (*at, i))


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _mutated_bytes(m: Mutation, data: bytes, files: dict[str, bytes]) -> bytes | None:
    """The target's new bytes; None when it is deleted."""
    d = m.details
    if m.operation == "flip":
        out = bytearray(data)
        for at, xor in d:
            if out:
                out[at % len(out)] ^= xor
        return bytes(out)
    if m.operation == "truncate":
        return data[: d[0]]
    if m.operation == "extend":
        return data + d[0]
    if m.operation == "splice":
        donor, (start, stop), at, over = d
        return data[:at] + files[donor][start:stop] + data[at + over :]
    if m.operation == "word":
        out = bytearray(data)
        for at, value in d:
            if at + 4 <= len(out):
                out[at : at + 4] = value.to_bytes(4, "little")
        return bytes(out)
    if m.operation == "npy-header":
        descr, shape, fortran = d
        header = {"descr": descr, "fortran_order": fortran, "shape": shape}
        return npy_header(header) + _npy_data(data)
    if m.operation == "graph":
        return _edited_graph(data, d)
    if m.operation == "json":
        if d == ("unparsed",):
            return data + b"}"
        doc = json.loads(data)
        path, action, value = d
        if action == "copy":
            value = _get(doc, value)
        if not path:
            doc = value if action != "delete" else None
        else:
            parent = _get(doc, path[:-1])
            if action == "delete":
                del parent[path[-1]]
            else:
                parent[path[-1]] = json.loads(json.dumps(value))  # a copy, never a cycle
        return json.dumps(doc, sort_keys=True, indent=1).encode()
    return None  # delete


def _edited_graph(data: bytes, edit: tuple[Any, ...]) -> bytes:
    from conformance.dtypes import dtype
    from vectors.flatbuffer import FlatbufferError, deserialize, format_for, serialize

    graph = deserialize(data)
    blocks = list(graph.blocks())
    what = edit[0]
    if what in ("shape", "dtype"):
        for b in blocks:
            t = b.tensors.get(edit[1])
            if t is not None:
                if what == "shape":
                    t.shape = edit[2]
                else:
                    t.dtype = dtype(edit[2])
                t.data = None if t.data is not None and what == "dtype" else t.data
    elif what == "attribute":
        blocks[edit[1]].operators[edit[2]].attributes[edit[3]] = edit[4]
    elif what == "operator":
        blocks[edit[1]].operators[edit[2]].op = edit[3]
    elif what == "inputs":
        blocks[edit[1]].operators[edit[2]].inputs = list(edit[3])
    try:
        return serialize(graph, revision=format_for(graph))
    except FlatbufferError:  # the writer refuses it: a graph no writer makes
        return data
    except Exception as exc:  # the writer's bug, not the readers': keep it visible
        raise RuntimeError(f"the graph writer raised {type(exc).__name__}: {exc}") from exc


def npy_header(header: dict[str, Any]) -> bytes:
    """An .npy version 1.0 header for ``header`` (any values: it is written as given)."""
    text = repr(header)
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1")


def _npy_data(data: bytes) -> bytes:
    if data[:6] != b"\x93NUMPY" or len(data) < 10:
        return data
    return data[10 + int.from_bytes(data[8:10], "little") :]


def mutated_files(m: Mutation, bases: list[Base]) -> dict[str, bytes]:
    files = dict(bases[m.base].files)
    new = _mutated_bytes(m, files[m.target], files)
    if new is None:
        del files[m.target]
    else:
        files[m.target] = new
    if m.rehash:
        _rehash(files, m.target)
    return files


def _rehash(files: dict[str, bytes], target: str) -> None:
    """pack.json made to agree with the mutated file again, as far as it still can."""
    try:
        doc = json.loads(files[INDEX])
    except (KeyError, ValueError):
        return
    if target != INDEX and isinstance(doc, dict) and isinstance(doc.get("vectors"), list):
        name, _, file = target.partition("/")
        for v in doc["vectors"]:
            if isinstance(v, dict) and v.get("name") == name and isinstance(v.get("files"), dict):
                if target in files:
                    v["files"][file] = pack_json.sha256(files[target])
                else:
                    v["files"].pop(file, None)
    _seal(doc)
    files[INDEX] = pack_json.dumps(doc) if isinstance(doc, dict) else files[INDEX]


def write_pack(
    files: dict[str, bytes], container: str, where: Path, damage: tuple[Any, ...] = ()
) -> Path:
    """The files as a pack folder, or a zip of one (at its top, or in one folder)."""
    if container == "folder":
        root = where / "pack"
        for rel, data in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return root
    zipped = where / "pack.zip"
    prefix = "pack/" if container == "zip-in-folder" else ""
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, data in sorted(files.items()):
            z.writestr(prefix + rel, data)
    if damage:
        raw = bytearray(zipped.read_bytes())
        for at, change in damage:
            if at == "cut":
                raw = raw[: change % len(raw)]
            elif raw:
                raw[at % len(raw)] ^= change
        zipped.write_bytes(bytes(raw))
    return zipped


# ----------------------------------------------------------------------------- readers


def kind_of(message: str) -> str:
    """A message with the files it names, quoted values and numbers taken out."""
    text = re.sub(r"(^|\s)[\w.+-]*/[\w./+-]*:? ", r"\1", message)  # /tmp/..., VECTOR/file
    text = re.sub(r"\b[0-9a-f]{6,}\b(\.\.\.)?", "#", text)  # sha256s
    text = re.sub(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\([^)]*\)", "_", text)
    return re.sub(r"[-+]?\d[\d.e+-]*", "#", text)[:70]


class _Slow(Exception):
    pass


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    """At most ``seconds`` (SIGALRM: the main thread only, as pytest and the benchmark
    run): the reference on a consistent but hostile graph must not run for ever."""

    def ring(signum: int, frame: Any) -> None:
        raise _Slow

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Readers:
    """What the commands read, in process; one reference backend per revision."""

    backends: dict[str, Any] = field(default_factory=dict)
    # The reference's own tracebacks: a run records them as its crash on that vector.
    crashes: list[str] = field(default_factory=list)

    def outcomes(self, pack: Path, revision: str, target: str) -> list[Outcome]:
        from conformance.spec import load_revision, spec_in_use

        with spec_in_use(load_revision(revision)) as spec:
            return [
                _stage("verify-pack", lambda: _verify(pack)),
                _stage("run", lambda: self._run(pack, target, spec)),
                _stage("certify", lambda: _certify(pack, spec)),
            ]

    def _run(self, pack: Path, target: str, spec: Any) -> str:
        from conformance.backends.base import denormal_modes
        from conformance.backends.reference import ReferenceBackend
        from conformance.runner import backend_view
        from conformance.selection import Selection
        from conformance.verdicts import judge
        from vectors.pack import open_pack

        with open_pack(pack) as opened:
            names = Selection().select(opened)
            opened.check_hashes(names)  # run refuses a damaged pack before any worker
            name = target.split("/")[0]
            if name not in names:
                return "not a vector of the pack"
            vector = opened.load(name)  # what the worker does: PackError is pack damage
        backend = self.backends.setdefault(spec.revision, ReferenceBackend())
        view = backend_view(vector)
        try:
            with _time_limit(SECONDS), tempfile.TemporaryDirectory() as tmp:
                result = backend.run(view, Path(tmp))
        except _Slow:
            return f"the reference ran for more than {SECONDS} s"
        except Exception as exc:  # in a worker: this vector's crash, not the run's
            self.crashes.append(traceback.format_exc())
            return f"crashed: the reference raised {type(exc).__name__}: {kind_of(str(exc))}"
        judged = judge(vector, result, 0.0, denormals=denormal_modes(backend))
        return f"{judged.verdict}: {kind_of(judged.detail)}"


def _verify(pack: Path) -> str:
    from vectors.pack import verify

    report = verify(pack)
    for problem in report.problems:
        if not isinstance(problem, str) or "\n" in problem or "\r" in problem:
            raise AssertionError(f"a problem that is not one line: {problem!r}")
    return "intact" if report.ok else f"problems: {kind_of(report.problems[0])}"


def _certify(pack: Path, spec: Any) -> str:
    from conformance.certify import pack_coverage, pack_pairs
    from conformance.claims import full_claim

    pairs = pack_pairs(pack)
    covered = pack_coverage(spec, full_claim(spec), pack)
    return f"{len(pairs)} pairs, coverage {'recorded' if covered.recorded else 'none'}"


def _stage(stage: str, read: Callable[[], str]) -> Outcome:
    try:
        return Outcome(stage, read())
    except ConformanceError as exc:  # what the command line prints, exit status 2
        message = str(exc)
        if "\n" in message or "\r" in message or not message:
            return Outcome(stage, "error not one line", f"{stage}: {message!r}")
        return Outcome(stage, f"refused: {kind_of(message)}")
    except Exception as exc:  # a traceback from the command line
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        kind = f"{type(exc).__name__} at {where}: {kind_of(str(exc))}"
        return Outcome(stage, kind, traceback.format_exc())


def run_mutation(m: Mutation, bases: list[Base], readers: Readers) -> list[Outcome]:
    """Write the mutated pack in a temporary folder, read it, remove it."""
    where = Path(tempfile.mkdtemp(prefix="tosa-fuzz-"))
    try:
        pack = write_pack(mutated_files(m, bases), m.container, where, m.zip_damage)
        return readers.outcomes(pack, bases[m.base].revision, m.target)
    finally:
        shutil.rmtree(where, ignore_errors=True)
