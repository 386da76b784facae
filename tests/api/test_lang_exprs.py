"""Expr operators, coercion rules and hl.* expression functions: the printed
form (repr) and the errors must match the reference exactly."""
import importlib
import warnings

import pytest

import ferrohalide as hl

from test_lang_helpers import assert_same, outcome, SETUP

COERCION = [
    "u8+u8", "u8+3", "u8+300", "u8+-1", "u8*1.5", "x*1.5", "x+2**40", "x+2**31", "x+(-2**31)",
    "x+2**63", "x+2**64", "u8+1e10", "f+1e40", "f+0.1", "d+0.1", "x+True", "b+1", "u8+i16",
    "i16+u8", "i16+x", "u8+f", "u32+x", "u32+i8", "hl.cast(hl.UInt(64),x)+x", "u8+i8", "u8-i8",
    "f+d", "b+b", "b==1", "x==True", "-b", "b*2", "u8+True", "f+True", "d+1.1",
    "3+x", "3-x", "3*u8", "3/x", "3//x", "3%x", "1.5+x", "1.5/x", "hl.f32(x) + 16777217",
]

ARITH = [
    "x/2", "x//2", "x%3", "u8/2", "f/2", "f//2", "x**2", "f**2", "2**x", "x**0.5", "u8 ** 2",
    "u8 ** u8", "x ** x", "x**-1", "f**-1", "-u8", "~u8", "~x", "~b", "~f",
]

BITWISE = [
    "u8<<1", "u8>>1", "x<<u8", "u8&3", "u8&x", "x&1.5", "b&1", "b&b", "b|True", "b^b", "f&f",
    "1 << u8", "1 << x", "u8 << -1", "x >> 2**40", "u8 << x", "u8 | 256", "x ^ 3",
]

COMPARE = [
    "x==1", "x<1.5", "u8<300", "u8<-1", "u8==256", "3 < x", "x != y", "x >= u8", "f <= 2",
]

CONVERSIONS = [
    "hl.Expr(3)", "hl.Expr(3.5)", "hl.Expr(True)", "hl.Expr(2**40)", "hl.Expr(2**31)",
    "hl.Expr(1.1)", "hl.Expr(1e300)", "hl.Expr(x)", "hl.Expr(1e-7)", "hl.Expr(-2.5)",
    "hl.f64(1e-9)", "hl.Expr(float('nan'))", "hl.Expr(float('-inf'))", "hl.Expr('str')",
    "bool(x)", "x+None", "x+'a'", "divmod(x, 2)", "abs(x)", "(x+1).type()", "u8.type()",
]

