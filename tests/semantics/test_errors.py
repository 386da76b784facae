"""User errors: both modules must raise, and the same kind of exception (the
reference decides: hl.HalideError, or the builtin Python exception it raises)."""
import numpy as np

from .harness import differential


@differential(expect_error=True)
def test_realize_undefined_func(hl):
    f = hl.Func("undefined")
    f.realize([4])


@differential(expect_error=True)
def test_call_with_wrong_number_of_args(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    g = hl.Func("g")
    g[x] = f[x]
    g.realize([4])


@differential(expect_error=True)
def test_realize_with_wrong_number_of_sizes(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    f.realize([4])


@differential(expect_error=True)
def test_schedule_unknown_var(hl):
    x, y, z = hl.Var("x"), hl.Var("y"), hl.Var("z")
    f = hl.Func("f")
    f[x, y] = x + y
    f.parallel(z)
    f.realize([4, 4])


@differential(expect_error=True)
def test_select_with_mismatched_types(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.select(x > 2, hl.u8(x), hl.f32(x))
    f.realize([4])


@differential()
def test_redefinition_is_an_update_not_an_error(hl):
    """Halide accepts f[x] = ...; f[x] = ... : the second is an update definition
    that hides the first (Halide prints a warning on stdout, no exception)."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x] = x + 1
    return f.realize([4])


@differential(expect_error=True)
def test_constant_that_does_not_fit(hl):
    x = hl.Var("x")
    hl.u8(x) + 300


@differential(expect_error=True)
def test_bitwise_and_of_mixed_signedness(hl):
    x = hl.Var("x")
    hl.u8(x) & hl.i8(x)


@differential(expect_error=True)
def test_bitwise_not_of_float(hl):
    x = hl.Var("x")
    ~hl.f32(x)


@differential(expect_error=True)
def test_logical_not_of_int(hl):
    x = hl.Var("x")
    hl.logical_not(x)


@differential(expect_error=True)
def test_expr_to_python_bool(hl):
    x = hl.Var("x")
    if x > 1:  # noqa: SIM108 - the conversion itself is the error
        pass


@differential(expect_error=True)
def test_python_abs_of_expr(hl):
    x = hl.Var("x")
    abs(hl.i8(x))


@differential(expect_error=True)
def test_signed_overflow_while_constant_folding(hl):
    f = hl.Func("f")
    f[()] = hl.Expr(2 ** 31 - 1) + 1
    f.realize([])


@differential(expect_error=True)
def test_input_buffer_out_of_bounds(hl):
    x = hl.Var("x")
    b = hl.Buffer(np.arange(4, dtype=np.int32))
    f = hl.Func("f")
    f[x] = b[x + 1]
    f.realize([4])


@differential(expect_error=True)
def test_realize_into_buffer_of_wrong_type(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.i32(x)
    f.realize(hl.Buffer(hl.Float(32), [4]))


@differential(expect_error=True)
def test_vectorize_without_factor_and_unknown_extent(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f.vectorize(x)
    f.realize([16])


@differential(expect_error=True)
def test_func_value_undefined_var_on_rhs(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x] = y
    f.realize([4])
