"""HVX instruction selection (codegen/hvx.rs): Halide's averaging,
saturating and absolute-difference intrinsics on 128-byte vectors become
single HVX instructions, and compute what the host JIT computes. Each
case runs under qemu-hexagon on inputs that include every extreme pair
(0 and the type's minimum and maximum) and compares bit for bit."""
import re

import numpy as np
import pytest

import ferrohalide as hl

from tests.aot.conftest import run
from tests.cross.harness import compare, run_on_target
from tests.cross.test_hexagon import TARGET, link_cmd, llvm_tool, qemu_hexagon  # noqa: F401 (fixtures)

TYPES = {"u8": (hl.UInt(8), np.uint8), "u16": (hl.UInt(16), np.uint16),
         "i16": (hl.Int(16), np.int16), "i32": (hl.Int(32), np.int32)}

# (intrinsic, type, the instruction's disassembly)
CASES = [
    ("halving_add", "u8", r"vavg\(v\d+\.ub,v\d+\.ub\)"),
    ("halving_add", "u16", r"vavg\(v\d+\.uh,v\d+\.uh\)"),
    ("halving_add", "i16", r"vavg\(v\d+\.h,v\d+\.h\)"),
    ("halving_add", "i32", r"vavg\(v\d+\.w,v\d+\.w\)"),
    ("rounding_halving_add", "u8", r"vavg\(v\d+\.ub,v\d+\.ub\):rnd"),
    ("rounding_halving_add", "u16", r"vavg\(v\d+\.uh,v\d+\.uh\):rnd"),
    ("rounding_halving_add", "i16", r"vavg\(v\d+\.h,v\d+\.h\):rnd"),
    ("rounding_halving_add", "i32", r"vavg\(v\d+\.w,v\d+\.w\):rnd"),
    ("halving_sub", "i16", r"vnavg\(v\d+\.h,v\d+\.h\)"),
    ("halving_sub", "i32", r"vnavg\(v\d+\.w,v\d+\.w\)"),
    ("saturating_add", "u8", r"vadd\(v\d+\.ub,v\d+\.ub\):sat"),
    ("saturating_add", "u16", r"vadd\(v\d+\.uh,v\d+\.uh\):sat"),
    ("saturating_add", "i16", r"vadd\(v\d+\.h,v\d+\.h\):sat"),
    ("saturating_add", "i32", r"vadd\(v\d+\.w,v\d+\.w\):sat"),
    ("saturating_sub", "u8", r"vsub\(v\d+\.ub,v\d+\.ub\):sat"),
    ("saturating_sub", "u16", r"vsub\(v\d+\.uh,v\d+\.uh\):sat"),
    ("saturating_sub", "i16", r"vsub\(v\d+\.h,v\d+\.h\):sat"),
    ("saturating_sub", "i32", r"vsub\(v\d+\.w,v\d+\.w\):sat"),
    ("absd", "u8", r"vabsdiff\(v\d+\.ub,v\d+\.ub\)"),
    ("absd", "u16", r"vabsdiff\(v\d+\.uh,v\d+\.uh\)"),
    ("absd", "i16", r"vabsdiff\(v\d+\.h,v\d+\.h\)"),
    ("absd", "i32", r"vabsdiff\(v\d+\.w,v\d+\.w\)"),
]


def extreme_pairs(dt, n, seed):
    """Two arrays of `n` values of `dt`: every pair of extreme values
    (0, 1, -1 or 2, the minimum, the maximum and one less), then random
    ones."""
    info = np.iinfo(dt)
    extremes = np.array([0, 1, -1 if info.min < 0 else 2, info.min, info.max, info.max - 1], dtype=dt)
    pa, pb = np.meshgrid(extremes, extremes)
    rng = np.random.default_rng(seed)
    return [np.resize(np.concatenate([p.ravel(), rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)]), n)
            for p in (pa, pb)]


def binary_case(name, type_name, out_dtype, fn, seed, registers=2):
    """A case for `run_on_target`: out[x] = fn(hl, a[x], b[x]) with `a`,
    `b` of `type_name`, vectorized `registers` HVX registers wide, over
    every extreme pair and random values."""
    ht, dt = TYPES[type_name]
    lanes = 128 // dt().itemsize

    def build(hl_=hl):
        x = hl_.Var("x")
        a = hl_.ImageParam(ht, 1, "a")
        b = hl_.ImageParam(ht, 1, "b")
        f = hl_.Func(name)
        f[x] = fn(hl_, a[x], b[x])
        f.vectorize(x, lanes * registers)
        n = lanes * registers * 3
        va, vb = extreme_pairs(dt, n, seed)
        return f, [a, b], [va.astype(dt), vb.astype(dt)], (n,), np.dtype(out_dtype)
    build.__name__ = name
    return build


