"""Arm's test folders -> a pack: ``tosa-conformance import-arm DIR... -o PACK``.

A folder of Arm's ``tosa_verif_conformance_generator`` or ``tosa_verif_build_tests``
holds ``desc.json``, a ``.tosa`` graph, and either the inputs' ``.npy`` files or a
``meta.data_gen`` block from which Arm's runner generates them.  Each becomes one vector:

* the graph as our reader reads it, in its own revision (which must be the process's);
  a CONST that Arm leaves empty (its data generated, ``input_type`` CONSTANT) gets the
  generated values, so the tensor is a constant of the graph, as Arm's test means it;
* inputs from the ``.npy`` files, else from Arm's generator library (:mod:`.datagen`),
  so they are bit-identical to Arm's;
* expected results, compliance descriptors and bounds from our reference, as for a
  generated vector (:func:`conformance.vectorize.case_to_vector`);
* Arm's ``meta.compliance`` kept in the vector's provenance, beside every conflict
  between it and our rules (a mode of another kind, other parameters, other profiles);
* an ``expected_failure`` test stays a must-fail vector, with the rule our reference
  names, or with Arm's ERRORIF name and a conflict when ours names none.

A folder that cannot be imported is listed with its reason (:class:`ImportSummary`);
nothing is dropped silently.  Every file name ``desc.json`` gives is checked to stay in
its folder.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from hashlib import sha256
from pathlib import Path
from typing import Any

import numpy as np

from conformance.arm_suite import datagen
from conformance.arm_suite.names import arm_name, spec_name
from conformance.builder import GraphError, bind_types, check_operator
from conformance.claims import make_claim
from conformance.compliance_descriptor import Mode
from conformance.dtypes import DType
from conformance.errors import ConformanceError
from conformance.graph import Graph
from conformance.spec import OperatorSpec, Spec, TypeSupport
from conformance.vectorize import case_to_vector
from reference.engine import evaluate
from reference.expectations import NotDescribable, expect
from strategies.case import Case
from vectors.flatbuffer import FlatbufferError, read_graph
from vectors.pack_errors import PackError
from vectors.pack_model import PackMeta, Provenance, Vector
from vectors.pack_write import MAX_NAME, NAME_RE

DESC = "desc.json"
SUITE = "arm"

# Arm's verifier modes -> the modes of ours that judge the same kind of rule.
SAME_KIND: dict[str, frozenset[Mode]] = {
    "EXACT": frozenset({Mode.EXACT, Mode.EXACT_NAN}),
    "ULP": frozenset({Mode.ULP}),
    "DOT_PRODUCT": frozenset({Mode.DOT_PRODUCT}),
    # special values into a dot product: Arm checks only inf / NaN / zero placement
    "FP_SPECIAL": frozenset({Mode.DOT_PRODUCT, Mode.EXACT_NAN}),
    "REDUCE_PRODUCT": frozenset({Mode.REDUCE_PRODUCT}),
    "ABS_ERROR": frozenset({Mode.ABS_ERROR}),
    "MAX_RELATIVE": frozenset({Mode.RESIZE}),
    "RESCALE_INEXACT": frozenset({Mode.INT_RANGE}),
    "FROM_BLOCK": frozenset({Mode.ULP, Mode.EXACT_NAN}),
}


class ImportError_(ConformanceError):
    """A bad argument to the import as a whole (no tests, a mixed revision)."""


class NotImportable(Exception):
    """This one test cannot become a vector; the message says why."""


@dataclass
class ArmTest:
    folder: Path
    name: str  # its path under the directory it was found in
    desc: dict[str, Any]


@dataclass
class ImportSummary:
    pack: str
    pack_sha256: str = ""
    revision: str = ""
    tosa_tools: str | None = None
    kinds: Counter[str] = field(default_factory=Counter)
    refused: dict[str, str] = field(default_factory=dict)  # test -> why
    conflicts: dict[str, list[str]] = field(default_factory=dict)  # vector -> conflicts

    def conflict_kinds(self) -> Counter[str]:
        """Each conflict with its numbers taken out, counted: the summary's groups."""
        return Counter(re.sub(r"\d+(\.\d+)?", "N", c) for cs in self.conflicts.values() for c in cs)

    def lines(self) -> Iterator[str]:
        n = sum(self.kinds.values())
        kinds = ", ".join(f"{v} {k}" for k, v in sorted(self.kinds.items()))
        yield f"imported {n} vectors ({kinds}) of TOSA {self.revision} to {self.pack}"
        yield f"pack sha256 {self.pack_sha256}"
        if self.refused:
            yield f"not imported: {len(self.refused)}"
            for test, why in sorted(self.refused.items()):
                yield f"  {test}: {why}"
        if self.conflicts:
            yield (
                f"conflicts between Arm's descriptor and our rules: "
                f"{sum(map(len, self.conflicts.values()))} in {len(self.conflicts)} vectors"
            )
            for text, k in sorted(self.conflict_kinds().items(), key=lambda kv: -kv[1]):
                yield f"  {k:5d}  {text}"


