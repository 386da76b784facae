"""Compiled code is cached per Func and reused until something it was
specialized on changes."""
import numpy as np
import pytest

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


def test_a_producer_changed_between_realizes_recompiles():
    # Realizes in a row skip walking the Funcs while no Func anywhere has
    # changed; a change to a producer (not the output) must still be seen.
    x = hl.Var("x")
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = x * 2
    f[x] = g[x] + 1
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f.realize([8])), np.arange(8) * 2 + 1)
    g.compute_root()
    np.testing.assert_array_equal(np.asarray(f.realize([8])), np.arange(8) * 2 + 1)
    # A bound too narrow for the region f reads: seen only if f recompiles.
    g.bound(x, 0, 4)
    for _ in range(2):
        with pytest.raises(hl.HalideError, match="do not cover required region"):
            f.realize([8])


def test_a_pipeline_and_its_first_output_alone_keep_their_own_graphs():
    x = hl.Var("x")
    f, g = hl.Func("f"), hl.Func("g")
    f[x] = x
    g[x] = f[x] * 5
    p = hl.Pipeline([f, g])
    for _ in range(2):
        a, b = p.realize([4])
        np.testing.assert_array_equal(np.asarray(b), np.arange(4) * 5)
        np.testing.assert_array_equal(np.asarray(f.realize([4])), np.arange(4))