def check_object_and_run(case, insn, tmp_path, link_cmd, qemu_hexagon, multiline=False):
    """`case`'s object holds the HVX instruction `insn` (a regex on
    llvm-objdump's disassembly, which decodes HVX only with --mattr), and
    its results under qemu-hexagon equal the host JIT's."""
    func, params, *_ = case()
    func.compile_to_object(str(tmp_path / "p.o"), params, "p", hl.Target(TARGET + "-no_runtime"))
    asm = run([llvm_tool("llvm-objdump"), "-d", "--mattr=+hvxv66,+hvx-length128b", str(tmp_path / "p.o")]).stdout
    assert re.search(insn, asm, re.M if multiline else 0), f"no {insn} in the object"
    got, want = run_on_target(case, tmp_path, TARGET, link_cmd, [qemu_hexagon])
    compare(got, want)


def lanewise(op, type_name):
    dt = TYPES[type_name][1]
    out = np.dtype(f"u{dt().itemsize}") if op == "absd" else np.dtype(dt)
    return binary_case(f"{op}_{type_name}", type_name, out, lambda hl_, a, b: getattr(hl_, op)(a, b), seed=7)


@pytest.mark.parametrize("op,type_name,insn", CASES, ids=[f"{c[0]}_{c[1]}" for c in CASES])
def test_lanewise_op_is_one_hvx_instruction_and_right(op, type_name, insn, tmp_path, link_cmd, qemu_hexagon):
    case = lanewise(op, type_name)
    check_object_and_run(case, insn, tmp_path, link_cmd, qemu_hexagon)


# Written out in wider arithmetic (lower/find_intrinsics.rs finds them):
# (name, types, out = f(hl, a, b, N, W), the instruction)
WIDE = {"u8": "UInt(16)", "u16": "UInt(32)", "i16": "Int(32)", "i32": "Int(64)"}
SIGNED_WIDE = {"u8": "Int(16)", "u16": "Int(32)", "i16": "Int(32)", "i32": "Int(64)"}


def _w(hl_, type_name, signed=False):
    spec = (SIGNED_WIDE if signed else WIDE)[type_name]
    return eval(f"hl_.{spec}", {"hl_": hl_})


WRITTEN = [
    ("rounding_average", ["u8", "u16", "i16", "i32"], r"vavg\([^)]*\):rnd",
     lambda hl_, a, b, n, w: hl_.cast(n, (hl_.cast(w, a) + hl_.cast(w, b) + 1) / 2)),
    ("rounding_average_shift", ["u8", "i16"], r"vavg\([^)]*\):rnd",
     lambda hl_, a, b, n, w: hl_.cast(n, (hl_.cast(w, a) + hl_.cast(w, b) + 1) >> 1)),
    ("average", ["u8", "u16", "i16", "i32"], r"vavg\(v\d+\.u?[bhw],v\d+\.u?[bhw]\)\s*$",
     lambda hl_, a, b, n, w: hl_.cast(n, (hl_.cast(w, a) + hl_.cast(w, b)) / 2)),
    ("saturated_sum", ["u8", "u16", "i16", "i32"], r"vadd\([^)]*\):sat",
     lambda hl_, a, b, n, w: hl_.saturating_cast(n, hl_.cast(w, a) + hl_.cast(w, b))),
    ("saturated_difference", ["u8", "u16", "i16", "i32"], r"vsub\([^)]*\):sat",
     lambda hl_, a, b, n, w: hl_.saturating_cast(n, hl_.cast(w, a) - hl_.cast(w, b))),
    ("absolute_difference", ["u8", "u16"], r"vabsdiff\(",
     lambda hl_, a, b, n, w: hl_.select(a > b, a - b, b - a)),
]
WRITTEN_CASES = [(name, t, insn, fn) for name, types, insn, fn in WRITTEN for t in types]


def written(name, type_name, fn):
    wide = _w(hl, type_name, "difference" in name)
    return binary_case(f"{name}_{type_name}", type_name, TYPES[type_name][1],
                       lambda hl_, a, b: fn(hl_, a, b, a.type(), wide), seed=11)


@pytest.mark.parametrize("name,type_name,insn,fn", WRITTEN_CASES, ids=[f"{c[0]}_{c[1]}" for c in WRITTEN_CASES])
def test_written_out_forms_become_hvx_instructions_and_stay_right(name, type_name, insn, fn, tmp_path, link_cmd,
                                                                   qemu_hexagon):
    case = written(name, type_name, fn)
    check_object_and_run(case, insn, tmp_path, link_cmd, qemu_hexagon, multiline=True)


