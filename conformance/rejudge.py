"""Second readings of an output that failed its plain check.

The plain check compares a backend's output with the reference result under the
output's compliance descriptor.  Two things the spec allows are not visible in that
reference, and are tried only when the plain check fails, so that a backend that does
not need them pays nothing:

* **zero-ties**: the operator chose a zero between -0.0 and +0.0 (CLAMP, MAXIMUM,
  MINIMUM, MAX_POOL2D, REDUCE_MAX, REDUCE_MIN); either sign is accepted there
  (reference.zero_sign).
* **flush-outputs** / **flush-inputs**: fp16, bf16 and fp32 denormals "must either be
  supported or flushed to zero" (introduction, Supported Number Formats).  The
  outputs reading accepts a zero of the same sign where the reference is subnormal
  (for a chain of operators, the intermediate results are flushed too); the inputs
  reading re-evaluates the graph with every operator's subnormal operands of those
  types flushed (reference.flushing), with new bounds, and accepts flushed outputs as
  well.  A type the backend declares ``supported`` is never flushed; fp8 never is.

A reading passes when the whole output passes the same descriptor's check against
the adjusted reference.  The first one that passes is the output's reading; the
types it had to flush are the evidence for the certificate's observed modes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.dtypes import DType
from conformance.spec import load_spec
from reference import compliance
from reference.compliance.denormals import (
    DENORMAL_TYPES,
    DenormalMode,
    flushable,
    flushed_reference,
    subnormal,
)
from reference.engine import Evaluator
from reference.zero_sign import TIE_OPERATORS, tied_zeros
from vectors.pack_model import LoadedVector

PLAIN = "plain"
ZERO_TIES = "zero-ties"
FLUSH_OUTPUTS = "flush-outputs"
FLUSH_INPUTS = "flush-inputs"
READINGS = (PLAIN, ZERO_TIES, FLUSH_OUTPUTS, FLUSH_INPUTS)
NOTES = {
    ZERO_TIES: "passed with the sign of a zero chosen between -0 and +0 not compared",
    FLUSH_OUTPUTS: "passed with denormals flushed (outputs)",
    FLUSH_INPUTS: "passed with denormals flushed (inputs)",
}


@dataclass(frozen=True)
class Retried:
    verdict: compliance.Verdict
    reading: str
    flushed: frozenset[DType]  # the types whose flushing this reading needed


@dataclass
class _Source:
    """One evaluation of the vector's graph: expected outputs, their checks, and the
    evaluator whose operand tables produced them."""

    expected: Mapping[str, np.ndarray]
    checks: Mapping[str, Any]  # output -> object with .descriptor and .bound
    evaluator: Evaluator | None
    flushed: frozenset[DType] = frozenset()


def _arrays(values: Mapping[str, object]) -> dict[str, np.ndarray]:
    """The outputs held as arrays: a block-scaled output (its values and scales) has
    no second reading (none of its types is flushed, and it ties no zero)."""
    return {n: v for n, v in values.items() if isinstance(v, np.ndarray)}


@dataclass
class Rejudge:
    """The second readings of one vector, each evaluated at most once."""

    vector: LoadedVector
    declared: Mapping[DType, DenormalMode] = field(default_factory=dict)
    _sources: dict[str, _Source | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        present = {t.dtype for b in self.vector.graph.blocks() for t in b.tensors.values()}
        self.types = flushable(self.declared) & frozenset(present)

    def retry(
        self, name: str, actual: np.ndarray, partner_actual: np.ndarray | None = None
    ) -> Retried | None:
        """The first second reading under which output ``name`` passes, if any;
        ``partner_actual``: what the backend returned for the output ``name`` is judged
        with (a SCALED_VALUES output's scales), whose reference each reading has."""
        main = self.vector.graph.main
        out = main.tensors[name].dtype
        index = next((i for i, op in enumerate(main.operators) if name in op.outputs), None)
        op = main.operators[index].op if index is not None else None
        ties = op in TIE_OPERATORS and out.is_float
        attempts: list[tuple[str, str]] = [(ZERO_TIES, "plain")] if ties else []
        if self.types:
            blocks = self.vector.graph.blocks()
            chain = len(main.operators) > 1 or any(b is not main for b in blocks)
            attempts += [(FLUSH_OUTPUTS, "intermediate" if chain else "plain")]
            attempts += [(FLUSH_INPUTS, "inputs")]
        for reading, key in attempts:
            src = self._source(key)
            if src is None or name not in src.checks or src.checks[name].descriptor is None:
                continue
            if reading == FLUSH_INPUTS and not src.flushed:
                continue  # nothing was flushed: the plain reading again
            expected = np.asarray(src.expected[name])
            adjusted = expected
            if ties and index is not None:
                adjusted = self._untie(src, index, adjusted, actual)
            flushed = set(src.flushed)
            if reading != ZERO_TIES and out in self.types:
                before = adjusted
                adjusted = flushed_reference(adjusted, actual, out)
                if adjusted is not before:
                    flushed.add(out)
            if reading == ZERO_TIES and adjusted is expected:
                continue
            if reading == FLUSH_OUTPUTS and not flushed:
                continue
            check = src.checks[name]
            partner = None
            other = check.descriptor.partner
            if other is not None and partner_actual is not None:
                scale_t = main.tensors[other].dtype
                partner = compliance.Partner(
                    other, scale_t, np.asarray(src.expected[other]), partner_actual
                )
            try:
                verdict = compliance.check(
                    adjusted, check.descriptor, actual, check.bound, partner=partner
                )
            except ValueError:
                continue  # a reading whose checks cannot apply (e.g. another bound shape)
            if verdict.passed:
                return Retried(verdict, reading, frozenset(flushed))
        return None

    def _source(self, key: str) -> _Source | None:
        if key not in self._sources:
            self._sources[key] = self._evaluate(key)
        return self._sources[key]

    def _evaluate(self, key: str) -> _Source | None:
        v = self.vector
        spec = load_spec()
        level = spec.level(v.requirements.level)
        if key == "plain":
            evaluator = Evaluator(v.graph, spec, level)
            outcome = evaluator.run(v.inputs)
            if not outcome.valid:
                return None
            return _Source(_arrays(v.expected), v.checks, evaluator)
        from reference.flushing import flushed_expectation

        try:
            exp, evaluator = flushed_expectation(
                v.graph,
                v.inputs,
                self.types,
                spec=spec,
                level=level,
                data_set=v.data_set,
                intermediate_only=key == "intermediate",
            )
        except ValueError:
            return None  # an output no rule describes under this reading
        if not exp.outcome.valid:
            return None  # flushed operands broke a rule: no such reading
        outputs = _arrays(exp.outcome.outputs)
        return _Source(outputs, exp.checks, evaluator, frozenset(evaluator.flushed))

    def _untie(
        self, src: _Source, index: int, expected: np.ndarray, actual: np.ndarray
    ) -> np.ndarray:
        """``expected`` with the backend's zero wherever the reference chose a zero
        between -0 and +0 and the backend returned the other one."""
        if src.evaluator is None:
            return expected
        main = self.vector.graph.main
        ctx = src.evaluator.context(main, index, src.evaluator.main_values)
        tied = tied_zeros(ctx)
        if tied is None:
            return expected
        act = np.asarray(actual).astype(np.float64)
        take = tied & (expected == 0) & (act == 0) & (np.signbit(act) != np.signbit(expected))
        return np.where(take, act, expected) if take.any() else expected


def denormal_results(actual: np.ndarray, dt: DType) -> bool:
    """Whether a backend's output holds a denormal of its type: evidence that the
    backend supports denormals of that type in its results."""
    return dt in DENORMAL_TYPES and bool(np.any(subnormal(actual, dt)))
