"""Read one vector folder back, checking every file against pack.json, desc.json and
the graph.

:func:`read_vector` collects *all* the problems it finds rather than stopping at the
first, because ``verify-pack`` must list everything wrong with a pack in one run.
Each problem is one line that starts with ``<vector>/<file>``.  Checks that depend on
a file that is already known to be broken are skipped, so one fault is not reported
five times.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from conformance.compliance_descriptor import ComplianceDescriptor, Mode, ScaledValuesParams
from conformance.dtypes import DType, dtype
from conformance.graph import Block, Graph
from vectors import npy, pack_json
from vectors.flatbuffer import FlatbufferError, deserialize
from vectors.pack_errors import PackError
from vectors.pack_model import Check, LoadedVector, PackEntry, Provenance, Requirements
from vectors.pack_write import (
    DESC,
    bound_file,
    expected_file,
    input_file,
    result_file,
    rule_text,
    scale_file,
)

# A file's bytes, None when the pack does not have it; PackError when it cannot be read.
Fetch = Callable[[str], bytes | None]


@dataclass
class VectorReport:
    loaded: LoadedVector | None  # None when there are problems
    problems: list[str] = field(default_factory=list)


def read_vector(entry: PackEntry, fetch: Fetch, level: str | None = None) -> VectorReport:
    """Check and load the vector ``entry`` names; ``fetch`` reads its folder's files.
    ``level``: the pack's claim level, which the vector's requirements must name."""
    reader = _Reader(entry, fetch, level)
    loaded = reader.run()
    return VectorReport(loaded if not reader.problems else None, reader.problems)


class _Reader:
    def __init__(self, entry: PackEntry, fetch: Fetch, level: str | None = None) -> None:
        self.entry = entry
        self.level = level
        self.name = entry.name
        self.fetch = fetch
        self.problems: list[str] = []
        self.data: dict[str, bytes] = {}  # files present and readable

    def fail(self, file: str, message: str) -> None:
        self.problems.append(f"{self.name}/{file}: {message}")

    def fail_error(self, exc: Exception) -> None:
        # npy/flatbuffer/json messages already start with "<vector>/<file>: ".
        self.problems.append(str(exc))

    # ------------------------------------------------------------------ steps

    def run(self) -> LoadedVector | None:
        self._read_listed_files()
        desc = self._desc()
        if desc is None:
            return None
        self._check_entry(desc)
        self._check_layout(desc)
        graph = self._graph(desc)
        if graph is not None:
            self._check_against_graph(desc, graph)
        inputs = self._inputs(desc)
        expected, checks = self._expected(desc)
        if self.problems or graph is None:
            return None
        return LoadedVector(
            name=desc["name"],
            operator=desc["operator"],
            mode=desc["mode"],
            kind=desc["kind"],
            graph=graph,
            inputs=inputs,
            expected=expected,
            checks=checks,
            requirements=Requirements.from_json(desc["requirements"]),
            provenance=Provenance.from_json(desc["provenance"]),
            rule=desc["rule"],
            data_set=desc["data_set"],
            desc=desc,
            result_files=dict(zip(desc["ofm_name"], desc["ofm_file"], strict=True)),
        )

    def _read_listed_files(self) -> None:
        for file, want in sorted(self.entry.files.items()):
            try:
                data = self.fetch(file)
            except PackError as exc:
                self.fail_error(exc)
                continue
            if data is None:
                self.fail(file, "missing (pack.json lists it)")
                continue
            got = pack_json.sha256(data)
            if got != want:
                self.fail(
                    file,
                    f"sha256 mismatch: pack.json records {want[:16]}..., the file has "
                    f"{got[:16]}... ({len(data)} bytes)",
                )
            # Still parsed below: the hash says *that* it changed, parsing says *how*.
            self.data[file] = data

    def _desc(self) -> dict[str, Any] | None:
        data = self.data.get(DESC)
        if data is None:
            return None  # missing: already reported
        source = f"{self.name}/{DESC}"
        try:
            desc = pack_json.loads(data, source)
        except PackError as exc:
            self.fail_error(exc)
            return None
        problems = pack_json.schema_problems(desc, "desc", source)
        if problems:
            self.problems.extend(problems)
            return None
        return dict(desc)

    def _check_entry(self, desc: dict[str, Any]) -> None:
        for key in ("name", "operator", "mode", "kind"):
            listed = getattr(self.entry, key)
            if desc[key] != listed:
                self.fail(DESC, f"{key} is {desc[key]!r}, but pack.json says {listed!r}")
        # Backends look the level up in the spec: one the pack's claim does not name is
        # a damaged vector here, not a backend's crash on it.
        level = desc["requirements"]["level"]
        if self.level is not None and level != self.level:
            self.fail(
                DESC, f"requirements.level is {level!r}, but pack.json claims level {self.level!r}"
            )

    def _check_layout(self, desc: dict[str, Any]) -> None:
        """The file names and list lengths desc.json must have, graph aside."""
        ins, exps = desc["inputs"], desc["expected"]
        _expect_list(self, "ifm_file", desc["ifm_file"], [input_file(k) for k in range(len(ins))])
        _expect_list(self, "ifm_name", desc["ifm_name"], [i["name"] for i in ins])
        _expect_list(self, "inputs[].file", [i["file"] for i in ins], desc["ifm_file"])
        n_out = len(desc["ofm_name"])
        _expect_list(self, "ofm_file", desc["ofm_file"], [result_file(k) for k in range(n_out)])
        if desc["kind"] == "valid":
            _expect_list(self, "expected[].name", [e["name"] for e in exps], desc["ofm_name"])
        for k, e in enumerate(exps):
            if e["file"] != expected_file(k):
                self.fail(DESC, f"expected[{k}].file is {e['file']!r}, not {expected_file(k)!r}")
            if e["bound_file"] not in (None, bound_file(k)):
                self.fail(
                    DESC, f"expected[{k}].bound_file is {e['bound_file']!r}, not {bound_file(k)!r}"
                )
        if desc["kind"] == "error" and desc["expected_failure_desc"] != rule_text(desc["rule"]):
            self.fail(DESC, "expected_failure_desc does not state the rule")
        scaled = [("inputs", k, i) for k, i in enumerate(ins) if "scale_file" in i]
        scaled += [("expected", k, e) for k, e in enumerate(exps) if "scale_file" in e]
        for what, k, item in scaled:
            if item["scale_file"] != scale_file(item["file"]):
                want = scale_file(item["file"])
                self.fail(DESC, f"{what}[{k}].scale_file is {item['scale_file']!r}, not {want!r}")
        referenced = {DESC, desc["tosa_file"], *desc["ifm_file"]}
        referenced |= {e["file"] for e in exps} | {e["bound_file"] for e in exps if e["bound_file"]}
        referenced |= {item["scale_file"] for _, _, item in scaled}
        for file in sorted(referenced - set(self.entry.files)):
            self.fail(file, "desc.json refers to it, but pack.json does not list it")
        for file in sorted(set(self.entry.files) - referenced):
            self.fail(file, "pack.json lists it, but desc.json does not refer to it")

    def _graph(self, desc: dict[str, Any]) -> Graph | None:
        file = desc["tosa_file"]
        data = self.data.get(file)
        if data is None:
            return None
        try:
            graph = deserialize(data, source=f"{self.name}/{file}")
        except FlatbufferError as exc:
            self.fail_error(exc)
            return None
        if not graph.regions or not graph.regions[0].blocks:
            self.fail(file, "the graph has no blocks, so no entry block")
            return None
        problem = dataflow_problem(graph)
        if problem is not None:
            self.fail(file, problem)
            return None
        return graph

    def _check_against_graph(self, desc: dict[str, Any], graph: Graph) -> None:
        main = graph.main
        _expect_list(self, "ifm_name", desc["ifm_name"], list(main.inputs), "the graph's inputs")
        _expect_list(self, "ofm_name", desc["ofm_name"], list(main.outputs), "the graph's outputs")
        for what, items in (("inputs", desc["inputs"]), ("expected", desc["expected"])):
            for k, item in enumerate(items):
                self._check_tensor(f"{what}[{k}]", item, main)
        ops = {op.op for block in graph.blocks() for op in block.operators}
        if desc["operator"] not in ops:
            self.fail(DESC, f"operator {desc['operator']} does not occur in the graph")
        elif not main.outputs:
            # Nothing to compare: only an operator with no outputs (ASSERT_EQUAL_SHAPE) is
            # tested that way, by whether the graph runs or is rejected.
            ops_under_test = (op for b in graph.blocks() for op in b.operators)
            writes = next(
                (op for op in ops_under_test if op.op == desc["operator"] and op.outputs), None
            )
            if writes is not None:
                self.fail(
                    DESC,
                    f"the graph has no outputs, but its {writes.op} writes {writes.outputs}: "
                    "nothing it computes would be checked",
                )

    def _check_tensor(self, where: str, item: dict[str, Any], main: Block) -> None:
        t = main.tensors.get(item["name"])
        if t is None:
            self.fail(DESC, f"{where}: the graph has no tensor {item['name']!r}")
            return
        if item["dtype"] != t.dtype.name:
            self.fail(
                DESC,
                f"{where}: dtype {item['dtype']}, but the graph's tensor "
                f"{t.name!r} is {t.dtype.name}",
            )
        if item["shape"] != list(t.shape):
            self.fail(
                DESC,
                f"{where}: shape {item['shape']}, but the graph's tensor "
                f"{t.name!r} has {list(t.shape)}",
            )

    def _inputs(self, desc: dict[str, Any]) -> dict[str, TensorValue]:
        out: dict[str, TensorValue] = {}
        for item in desc["inputs"]:
            dt = dtype(item["dtype"])
            value = (
                self._block_scaled(item, dt)
                if is_block_scaled(dt)
                else self._array(item["file"], npy.decode_array, dt, item["shape"])
            )
            if value is not None:
                out[item["name"]] = value
        return out

    def _block_scaled(self, item: dict[str, Any], dt: DType) -> BlockScaled | None:
        """A block-scaled tensor's two files (the schema makes scale_file present)."""
        file, sfile = item["file"], item["scale_file"]
        data, scale_data = self.data.get(file), self.data.get(sfile)
        if data is None or scale_data is None:
            return None  # missing: already reported
        try:
            return npy.decode_block_scaled(
                data,
                scale_data,
                dt,
                source=f"{self.name}/{file}",
                scale_source=f"{self.name}/{sfile}",
                shape=item["shape"],
            )
        except PackError as exc:
            self.fail_error(exc)
            return None

    def _expected(self, desc: dict[str, Any]) -> tuple[dict[str, TensorValue], dict[str, Check]]:
        expected: dict[str, TensorValue] = {}
        checks: dict[str, Check] = {}
        for k, item in enumerate(desc["expected"]):
            dt = dtype(item["dtype"])
            value = (
                self._block_scaled(item, dt)
                if is_block_scaled(dt)
                else self._array(item["file"], npy.decode_expected, dt, item["shape"])
            )
            if value is not None:
                expected[item["name"]] = value
            bound = None
            if item["bound_file"] is not None:
                bound = self._array(item["bound_file"], _decode_bound, dt, item["shape"])
            descriptor = self._descriptor(k, item, dt)
            if descriptor is not None or item["compliance"] is None:
                checks[item["name"]] = Check(descriptor, bound)
        self._check_partners(desc["expected"], checks)
        return expected, checks

    def _check_partners(self, items: list[dict[str, Any]], checks: dict[str, Check]) -> None:
        """Outputs judged together name each other: a SCALED_VALUES output its scale
        output, whose compliance is BLOCK_SCALES naming it back, with a scale per block
        of the values' innermost dimension."""
        index = {item["name"]: k for k, item in enumerate(items)}
        for k, item in enumerate(items):
            check = checks.get(item["name"])
            d = None if check is None else check.descriptor
            if d is None or d.partner is None:
                continue
            values = d.mode is Mode.SCALED_VALUES
            role, back = ("scale", Mode.BLOCK_SCALES) if values else ("values", Mode.SCALED_VALUES)
            other = d.partner
            where = f"expected[{k}].compliance: {d.mode.value} names {role} output {other!r}"
            if other not in index or other == item["name"]:
                self.fail(DESC, f"{where}, which is not another output of the vector")
                continue
            o = checks.get(other)
            od = None if o is None else o.descriptor
            if od is None or od.mode is not back or od.partner != item["name"]:
                got = "none" if od is None else od.mode.value
                self.fail(
                    DESC,
                    f"{where}, whose compliance is {got}, not {back.value} naming {item['name']!r}",
                )
                continue
            if values:
                assert isinstance(d.params, ScaledValuesParams)
                self._check_blocks(k, item, items[index[other]], d.params.block_size)

    def _check_blocks(
        self, k: int, values: dict[str, Any], scales: dict[str, Any], block_size: int
    ) -> None:
        shape = list(values["shape"])
        want = [*shape[:-1], shape[-1] // block_size] if shape else None
        if want is None or shape[-1] % block_size or list(scales["shape"]) != want:
            self.fail(
                DESC,
                f"expected[{k}].compliance: {values['name']!r} of shape {shape} in blocks of "
                f"{block_size} does not fit its scale output {scales['name']!r} of shape "
                f"{list(scales['shape'])}",
            )

    def _descriptor(self, k: int, item: dict[str, Any], dt: DType) -> ComplianceDescriptor | None:
        raw = item["compliance"]
        if raw is None:
            if item["bound_file"] is not None:
                self.fail(DESC, f"expected[{k}] has a bound_file but no compliance descriptor")
            return None
        try:
            descriptor = ComplianceDescriptor.from_json(raw)
        except ValueError as exc:
            self.fail(DESC, f"expected[{k}].compliance: {exc}")
            return None
        if descriptor.dtype is not dt:
            self.fail(
                DESC, f"expected[{k}].compliance is for {descriptor.dtype}, the output is {dt}"
            )
        if descriptor.needs_bound != (item["bound_file"] is not None):
            need = "needs a bound_file" if descriptor.needs_bound else "takes no bound_file"
            self.fail(DESC, f"expected[{k}]: compliance mode {descriptor.mode.value} {need}")
        return descriptor

    def _array(
        self,
        file: str,
        decode: Callable[..., np.ndarray],
        dt: DType,
        shape: list[int],
    ) -> np.ndarray | None:
        data = self.data.get(file)
        if data is None:
            return None
        try:
            arr: np.ndarray = decode(data, dt, source=f"{self.name}/{file}", shape=shape)
        except PackError as exc:
            self.fail_error(exc)
            return None
        return arr


def dataflow_problem(graph: Graph) -> str | None:
    """The first name a block or an operator uses that its block cannot give it, or None.

    Blocks are self-contained (a nested block gets its values as its inputs), and what
    an operator reads is set before it runs: a block input, a constant, or an earlier
    operator's output.  Every evaluator needs that, and the flatbuffer cannot say it, so
    a graph without it is a damaged pack, never a backend's crash.
    """
    for block in graph.blocks():
        where = f"block {block.name!r}"
        for role, names in (("input", block.inputs), ("output", block.outputs)):
            for name in names:
                if name not in block.tensors:
                    return f"{where}: {role} {name!r} is not a tensor of the block"
        ready = set(block.inputs) | {n for n, t in block.tensors.items() if t.data is not None}
        for index, op in enumerate(block.operators):
            what = f"{where}: operator {index} ({op.op})"
            for name in op.inputs:
                if name not in block.tensors:
                    return f"{what} reads {name!r}, which is not a tensor of the block"
                if name not in ready:
                    return f"{what} reads {name!r} before any operator of the block sets it"
            for name in op.outputs:
                if name not in block.tensors:
                    return f"{what} writes {name!r}, which is not a tensor of the block"
            ready.update(op.outputs)
        for name in block.outputs:
            if name not in ready:
                return f"{where}: output {name!r} is never set"
    return None


def _decode_bound(data: bytes, _dt: DType, *, source: str, shape: list[int]) -> np.ndarray:
    return npy.decode_bound(data, source=source, shape=shape)


def _expect_list(
    reader: _Reader, key: str, got: list[str], want: list[str], what: str | None = None
) -> None:
    if got != want:
        reader.fail(DESC, f"{key} is {got}, expected {what + ' ' if what else ''}{want}")