# ---------------------------------------------------------------------------- finding


def find_tests(dirs: Iterable[str | Path]) -> list[ArmTest]:
    """Every test folder (one holding desc.json) under each of ``dirs``, in name order.
    ImportError_ for a directory that does not exist or holds no test."""
    tests: list[ArmTest] = []
    for d in dirs:
        root = Path(d)
        if not root.is_dir():
            raise ImportError_(f"{root}: not a directory of Arm tests")
        found = sorted(p.parent for p in root.rglob(DESC) if not p.is_symlink())
        if not found:
            raise ImportError_(f"{root}: holds no Arm test (no {DESC} under it)")
        for folder in found:
            rel = folder.relative_to(root).as_posix()
            name = rel if rel != "." else folder.name
            tests.append(ArmTest(folder, name, _read_desc(folder / DESC)))
    return tests


def _read_desc(path: Path) -> dict[str, Any]:
    try:
        desc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {"_unreadable": f"{path}: {exc}"}
    return desc if isinstance(desc, dict) else {"_unreadable": f"{path}: not a JSON object"}


def detect_revision(tests: list[ArmTest]) -> str | None:
    """The revision of the first readable graph (what the process's spec is loaded for)."""
    for t in tests:
        try:
            return read_graph(_member(t, t.desc.get("tosa_file"))).revision
        except (NotImportable, FlatbufferError, OSError):
            continue
    return None


def _member(test: ArmTest, name: Any) -> Path:
    """A file ``desc.json`` names, which must be a plain name inside the test's folder."""
    if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
        raise NotImportable(f"desc.json names {name!r}, which is not a file of the folder")
    return test.folder / name


# ---------------------------------------------------------------------------- one test


@dataclass
class Imported:
    vector: Vector
    conflicts: list[str]


def import_test(test: ArmTest, spec: Spec, level: str, tools: str | None) -> Imported:
    desc = test.desc
    if "_unreadable" in desc:
        raise NotImportable(desc["_unreadable"])
    try:
        names = [str(n) for n in desc["ifm_name"]]
        files = [str(f) for f in desc["ifm_file"]]
        failing = bool(desc.get("expected_failure", False))
        tosa = _member(test, desc["tosa_file"])
    except (KeyError, TypeError) as exc:
        raise NotImportable(f"desc.json lacks {exc}") from None
    if len(names) != len(files):
        raise NotImportable("desc.json's ifm_name and ifm_file differ in length")
    try:
        graph = read_graph(tosa)
    except FlatbufferError as exc:
        raise NotImportable(str(exc)) from None
    if graph.revision != spec.revision:
        raise NotImportable(
            f"a TOSA {graph.revision} graph; this import is of TOSA {spec.revision} "
            f"(import it with --tosa {graph.revision})"
        )
    data_gen = desc.get("meta", {}).get("data_gen")
    pairs = zip(names, files, strict=True)
    values = {n: _input_value(test, graph, n, f, data_gen) for n, f in pairs}
    inputs = _settle_constants(graph, values)
    op = _operator_under_test(graph, desc)
    op_spec = spec.operator(op.op)
    mode = _mode(spec, op_spec, op, graph)
    arm_comp = desc.get("meta", {}).get("compliance", {}).get("tensors", {})
    data_set = _data_set(arm_comp)
    case = Case(graph, inputs, op.op, mode.mode, data_set=data_set, strategy=f"{SUITE}:{test.name}")
    conflicts: list[str] = []
    kind = "error" if failing else "valid"
    vector = case_to_vector(
        case,
        spec,
        spec.level(level),
        name="x",
        kind=kind,
        provenance=Provenance(f"{SUITE}:{test.name}", 0, 0, "-"),
        data_set=data_set,
    )
    if vector is None:
        vector = _without_our_verdict(case, spec, level, failing, desc, conflicts)
    else:
        conflicts += _compliance_conflicts(vector, arm_comp)
    conflicts += _requirement_conflicts(spec, vector, desc)
    errorif = desc.get("test_details", {}).get("ERRORIF")
    imported = {
        "suite": SUITE,
        "test": test.name,
        "tosa_tools": tools or "unknown",
        "expected_failure": failing,
        "arm_compliance": arm_comp,
        "conflicts": conflicts,
    }
    provenance = Provenance(
        strategy=f"{SUITE}:{test.name}",
        seed=0,
        index=0,
        regenerate=f"tosa-conformance --tosa {spec.revision} import-arm {test.folder} -o PACK",
        rule_broken=str(errorif) if failing and errorif else vector.provenance.rule_broken,
        imported=imported,
    )
    return Imported(replace(vector, provenance=provenance), conflicts)


