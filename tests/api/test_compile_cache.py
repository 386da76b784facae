"""Compiled code is cached per Func and reused until something it was
specialized on changes."""
import numpy as np

import ferrohalide as hl


def test_recompiles_when_a_bound_buffer_changes_layout():
    # The reference raises "Constraint violated: b.stride.0 (4) == 1" here,
    # because its cached code assumed the old dense layout; ferrohalide
    # recompiles instead and gives the right answer.
    x, y = hl.Var("x"), hl.Var("y")
    a = (np.arange(16, dtype=np.int32) * 3).reshape(4, 4)
    b = hl.Buffer(a)
    f = hl.Func("f")
    f[x, y] = b[x, y] * 2
    np.testing.assert_array_equal(np.asarray(f.realize([4, 4])), a * 2)
    b.transpose(0, 1)
    np.testing.assert_array_equal(np.asarray(f.realize([4, 4])), a.T * 2)


def test_schedule_change_recompiles():
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 3
    first = np.array(np.asarray(f.realize([37])))
    f.vectorize(x, 8)
    second = np.asarray(f.realize([37]))
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(second, np.arange(37) * 3)
