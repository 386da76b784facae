"""ctypes bindings of ferrohalide's C API (libferrohalide_c.so, declared by
include/ferrohalide_c.h). Pure Python, independent of the extension module:
it can be loaded by path in a process that never imports ferrohalide.

    from ferrohalide import capi
    lib = capi.load()                      # the library, with signatures set
    x = lib.fh_var_new(b"x")
    ...
    if not handle:
        raise RuntimeError(capi.last_error(lib))

`halide_buffer_t` and friends are ctypes mirrors of HalideRuntime.h;
`describe(array)` makes one over a NumPy array (x, its last axis, first).
"""
import ctypes
import os

__all__ = ["load", "library_path", "header_path", "runtime_include_dir", "last_error", "describe", "FhType",
           "halide_buffer_t", "halide_dimension_t", "halide_type_t", "OPS", "MATH", "MATH2", "BOUNDARY", "REDUCTIONS"]


class halide_type_t(ctypes.Structure):
    code: int
    bits: int
    lanes: int
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


FhType = halide_type_t


class halide_dimension_t(ctypes.Structure):
    min: int
    extent: int
    stride: int
    flags: int
    _fields_ = [("min", ctypes.c_int32), ("extent", ctypes.c_int32), ("stride", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


class halide_buffer_t(ctypes.Structure):
    device: int
    device_interface: "int | None"
    host: "int | None"
    flags: int
    type: halide_type_t
    dimensions: int
    dim: "ctypes._Pointer[halide_dimension_t]"
    padding: "int | None"
    _fields_ = [("device", ctypes.c_uint64), ("device_interface", ctypes.c_void_p),
                ("host", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("type", halide_type_t),
                ("dimensions", ctypes.c_int32), ("dim", ctypes.POINTER(halide_dimension_t)),
                ("padding", ctypes.c_void_p)]


OPS = {name: i for i, name in enumerate([
    "Add", "Sub", "Mul", "Div", "Mod", "Min", "Max", "Eq", "Ne", "Lt", "Le", "Gt", "Ge",
    "And", "Or", "BitAnd", "BitOr", "BitXor", "Shl", "Shr"])}
MATH = {name: i for i, name in enumerate([
    "Sqrt", "Sin", "Cos", "Tan", "Exp", "Log", "Floor", "Ceil", "Round", "Trunc", "Abs",
    "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Asinh", "Acosh", "Atanh", "Erf", "Fract",
    "IsNan", "IsInf", "IsFinite", "FastSin", "FastCos", "FastExp", "FastLog", "FastInverse",
    "FastInverseSqrt"])}
REDUCTIONS = {name: i for i, name in enumerate(["Sum", "Product", "Maximum", "Minimum"])}
MATH2 = {name: i for i, name in enumerate(["Pow", "Atan2", "Hypot", "Absd", "FastPow"])}
BOUNDARY = {name: i for i, name in enumerate(["RepeatEdge", "RepeatImage", "MirrorImage", "MirrorInterior"])}

_NAME = "libferrohalide_c.so"


def library_path():
    """Where libferrohalide_c.so is: $FERROHALIDE_C_LIBRARY, next to this
    file, or the source tree's target/release."""
    env = os.environ.get("FERROHALIDE_C_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, _NAME),
                 os.path.join(here, "..", "..", "target", "release", _NAME)):
        if os.path.exists(cand):
            return os.path.abspath(cand)
    raise FileNotFoundError(f"{_NAME} not found (build it: cargo build --release -p ferrohalide-capi)")


def header_path():
    """Where ferrohalide_c.h is: next to this file's include/, or the source
    tree's crates/capi/include."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "include", "ferrohalide_c.h"),
                 os.path.join(here, "..", "..", "crates", "capi", "include", "ferrohalide_c.h")):
        if os.path.exists(cand):
            return os.path.abspath(cand)
    raise FileNotFoundError("ferrohalide_c.h not found")


def runtime_include_dir():
    """The directory of HalideRuntime.h, which ferrohalide_c.h includes."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def _declare(lib):
    P = ctypes.c_void_p
    I = ctypes.c_int32
    S = ctypes.c_char_p
    N = ctypes.c_size_t
    PP = ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "fh_last_error": (ctypes.c_char_p, []),
        "fh_var_new": (P, [S]), "fh_var_free": (I, [P]),
        "fh_expr_var": (P, [P]), "fh_expr_int": (P, [FhType, ctypes.c_int64]),
        "fh_expr_float": (P, [FhType, ctypes.c_double]),
        "fh_expr_binary": (P, [ctypes.c_int, P, P]), "fh_expr_cast": (P, [FhType, P]),
        "fh_expr_select": (P, [P, P, P]), "fh_expr_clamp": (P, [P, P, P]),
        "fh_expr_math": (P, [ctypes.c_int, P]), "fh_expr_free": (I, [P]),
        "fh_func_new": (P, [S]), "fh_func_free": (I, [P]),
        "fh_func_define": (I, [P, PP, N, PP, N]), "fh_func_call": (P, [P, PP, N, N]),
        "fh_func_compute_root": (I, [P]), "fh_func_compute_at": (I, [P, P, P]),
        "fh_func_vectorize": (I, [P, P, I]), "fh_func_parallel": (I, [P, P]),
        "fh_func_realize": (I, [P, PP, N]),
        "fh_param_new": (P, [FhType, S]), "fh_param_set_int": (I, [P, ctypes.c_int64]),
        "fh_param_set_float": (I, [P, ctypes.c_double]), "fh_expr_param": (P, [P]),
        "fh_param_free": (I, [P]),
        "fh_image_param_new": (P, [FhType, I, S]), "fh_image_param_set": (I, [P, P]),
        "fh_image_param_call": (P, [P, PP, N]), "fh_image_param_free": (I, [P]),
        "fh_repeat_edge": (P, [P]), "fh_constant_exterior": (P, [P, P]),
        "fh_arguments_new": (P, []), "fh_arguments_add_param": (I, [P, P]),
        "fh_arguments_add_image_param": (I, [P, P]), "fh_arguments_free": (I, [P]),
        "fh_func_compile_to_file": (I, [P, S, P, S, S]),
        "fh_expr_bool": (P, [ctypes.c_bool]), "fh_expr_uint": (P, [FhType, ctypes.c_uint64]),
        "fh_expr_type": (I, [P, ctypes.POINTER(FhType)]), "fh_expr_reduce": (P, [ctypes.c_int, P]),
        "fh_func_split": (I, [P, P, P, P, I]), "fh_func_tile": (I, [P, P, P, P, P, P, P, I, I]),
        "fh_func_reorder": (I, [P, PP, N]), "fh_func_unroll": (I, [P, P, I]),
        "fh_func_store_root": (I, [P]), "fh_func_bound": (I, [P, P, I, I]),
        "fh_func_lowered_stmt": (P, [P, P, S]), "fh_string_free": (None, [P]),
        "fh_rdom_new": (P, [PP, PP, N, S]), "fh_rdom_var": (P, [P, N]),
        "fh_rdom_where": (I, [P, P]), "fh_rdom_free": (I, [P]),
        "fh_expr_not": (P, [P]), "fh_expr_neg": (P, [P]),
        "fh_func_fuse": (I, [P, P, P, P]), "fh_func_store_at": (I, [P, P, P]),
        "fh_func_estimate": (I, [P, P, I, I]), "fh_func_in": (P, [P]),
        "fh_func_update": (P, [P, N]), "fh_stage_free": (I, [P]),
        "fh_stage_vectorize": (I, [P, P, I]), "fh_stage_parallel": (I, [P, P]),
        "fh_stage_reorder": (I, [P, PP, N]), "fh_stage_rfactor": (P, [P, PP, PP, N]),
        "fh_expr_math2": (P, [ctypes.c_int, P, P]), "fh_expr_lerp": (P, [P, P, P]), "fh_expr_saturating_cast": (P, [FhType, P]),
        "fh_expr_bitwise_not": (P, [P]), "fh_boundary_condition": (P, [ctypes.c_int, P, PP, PP, N]),
        "fh_func_compile_to_static_library": (I, [P, S, P, S, S]),
        "fh_func_autoschedule": (P, [P, S, S]), "fh_target_is_valid": (I, [S]),
        "fh_expr_argextreme": (P, [ctypes.c_bool, P, PP, N]), "fh_param_get": (ctypes.c_double, [P]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def load(path=None):
    """The C API library, its functions' signatures declared."""
    return _declare(ctypes.CDLL(path or library_path()))


def last_error(lib):
    """The message of the last failed call on this thread."""
    return lib.fh_last_error().decode()


_CODES = {"i": 0, "u": 1, "f": 2, "b": 1}


def describe(array):
    """A halide_buffer_t over a C-ordered NumPy array (x, its last axis,
    first); keep the returned pair alive while the buffer is used."""
    nd = array.ndim
    dims = (halide_dimension_t * max(nd, 1))()
    for i in range(nd):
        j = nd - 1 - i
        dims[i] = halide_dimension_t(0, array.shape[j], array.strides[j] // array.itemsize, 0)
    b = halide_buffer_t()
    b.host = array.ctypes.data
    kind = array.dtype.kind
    b.type = halide_type_t(_CODES[kind], 1 if kind == "b" else array.itemsize * 8, 1)
    b.dimensions = nd
    b.dim = dims
    return b, dims