FUNCTIONS = [
    "hl.logical_not(x)", "hl.logical_not(x>1)", "(x>1).logical_not()", "x.logical_not()",
    "hl.round(f)", "hl.round(x)", "hl.floor(x)", "hl.floor(d)", "hl.ceil(u8)", "hl.trunc(d)",
    "hl.sqrt(x)", "hl.sqrt(d)", "hl.sin(u8)", "hl.cos(f)", "hl.exp(d)", "hl.log(x)",
    "hl.atan(x)", "hl.tanh(d)", "hl.fract(f)", "hl.fract(x)", "hl.is_nan(f)", "hl.is_nan(x)",
    "hl.is_inf(d)", "hl.is_finite(f)", "hl.erf(d)", "hl.hypot(x, f)", "hl.atan2(x, d)",
    "hl.pow(x, 2)", "hl.pow(d, 0.5)", "hl.fast_exp(x)", "hl.fast_log(d)", "hl.fast_inverse(f)",
    "hl.fast_inverse_sqrt(f)", "hl.fast_inverse(d)",
    "hl.min(x, 3)", "hl.min(u8, 3)", "hl.min(u8, 300)", "hl.min(x, 1.5)", "hl.min(x, u8)",
    "hl.min(1, 2)", "hl.min(x, 2, 3)", "hl.max(x, y, 4)", "hl.min(2**40, x)", "hl.max(u8, 2.5)",
    "hl.min(x)", "hl.clamp(x, 0, 10)", "hl.clamp(u8, 0, 300)", "hl.clamp(u8, 0, 10)",
    "hl.clamp(f, 0, 1)", "hl.clamp(x, 0.5, 1)", "hl.clamp(u8, x, 10)", "hl.abs(x)", "hl.abs(u8)",
    "hl.abs(f)", "hl.absd(x, u8)", "hl.absd(f, 1)",
    "hl.select(x > 0, x, 0)", "hl.select(x>0, u8, 0)", "hl.select(x>0, 0, u8)",
    "hl.select(x>0, 1.5, 0)", "hl.select(x>0, u8, x)", "hl.select(x>0, x, x<3, 2, 5)",
    "hl.select(1, x, 2)", "hl.select(x, x, 2)", "hl.select(x>0, f, 1)", "hl.select(x>0, 1, 1.5)",
    "hl.select(x>0, x)", "hl.select(x>0, x, x>1, 2)", "hl.mux(x, [u8, 2])", "hl.mux(x, [u8, x])",
    "hl.lerp(u8, u8, 1.5)", "hl.lerp(f, f, x)", "hl.lerp(u8, d, 0.5)",
    "hl.cast(hl.UInt(8), 300)", "hl.cast(hl.Float(32), 3)", "hl.cast(hl.Int(8), 2.7)",
    "hl.cast(hl.Int(32), x)", "hl.cast(hl.Int(32), 'a')", "hl.u8(x)", "hl.u8_sat(x)", "hl.i32(f)",
    "hl.f32(x)", "hl.f64(1.1)", "hl.f32(1.1)", "hl.u8(300)", "hl.i64(2**40)", "hl.u64(x)",
    "hl.i16_sat(f)", "hl.saturating_cast(hl.UInt(8), x)", "hl.reinterpret(hl.UInt(32), f)",
    "hl.reinterpret(hl.UInt(16), f)", "hl.popcount(x)", "hl.popcount(f)",
    "hl.count_leading_zeros(u8)", "hl.count_trailing_zeros(x)", "hl.div_round_to_zero(x, 3)",
    "hl.mod_round_to_zero(u8, 3)", "hl.saturating_add(u8, 3)", "hl.saturating_sub(x, u8)",
    "hl.halving_add(u8, u8)", "hl.rounding_halving_add(u8, u8)", "hl.halving_sub(u8, u8)",
    "hl.widening_add(u8, u8)", "hl.widening_mul(u8, u8)", "hl.widening_sub(u8, u8)",
    "hl.widening_add(x, x)", "hl.widening_mul(i8, u8)", "hl.mul_shift_right(u8, u8, 3)",
    "hl.rounding_mul_shift_right(u8, u8, 3)", "hl.likely(x)", "hl.likely_if_innermost(x)",
    "hl.undef(hl.Int(32))", "hl.Int(32).max() + 1", "hl.strict_float(f)",
    "hl.widening_shift_left(u8, 3)", "hl.widening_shift_left(u8, -3)",
    "hl.widening_shift_right(u8, x)", "hl.widening_shift_right(x, u8)",
    "hl.rounding_shift_right(u8, 3)", "hl.rounding_shift_left(i16, -2)",
    "hl.rounding_shift_right(x, u8)", "hl.widening_shift_left(u8, 300)",
    "hl.rounding_shift_left(u8, -256)", "hl.widening_shift_left(f, 2)",
    "hl.widen_right_add(hl.u16(x), u8)", "hl.widen_right_mul(i16, i8)",
    "hl.widen_right_sub(u8, u8)", "hl.widen_right_add(f, u8)", "hl.widen_right_mul(i16, u8)",
    "hl.widen_right_add(hl.u64(x), hl.u64(x))", "hl.extract_bits(hl.UInt(8), x, 3)",
    "hl.extract_bits(hl.Float(32), hl.u64(x), x)", "hl.concat_bits([u8, u8])",
    "hl.concat_bits([u8, i8])", "hl.concat_bits([])", "hl.concat_bits([u8, u8, u8])",
    "hl.unsafe_promise_clamped(u8, 0, 300)", "hl.unsafe_promise_clamped(x, 0, 10)",
    "hl.unsafe_promise_clamped(x, f, 10)", "hl.memoize_tag(x, 3, x)", "hl.memoize_tag(u8)",
    "hl.scatter([x, x + 1])", "hl.gather([u8])", "hl.target_bits()",
    "hl.target_natural_vector_size(hl.Float(32))", "hl.target_arch_is(hl.TargetArch.ARM)",
    "hl.target_os_is(hl.TargetOS.Windows)", "hl.target_has_feature(hl.TargetFeature.AVX512)",
    "hl.random_float(f)", "hl.random_uint(u8)", "hl.require(x, x)",
]


