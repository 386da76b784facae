"""Vectorized reads whose lanes are not consecutive: strided reads
(`f[2 * x + c]`, downsampling) become whole-vector dense loads and a shuffle, and
upsampling reads (`f[x / k]`) become k interleaved dense loads, instead of
one load per lane. Values equal the reference's for every stride, divisor,
offset and tail; the code has no per-lane inserts."""
import numpy as np
import pytest

from .harness import differential
from .input_helpers import arr


def _image(hl, w=61, h=5):
    # Integers: the reference contracts float multiply-adds (see ARCHITECTURE.md).
    im = hl.ImageParam(hl.Int(32), 2, "im")
    _image.data = np.random.default_rng(5).integers(-1000, 1000, (h, w), dtype=np.int32)
    im.set(hl.Buffer(_image.data))
    return im


@differential()
@pytest.mark.parametrize("stride", [2, 3, 4])
@pytest.mark.parametrize("offset", [-1, 0, 1])
@pytest.mark.parametrize("vec", [4, 8, 16])
def test_strided_reads(hl, stride, offset, vec):
    x, y = hl.Var("x"), hl.Var("y")
    im = _image(hl)
    g = hl.Func("g")
    g[x, y] = im[stride * x + offset + 1, y] * 2 + im[stride * x, y]
    g.vectorize(x, vec, hl.TailStrategy.GuardWithIf)
    return arr(g.realize([(60 - 2) // stride - 1, 5]))


@differential()
@pytest.mark.parametrize("stride", [2, 3, 4])
@pytest.mark.parametrize("taps", [(-1, 0, 1), (-1, 0, 1, 2), (0, 2), (1, 2, 3, 4)])
@pytest.mark.parametrize("vec", [4, 8, 16])
@pytest.mark.parametrize("tail", ["ShiftInwards", "GuardWithIf"])
def test_strided_taps_sharing_loads(hl, stride, taps, vec, tail):
    # A downsample's taps (im[s x + c] for several c) read a span's every
    # element with stride 2: they share dense loads of s * vec elements
    # where the target permutes cheaply (overlapping_loads.rs).
    x, y = hl.Var("x"), hl.Var("y")
    width = 2 * vec + 3  # two whole vectors and a tail
    im = _image(hl, w=stride * width + 8)
    g = hl.Func("g")
    g[x, y] = sum(im[stride * x + 1 + c, y] * (3 + c) for c in taps)
    g.vectorize(x, vec, getattr(hl.TailStrategy, tail))
    return arr(g.realize([width, 5]))


@differential()
@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("offset", [-2, 0, 1, 5])
def test_upsampling_reads(hl, k, offset):
    x, y = hl.Var("x"), hl.Var("y")
    im = _image(hl)
    g = hl.Func("g")
    g[x, y] = im[(x + offset) // k + 1, y] + im[x // k, y] * 3
    g.vectorize(x, 12 if k == 3 else 16, hl.TailStrategy.GuardWithIf)
    return arr(g.realize([57, 5]))


def test_no_per_lane_loads(tmp_path):
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Float(32), 2, "im")
    up = hl.Func("up")
    up[x, y] = (im[x // 2, y] + im[(x + 1) // 2, y]) / 2
    up.vectorize(x, 16)
    path = str(tmp_path / "up.s")
    up.compile_to_assembly(path, [im], "up", hl.Target("x86-64-linux-avx2-fma-sse41-avx-f16c"))
    text = open(path).read()
    assert "vinsertps" not in text and "vgather" not in text


@differential()
@pytest.mark.parametrize("k, vec", [(2, 2), (4, 4), (3, 3), (2, 4)])
def test_upsampling_reads_of_one_element_per_part(hl, k, vec):
    # k parts of one lane each: no dense part to load (fuzz seed 145).
    x, y = hl.Var("x"), hl.Var("y")
    im = _image(hl)
    g = hl.Func("g")
    g[x, y] = im[x // k, y] - im[(x + 1) // k, y]
    g.vectorize(x, vec, hl.TailStrategy.GuardWithIf)
    return arr(g.realize([23, 5]))


@pytest.mark.parametrize("vec, target, permute", [
    (16, "x86-64-linux-avx512_skylake", "vpermt2ps"),
    (8, "x86-64-linux-avx2-fma-sse41-avx-f16c", None),
])
def test_strided_reads_are_whole_vector_loads(tmp_path, vec, target, permute):
    # A stride-2 read of 16 lanes spans 31 elements: read as two whole
    # vectors (the second ending at the last element), not as an odd-sized
    # one that is split into pieces and inserts.
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Float(32), 2, "im")
    down = hl.Func("down")
    down[x, y] = im[2 * x - 1, y] + 2 * im[2 * x, y] + im[2 * x + 1, y]
    down.vectorize(x, vec)
    path = str(tmp_path / "down.s")
    down.compile_to_assembly(path, [im], "down", hl.Target(target))
    text = open(path).read()
    assert "vinsertps" not in text and "vgather" not in text and "vmovsd" not in text
    if permute:
        assert permute in text


@differential()
def test_very_wide_gathers(hl):
    # Nested vectorize splits multiply to 192 lanes: gathers that wide are
    # compiled in pieces of 64 lanes (LLVM takes minutes on a 768-lane
    # gather; fuzz seed 20482). Values as the reference's.
    x = hl.Var("x")
    data = np.random.default_rng(3).integers(0, 200, 300, dtype=np.int32)
    im = hl.Buffer(data)
    idx = hl.Buffer(np.random.default_rng(4).integers(0, 300, 400, dtype=np.int32))
    g = hl.Func("g")
    g[x] = im[hl.clamp(idx[x], 0, 299)] * 3 + x
    g.vectorize(x, 2).vectorize(x, 8).vectorize(x, 12)
    return arr(g.realize([384]))


AVX2 = "x86-64-linux-avx2-fma-sse41-avx-f16c"


def _gather_ir(tmp_path, tail, bits=8, target=AVX2):
    import ferrohalide as hl
    x = hl.Var("x")
    im = hl.ImageParam(hl.UInt(bits), 1, "im")
    g = hl.Func("g")
    g[x] = im[(x * 7) % 300]
    g.vectorize(x, 256, tail)
    path = str(tmp_path / "g.ll")
    g.compile_to_llvm_assembly(path, [im], "g", hl.Target(target))
    return open(path).read()


def test_masked_gathers_are_at_most_64_lanes(tmp_path):
    import ferrohalide as hl
    # The GuardWithIf tail's gather is predicated, so it stays an LLVM
    # masked gather: in pieces of 64 lanes.
    text = _gather_ir(tmp_path, hl.TailStrategy.GuardWithIf)
    assert "llvm.masked.gather.v64i8" in text and "llvm.masked.gather.v256i8" not in text


@pytest.mark.parametrize("bits", [8, 32])
def test_unmasked_gathers_are_scalar_loads(tmp_path, bits):
    import ferrohalide as hl
    # Halide's form: one scalar load per lane, each through its own
    # scalar index (faster than x86's hardware gather on a histogram).
    # The IR optimizer sees them as all-lanes-on intrinsics, written out
    # per lane after it (expand_gathers).
    text = _gather_ir(tmp_path, hl.TailStrategy.ShiftInwards, bits=bits)
    assert not [l for l in text.splitlines() if "call" in l and "@llvm.masked.gather" in l]
    assert text.count(f"load i{bits}") >= 256


@differential()
@pytest.mark.parametrize("vec", [4, 8])
def test_scatter_with_aliasing_lanes(hl, vec):
    # A vectorized update whose lanes store to the same element: the lane
    # later in the loop's order wins, as in the serial loop.
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = -1
    r = hl.RDom([(0, 32)])
    f[r.x // 3] = r.x * 10
    f.update().allow_race_conditions().vectorize(r.x, vec)
    return arr(f.realize([12]))


@differential()
def test_histogram_inside_vectorized_consumer(hl):
    # The histogram is computed per vector of its consumer: its update is an
    # unpredicated gather and scatter per pixel, one element per lane.
    x = hl.Var("x")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    inp.set(hl.Buffer(np.random.default_rng(8).integers(0, 256, (19, 23), dtype=np.uint8)))
    r = hl.RDom([(0, inp.width()), (0, inp.height())])
    hist = hl.Func("hist")
    hist[x] = 0
    hist[hl.i32(inp[r.x, r.y]) >> 4] += 1
    out = hl.Func("out")
    out[x] = hist[x] * 3 + 1
    out.vectorize(x, 4)
    return arr(out.realize([16]))


def test_a_store_to_one_buffer_does_not_reload_another(tmp_path):
    import ferrohalide as hl
    # Each buffer's loads and stores carry an alias tag of their own
    # (`buffer_tbaa`), so the stores of the unrolled channel loop do not
    # make LLVM load im[x] again after each one (Halide tags them alike).
    x, c = hl.Var("x"), hl.Var("c")
    im = hl.ImageParam(hl.Float(32), 1, "im")
    f = hl.Func("f")
    f[x, c] = im[x] * hl.f32(c + 1)
    f.bound(c, 0, 3).reorder(c, x).unroll(c)
    path = str(tmp_path / "f.ll")
    f.compile_to_llvm_assembly(path, [im], "f", hl.Target("x86-64-linux-sse41-avx-avx2-no_runtime"))
    text = open(path).read()
    assert "!tbaa" in text
    assert text.count("load float") == 1
    assert text.count("store float") == 3


def _inner_loops(path):
    """The bodies of the backward-branching loops of an assembly file
    (labels and directives dropped), innermost first within a function."""
    import re
    lines = [l.strip() for l in open(path).read().splitlines()]
    labels = {l[:-1]: i for i, l in enumerate(lines) if re.match(r"^\.LBB\w+:$", l)}
    loops = []
    for i, l in enumerate(lines):
        m = re.match(r"j\w+\s+(\.LBB\w+)$", l)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            body = [b for b in lines[labels[m.group(1)] + 1:i + 1] if b and not b.startswith(("#", "."))]
            loops.append(body)
    return loops


def test_a_clamped_vector_base_costs_only_its_clamp(tmp_path):
    """An unpartitioned downsample (`Partition.Never`) keeps the ShiftInwards
    clamp `min(x.x * 8, e - 8)` in its index `2 * (clamp + down.min.0) -
    im.min.0`: the clamped term is added last, so the rest is hoisted and
    the loop does the clamp (a compare and a conditional move) and nothing
    more per vector (it had reloaded two mins from the stack)."""
    import ferrohalide as hl
    im = hl.ImageParam(hl.Float(32), 2, "im")
    x, y = hl.Var("x"), hl.Var("y")
    down = hl.Func("down")
    down[x, y] = im[2 * x - 1, y] + 2 * im[2 * x, y] + im[2 * x + 1, y]
    down.vectorize(x, 8).partition(x, hl.Partition.Never)
    path = str(tmp_path / "down.s")
    down.compile_to_assembly(path, [im], "down", hl.Target("x86-64-linux-avx2-fma-sse41-avx-f16c"))
    loops = [b for b in _inner_loops(path) if any(i.startswith("vmovups") and "%ymm" in i for i in b) and len(b) < 40]
    assert loops, "no vector loop found"
    body = loops[0]
    assert not any("(%rsp)" in i for i in body), body
    assert not any(i.startswith(("sub", "imul")) for i in body), body


def test_a_histogram_bins_address_is_hoisted(tmp_path):
    """`hist[i32(im[r.x, r.y])] += 1` indexes hist at the loaded value minus
    hist's min: the subtraction is folded into a hoisted base address, not
    done per pixel (the inner loop is a load, an increment of memory, the
    counter and the branch)."""
    import re
    import ferrohalide as hl
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    x = hl.Var("x")
    r = hl.RDom([(0, 2560), (0, 16)])
    hist = hl.Func("hist")
    hist[x] = 0
    hist[hl.i32(im[r.x, r.y])] += 1
    path = str(tmp_path / "hist.s")
    hist.compile_to_assembly(path, [im], "hist", hl.Target("x86-64-linux-avx2-fma-sse41-avx-f16c"))
    lines = [l.strip() for l in open(path).read().splitlines()]
    # The loop whose body increments memory at a register-indexed address.
    loops = []
    for i, l in enumerate(lines):
        if re.match(r"incl\s+\(%\w+,%\w+,4\)", l):
            start = max(j for j in range(i) if lines[j].endswith(":"))
            end = next(j for j in range(i, len(lines)) if lines[j].startswith("j"))
            loops.append([b for b in lines[start + 1:end + 1] if b and not b.startswith("#")])
    assert loops, "no histogram increment found"
    body = loops[0]
    assert not any(b.startswith(("sub", "add")) and "%rsp" not in b for b in body), body
