"""Verdicts: what a vector's run comes to, and the judge that gives it.

:func:`judge` turns what a backend returned into a :class:`VectorResult`, output by
output, with the compliance checker; it knows nothing of processes, so the runner's
workers, the pytest plugin and a re-judge of a results file all use it.  A run's results
are a :class:`RunReport`; a results file is read back with :func:`read_results`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conformance.backends import BackendResult
from conformance.block_tensor import TensorValue, is_block_scaled
from conformance.dtypes import DType, is_float_storage
from conformance.rejudge import NOTES, PLAIN, Rejudge, denormal_results
from conformance.results_file import is_header, read_lines
from reference.compliance.denormals import FLUSH, SUPPORTED, DenormalMode
from vectors.pack_model import LoadedVector

# The verdicts; the last four are failures of the backend.
PASSED = "passed"
SKIPPED = "skipped"
INFO = "info"  # level vectors: unpredictable by the spec, reported but never judged
FAILED = "failed"
ERROR_EXPECTED = "error-expected-but-passed"
CRASHED = "crashed"
TIMEOUT = "timeout"
FAILURES = frozenset({FAILED, ERROR_EXPECTED, CRASHED, TIMEOUT})
# A vector listed as a known failure: XFAIL when it fails, XPASS when it passes (the
# judge's verdict is kept in VectorResult.known_failure).
XFAIL = "xfail"
XPASS = "xpass"


@dataclass
class OutputVerdict:
    name: str
    passed: bool
    message: str
    margin: float | None = None
    failing: int = 0  # number of failing elements
    reading: str = PLAIN  # the reading it passed under (conformance.rejudge)


@dataclass
class VectorResult:
    vector: str
    operator: str
    mode: str
    kind: str
    verdict: str
    detail: str = ""
    margin: float | None = None  # worst fraction of the bound used over the outputs
    outputs: list[OutputVerdict] = field(default_factory=list)
    seconds: float = 0.0
    log: str = ""
    # The second reading an output needed to pass, if any (conformance.rejudge), and
    # per type the denormal behaviour this vector showed: "flush" (a flushing reading
    # was needed) or "supported" (a denormal result passed).
    reading: str = PLAIN
    denormals: dict[str, str] = field(default_factory=dict)
    # The verdict the judge gave a known failure (its verdict is then XFAIL or XPASS).
    known_failure: str = ""
    # A chain vector's operators in graph order (empty for one operator's vector): a
    # chain's failure is the chain's finding, not its last operator's.
    chain: list[str] = field(default_factory=list)

    @property
    def chain_path(self) -> str:
        """``CONV2D > BITWISE_AND > RESHAPE``, or "" for one operator's vector."""
        return " > ".join(self.chain)

    @property
    def failed(self) -> bool:
        return self.verdict in FAILURES

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        if self.margin is not None and not np.isfinite(self.margin):
            doc["margin"] = None  # JSON has no inf; the detail says why
        for o in doc["outputs"]:
            if o["margin"] is not None and not np.isfinite(o["margin"]):
                o["margin"] = None
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> VectorResult:
        outputs = [OutputVerdict(**o) for o in doc.get("outputs", [])]
        return cls(**{**doc, "outputs": outputs})


def _as_storage(actual: Any, dt: Any) -> np.ndarray:
    """The backend's array in the tensor's storage dtype, refusing lossy conversions."""
    arr = np.asarray(actual)
    if arr.dtype == dt.storage:
        return arr
    if dt.is_float:
        if not is_float_storage(arr.dtype):
            raise ValueError(f"dtype {arr.dtype} is not a floating-point type")
        with np.errstate(over="ignore", invalid="ignore"):
            out = arr.astype(dt.storage)
            back = out.astype(np.float64)
        same = (back == arr.astype(np.float64)) | (
            np.isnan(back) & np.isnan(arr.astype(np.float64))
        )
        if not np.all(same):
            raise ValueError(f"values that are not {dt} values (dtype {arr.dtype})")
        return out
    if arr.dtype.kind not in "biu":
        raise ValueError(f"dtype {arr.dtype}, expected {dt.storage} for {dt}")
    wide = arr.astype(np.int64)
    if not np.all(dt.in_range(wide)) if dt.is_int else not np.all((wide == 0) | (wide == 1)):
        raise ValueError(f"values outside the range of {dt}")
    return wide.astype(dt.storage)


