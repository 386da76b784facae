"""The C API through ctypes, in a fresh process that never imports the
ferrohalide Python module (tests/capi/client.py; it loads the pure-Python
helper ferrohalide/capi.py by path)."""
import os
import subprocess
import sys

CLIENT = os.path.join(os.path.dirname(__file__), "client.py")


def test_ctypes_client(tmp_path):
    p = subprocess.run([sys.executable, CLIENT, str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stdout[-2000:] + p.stderr[-4000:]


ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_c_example_builds_and_runs(tmp_path):
    # examples/c_api/gradient.c: the header and the library, nothing else.
    import shutil
    import importlib.util
    # The pure-Python helper, without importing the package.
    spec = importlib.util.spec_from_file_location("fh_capi_helper", os.path.join(ROOT, "python", "ferrohalide", "capi.py"))
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    lib_dir = os.path.dirname(helper.library_path())
    cc = shutil.which("cc") or shutil.which("gcc")
    exe = tmp_path / "gradient"
    subprocess.run([cc, "-Wall", "-Werror", os.path.join(ROOT, "examples", "c_api", "gradient.c"),
                    "-I", os.path.dirname(helper.header_path()), "-I", helper.runtime_include_dir(),
                    "-L", lib_dir, "-lferrohalide_c", "-o", str(exe)], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=lib_dir)
    p = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("0 1 2 3 4 5 6 7 \n1 2 3") and "expected error: Error:" in p.stdout, p.stdout
    assert p.stdout.strip().endswith("Success!")


LEAK_CHECK = r"""
import ctypes, importlib.util, os, sys
import numpy as np
spec = importlib.util.spec_from_file_location("fh_capi", sys.argv[1])
capi = importlib.util.module_from_spec(spec); spec.loader.exec_module(capi)
lib = capi.load()
I32 = capi.FhType(0, 32, 1)

def rss_kb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))

def arr(*h):
    return ctypes.cast((ctypes.c_void_p * len(h))(*h), ctypes.POINTER(ctypes.c_void_p))

out = np.zeros(16, dtype=np.int32)
b, dims = capi.describe(out)
outs = arr(ctypes.addressof(b))

def cycle(realize):
    x = lib.fh_var_new(b"x"); ex = lib.fh_expr_var(x); k = lib.fh_expr_int(I32, 3)
    v = lib.fh_expr_binary(capi.OPS["Mul"], ex, k)
    f = lib.fh_func_new(None)
    assert lib.fh_func_define(f, arr(ex), 1, arr(v), 1) == 0
    if realize:
        assert lib.fh_func_realize(f, outs, 1) == 0
    for h, free in ((f, lib.fh_func_free), (v, lib.fh_expr_free), (k, lib.fh_expr_free),
                    (ex, lib.fh_expr_free), (x, lib.fh_var_free)):
        assert free(h) == 0

for i in range(2000):
    cycle(i % 100 == 0)
start = rss_kb()
for i in range(10000):
    cycle(i % 100 == 0)
grown = rss_kb() - start
print("grown_kb", grown)
"""


def test_create_define_realize_destroy_cycles_do_not_leak(tmp_path):
    script = tmp_path / "leak.py"
    script.write_text(LEAK_CHECK)
    helper = os.path.join(ROOT, "python", "ferrohalide", "capi.py")
    p = subprocess.run([sys.executable, str(script), helper], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    grown = int(p.stdout.split()[-1])
    # 10,000 cycles (100 of them compiling and running): flat within noise.
    assert grown < 8 * 1024, p.stdout
