"""hl.Buffer: differential tests against the reference (halide==21.0.0).

Each `same(body)` runs `body(hl)` once with ferrohalide and once with the
reference and compares what comes back (plain Python data, or the exception
class name). Tests named `*_ours` cover behaviour where the reference crashes,
reads uninitialised memory or has undefined behaviour; there ferrohalide's
behaviour is documented by the assertion.
"""
import gc
import os
import pathlib
import re

import numpy as np
import pytest

import ferrohalide

REPO = pathlib.Path(__file__).resolve().parents[2]


def _ref():
    return pytest.importorskip("halide")


def outcome(hl, body):
    try:
        return ("ok", body(hl))
    except Exception as e:  # noqa: BLE001 - we compare the exception class
        return ("raise", type(e).__name__)


def same(body):
    """Run body against both modules; return ferrohalide's result."""
    ours = outcome(ferrohalide, body)
    ref = outcome(_ref(), body)
    assert ours == ref, f"ferrohalide: {ours!r}\nreference:   {ref!r}"
    return ours[1]


def same_error(body, message=None):
    """Both raise the same exception class (and, optionally, message text)."""
    msgs = []
    for hl in (ferrohalide, _ref()):
        with pytest.raises(Exception) as info:
            body(hl)
        msgs.append((type(info.value).__name__, str(info.value)))
    assert msgs[0][0] == msgs[1][0], msgs
    if message is not None:
        for _, m in msgs:
            assert message in m, msgs
    return msgs[0]


def dims(b):
    return [(b.dim(i).min(), b.dim(i).extent(), b.dim(i).stride()) for i in range(b.dimensions())]


def values(b):
    """All elements in Halide order (dimension 0 fastest), as Python values."""
    out = []
    b.for_each_element(lambda p: out.append(b[p]))
    return out


# ---------------------------------------------------------------------------
# NumPy -> Buffer
# ---------------------------------------------------------------------------

ARRAYS = {
    "c2": lambda: np.arange(12, dtype=np.int32).reshape(3, 4),
    "f2": lambda: np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)),
    "c3": lambda: np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    "f3": lambda: np.asfortranarray(np.arange(24, dtype=np.uint8).reshape(2, 3, 4)),
    "c4": lambda: np.arange(120, dtype=np.int16).reshape(2, 3, 4, 5),
    "c1": lambda: np.arange(7, dtype=np.float64),
    "step": lambda: np.arange(48, dtype=np.uint16).reshape(6, 8)[::2, 1::3],
    "neg": lambda: np.arange(12, dtype=np.int32).reshape(3, 4)[::-1, ::-1],
    "T": lambda: np.arange(12, dtype=np.float32).reshape(3, 4).T,
    "interleaved": lambda: np.ndarray(dtype=np.uint8, shape=(7, 13, 3), strides=(3, 21, 1)),
}


@pytest.mark.parametrize("reverse_axes", [True, False])
@pytest.mark.parametrize("kind", sorted(ARRAYS))
def test_from_ndarray_shape(kind, reverse_axes):
    def body(hl):
        a = ARRAYS[kind]()
        b = hl.Buffer(a, "b_" + kind, reverse_axes)
        out = [dims(b), b.name(), str(b.type()), b.dimensions()]
        if kind != "interleaved":  # uninitialised memory
            out.append(values(b))
        return out

    same(body)


def test_from_ndarray_keywords():
    a = np.zeros((3, 4), np.float32)
    same(lambda hl: dims(hl.Buffer(a, reverse_axes=False)))
    same(lambda hl: (dims(hl.Buffer(buffer=a, name="kw")), hl.Buffer(buffer=a, name="kw").name()))
    same(lambda hl: dims(hl.Buffer(a, "n", reverse_axes=True)))


def test_zero_copy_numpy_to_buffer():
    def body(hl):
        a = np.zeros((200, 300), dtype=np.int32)
        b = hl.Buffer(a)
        a[12, 34] = 56
        seen = b[34, 12]
        b[56, 34] = 12
        return seen, int(a[34, 56]), b.dim(1).stride()

    assert same(body) == (56, 12, 300)


