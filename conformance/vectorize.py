"""A drawn case to a pack vector: ask the reference what the case must produce."""

from __future__ import annotations

from dataclasses import replace

from conformance.graph import Graph
from conformance.spec import Level, Spec
from reference.engine import evaluate
from reference.expectations import NotDescribable, expect
from reference.pseudocode_revisions import profiles_needed
from strategies.case import Case
from vectors.pack_model import Check, Provenance, Requirements, Vector


def case_to_vector(
    case: Case,
    spec: Spec,
    level: Level,
    *,
    name: str,
    kind: str,
    provenance: Provenance,
    clause: str | None = None,
    data_set: int = -1,
) -> Vector | None:
    """The vector for ``case`` as a ``kind`` vector, or None when the reference says the
    case is not one (a valid case that is not valid, an error case failing for another
    rule than ``clause``, a level case that is not unpredictable by a level check)."""
    if kind == "valid":
        try:
            expectation = expect(case.graph, case.inputs, spec=spec, level=level, data_set=data_set)
        except NotDescribable:
            return None  # no rule to check this output against: not a test
        if not expectation.outcome.valid:
            return None
        expected = dict(expectation.outcome.outputs)
        checks = {n: Check(c.descriptor, c.bound) for n, c in expectation.checks.items()}
        rule = None
    else:
        outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
        if outcome.rule is None:
            return None
        if kind == "error" and (
            outcome.kind != "error" or (clause is not None and outcome.rule.clause != clause)
        ):
            return None
        if kind == "level" and outcome.rule.kind != "LEVEL_CHECK":
            return None
        expected, checks, rule = {}, {}, outcome.rule.to_json()
    mode = spec.operator(case.operator).mode(case.mode)
    return Vector(
        name=name,
        operator=case.operator,
        mode=mode.mode,
        kind=kind,  # type: ignore[arg-type]
        graph=case.graph,
        inputs=case.inputs,
        expected=expected,
        checks=checks,
        requirements=_with_gated_profiles(
            spec,
            case.graph,
            _with_variable_ctc(spec, case.graph, Requirements.for_mode(spec, mode, level.name)),
        ),
        provenance=provenance,
        rule=rule,
        data_set=data_set,
    )


def _with_gated_profiles(spec: Spec, graph: Graph, requirements: Requirements) -> Requirements:
    """``requirements`` narrowed to the profiles an operator's attributes need under the
    revision's pseudocode (TOSA 1.1's ARITHMETIC_RIGHT_SHIFT with round: PRO-INT, from
    reference.pseudocode_revisions.profiles_needed): only an implementation of one of
    them must give the valid result (the others must fail the graph)."""
    needed: frozenset[str] = frozenset()
    for block in graph.blocks():
        for op in block.operators:
            needed |= profiles_needed(spec.revision, op.op, op.attributes)
    if not needed:
        return requirements
    kept = tuple(p for p in requirements.profiles if p in needed)
    return replace(requirements, profiles=kept or tuple(sorted(needed)))


def _with_variable_ctc(spec: Spec, graph: Graph, requirements: Requirements) -> Requirements:
    """``requirements`` and, when a compile-time-constant input of an operator is fed by
    a graph input, the extension that allows that (TOSA 1.0's EXT-DYNAMIC): only an
    implementation claiming it must take such a graph."""
    main = graph.main
    needed: set[str] = set()
    for op in main.operators:
        try:
            declared = spec.operator(op.op).inputs
        except KeyError:
            continue
        for arg, name in zip(declared, op.inputs, strict=False):
            if arg.ctc and name in main.inputs and arg.ctc_remove:
                needed |= min(arg.ctc_remove, key=sorted)
    if not needed - set(requirements.extensions):
        return requirements
    extensions = tuple(sorted(set(requirements.extensions) | needed))
    return replace(requirements, extensions=extensions)