# Narrowing and widening: (name, input type, output dtype, out = f(hl, a, b), the instruction)
RESIZING = [
    ("narrow_i16_u8", "i16", np.uint8, lambda hl_, a, b: hl_.saturating_cast(hl_.UInt(8), a), r"vpack\(v\d+\.h,v\d+\.h\):sat"),
    ("narrow_i16_i8", "i16", np.int8, lambda hl_, a, b: hl_.saturating_cast(hl_.Int(8), a), r"vpack\(v\d+\.h,v\d+\.h\):sat"),
    ("narrow_i32_u16", "i32", np.uint16, lambda hl_, a, b: hl_.saturating_cast(hl_.UInt(16), a), r"vpack\(v\d+\.w,v\d+\.w\):sat"),
    ("narrow_i32_i16", "i32", np.int16, lambda hl_, a, b: hl_.saturating_cast(hl_.Int(16), a), r"vpack\(v\d+\.w,v\d+\.w\):sat"),
    ("u8_sat_of_shift", "i16", np.uint8, lambda hl_, a, b: hl_.u8_sat((a + 8) >> 4), r"vpack\(v\d+\.h,v\d+\.h\):sat"),
    ("widening_mul_u8", "u8", np.uint16, lambda hl_, a, b: hl_.widening_mul(a, b), r"vmpy\(v\d+\.ub,v\d+\.ub\)"),
    ("widening_mul_i8", "i8", np.int16, lambda hl_, a, b: hl_.widening_mul(a, b), r"vmpy\(v\d+\.b,v\d+\.b\)"),
    ("widening_mul_u16", "u16", np.uint32, lambda hl_, a, b: hl_.widening_mul(a, b), r"vmpy\(v\d+\.uh,v\d+\.uh\)"),
    ("widening_mul_i16", "i16", np.int32, lambda hl_, a, b: hl_.widening_mul(a, b), r"vmpy\(v\d+\.h,v\d+\.h\)"),
    ("written_mul_u8", "u8", np.uint16, lambda hl_, a, b: hl_.u16(a) * hl_.u16(b), r"vmpy\(v\d+\.ub,v\d+\.ub\)"),
    ("written_mul_by_constant_i16", "i16", np.int32, lambda hl_, a, b: hl_.i32(a) * -300, r"vmpy\(v\d+\.h,v\d+\.h\)"),
    ("sum_of_products_u8", "u8", np.uint16, lambda hl_, a, b: hl_.u16(a) * 3 + hl_.u16(b) * 5 + hl_.u16(a),
     r"\+= vmpy\(v\d+\.ub,v\d+\.ub\)"),
    ("blur_taps_u8", "u8", np.uint16, lambda hl_, a, b: hl_.u16(a) + 2 * hl_.u16(b) + hl_.u16(b), r"\+= vmpy\(v\d+\.ub,v\d+\.ub\)"),
    ("sum_of_products_i16", "i16", np.int32, lambda hl_, a, b: hl_.i32(a) * -7 + hl_.i32(b) * 300 + hl_.i32(a) * hl_.i32(b),
     r"\+= vmpy\(v\d+\.h,v\d+\.h\)"),
    ("sum_of_products_i8", "i8", np.int16, lambda hl_, a, b: hl_.i16(a) * -3 + hl_.i16(b) * 100 + hl_.i16(a) * hl_.i16(a),
     r"\+= vmpy\(v\d+\.b,v\d+\.b\)"),
]
TYPES["i8"] = (hl.Int(8), np.int8)


def resizing(name, type_name, out_dtype, fn):
    return binary_case(name, type_name, out_dtype, fn, seed=13)


@pytest.mark.parametrize("name,type_name,out_dtype,fn,insn", RESIZING, ids=[c[0] for c in RESIZING])
def test_narrowing_and_widening_are_hvx_instructions_and_right(name, type_name, out_dtype, fn, insn, tmp_path,
                                                                link_cmd, qemu_hexagon):
    case = resizing(name, type_name, out_dtype, fn)
    check_object_and_run(case, insn, tmp_path, link_cmd, qemu_hexagon)


def clamped(width, type_name, lanes_per_vector=None):
    """out[x] = inp[clamp(x - 40, 0, width - 1)] + inp[a chain of clamps
    of x + 3] over 6 vectors: the clamp range holds a whole vector when
    `width` >= the vector's lanes (one dense load and a lane shift), else
    the per-lane gather."""
    ht, dt = TYPES[type_name]
    lanes = lanes_per_vector or 128 // dt().itemsize

    def build(hl_=hl):
        x = hl_.Var("x")
        inp = hl_.ImageParam(ht, 1, "inp")
        f = hl_.Func(f"clamped_{type_name}_{width}")
        chain = hl_.clamp(hl_.min(hl_.max(x + 3, 10) - 7, width + 60), 0, width - 1)
        f[x] = hl_.BoundaryConditions.repeat_edge(inp)[x - 40] + inp[chain]
        f.vectorize(x, lanes)
        info = np.iinfo(dt)
        v = np.random.default_rng(17).integers(info.min, info.max, width, dtype=dt, endpoint=True)
        return f, [inp], [v], (lanes * 6,), np.dtype(dt)
    build.__name__ = f"clamped_{type_name}_{width}"
    return build


@pytest.mark.parametrize("width,type_name", [(300, "u8"), (128, "u8"), (127, "u8"), (5, "u8"), (1, "u8"),
                                             (200, "u16"), (63, "u16"), (100, "i32"), (31, "i32")])
def test_clamped_loads_are_dense_loads_and_lane_shifts(width, type_name, tmp_path, link_cmd, qemu_hexagon):
    check_object_and_run(clamped(width, type_name), r"v\d+ = v(l)?align\(v\d+,v\d+,r\d+\)", tmp_path, link_cmd,
                         qemu_hexagon)