def test_zero_copy_no_reverse():
    def body(hl):
        a = np.zeros((200, 300), dtype=np.int32)
        b = hl.Buffer(a, "x", False)
        a[12, 34] = 56
        b[56, 34] = 12
        return b[12, 34], int(a[56, 34]), dims(b)

    same(body)


def test_zero_copy_buffer_to_numpy():
    def body(hl):
        b = hl.Buffer(hl.Int(16), [4, 6])
        b.fill(0)
        b[1, 2] = 42
        shared = np.asarray(b)
        copied = np.array(b, copy=True)
        b[1, 2] = 3
        shared[5, 3] = 9
        return (shared.shape, shared.strides, str(shared.dtype), shared.flags.writeable,
                int(shared[2, 1]), int(copied[2, 1]), b[3, 5])

    assert same(body)[4:] == (3, 42, 9)


def test_memoryview_of_buffer():
    def body(hl):
        b = hl.Buffer(hl.UInt(16), [5, 3])
        b.fill(7)
        m = memoryview(b)
        return m.format, m.shape, m.strides, m.readonly, m.itemsize, m.nbytes, m.tolist()

    same(body)


def test_bytes_of_strided_buffer():
    same(lambda hl: bytes(hl.Buffer(np.arange(12, dtype=np.uint8)[::3])))
    same(lambda hl: bytes(hl.Buffer(np.arange(12, dtype=np.uint8).reshape(3, 4)).cropped(0, 1, 2)))


@pytest.mark.parametrize("reverse", [True, False])
def test_buffer_to_numpy_cropped_and_reversed(reverse):
    def body(hl):
        b0 = hl.Buffer(hl.Int(16), [4, 6])
        for x in range(4):
            for y in range(6):
                b0[x, y] = x + 10 * y
        c0 = b0.copy()
        c0.crop(dimension=0, min=1, extent=2)
        c = c0 if reverse else c0.reverse_axes()
        arr = np.asarray(c)
        c0[1, 2] = 5
        return arr.shape, arr.strides, arr.tolist(), dims(c)

    same(body)


def test_round_trip_through_numpy():
    def body(hl):
        a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
        b = hl.Buffer(a)
        back = np.asarray(b)
        return back.shape, back.strides, bool(np.shares_memory(a, back)), bool((back == a).all())

    assert same(body)[2:] == (True, True)


def test_buffer_from_bytearray_and_memoryview():
    def body(hl):
        ba = bytearray(range(6))
        b = hl.Buffer(ba)
        b[2] = 200
        mv = memoryview(bytearray(range(8))).cast("H")
        b2 = hl.Buffer(mv)
        return dims(b), ba[2], str(b2.type()), dims(b2), b2[1]

    same(body)


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.ulonglong, np.longlong, np.intc, np.int_, np.float32, np.float64]


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).char)
def test_dtype_mapping(dt):
    def body(hl):
        a = np.ones(3, dt)
        b = hl.Buffer(a)
        v = b[1]
        back = np.asarray(b)
        return str(b.type()), repr(v), type(v).__name__, str(back.dtype), memoryview(b).format

    same(body)


@pytest.mark.parametrize("t", ["Bool", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16",
                               "UInt32", "UInt64", "Float16", "Float32", "Float64"])
def test_type_to_dtype(t):
    def body(hl):
        name = t.rstrip("0123456789")
        bits = t[len(name):]
        ty = getattr(hl, name)(int(bits)) if bits else hl.Bool()
        b = hl.Buffer(ty, [2, 3])
        a = np.asarray(b)
        return str(b.type()), b.type() == ty, str(a.dtype), a.shape, a.strides

    same(body)