def _input_value(test: ArmTest, graph: Graph, name: str, file: str, data_gen: Any) -> np.ndarray:
    t = graph.main.tensors.get(name)
    if t is None:
        raise NotImportable(f"ifm_name {name!r} is not a tensor of the graph")
    path = _member(test, file)
    if path.is_file():
        raw = _load_npy(path, t.dtype)
        source = str(path)
    elif isinstance(data_gen, dict) and name in data_gen.get("tensors", {}):
        try:
            raw = datagen.generate(data_gen, name)
        except datagen.DataGenError as exc:
            raise NotImportable(str(exc)) from None
        source = f"meta.data_gen of {name!r}"
    else:
        raise NotImportable(f"{file} is absent and meta.data_gen does not generate {name!r}")
    from conformance.backends.revision.elements import from_npy

    try:
        return from_npy(raw, t.dtype, t.shape)
    except ValueError as exc:
        raise NotImportable(f"{source}: {exc}") from None


def _load_npy(path: Path, dt: DType) -> np.ndarray:
    try:
        from tosa_serializer.numpy_utils import load_npy

        from conformance.backends.revision.elements import ARM_NAMES

        return np.asarray(load_npy(str(path), ARM_NAMES.get(dt.name, dt.name.upper())))
    except ImportError:
        pass
    except (ValueError, RuntimeError, OSError) as exc:
        raise NotImportable(f"{path}: {exc}") from None
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise NotImportable(f"{path}: {exc}") from None


