"""hl.Type, hl.Var and the small classes: same behaviour as the reference."""
import pytest

import ferrohalide as hl

from test_lang_helpers import assert_same

TYPES = [
    "hl.Int(8)", "hl.UInt(8)", "hl.Float(32)", "hl.Bool()", "hl.Int(32, 4)",
    "hl.Int(32).with_lanes(4)", "hl.Type(hl.TypeCode.Int, 16, 1)", "hl.TypeCode.Int",
    "hl.Int(8).max()", "hl.Int(8).min()", "hl.Float(32).max()", "hl.UInt(64).max()",
    "hl.Int(64).min()", "hl.Int(8) == hl.Int(8)", "hl.Int(8) != hl.UInt(8)", "hl.Int(8).bits()",
    "hl.Int(8).code()", "hl.Int(8).lanes()", "hl.Int(8).is_int()", "hl.Bool().is_uint()",
    "hl.Bool().is_bool()", "hl.Handle()", "hl.Int(8).is_vector()", "hl.Int(8).is_scalar()",
    "hl.Int(8).with_code(hl.TypeCode.UInt)", "hl.Int(8).element_of()", "hl.Int(8).bytes()",
    "hl.Int(8).is_float()", "hl.Int(8).with_bits(16)", "hash(hl.Int(8))", "str(hl.Float(64))",
    "hl.Int(16).can_represent(hl.UInt(8))", "hl.UInt(8).can_represent(hl.Int(8))",
    "hl.TailStrategy.Auto", "hl.TailStrategy.RoundUp", "list(hl.TailStrategy.__members__)",
    "hl.Type()", "hl.Type().lanes()", "hl.Type().bits()", "hl.Type().code()",
    "hl.Type(hl.TypeCode.UInt, 8)", "hl.Bool().is_max(1)", "hl.Bool().is_max(2)",
    "hl.Bool().is_min(0)", "hl.UInt(32).is_max(4294967295)", "hl.UInt(32).is_max(4294967296)",
    "hl.UInt(32).is_min(-1)", "hl.Int(64).is_min(-9223372036854775808)", "hl.Int(32).is_max(2147483647)",
    "hl.Float(32).is_max(1)", "hl.Handle().same_handle_type(hl.Handle())",
    "hl.Int(8).is_max(2**70)",
]

VARS = [
    "hl.Var('z')", "x.name()", "hl.Var.implicit(0)", "hl._", "hl._0", "hl._9",
    "hl.Var.outermost()", "x.is_implicit()", "hl.Var('_0').is_implicit()", "x == y", "x + y",
    "hl.vars('a b')", "x.same_as(x)", "hl.Var('x').same_as(x)", "str(x)", "hash(x)",
    "hl.Expr(x).type()",
]


@pytest.mark.parametrize("code", TYPES + VARS)
def test_same_as_reference(code):
    assert_same(code)


def test_anonymous_vars_are_unique():
    a, b = hl.Var(), hl.Var()
    assert a.name() != b.name()
    assert a.name().startswith("v") and b.name().startswith("v")


def test_halide_error_is_exception():
    assert issubclass(hl.HalideError, Exception)


def test_derivative_is_made_by_propagate_adjoints():
    # As in Halide, hl.Derivative has no constructor of its own.
    with pytest.raises(TypeError):
        hl.Derivative()