def test_unsupported_dtypes():
    same_error(lambda hl: hl.Buffer(np.zeros(3, np.complex64)), "Unsupported Buffer<> type.")
    same_error(lambda hl: hl.Buffer(np.zeros(3, "S4")))
    same_error(lambda hl: hl.Buffer(hl.BFloat(16), [2])[0], "Unsupported Buffer<> type.")
    same_error(lambda hl: hl.Buffer(hl.BFloat(16), [2]).fill(0), "Unsupported Buffer<> type.")


def test_uint64_from_numpy_ours():
    # Halide 21 rejects NumPy's uint64 ("L") by accident; ferrohalide takes it.
    b = ferrohalide.Buffer(np.array([1, 2**64 - 1], dtype=np.uint64))
    assert str(b.type()) == "uint64"
    assert b[1] == 2**64 - 1


def test_float16_ours():
    # The reference can build float16 buffers but cannot read elements
    # (TypeError); ferrohalide returns Python floats.
    a = np.asfortranarray(np.linspace(-3, 3, 24, dtype=np.float16).reshape(2, 3, 4))
    b = ferrohalide.Buffer(a)
    assert str(b.type()) == "float16"
    assert b[1, 2, 0] == float(a[0, 2, 1])
    b[1, 2, 0] = 0.1
    assert a[0, 2, 1] == np.float16(0.1)
    for v in [65504.0, 1e-7, -2.5, 7e4, float("inf"), 3.0e-5]:
        b[0, 0, 0] = v
        with np.errstate(over="ignore"):
            assert float(a[0, 0, 0]) == float(np.float16(v))
    back = np.asarray(b)
    assert back.dtype == np.float16 and np.shares_memory(a, back)


def test_float16_shape_matches_reference():
    same(lambda hl: (dims(hl.Buffer(np.zeros((4, 5, 3), np.float16, order="F"))),
                     np.asarray(hl.Buffer(np.zeros((4, 5, 3), np.float16))).dtype.char))


# ---------------------------------------------------------------------------
# Element access
# ---------------------------------------------------------------------------

def test_get_set_forms():
    def body(hl):
        b = hl.Buffer(hl.UInt(8), [3, 4])
        b.fill(0)
        b[1, 2] = 7
        b[(2, 3)] = 8
        b[[0, 1]] = 9
        b[np.int64(2), 0] = np.uint8(10)
        b[True, 0] = 11
        one = hl.Buffer(hl.Int(32), [5])
        one.fill(0)
        one[3] = -4
        return b[1, 2], b[[2, 3]], b[(0, 1)], b[2, 0], b[1, 0], one[3], one[(3,)], values(b)

    same(body)


def test_set_value_conversions():
    def body(hl):
        f = hl.Buffer(hl.Float(32), [3])
        f[0] = 0.1
        f[1] = 2
        f[2] = True
        d = hl.Buffer(hl.Float(64), [1])
        d[0] = 0.1
        bl = hl.Buffer(hl.Bool(), [4])
        bl[0] = True
        bl[1] = 0
        bl[2] = 2
        bl[3] = 0.5
        i = hl.Buffer(hl.Int(64), [2])
        i[0] = 2**63 - 1
        i[1] = -(2**63)
        u = hl.Buffer(hl.UInt(64), [1])
        u[0] = 2**64 - 1
        u8 = hl.Buffer(hl.UInt(8), [1])
        u8[0] = 255
        return (f[0], f[1], f[2], d[0], [bl[k] for k in range(4)], i[0], i[1], u[0], u8[0],
                type(f[0]).__name__, type(bl[0]).__name__, type(u[0]).__name__)

    same(body)


@pytest.mark.parametrize("t,value", [
    ("UInt8", 256), ("UInt8", -1), ("Int8", 128), ("Int16", 70000), ("Int32", 1.5),
    ("Int32", "x"), ("Float32", "x"), ("UInt64", 2**64), ("Int64", 2**63), ("Int32", None),
])
def test_set_bad_value(t, value):
    def body(hl):
        name = t.rstrip("0123456789")
        b = hl.Buffer(getattr(hl, name)(int(t[len(name):])), [2])
        b[0] = value

    same_error(body)


