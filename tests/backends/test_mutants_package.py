"""The mutant catalogue as a package: one module per reference/ops group, one
registration style (``@mutant``), nothing parsed at import, and the public names of
``conformance.backends.mutants`` that third-party mutants use."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import conformance.backends.mutants as mutants
from conformance.backends.mutants import Mutant, catalogue, mutant
from reference.registry import load_all

PACKAGE = Path(mutants.__file__).parent
REFERENCE_OPS = Path(load_all()["ADD"].__code__.co_filename).parent
# Catalogue modules that are not a reference/ops group, and why.
CROSS_GROUP = {
    "denormals": "flushing changes every operator with a flushed type's mode",
    "levels": "a level limit applies to every operator tosa.xml gives it",
    "rewrites": "a graph rewrite spans the operators of its pattern (strategies.rewrites)",
    "boundaries": "an off-by-one check of a rule that several groups' operators share",
    "sequences": "the operator sequence rule: a freedom of chains of operators",
}


def test_the_catalogue_keeps_its_mutants() -> None:
    assert len(catalogue()) >= 85  # the package split lost none; new ones add to it


def test_one_module_per_reference_group() -> None:
    groups = {p.stem for p in REFERENCE_OPS.glob("*.py") if p.stem != "__init__"}
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "tools"}
    assert modules - groups == set(CROSS_GROUP)
    for m in catalogue().values():
        fn = m.wrap if m.wrap is not None else m.helpers[0].replace
        module = fn.__module__.rsplit(".", 1)[1]
        if module in CROSS_GROUP:
            continue
        # A group module's mutants change operators of that group.
        homes = {load_all()[op].__module__ for op in m.operators}
        assert f"reference.ops.{module}" in homes, m.name


def test_one_registration_style() -> None:
    for path in PACKAGE.glob("*.py"):
        if path.stem in ("__init__", "tools"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        assert "wraps" not in calls and "register" not in calls, path.name
        assert "Mutant" not in calls, f"{path.name} builds a Mutant by hand: use @mutant"


def test_importing_the_catalogue_parses_no_tosa_xml() -> None:
    # A fresh interpreter: every catalogue module imported, the spec cache still empty.
    modules = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    code = (
        "import importlib, conformance.spec as s\n"
        + "".join(f"importlib.import_module('conformance.backends.mutants.{m}')\n" for m in modules)
        + "print(s.load_revision.cache_info().currsize, s._active is None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0 True", out.stderr


def test_public_names_are_kept() -> None:
    for name in (
        "Mutant",
        "HelperPatch",
        "helpers_installed",
        "with_attrs",
        "with_inputs",
        "with_values",
        "skipping_error_if",
        "available_mutants",
        "get_mutant",
        "MutantBackend",
        "mutant",
        "catalogue",
    ):
        assert name in mutants.__all__ and hasattr(mutants, name), name


def test_a_third_party_mutant_with_a_spec_family() -> None:
    # operators may be a function of the spec model, resolved when the catalogue builds.
    before = len(catalogue())

    @mutant(
        "test-only-negate-everything",
        lambda spec: [op.name for op in spec.groups()["elementwise-unary"]][:2],
        "all",
        "negates every output",
        "any vector",
    )
    def _negated(original, ctx):  # type: ignore[no-untyped-def]
        return {k: -v for k, v in original(ctx).items()}

    try:
        m = catalogue()["test-only-negate-everything"]
        assert isinstance(m, Mutant) and m.wrap is _negated and len(m.operators) == 2
        with pytest.raises(RuntimeError, match="defined twice"):
            mutant("test-only-negate-everything", ["ABS"], "", "", "")(_negated)
    finally:
        mutants._forget("test-only-negate-everything")
    assert len(catalogue()) == before


def test_defined_at_is_the_registration_line() -> None:
    path, line = mutants.defined_at("conv-dilation-ignored")
    text = Path(path).read_text(encoding="utf-8").splitlines()[line - 1]
    assert Path(path).name == "tensor_conv.py" and text.startswith("@mutant(")
    # A helper that registers for its callers records their line (stacklevel=2).
    path, line = mutants.defined_at("ftz-fp8")
    assert Path(path).read_text(encoding="utf-8").splitlines()[line - 1].startswith("_ftz(")
    with pytest.raises(KeyError):
        mutants.defined_at("no-such-mutant")


def test_wraps_is_a_deprecated_alias() -> None:
    with pytest.warns(DeprecationWarning, match="use @mutant"):
        decorate = mutants.wraps("test-only-old-style", ["ABS"], "all", "bug", "catch")
    try:
        decorate(lambda original, ctx: original(ctx))
        assert catalogue()["test-only-old-style"].operators == ("ABS",)
    finally:
        mutants._forget("test-only-old-style")


def _seam_key(owner: object, attribute: str) -> str:
    module = owner if isinstance(owner, type(sys)) else sys.modules[owner.__module__]
    prefix = "" if isinstance(owner, type(sys)) else f"{owner.__qualname__}."  # type: ignore[attr-defined]
    return f"{module.__name__.removeprefix('reference.ops.')}.{prefix}{attribute}"


def test_every_helper_a_mutant_patches_is_a_documented_seam() -> None:
    """Mutants patch public, documented helpers only (reference.registry.SEAMS), and
    docs/mutants.md lists every seam: a rename is then a visible API change."""
    from reference.registry import SEAMS

    load_all()
    patched = {_seam_key(h.owner, h.attribute) for m in catalogue().values() for h in m.helpers}
    assert patched and patched <= set(SEAMS), patched - set(SEAMS)
    docs = (Path(__file__).parents[2] / "docs" / "mutants.md").read_text()
    for key, fn in SEAMS.items():
        assert not key.rsplit(".", 1)[-1].startswith("_"), key
        assert fn.__doc__, f"seam {key} has no docstring"
        assert f"`{key}`" in docs, f"docs/mutants.md does not list the seam {key}"


def test_a_mutant_module_reaches_no_private_reference_helper() -> None:
    """What a mutant uses of the reference is public: no ``module._name`` of a module
    imported from reference/ in the catalogue's source."""
    root = Path(mutants.__file__).parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        aliases = {
            (a.asname or a.name)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reference")
            for a in node.names
        }
        private = [
            f"{node.value.id}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
        ]
        assert not private, f"{path.name} uses private reference helpers: {private}"


