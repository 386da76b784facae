"""The C backend against the JIT, on the fuzz generator's pipelines.

    python tests/fuzz/c_backend.py FIRST LAST     (seeds FIRST..LAST-1)

Each program whose output is one Func realized over a region is run by
ferrohalide's JIT; its output Func is also compiled with compile_to_c, built
with the system C++ compiler against the standalone runtime, and called
through its C ABI (bounds queries first, as a C caller would, repeated until
the answer stops growing, then the call with the Params' values and the
ImageParams' buffers). Integers must match
bit for bit, floats within 1e-4 relative (the C library's transcendental
functions against the compiled code's own).
"""
import ctypes
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402


class _Dim(ctypes.Structure):
    _fields_ = [("min", ctypes.c_int32), ("extent", ctypes.c_int32), ("stride", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


class _Type(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Buffer(ctypes.Structure):
    _fields_ = [("device", ctypes.c_uint64), ("device_interface", ctypes.c_void_p),
                ("host", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("type", _Type),
                ("dimensions", ctypes.c_int32), ("dim", ctypes.POINTER(_Dim)),
                ("padding", ctypes.c_void_p)]


CODES = {"i": 0, "u": 1, "f": 2, "b": 1}
SCALARS = {(0, 8): ctypes.c_int8, (0, 16): ctypes.c_int16, (0, 32): ctypes.c_int32,
           (0, 64): ctypes.c_int64, (1, 1): ctypes.c_bool, (1, 8): ctypes.c_uint8,
           (1, 16): ctypes.c_uint16, (1, 32): ctypes.c_uint32, (1, 64): ctypes.c_uint64,
           (2, 32): ctypes.c_float, (2, 64): ctypes.c_double}


def halide_buffer(array, mins=None):
    """A halide_buffer_t over a C-ordered array (x, its last axis, first)."""
    nd = array.ndim
    dims = (_Dim * max(nd, 1))()
    for i in range(nd):
        j = nd - 1 - i
        dims[i] = _Dim(mins[i] if mins else 0, array.shape[j], array.strides[j] // array.itemsize, 0)
    b = _Buffer()
    b.host = array.ctypes.data if array.size else None
    k = array.dtype.kind
    b.type = _Type(CODES[k], 1 if k == "b" else array.itemsize * 8, 1)
    b.dimensions = nd
    b.dim = dims
    return b, dims


def scalar_arg(hl, a, param):
    """The value of the scalar argument `a` (its Param `param`), as the
    ctypes scalar of its type."""
    t = a.type() if callable(a.type) else a.type
    code = 1 if t.is_bool() else {hl.TypeCode.Int: 0, hl.TypeCode.UInt: 1, hl.TypeCode.Float: 2}[t.code()]
    return SCALARS[(code, t.bits())](hl.evaluate(param.parameter().scalar_expr()))


class Checker:
    def __init__(self, hl, workdir, cxx="c++"):
        self.hl, self.dir, self.cxx = hl, workdir, cxx
        self.runtime = os.path.join(workdir, "runtime.o")
        hl.compile_standalone_runtime(self.runtime, hl.get_host_target())
        self.results = {}

    def note(self, kind, item):
        self.results.setdefault(kind, []).append(item)

    def check(self, f, sizes, seed, inputs):
        hl = self.hl
        r = f.realize(sizes)
        expected = np.array(r)
        args = hl.Pipeline(f).infer_arguments()
        src = os.path.join(self.dir, f"p{seed}.cpp")
        lib_path = os.path.join(self.dir, f"libp{seed}.so")
        try:
            f.compile_to_c(src, args, "p")
        except hl.HalideError as e:
            self.note("c-error", (seed, str(e).splitlines()[0]))
            return r
        p = subprocess.run([self.cxx, "-std=c++17", "-O1", "-fPIC", "-shared", "-w", src, self.runtime,
                            "-o", lib_path, "-lpthread", "-ldl", "-lm"], capture_output=True, text=True)
        if p.returncode:
            self.note("compiler-error", (seed, p.stderr[:2000]))
            return r
        lib = ctypes.CDLL(lib_path)
        keep, ptrs = [], []
        for a in args:
            obj = inputs[a.name]
            if a.is_buffer():
                buf = obj.get()
                arr = np.ascontiguousarray(np.asarray(buf))
                b, dims = halide_buffer(arr, [buf.dim(i).min() for i in range(buf.dimensions())])
                keep += [arr, b, dims]
                ptrs.append(ctypes.cast(ctypes.pointer(b), ctypes.c_void_p))
            else:
                v = scalar_arg(hl, a, obj)
                keep.append(v)
                ptrs.append(ctypes.cast(ctypes.pointer(v), ctypes.c_void_p))
        query, qdims = halide_buffer(expected)
        query.host = None
        argv = (ctypes.c_void_p * (len(ptrs) + 1))(*ptrs, ctypes.cast(ctypes.pointer(query), ctypes.c_void_p))
        lib.p_argv.restype = ctypes.c_int
        nd = expected.ndim
        # The query answers for the shape it is given; a schedule whose loops
        # reach further on a grown output needs asking again (as realize()
        # grows its outputs until nothing changes).
        shape = None
        for _ in range(16):
            rc = lib.p_argv(argv)
            now = [(qdims[i].min, qdims[i].extent) for i in range(nd)]
            if rc != 0 or now == shape:
                break
            shape = now
        if rc == 0:
            region = [(qdims[i].min, qdims[i].extent) for i in range(nd)]
            out = np.zeros([region[nd - 1 - i][1] for i in range(nd)], dtype=expected.dtype)
            ob, obd = halide_buffer(out, [m for m, _ in region])
            argv[len(ptrs)] = ctypes.cast(ctypes.pointer(ob), ctypes.c_void_p)
            rc = lib.p_argv(argv)
        if rc != 0:
            self.note("call-failed", (seed, rc))
            return r
        got = out[tuple(slice(-region[nd - 1 - i][0], -region[nd - 1 - i][0] + expected.shape[i])
                        for i in range(nd))]
        if expected.dtype.kind == "f":
            ok = np.allclose(got, expected, rtol=1e-4, atol=1e-5, equal_nan=True)
        else:
            ok = np.array_equal(got, expected)
        self.note("ok" if ok else "mismatch", seed)
        return r

    def run(self, seed):
        """Check one seed's program (if it realizes one Func over a region)."""
        text = gen.generate(seed)
        m = re.search(r"^    r = (\w+)\.realize\((\[[^\]]*\])\)\n    return \[np.array\(r\)\]", text, re.M)
        if not m:
            self.note("skipped", seed)
            return
        call = f"    r = __check({m.group(1)}, {m.group(2)}, {seed}, locals())\n    return [np.array(r)]"
        text = text.replace(m.group(0), call)

        def check(f, sizes, seed, scope):
            inputs = {v.name(): v for v in scope.values()
                      if isinstance(v, (self.hl.ImageParam, self.hl.Param))}
            return self.check(f, sizes, seed, inputs)

        namespace = {"__name__": "fuzz_program", "__check": check}
        try:
            exec(compile(text, f"<seed {seed}>", "exec"), namespace)
            namespace["pipeline"](self.hl, True)
        except self.hl.HalideError:
            self.note("program-error", seed)


def main():
    import ferrohalide as hl
    first, last = int(sys.argv[1]), int(sys.argv[2])
    checker = Checker(hl, tempfile.mkdtemp(prefix="fh_c_backend_"))
    for seed in range(first, last):
        checker.run(seed)
    for kind, items in sorted(checker.results.items()):
        shown = items if kind in ("mismatch", "c-error", "call-failed") else items[:10]
        print(f"{kind}: {len(items)} {shown if kind != 'compiler-error' else [s for s, _ in items]}")
    for seed, err in checker.results.get("compiler-error", [])[:3]:
        print(f"--- compiler error, seed {seed}:\n{err}")
    bad = sum(len(checker.results.get(k, [])) for k in ("mismatch", "compiler-error", "call-failed"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