@pytest.mark.parametrize("t,value", [("UInt8", 300), ("Int32", 2.5), ("Float32", "x")])
def test_fill_bad_value(t, value):
    def body(hl):
        name = t.rstrip("0123456789")
        hl.Buffer(getattr(hl, name)(int(t[len(name):])), [2]).fill(value)

    same_error(body)


def test_wrong_number_of_coordinates():
    for key in [(1,), (1, 2, 3), ()]:
        same_error(lambda hl: hl.Buffer(hl.Int(16), [4, 6])[key], "Incorrect number of dimensions.")

        def setter(hl):
            hl.Buffer(hl.Int(16), [4, 6])[key] = 1

        same_error(setter, "Incorrect number of dimensions.")
    same_error(lambda hl: hl.Buffer.make_scalar(hl.UInt(8))[0], "Incorrect number of dimensions.")


@pytest.mark.parametrize("key,msg", [
    ((-1, 2), "index -1 is out of bounds for axis 0 with min=0, extent=4"),
    ((1, 6), "index 6 is out of bounds for axis 1 with min=0, extent=6"),
    ((4, 0), "index 4 is out of bounds for axis 0 with min=0, extent=4"),
])
def test_out_of_bounds(key, msg):
    same_error(lambda hl: hl.Buffer(hl.Int(16), [4, 6])[key], msg)

    def setter(hl):
        hl.Buffer(hl.Int(16), [4, 6])[key] = 42

    same_error(setter, msg)


def test_out_of_bounds_with_mins():
    def body(hl):
        b = hl.Buffer(hl.Int(16), [4, 6])
        b.fill(3)
        b.set_min([10, 20])
        return b[10, 20], b[13, 25]

    same(body)
    same_error(lambda hl: (lambda b: (b.set_min([10, 20]), b[9, 20]))(hl.Buffer(hl.Int(16), [4, 6])),
               "index 9 is out of bounds for axis 0 with min=10, extent=4")


def test_bad_index_types():
    same_error(lambda hl: hl.Buffer(hl.UInt(8), [2, 2])[1.5, 0])
    same_error(lambda hl: hl.Buffer(hl.UInt(8), [2, 2])[2**40, 0])
    same_error(lambda hl: hl.Buffer(hl.UInt(8), [2, 2])["a", 0])


def test_scalar_buffer():
    def body(hl):
        s = hl.Buffer.make_scalar(hl.Float(32))
        s.fill(0)
        s[()] = 2.5
        a = s[()]
        s.fill(32)
        return s.dimensions(), a, s[()], str(s), np.asarray(s).shape, s.width(), s.height(), s.channels()

    same(body)


# ---------------------------------------------------------------------------
# Constructors, shape queries, repr
# ---------------------------------------------------------------------------

def test_constructors():
    same(lambda hl: (dims(hl.Buffer(hl.UInt(8), [7, 5])), hl.Buffer(hl.UInt(8), [7, 5], "nm").name()))
    same(lambda hl: dims(hl.Buffer(type=hl.Float(32), sizes=(2, 3), name="k")))
    same(lambda hl: dims(hl.Buffer(hl.UInt(8), [7, 5, 3], [2, 0, 1])))
    same(lambda hl: dims(hl.Buffer(hl.UInt(8), [7, 5, 3, 2], [2, 3, 0, 1])))
    same(lambda hl: dims(hl.Buffer(type=hl.UInt(8), sizes=[4, 3], storage_order=[1, 0], name="s")))
    same(lambda hl: dims(hl.Buffer.make_interleaved(type=hl.UInt(8), width=7, height=13, channels=3)))
    same(lambda hl: dims(hl.Buffer.make_interleaved(hl.Float(32), 4, 3, 2)))
    same(lambda hl: dims(hl.Buffer.make_with_shape_of(hl.Buffer.make_interleaved(hl.UInt(8), 4, 3, 3))))
    same(lambda hl: dims(hl.Buffer.make_with_shape_of(hl.Buffer(hl.UInt(8), [4, 3]).cropped(0, 1, 2))))
    same(lambda hl: (hl.Buffer.make_scalar(type=hl.Int(8), name="zz").name(), hl.Buffer.make_scalar(hl.Int(8)).dimensions()))
    same(lambda hl: (dims(hl.Buffer.make_bounds_query(hl.UInt(8), [3, 2])), hl.Buffer.make_bounds_query(hl.UInt(8), [3]).defined()))


