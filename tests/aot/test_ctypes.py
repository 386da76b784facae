"""A shared library made from an object is called through ctypes with a
hand-built halide_buffer_t, the way people call Halide code from other
languages' FFIs: results, a bounds query, and failing calls that return
Halide's error codes (the runtime keeps the message) without ending the
process."""
import ctypes

import numpy as np

import ferrohalide as hl

from .conftest import run


class halide_type_t(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class halide_dimension_t(ctypes.Structure):
    _fields_ = [("min", ctypes.c_int32), ("extent", ctypes.c_int32), ("stride", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


class halide_buffer_t(ctypes.Structure):
    _fields_ = [("device", ctypes.c_uint64), ("device_interface", ctypes.c_void_p),
                ("host", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("type", halide_type_t),
                ("dimensions", ctypes.c_int32), ("dim", ctypes.POINTER(halide_dimension_t)),
                ("padding", ctypes.c_void_p)]


def describe(array, code):
    """A halide_buffer_t over a C-ordered NumPy array, x (the last axis) first."""
    nd = array.ndim
    dims = (halide_dimension_t * nd)()
    for i in range(nd):
        j = nd - 1 - i
        dims[i] = halide_dimension_t(0, array.shape[j], array.strides[j] // array.itemsize, 0)
    b = halide_buffer_t()
    b.host = array.ctypes.data if array.size else None
    b.type = halide_type_t(code, array.itemsize * 8, 1)
    b.dimensions = nd
    b.dim = dims
    return b, dims


def test_call_a_shared_library_through_ctypes(cc, tmp_path):
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.Float(32), 2, "inp")
    scale = hl.Param(hl.Float(32), "scale")
    f = hl.Func("scaled")
    f[x, y] = inp[x, y] * scale + hl.f32(y)
    f.vectorize(x, 8, hl.TailStrategy.GuardWithIf).parallel(y)
    f.compile_to_object(str(tmp_path / "scaled.o"), [inp, scale], "scaled")
    lib_path = tmp_path / "libscaled.so"
    run([cc, "-shared", str(tmp_path / "scaled.o"), "-o", str(lib_path), "-lpthread", "-ldl", "-lm"])
    lib = ctypes.CDLL(str(lib_path))
    lib.scaled.argtypes = [ctypes.POINTER(halide_buffer_t), ctypes.c_float, ctypes.POINTER(halide_buffer_t)]
    lib.scaled.restype = ctypes.c_int

    a = np.arange(30, dtype=np.float32).reshape(3, 10)
    out = np.zeros_like(a)
    bi, _di = describe(a, 2)
    bo, _do = describe(out, 2)
    assert lib.scaled(ctypes.byref(bi), 0.5, ctypes.byref(bo)) == 0
    assert np.array_equal(out, a * 0.5 + np.arange(3, dtype=np.float32)[:, None])

    # A bounds query: the input's region for this output.
    q, qd = describe(a, 2)
    q.host = None
    for i in range(2):
        qd[i] = halide_dimension_t(0, 0, 0, 0)
    assert lib.scaled(ctypes.byref(q), 1.0, ctypes.byref(bo)) == 0
    assert [(qd[i].min, qd[i].extent, qd[i].stride) for i in range(2)] == [(0, 10, 1), (0, 3, 10)]

    # Failing calls return Halide's codes, and the message is kept.
    msg = ctypes.create_string_buffer(512)
    small = np.zeros((3, 4), dtype=np.float32)
    bs, _ds = describe(small, 2)
    assert lib.scaled(ctypes.byref(bs), 1.0, ctypes.byref(bo)) == -4  # access out of bounds
    lib.ferrohalide_last_error_message(msg, 512)
    assert b"Input buffer inp is accessed at 9, which is beyond the max (3) in dimension 0" in msg.value
    ints = np.zeros((3, 10), dtype=np.int32)
    bw, _dw = describe(ints, 0)
    assert lib.scaled(ctypes.byref(bw), 1.0, ctypes.byref(bo)) == -3  # bad type
    assert lib.scaled(None, 1.0, ctypes.byref(bo)) == -12  # null buffer
    lib.ferrohalide_last_error_message(msg, 512)
    assert msg.value == b"Buffer argument inp is nullptr"
    # Still works afterwards.
    assert lib.scaled(ctypes.byref(bi), 2.0, ctypes.byref(bo)) == 0
    assert out[2, 9] == 29 * 2 + 2

    # The metadata describes the arguments.
    class argument(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int32), ("dimensions", ctypes.c_int32),
                    ("type", halide_type_t), ("scalar_def", ctypes.c_void_p), ("scalar_min", ctypes.c_void_p),
                    ("scalar_max", ctypes.c_void_p), ("scalar_estimate", ctypes.c_void_p),
                    ("buffer_estimates", ctypes.c_void_p)]

    class metadata(ctypes.Structure):
        _fields_ = [("version", ctypes.c_int32), ("num_arguments", ctypes.c_int32),
                    ("arguments", ctypes.POINTER(argument)), ("target", ctypes.c_char_p), ("name", ctypes.c_char_p)]

    lib.scaled_metadata.restype = ctypes.POINTER(metadata)
    md = lib.scaled_metadata().contents
    assert (md.version, md.num_arguments, md.name) == (1, 3, b"scaled")
    assert [(md.arguments[i].name, md.arguments[i].kind, md.arguments[i].dimensions) for i in range(3)] == [
        (b"inp", 1, 2), (b"scale", 0, 0), (b"scaled", 2, 2)]
    assert md.target.decode() == str(hl.get_target_from_environment())