def _judge_block_scaled(vector: LoadedVector, name: str, value: TensorValue) -> OutputVerdict:
    """The verdict on a block-scaled output (reference.compliance.composite); such an
    output has no partner and no second reading (a bound only when it is judged as a
    cast's values and scales, SCALED_VALUES)."""
    from reference import compliance

    check = vector.checks.get(name)
    if check is None or check.descriptor is None:
        return OutputVerdict(name, True, "not checked")
    try:
        v = compliance.check(vector.expected[name], check.descriptor, value, check.bound)
    except ValueError as exc:
        return OutputVerdict(name, False, f"unusable output: {exc}")
    return OutputVerdict(name, v.passed, v.message, float(v.max_margin), int(v.failing_count))


def judge(
    vector: LoadedVector,
    result: BackendResult,
    seconds: float = 0.0,
    *,
    denormals: Mapping[DType, DenormalMode] | None = None,
) -> VectorResult:
    """The verdict of one vector from what the backend did with it.

    ``denormals`` are the backend's declared denormal modes (none: either is accepted);
    an output failing its plain check is given the second readings of
    :mod:`conformance.rejudge`.
    """
    base: dict[str, Any] = dict(  # the fields every verdict shares
        vector=vector.name,
        operator=vector.operator,
        mode=vector.mode,
        kind=vector.kind,
        seconds=seconds,
        log=result.log[-2000:],
        chain=vector.provenance.chain,
    )
    if vector.kind == "level":
        did = f"rejected it: {result.rejected}" if result.rejected else "returned outputs"
        return VectorResult(**base, verdict=INFO, detail=f"above a level limit; the backend {did}")
    if vector.kind == "error":
        if result.rejected is not None:
            return VectorResult(**base, verdict=PASSED, detail=f"rejected: {result.rejected}")
        rule = vector.rule or {}
        return VectorResult(
            **base,
            verdict=ERROR_EXPECTED,
            detail=f"accepted a graph that breaks ERROR_IF({rule.get('clause', '?')})",
        )
    if result.rejected is not None:
        return VectorResult(
            **base, verdict=FAILED, detail=f"rejected a valid graph: {result.rejected}"
        )
    main = vector.graph.main
    if not main.outputs:  # an operator with no outputs (ASSERT_EQUAL_SHAPE): it ran
        return VectorResult(
            **base, verdict=PASSED, detail="ran without error (the graph has no outputs)"
        )
    judged: dict[str, OutputVerdict] = {}
    worst: float | None = None
    retry: Rejudge | None = None
    observed: dict[str, str] = {}
    from reference import compliance

    usable: dict[str, np.ndarray] = {}  # outputs in their storage, of the right shape
    for name in main.outputs:
        t = main.tensors[name]
        if name not in result.outputs:
            judged[name] = OutputVerdict(name, False, "no output produced")
            continue
        if is_block_scaled(t.dtype):  # values and scales, judged alone and exactly
            judged[name] = _judge_block_scaled(vector, name, result.outputs[name])
            margin = judged[name].margin
            if margin is not None:
                worst = margin if worst is None else max(worst, margin)
            continue
        try:
            actual = _as_storage(result.outputs[name], t.dtype)
            if tuple(actual.shape) != t.shape:
                raise ValueError(f"shape {list(actual.shape)}, expected {list(t.shape)}")
        except ValueError as exc:
            judged[name] = OutputVerdict(name, False, f"unusable output: {exc}")
            continue
        usable[name] = actual
    for name, actual in usable.items():
        t = main.tensors[name]
        check = vector.checks.get(name)
        if check is None or check.descriptor is None:
            judged[name] = OutputVerdict(name, True, "not checked")
            continue
        if check.descriptor.mode is compliance.Mode.BLOCK_SCALES:
            continue  # judged once, with the values output it names (below)
        partner = None
        other = check.descriptor.partner
        if other is not None:
            if other not in usable:
                why = f"not judged: its scale output {other!r} is missing or unusable"
                judged[name] = OutputVerdict(name, False, why)
                continue
            reference = vector.expected[other]
            if not isinstance(reference, np.ndarray):  # a scale output is an array
                judged[name] = OutputVerdict(name, False, f"unusable scale output {other!r}")
                continue
            partner = compliance.Partner(other, main.tensors[other].dtype, reference, usable[other])
        try:
            v = compliance.check(
                vector.expected[name], check.descriptor, actual, check.bound, partner=partner
            )
        except ValueError as exc:
            judged[name] = OutputVerdict(name, False, f"unusable output: {exc}")
            continue
        reading, message = PLAIN, v.message
        if not v.passed:
            retry = retry or Rejudge(vector, denormals or {})
            second = retry.retry(name, actual, partner.actual if partner is not None else None)
            if second is not None:
                v, reading = second.verdict, second.reading
                message = f"{NOTES[reading]}: {v.message}"
                observed.update((d.name, FLUSH) for d in second.flushed)
        elif denormal_results(actual, t.dtype):
            observed.setdefault(t.dtype.name, SUPPORTED)
        margin = float(v.max_margin)
        worst = margin if worst is None else max(worst, margin)
        judged[name] = OutputVerdict(
            name, bool(v.passed), message, margin, int(v.failing_count), reading
        )
        if v.scales is not None:  # the scale output's part of the same check
            s = v.scales
            text = f"{s.message}, judged with {name}"
            judged[s.name] = OutputVerdict(
                s.name, s.passed, text, failing=s.failing_count, reading=reading
            )
    for name in main.outputs:  # scales whose values output could not be judged
        if name not in judged:
            d = vector.checks[name].descriptor
            why = f"not judged: its values output {d.partner if d else None!r} was not judged"
            judged[name] = OutputVerdict(name, False, why)
    verdicts = [judged[name] for name in main.outputs]
    ok = all(o.passed for o in verdicts)
    detail = "; ".join(f"{o.name}: {o.message}" for o in verdicts)
    used = next((o.reading for o in verdicts if o.reading != PLAIN), PLAIN)
    return VectorResult(
        **base,
        verdict=PASSED if ok else FAILED,
        detail=detail,
        margin=worst,
        outputs=verdicts,
        reading=used,
        denormals=observed if ok else {},
    )


# -- isolated execution ---------------------------------------------------------------


@dataclass
class RunReport:
    results: list[VectorResult]
    resumed: int  # results taken over from an earlier, interrupted run
    seconds: float
    denormals: dict[str, str] = field(default_factory=dict)  # the backend's declared modes
    backend: dict[str, Any] = field(default_factory=dict)  # identity_of(the backend)

    @property
    def failed(self) -> list[VectorResult]:
        return [r for r in self.results if r.failed]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out


def read_results(path: Path) -> list[VectorResult]:
    """Results in a JSON lines file (conformance.results_file); its header line, and a
    torn or garbled line (a killed run), are skipped."""
    results = []
    for doc in read_lines(path):
        if not is_header(doc):
            with contextlib.suppress(TypeError, KeyError):
                results.append(VectorResult.from_json(doc))
    return results


def mark_known(res: VectorResult, reason: str | None) -> None:
    """Turn a listed known failure's verdict into XFAIL (it failed) or XPASS (it passed),
    keeping the judge's verdict in ``known_failure``."""
    if reason is None or res.verdict in (SKIPPED, INFO, XFAIL, XPASS):
        return
    res.known_failure = res.verdict
    res.verdict = XFAIL if res.failed else XPASS