def test_bad_constructor_args():
    same_error(lambda hl: hl.Buffer([1, 2, 3]))
    same_error(lambda hl: hl.Buffer(5))
    same_error(lambda hl: hl.Buffer(int, [2]))
    same_error(lambda hl: hl.Buffer(b"abc"))
    same_error(lambda hl: hl.Buffer(np.frombuffer(b"abcd", np.uint8)))
    same_error(lambda hl: hl.Buffer(np.zeros(3), nonsense=1))


def test_shape_queries():
    def body(hl):
        b = hl.Buffer(hl.Int(32), [4, 3])
        b1 = hl.Buffer(hl.Int(32), [5])
        b3 = hl.Buffer(hl.UInt(16), [3, 4, 2])
        return ((b.width(), b.height(), b.channels(), b.left(), b.right(), b.top(), b.bottom(),
                 b.number_of_elements(), b.size_in_bytes(), b.dimensions()),
                (b1.width(), b1.height(), b1.channels()),
                (b3.channels(), b3.size_in_bytes(), b3.cropped(0, 0, 2).size_in_bytes()),
                [(b.dim(i).min(), b.dim(i).max(), b.dim(dimension=i).extent()) for i in range(2)])

    same(body)


def test_repr():
    def body(hl):
        return [re.sub(r"\bb\d+\b", "bN", str(x)) for x in [
            hl.Buffer(), hl.Buffer(hl.Int(32), [128, 256]), hl.Buffer(hl.Bool(), [2]),
            hl.Buffer(hl.Float(16), [2]), hl.Buffer(hl.UInt(8), [3, 4]).translated([1, 2]),
            hl.Buffer.make_scalar(hl.Float(64))]]

    assert same(body)[1] == "<halide.Buffer of type int32 shape:[[0,128,1],[0,256,128]]>"


def test_names():
    def body(hl):
        b = hl.Buffer(hl.Int(32), [4, 3], "orig")
        derived = [b.cropped(0, 1, 2), b.translated(0, 1), b.transposed(0, 1), b.sliced(0, 1),
                   b.embedded(0, 1), b.reverse_axes(), b.copy(), hl.Buffer.make_with_shape_of(b)]
        auto = [re.fullmatch(r"b\d+", d.name()) is not None for d in derived]
        c = b.cropped(0, 1, 2)
        c.set_name("renamed")
        return auto, b.name(), c.name(), hl.Buffer(hl.UInt(8), [1], "").name() != "", b.same_as(b), c.same_as(b)

    same(body)


def test_buffer_of_buffer():
    def body(hl):
        a = np.arange(12, dtype=np.int32).reshape(3, 4)
        b = hl.Buffer(a).translated([3, 5])
        c = hl.Buffer(b)
        d = hl.Buffer(b, "named", False)
        c[0, 0] = 99
        return dims(c), dims(d), d.name(), int(a[0, 0]), c.same_as(b)

    same(body)


# ---------------------------------------------------------------------------
# Copies, fills and shape operations
# ---------------------------------------------------------------------------

def _ramp(hl, t=None, sizes=(4, 3)):
    b = hl.Buffer(t or hl.Int(32), list(sizes))
    b.for_each_element(lambda p: b.__setitem__(p, sum(v * 10**i for i, v in enumerate(p))))
    return b


