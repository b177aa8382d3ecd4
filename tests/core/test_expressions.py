"""The expression parser on every expression tosa.xml contains, and hand-checked values."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from conformance.expressions import (
    Environment,
    ExpressionError,
    evaluate,
    parse_expr,
    parse_shape,
)
from conformance.spec import default_spec_path, load_spec


def _xml_expressions() -> tuple[set[str], set[str], set[str]]:
    """Every shape, level-limit and rank expression, read straight from the XML text."""
    root = etree.parse(str(default_spec_path())).getroot()
    shapes = {a.get("shape") for a in root.iter("argument")}
    limits = {lim.get("value") for lim in root.iter("levellimit")}
    ranks = {r.get(k) for r in root.iter("rank") for k in ("min", "max")}
    return shapes, limits, ranks


SHAPES, LIMITS, RANKS = _xml_expressions()


def test_the_file_has_the_expression_forms_we_expect() -> None:
    # The issue counts 35 shape forms and 29 level-limit forms in the seed tosa.xml.
    assert len(SHAPES) == 35
    assert len(LIMITS) == 29


@pytest.mark.parametrize("text", sorted(SHAPES))
def test_every_shape_expression_parses(text: str) -> None:
    shape = parse_shape(text)
    assert shape.text == text.strip()


@pytest.mark.parametrize("text", sorted(LIMITS))
def test_every_level_limit_parses_and_evaluates(text: str) -> None:
    node = parse_expr(text)
    # Bind every name to 3, every shape to rank 4 and every list to length 2.
    env = Environment(
        values={n: 3 for n in _names(text)},
        shapes={n: (1, 2, 3, 4) for n in ("shape", "shape1")},
        lists={n: [(1,), (2,)] for n in ("input1", "input_list", "output_list")},
    )
    assert isinstance(evaluate(node, env), int)


@pytest.mark.parametrize("text", sorted(RANKS))
def test_every_rank_bound_parses(text: str) -> None:
    assert evaluate(parse_expr(text), Environment({"MAX_RANK": 6})) in range(0, 7)


def _names(text: str) -> set[str]:
    import re

    return set(re.findall(r"[A-Za-z_]\w*", text)) - {"rank", "tensor_list_shape"}


def test_hand_checked_values() -> None:
    env = Environment(
        values={"MAX_RANK": 6, "W": 8, "C": 3, "M": 2, "dilation_y": 2, "KH": 3},
        shapes={"shape1": (1, 2, 3)},
        lists={"input1": [(1, 2), (3, 4), (5, 6)]},
    )
    assert evaluate(parse_expr("MAX_RANK - 1"), env) == 5
    assert evaluate(parse_expr("W/2 + 1"), env) == 5  # RFFT2D output width for W=8
    assert evaluate(parse_expr("C*M"), env) == 6
    assert evaluate(parse_expr("dilation_y * KH"), env) == 6
    assert evaluate(parse_expr("rank(shape1)"), env) == 3
    assert evaluate(parse_expr("tensor_list_shape(input1)"), env) == 3
    assert evaluate(parse_expr("7/2"), env) == 3  # integer division
    assert evaluate(parse_expr("(1 + 2) * 3"), env) == 9


def test_shape_evaluate_and_bind() -> None:
    s = parse_shape("[N,OH,OW,C*M]")
    assert s.rank == 4
    assert s.names() == {"N", "OH", "OW", "C", "M"}
    env = Environment({"N": 1, "OH": 4, "OW": 5, "C": 3, "M": 2})
    assert s.evaluate(env) == (1, 4, 5, 6)
    # Binding a weight shape [KH,KW,C,M] first fixes C and M; the output then checks C*M.
    env = Environment()
    assert parse_shape("[KH,KW,C,M]").bind((3, 3, 4, 2), env) == []
    assert s.bind((1, 7, 7, 8), env) == []
    problems = s.bind((1, 7, 7, 9), env)
    assert problems and "C * M" in problems[0] and "should be 8" in problems[0]


def test_named_and_scalar_shapes() -> None:
    env = Environment()
    assert parse_shape("shape1").bind((2, 3), env) == []
    assert env.shapes["shape1"] == (2, 3)
    assert parse_shape("shape1").bind((2, 4), env) == ["shape1 is [2, 3], got [2, 4]"]
    assert parse_shape("-").evaluate(env) == ()
    assert parse_shape("-").bind((1,), env)
    assert parse_shape("shape").rank is None


@pytest.mark.parametrize(
    "bad", ["", "[N,]", "N +", "foo(x)", "rank(", "1 $ 2", "[N", "(1 + 2", "a b"]
)
def test_bad_expressions_fail_clearly(bad: str) -> None:
    with pytest.raises(ExpressionError):
        if bad.startswith("["):
            parse_shape(bad)
        else:
            parse_expr(bad)


def test_unbound_names_fail_clearly() -> None:
    with pytest.raises(ExpressionError, match="'KH' is not bound"):
        evaluate(parse_expr("dilation_y * KH"), Environment({"dilation_y": 1}))
    with pytest.raises(ExpressionError, match="division by zero"):
        evaluate(parse_expr("a/b"), Environment({"a": 1, "b": 0}))


@given(st.data())
def test_arithmetic_matches_python(data: st.DataObject) -> None:
    a = data.draw(st.integers(0, 10_000), label="a")
    b = data.draw(st.integers(1, 10_000), label="b")
    c = data.draw(st.integers(0, 100), label="c")
    env = Environment({"a": a, "b": b, "c": c})
    assert evaluate(parse_expr("a/b + c"), env) == a // b + c
    assert evaluate(parse_expr("a - b * c"), env) == a - b * c


def test_spec_model_parsed_every_expression() -> None:
    spec = load_spec()
    parsed = {a.shape.text for op in spec.operators.values() for a in op.arguments}
    assert parsed == {s.strip() for s in SHAPES}
    limits = {lim.text for op in spec.operators.values() for _, lim in op.level_limits()}
    assert limits == LIMITS