def test_a_wrapper_meets_block_scaled_operands_only_when_it_says_it_handles_them() -> None:
    """A wrapper that reads arrays (ctx.arg) raises on a TOSA 1.1 composite: where the
    mutant does not declare ``composites``, the operator runs as the reference instead,
    so no crash is scored as a kill."""
    from conformance import dtypes
    from conformance.block_tensor import BlockScaled
    from conformance.builder import single_operator_graph
    from conformance.spec import load_revision, spec_in_use
    from reference import mx
    from reference.engine import Evaluator

    spec = load_revision("1.1-draft")
    fp8 = dtypes.dtype("bs32_fp8ue8m0_fp8e4m3")
    x = BlockScaled.of(
        fp8,
        np.arange(64, dtype=np.float64).reshape(2, 32).astype(dtypes.FP8E4M3.storage),
        mx.from_bits(np.array([[127], [130]]), dtypes.FP8UE8M0),
    )

    def reads_an_array(original, ctx):  # type: ignore[no-untyped-def]
        return {"output": -ctx.arg("input1")}

    with spec_in_use(spec):
        graph = single_operator_graph(
            "REVERSE", [("x", (2, 32), fp8)], [("y", (2, 32), fp8)], {"axis": 0}, spec=spec
        )
        level = spec.level("8K")
        for composites in (False, True):
            m = Mutant("t", ("REVERSE",), "all", "negates", "any", wrap=reads_an_array,
                       composites=composites)  # fmt: skip
            evaluator = Evaluator(graph, spec, level)
            evaluator.ops = m.operator_table(evaluator.ops)
            if composites:
                with pytest.raises(TypeError, match="block-scaled"):
                    evaluator.run({"x": x})
                continue
            y = evaluator.run({"x": x}).outputs["y"]
            assert isinstance(y, BlockScaled)
            # the reference's REVERSE: row 1 (scale 2**3) first
            assert y.scales.view(np.uint8).reshape(-1).tolist() == [130, 127]