def test_copy_fill_all_equal():
    def body(hl):
        b = _ramp(hl)
        b.set_min([2, 3])
        c = b.copy()
        b[2, 3] = -1
        f = hl.Buffer(hl.Int(32), [3, 4])
        f.fill(3)
        e1 = f.all_equal(3)
        f[1, 2] = 4
        g = hl.Buffer(hl.Float(32), [2])
        g.fill(value=1.5)
        return (dims(c), values(c), c[2, 3], e1, f.all_equal(3), g.all_equal(1.5), g.all_equal(1),
                g[0])

    same(body)


def test_copy_keeps_stride_order():
    same(lambda hl: dims(hl.Buffer.make_interleaved(hl.UInt(8), 4, 3, 3).copy()))
    same(lambda hl: dims(hl.Buffer(hl.UInt(8), [4, 3]).transposed(0, 1).copy()))
    same(lambda hl: (lambda c: (dims(c), values(c)))(hl.Buffer(np.arange(24, dtype=np.uint8).reshape(4, 6)[:, ::2]).copy()))


def test_copy_from():
    def body(hl):
        dst = hl.Buffer(hl.UInt(8), [4, 4])
        dst.fill(0)
        src = hl.Buffer(hl.UInt(8), [3, 3])
        src.fill(9)
        src.set_min([2, 1])
        dst.copy_from(src)
        return values(dst)

    same(body)


def test_for_each_element_order():
    def body(hl):
        seen = []
        hl.Buffer(hl.Int(8), [2, 3]).translated([5, 7]).for_each_element(f=lambda p: seen.append(list(p)))
        return seen

    same(body)


def test_crop_and_cropped():
    def body(hl):
        b = _ramp(hl)
        c = b.cropped(0, 1, 2)
        r = b.cropped([(1, 2), (0, 2)])
        k = b.copy()
        k.crop(dimension=1, min=1, extent=2)
        k2 = b.copy()
        k2.crop(rect=[(1, 2)])
        c[1, 0] = -5
        return (dims(c), values(c), dims(r), values(r), dims(k), values(k), dims(k2), b[1, 0],
                np.asarray(c).tolist())

    same(body)


def test_translate_transpose_slice_embed():
    def body(hl):
        b = _ramp(hl, sizes=(4, 3, 2))
        out = {}
        out["translated"] = dims(b.translated(0, 5)), b.translated(0, 5)[6, 2, 1]
        out["translated_list"] = dims(b.translated([1, -2]))
        t = b.copy()
        t.translate(dimension=0, dx=1)
        t.translate(delta=[1, 1])
        out["translate"] = dims(t), t[3, 1, 0]
        out["transposed"] = dims(b.transposed(0, 2)), dims(b.transposed([2, 0, 1])), b.transposed([2, 0, 1])[3, 2, 1]
        tt = b.copy()
        tt.transpose(d1=0, d2=1)
        out["transpose_order"] = [dims(hl.Buffer(hl.UInt(8), [3, 2, 7, 5]).transposed(o))
                                  for o in ([2, 3, 0, 1], [1, 2, 0, 3], [3, 2, 1, 0])]
        out["transpose"] = dims(tt)
        out["reverse_axes"] = dims(b.reverse_axes()), b.reverse_axes()[1, 2, 3]
        out["sliced"] = dims(b.sliced(1, 2)), values(b.sliced(1, 2)), dims(b.sliced(0))
        s = b.copy()
        s.slice(dimension=2, pos=1)
        out["slice"] = dims(s), values(s)
        out["embedded"] = dims(b.embedded(1, 4)), dims(b.embedded(3)), b.embedded(1, 4)[2, 4, 1, 1]
        e = b.copy()
        e.embed(0, 2)
        e.add_dimension()
        out["embed"] = dims(e)
        return out

    same(body)


