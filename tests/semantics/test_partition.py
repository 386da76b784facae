"""Loop partitioning control: hl.Partition and the partition directives on Funcs
and Stages (issue 14, item 4). Results never depend on the policy; the loop nest
does (checked on ferrohalide's lowered statement), and Always fails where nothing
can be partitioned."""
import pytest

import ferrohalide

import numpy as np

from .harness import buffer, differential
from .input_helpers import error_key


def _blur(hl, policy_fn):
    x, y = hl.Var("x"), hl.Var("y")
    inp = buffer(hl, np.random.default_rng(3).integers(0, 1000, (12, 20)).astype(np.uint16))
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    f = hl.Func("f")
    f[x, y] = clamped[x - 1, y] + clamped[x + 1, y] + clamped[x, y + 1]
    policy_fn(hl, f, x, y)
    return f


POLICIES = {
    "auto": lambda hl, f, x, y: f.partition(x, hl.Partition.Auto),
    "never_x": lambda hl, f, x, y: f.partition(x, hl.Partition.Never),
    "never_list": lambda hl, f, x, y: f.never_partition([x, y]),
    "never_all": lambda hl, f, x, y: f.never_partition_all(),
    "always_x": lambda hl, f, x, y: f.always_partition([x]),
    "vectorized_never": lambda hl, f, x, y: f.vectorize(x, 8).never_partition_all(),
}


@pytest.mark.parametrize("policy", sorted(POLICIES))
@differential()
def test_partition_policies_keep_results(hl, policy):
    return _blur(hl, POLICIES[policy]).realize([20, 12])


@differential()
def test_partition_on_update_stage(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 10)])
    inp = buffer(hl, np.random.default_rng(1).integers(-50, 50, 10).astype(np.int32))
    c = hl.BoundaryConditions.constant_exterior(inp, 0)
    f = hl.Func("f")
    f[x] = x
    f[x] += c[x + r.x - 5]
    f.update(0).never_partition([x]).partition(r.x, hl.Partition.Never)
    f.update(0).never_partition_all()
    return f.realize([10])


@differential()
def test_partition_unknown_var(hl):
    x, z = hl.Var("x"), hl.Var("z")
    f = hl.Func("f")
    f[x] = x
    return error_key(hl, lambda: f.partition(z, hl.Partition.Never),
                     "could not find var z to set loop partition policy")


@differential()
def test_always_partition_with_nothing_to_partition(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 2
    f.always_partition([x])
    return error_key(hl, lambda: f.realize([10]),
                     "Loop Partition Policy is set to Always for ",
                     ".s0.x, but no loop partitioning was performed.")


@differential()
def test_partition_enum(hl):
    P = hl.Partition
    return [(n, int(v), str(v), repr(v)) for n, v in P.__members__.items()]


def test_never_keeps_the_loop_whole(tmp_path):
    """Never really leaves the loop whole (no prologue / steady state / epilogue in
    the lowered statement) where Auto partitions the same pipeline."""
    hl = ferrohalide
    text = {}
    for name in ("auto", "never_x"):
        path = str(tmp_path / (name + ".stmt"))
        _blur(hl, POLICIES[name]).compile_to_lowered_stmt(path, [])
        text[name] = open(path).read()
    assert ".s0.x.prologue" in text["auto"]
    assert ".s0.x.prologue" not in text["never_x"]
    assert ".s0.x.epilogue" not in text["never_x"]
    assert ".s0.y.prologue" in text["never_x"]


@differential()
@pytest.mark.parametrize("inner_tail", ["RoundUp", "GuardWithIf"])
def test_always_partition_of_a_fused_loop_over_a_shifted_split(hl, inner_tail):
    """Fuzz seed 50016: the ShiftInwards clamp of `xo * 8` bounds a loop
    fused from xo, through `xo = t / 4`; Halide partitions that loop,
    ferrohalide's solver read no division and `always_partition` raised."""
    x, y = hl.Var("x"), hl.Var("y")
    xo, xi, v, t = hl.Var("xo"), hl.Var("xi"), hl.Var("v"), hl.Var("t")
    outs = []
    for width in [8, 13, 21]:
        f = hl.Func("f")
        f[x, y] = x * 3 + y
        f.split(x, xo, xi, 8)
        f.split(xi, xi, v, 2 if inner_tail == "RoundUp" else 3, getattr(hl.TailStrategy, inner_tail))
        f.vectorize(v).reorder(xi, xo).fuse(xi, xo, t)
        f.always_partition([t])
        out = f.realize([width, 3])
        assert np.array_equal(np.asarray(out), np.add.outer(np.arange(3), 3 * np.arange(width)))
        outs.append(out)
    return outs


def test_a_clamp_of_a_wide_shift_keeps_its_lower_end_in_every_partition():
    """Fuzz seed 67760 (TRIAGE.md H38): Halide 21's loop partitioning drops
    the lower end of `clamp(c << s, -16384, 16384)` in the loops it splits
    off a `constant_exterior` read, giving -2^30 where the clamp's value is
    -16384. Checked against NumPy (Halide itself is wrong here)."""
    hl = ferrohalide
    x, y = hl.Var("x"), hl.Var("y")
    a = hl.Buffer(np.array([[-2, -1, 2, -2]], dtype=np.int8))
    s = hl.Buffer(np.array([[29, 29, 29, 3, 20, 29]] * 2, dtype=np.int8))
    bc = hl.BoundaryConditions.constant_exterior(a, 1)
    f = hl.Func("f")
    shift = hl.clamp(hl.cast(hl.UInt(32), hl.clamp(hl.f64(s[x, y]), 0.0, 1073741824.0)), 0, 29)
    f[x, y] = hl.clamp(hl.clamp(hl.i32(bc[x, y]), -2, 2) << shift, -16384, 16384)
    values = np.array([[-2, -1, 2, -2, 1, 1], [1] * 6])
    shifts = np.array([[29, 29, 29, 3, 20, 29]] * 2)
    want = np.clip(np.clip(values, -2, 2) << shifts, -16384, 16384)
    assert np.array(f.realize([6, 2])).tolist() == want.tolist()