def _settle_constants(graph: Graph, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Give each empty CONST Arm's test fills at run time its values, and take it out of
    the graph's inputs: it is a constant of the graph.  The rest stay inputs."""
    for block in graph.blocks():
        kept = []
        for op in block.operators:
            if op.op in ("CONST", "CONST_SHAPE") and not op.inputs and len(op.outputs) == 1:
                t = block.tensors[op.outputs[0]]
                if t.data is None and t.name in values and t.name in block.inputs:
                    t.set_constant(values.pop(t.name))
                    block.inputs.remove(t.name)
                    continue
            kept.append(op)
        block.operators[:] = kept
    missing = [n for n in graph.main.inputs if n not in values]
    if missing:
        raise NotImportable(f"desc.json gives no value for graph inputs {missing}")
    return {n: values[n] for n in graph.main.inputs}


def _operator_under_test(graph: Graph, desc: dict[str, Any]) -> Any:
    ops = [
        op for b in graph.blocks() for op in b.operators if op.op not in ("CONST", "CONST_SHAPE")
    ]
    named = desc.get("test_details", {}).get("operator")
    for op in ops:
        if op.op == named:
            return op
    if len(ops) == 1:
        return ops[0]
    raise NotImportable(f"cannot tell the operator under test (desc.json names {named!r})")


def _mode(spec: Spec, op_spec: OperatorSpec, op: Any, graph: Graph) -> TypeSupport:
    """The operator's mode by its tensors' types; for a must-fail graph whose types bind
    none, the mode that agrees with most of them."""
    block = next(b for b in graph.blocks() if op in b.operators)
    mode, _ = check_operator(spec, op, block.tensors)
    if mode is not None:
        return mode
    if not op_spec.modes:
        raise NotImportable(f"{op_spec.name} has no mode in TOSA {spec.revision}")
    try:
        bound, _ = bind_types(op_spec, op, block.tensors)
    except (KeyError, ValueError):
        bound = {}

    def agree(m: TypeSupport) -> int:
        return sum(m.bindings.get(var) == dt.name for var, dt in bound.items())

    return max(op_spec.modes, key=agree)


def _data_set(arm_comp: dict[str, Any]) -> int:
    for info in arm_comp.values():
        s = info.get("dot_product_info", {}).get("s") if isinstance(info, dict) else None
        if isinstance(s, int) and -1 <= s <= 5:
            return s
    return -1


def _without_our_verdict(
    case: Case, spec: Spec, level: str, failing: bool, desc: dict[str, Any], conflicts: list[str]
) -> Vector:
    """The vector when our reference does not give Arm's verdict: a must-fail test keeps
    Arm's (its rule is Arm's ERRORIF name); a valid test whose result ours cannot
    describe, or that ours finds failing, is not imported; one that goes past a level
    limit becomes a level vector (reported, never judged)."""
    outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
    ours = f"{outcome.kind}" + (f" by {outcome.rule}" if outcome.rule else "")
    if not failing:
        if outcome.rule is not None and outcome.rule.kind == "LEVEL_CHECK":
            vector = case_to_vector(
                case,
                spec,
                spec.level(level),
                name="x",
                kind="level",
                provenance=Provenance(case.strategy, 0, 0, "-"),
            )
            if vector is not None:
                conflicts.append(f"Arm expects a result; ours: past a level limit ({outcome.rule})")
                return vector
        if outcome.valid:
            try:
                expect(case.graph, case.inputs, spec=spec, level=level, data_set=case.data_set)
            except NotDescribable as exc:
                raise NotImportable(f"our rules cannot describe its result: {exc}") from None
        raise NotImportable(f"Arm expects a result; our reference: {ours}")
    errorif = str(desc.get("test_details", {}).get("ERRORIF") or "expected_failure")
    conflicts.append(f"Arm expects the graph to fail ({errorif}); our reference: {ours}")
    mode = spec.operator(case.operator).mode(case.mode)
    from vectors.pack_model import Requirements

    rule = {
        "kind": "ERROR_IF",
        "operator": case.operator,
        "clause": f"Arm's {errorif}",
        "detail": f"kept from Arm's test; our reference: {ours}",
        "index": None,
    }
    return Vector(
        name="x",
        operator=case.operator,
        mode=mode.mode,
        kind="error",
        graph=case.graph,
        inputs=case.inputs,
        expected={},
        checks={},
        requirements=Requirements.for_mode(spec, mode, level),
        provenance=Provenance(case.strategy, 0, 0, "-"),
        rule=rule,
    )


def _compliance_conflicts(vector: Vector, arm_comp: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if vector.kind != "valid":
        return out
    for name, check in vector.checks.items():
        arm = arm_comp.get(name)
        ours = check.descriptor
        if not isinstance(arm, dict) or ours is None:
            if isinstance(arm, dict) != (ours is not None):
                out.append(
                    f"{name}: Arm {'checks' if arm else 'does not check'} it, ours "
                    f"{'checks' if ours is not None else 'does not'}"
                )
            continue
        mode = str(arm.get("mode"))
        if ours.mode not in SAME_KIND.get(mode, frozenset()):
            out.append(f"{name}: Arm judges by {mode}, our rules by {ours.mode.value}")
            continue
        params = ours.params
        if mode == "ULP":
            arm_ulp = arm.get("ulp_info", {}).get("ulp")
            if arm_ulp is not None and float(arm_ulp) != float(getattr(params, "ulp", arm_ulp)):
                out.append(f"{name}: ULP {arm_ulp} in Arm's test, {params.ulp} in our rules")  # type: ignore[union-attr]
        elif mode == "REDUCE_PRODUCT":
            n = arm.get("reduce_product_info", {}).get("n")
            if n is not None and int(n) != int(getattr(params, "n", n)):
                out.append(f"{name}: REDUCE_PRODUCT n {n} in Arm's test, {params.n} in ours")  # type: ignore[union-attr]
    return out


def _requirement_conflicts(spec: Spec, vector: Vector, desc: dict[str, Any]) -> list[str]:
    req = desc.get("test_requirements", {})
    out = []
    theirs = {spec_name(spec, str(p)) or str(p) for p in req.get("profiles_supported", [])}
    if theirs and vector.requirements.profiles and theirs != set(vector.requirements.profiles):
        out.append(f"profiles: Arm {sorted(theirs)}, ours {sorted(vector.requirements.profiles)}")
    exts = {spec_name(spec, str(e)) or str(e) for e in req.get("extensions_required", [])}
    if exts != set(vector.requirements.extensions):
        out.append(f"extensions: Arm {sorted(exts)}, ours {sorted(vector.requirements.extensions)}")
    return out


# ---------------------------------------------------------------------------- the pack


def vector_name(test: ArmTest, taken: set[str]) -> str:
    """The test folder's name, made a usable vector name and unique in the pack."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", test.folder.name).strip(".-") or "test"
    if len(base) > MAX_NAME - 9 or not NAME_RE.fullmatch(base):
        base = base[: MAX_NAME - 9].strip(".-") or "test"
    name = base
    if name in taken:
        name = f"{base}_{sha256(test.name.encode()).hexdigest()[:8]}"
    taken.add(name)
    return name


def import_arm(
    dirs: Iterable[str | Path],
    out: str | Path,
    spec: Spec,
    level: str = "8K",
    progress: Any = None,
) -> ImportSummary:
    """Import every Arm test under ``dirs`` into a new pack at ``out``."""
    from strategies.obligations import coverage, pair_obligations, vector_facts
    from vectors.pack import write_pack_index, write_vector

    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise PackError(f"{target}: exists and is not an empty folder; not writing into it")
    tests = find_tests(dirs)
    tools = datagen.tosa_tools_version()
    summary = ImportSummary(str(target), revision=spec.revision, tosa_tools=tools)
    target.mkdir(parents=True, exist_ok=True)
    entries = []
    taken: set[str] = set()
    facts: dict[tuple[str, str], set[str]] = {}
    profiles: set[str] = set()
    extensions: set[str] = set()
    lv = spec.level(level)
    for k, test in enumerate(tests):
        if progress is not None:
            progress(k, len(tests))
        try:
            got = import_test(test, spec, level, tools)
        except NotImportable as exc:
            summary.refused[test.name] = str(exc)
            continue
        except GraphError as exc:  # e.g. Arm's WrongInputList: no graph our model holds
            summary.refused[test.name] = f"not a graph our graph model can hold: {exc}"
            continue
        except Exception as exc:  # one test must not cost the whole import
            summary.refused[test.name] = f"{type(exc).__name__}: {exc}"
            continue
        vector = replace(got.vector, name=vector_name(test, taken))
        try:
            entries.append(write_vector(target, vector))
        except (PackError, ValueError) as exc:
            summary.refused[test.name] = str(exc)
            continue
        summary.kinds[vector.kind] += 1
        if got.conflicts:
            summary.conflicts[vector.name] = got.conflicts
        profiles |= set(vector.requirements.profiles)
        extensions |= set(vector.requirements.extensions)
        pair = facts.setdefault((vector.operator, vector.mode), set())
        if vector.kind == "valid":
            pair |= vector_facts(spec, vector, lv)
    if not entries:
        raise ImportError_(
            f"no test of {len(tests)} could be imported; the first: "
            + next(iter(summary.refused.items()), ("", ""))[1]
        )
    claim = make_claim(spec, sorted(profiles) or sorted(spec.profiles), sorted(extensions), level)
    record = []
    for (operator, mode_name), seen in sorted(facts.items()):
        op_spec = spec.operator(operator)
        obligations = pair_obligations(spec, lv, op_spec, op_spec.mode(mode_name))
        why = "no vector of Arm's suite has it"
        unmet = {k: why for k in obligations.obligation_keys()}
        record.append(coverage(obligations, seen, unmet).to_json())
    meta = PackMeta.create(
        spec,
        claim.to_json(),
        0,
        {"imported_from": SUITE, "tosa_tools": tools or "unknown", "tests": len(tests)},
    )
    summary.pack_sha256 = write_pack_index(target, meta, entries, record)
    return summary


def write_manifest(pack: str | Path, path: str | Path) -> int:
    """A capability manifest claiming exactly the (operator, mode) pairs the pack at
    ``pack`` has valid vectors of, so that ``certify --capabilities`` gives the subset
    verdict an imported suite can support; returns the number of pairs."""
    from vectors.pack import open_pack

    pairs: dict[str, set[str]] = {}
    with open_pack(pack) as opened:
        for e in opened.entries:
            if e.kind == "valid":
                pairs.setdefault(e.operator, set()).add(e.mode)
    lines = [
        'name = "arm-suite"',
        f"description = {json.dumps(f'the pairs of the Arm suite imported to {pack}')}",
        "",
    ]
    for op in sorted(pairs):
        lines.append(f"[operators.{op}.modes]")
        lines += [f'{json.dumps(m)} = ["{SUITE}"]' for m in sorted(pairs[op])]
        lines.append("")
    Path(path).write_text("\n".join(lines), encoding="utf-8")
    return sum(map(len, pairs.values()))


def arm_profiles(spec: Spec) -> list[str]:
    """Arm's names of the revision's profiles (for messages and docs)."""
    return [arm_name(p) for p in sorted(spec.profiles)]