def test_set_min_and_contains():
    def body(hl):
        b = hl.Buffer(hl.Int(32), [4, 3])
        b.set_min([2, 3])
        d1 = dims(b)
        b.set_min([0])
        return d1, dims(b), b.contains([1, 3]), b.contains([9, 3]), b.contains([1])

    same(body)
    same_error(lambda hl: hl.Buffer(hl.Int(32), [4, 3]).set_min([1, 2, 3]), "Too many arguments")
    same_error(lambda hl: hl.Buffer(hl.Int(32), [4, 3]).contains([1, 2, 3]), "Too many arguments")


def test_host_dirty_flags():
    same(lambda hl: (hl.Buffer(np.zeros(3)).host_dirty(), hl.Buffer(hl.UInt(8), [2]).host_dirty(),
                     hl.Buffer(hl.UInt(8), [2]).device_dirty(), hl.Buffer(hl.UInt(8), [2]).has_device_allocation()))


# ---------------------------------------------------------------------------
# Lifetime
# ---------------------------------------------------------------------------

def test_numpy_kept_alive_by_buffer():
    def body(hl):
        a = np.arange(6, dtype=np.uint8)
        b = hl.Buffer(a)
        del a
        gc.collect()
        for _ in range(20):
            b = hl.Buffer(b)
            gc.collect()
        return values(b)

    same(body)


def test_buffer_kept_alive_by_numpy_ours():
    # (The reference frees the memory here and the array reads garbage.)
    arr = np.asarray(ferrohalide.Buffer(ferrohalide.UInt(8), [4]).translated(0, 3))
    view = memoryview(ferrohalide.Buffer(np.arange(4, dtype=np.int32)))
    gc.collect()
    np.asarray(ferrohalide.Buffer(ferrohalide.UInt(8), [4])).fill(77)  # reuse freed memory, if any
    assert arr.tolist() == [0, 0, 0, 0]
    assert view.tolist() == [0, 1, 2, 3]


def test_views_keep_storage_alive_ours():
    b = ferrohalide.Buffer(np.arange(12, dtype=np.int64).reshape(3, 4))
    c = b.cropped(0, 1, 2).sliced(1, 2)
    del b
    gc.collect()
    assert values(c) == [9, 10]


def test_big_array_is_shared_not_copied():
    def body(hl):
        a = np.ones((2000, 3000), dtype=np.int32)
        b = hl.Buffer(a)
        b[2999, 1999] = 5
        return int(a[1999, 2999]), bool(np.shares_memory(np.asarray(b), a))

    assert same(body) == (5, True)


# ---------------------------------------------------------------------------
# ferrohalide-only behaviour where the reference has undefined behaviour
# ---------------------------------------------------------------------------

def test_undefined_buffer_ours():
    b = ferrohalide.Buffer()
    assert not b.defined()
    assert str(b) == "<undefined halide.Buffer>"
    with pytest.raises(ferrohalide.HalideError):
        b.dimensions()
    with pytest.raises(ferrohalide.HalideError):
        b.name()  # the reference segfaults here
    with pytest.raises(BufferError):
        memoryview(b)


def test_invalid_shape_ops_raise_ours():
    b = ferrohalide.Buffer(ferrohalide.Int(32), [4, 3])
    with pytest.raises(ValueError):
        b.cropped(0, 3, 5)
    with pytest.raises(ValueError):
        b.cropped(5, 0, 1)
    with pytest.raises(ValueError):
        b.sliced(0, 9)
    with pytest.raises(ValueError):
        b.transposed([0, 0])
    with pytest.raises(IndexError):
        b.dim(2)
    with pytest.raises(ValueError):
        ferrohalide.Buffer(ferrohalide.UInt(8), [-1, 3])
    with pytest.raises(TypeError):
        b.copy_from(ferrohalide.Buffer(ferrohalide.UInt(8), [4, 3]))