@pytest.mark.parametrize("code", COERCION + ARITH + BITWISE + COMPARE + CONVERSIONS + FUNCTIONS)
def test_same_as_reference(code):
    assert_same(code)


@pytest.mark.parametrize(
    "code",
    ["hl.lerp(u8, u8, u8)", "hl.lerp(0, u8, 0.5)", "hl.lerp(f, f, 0.5)", "hl.lerp(x, x, u8)",
     "hl.lerp(i8, i8, u8)", "hl.mux(x, [1, 2, 3])", "hl.print(x, 'hi')", "hl.print_when(x > 0, x)"],
)
def test_result_types_match_reference(code):
    """lerp, mux and print are lowered differently (their printed forms differ);
    the result types must still match."""
    ours = outcome(hl, f"({code}).type()")
    from test_lang_helpers import ref_module

    ref = outcome(ref_module(), f"({code}).type()")
    assert ours == ref


def test_shift_by_a_float_is_an_error():
    """Halide 21 builds `x << 1.5` and misbehaves when it is compiled (the misuse
    corpus's shift_by_float); ferrohalide reports it when the Expr is built."""
    x = hl.Var("x")
    with pytest.raises(hl.HalideError, match="must be an integer or unsigned integer"):
        x << 1.5


def test_lossy_float_literal_warns():
    x = hl.Var("x")
    with pytest.warns(RuntimeWarning, match="will be interpreted as a float32"):
        x + 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x + 0.5  # exact in float32: no warning


@pytest.mark.parametrize("module", ["ferrohalide", "halide"])
def test_an_explicit_f32_of_a_float_does_not_warn(module):
    """`f32(0.1)` asks for the float32 rounding, so it is not a lossy literal
    (as in Halide); other casts of a lossy float still warn."""
    m = importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert repr(m.f32(0.1)) == "<halide.Expr of type float32: 0.100000f>"
        assert repr(m.f32(1e20)) == "<halide.Expr of type float32: 100000002004087734272.000000f>"
        assert repr(m.f64(0.1)) == "<halide.Expr of type float64: 0.100000>"
    with pytest.warns(RuntimeWarning, match="will be interpreted as a float32"):
        m.u8(m.Var("x") + 0.1)


def test_expr_bool_raises_value_error():
    x = hl.Var("x")
    with pytest.raises(ValueError, match="cannot be converted to a bool"):
        bool(x + 1)
    with pytest.raises(ValueError):
        (x > 1) and (x < 3)  # noqa: B015


def test_undefined_expr():
    e = hl.Expr()
    assert not e.defined()
    assert repr(e) == "<undefined halide.Expr>"
    with pytest.raises(hl.HalideError):
        e + 1


def test_no_halide_import():
    import sys

    assert "halide" not in hl.__dict__
    mod = sys.modules["ferrohalide"]
    src = open(mod.__file__).read()
    assert "import halide" not in src


def test_setup_runs():
    env = {"hl": hl}
    exec(SETUP, env)
    assert str(env["u8"].type()) == "uint8"