def test_bounds_query_allocate_ours():
    b = ferrohalide.Buffer.make_bounds_query(ferrohalide.UInt(8), [3, 2])
    with pytest.raises(BufferError):
        memoryview(b)
    b.allocate()
    b[2, 1] = 4
    assert np.asarray(b).tolist() == [[0, 0, 0], [0, 0, 4]]
    b.deallocate()
    with pytest.raises(ferrohalide.HalideError):
        b[0, 0]


def test_numpy_view():
    b = ferrohalide.Buffer(ferrohalide.UInt(8), [4, 3])
    v = b.numpy_view()
    w = b.numpy_view(reverse_axes=False)
    v[2, 3] = 1
    assert v.shape == (3, 4) and w.shape == (4, 3) and w[3, 2] == 1 and b[3, 2] == 1


def _address(b):
    return np.asarray(b).__array_interface__["data"][0]


def test_a_large_buffer_made_from_freed_storage_starts_zeroed_ours():
    # Storage of 1 MB and more is kept when freed and given to the next
    # buffer it suits (a fresh block costs a page fault per 4 KB): the new
    # buffer is still all zeros.
    b = ferrohalide.Buffer(ferrohalide.UInt(8), [2048, 1024])
    np.asarray(b).fill(7)
    old = _address(b)
    del b
    gc.collect()
    c = ferrohalide.Buffer(ferrohalide.UInt(8), [2048, 1000])
    assert _address(c) == old
    assert not np.asarray(c).any()


def test_realize_in_a_loop_reuses_the_freed_output_and_is_right_ours():
    # `out = f.realize(...)` in a loop frees each output while the next one
    # is alive: the freed storage serves the output after next.
    x, y = ferrohalide.Var("x"), ferrohalide.Var("y")
    k = ferrohalide.Param(ferrohalide.Int(32), "k")
    f = ferrohalide.Func("f")
    f[x, y] = x + 3 * y + k
    f.vectorize(x, 8).parallel(y)
    expected = np.arange(1024)[None, :] + 3 * np.arange(512)[:, None]
    addresses = []
    out = None
    for i in range(4):
        k.set(i)
        out = f.realize([1024, 512])
        addresses.append(_address(out))
        assert (np.asarray(out) == expected + i).all()
    assert addresses[2] == addresses[0] and addresses[3] == addresses[1]


# ---------------------------------------------------------------------------
# Buffers in pipelines (Expr arguments)
# ---------------------------------------------------------------------------

def test_buffer_call_in_func():
    def body(hl):
        data = np.arange(100, dtype=np.int32).reshape(10, 10)
        buf = hl.Buffer(data, "buf")
        bc = buf.cropped([(5, 5), (5, 5)])
        x, y = hl.Var("x"), hl.Var("y")
        f = hl.Func("f")
        f[x, y] = buf[x, y] * 2 + bc[x + 5, y + 5]
        return np.asarray(f.realize([5, 5])).tolist()

    same(body)


# ---------------------------------------------------------------------------
# The product never imports the reference
# ---------------------------------------------------------------------------

def test_product_does_not_import_halide():
    pattern = re.compile(r"^\s*(import\s+halide\b|from\s+halide\b)|\bimport_module\(\s*['\"]halide\b"
                         r"|py\.import\(\s*\"halide\b|PyModule::import\([^)]*\"halide\b", re.M)
    offenders = []
    for top in ("python/ferrohalide", "crates"):
        for path in (REPO / top).rglob("*"):
            if path.suffix not in (".py", ".pyi", ".rs") or not path.is_file():
                continue
            if pattern.search(path.read_text(errors="replace")):
                offenders.append(str(path.relative_to(REPO)))
    assert not offenders, f"product code imports the reference implementation: {offenders}"


def test_export_survives_deallocate_ours():
    b = ferrohalide.Buffer(ferrohalide.Int(32), [3])
    b.fill(6)
    arr = np.asarray(b)
    b.deallocate()
    gc.collect()
    np.asarray(ferrohalide.Buffer(ferrohalide.Int(32), [3])).fill(1)
    assert arr.tolist() == [6, 6, 6]
