"""x86-64-windows objects, proven by running them: each pipeline is
compiled for x86-64-windows into a COFF static library (`.lib`), linked
with Debian's mingw-w64 cross compiler into a Windows executable, run under
Wine, and its output compared with the host JIT's.

The objects use Windows' calling convention and MSVC's stack probe
(`__chkstk`, as Halide's do); mingw-w64 names the same probe
`___chkstk_ms`, so the link maps one to the other."""
import os
import shutil

import pytest

import ferrohalide as hl

from tests.cross.conftest import cross_tool
from tests.cross.harness import compare, run_on_target
from tests.cross.pipelines import CASES

TARGET = "x86-64-windows-sse41-avx"


@pytest.fixture(scope="module")
def mingw_cc():
    return cross_tool("x86_64-w64-mingw32-gcc")


@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    path = shutil.which("wine64") or shutil.which("wine")
    if not path and os.path.exists("/usr/lib/wine/wine64"):
        path = "/usr/lib/wine/wine64"
    if not path:
        path = cross_tool("wine64")
    # A private Wine prefix, made once for this module's runs.
    prefix = tmp_path_factory.mktemp("wineprefix")
    return ["env", f"WINEPREFIX={prefix}", "WINEDEBUG=-all", path]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_x86_64_windows_runs_under_wine(case, tmp_path, mingw_cc, wine):
    got, want = run_on_target(case, tmp_path, TARGET, [mingw_cc, "-O1"], wine,
                              link_flags=["-Wl,--defsym,__chkstk=___chkstk_ms"])
    compare(got, want)


def test_windows_outputs_are_named_obj_and_lib(tmp_path):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f.compile_to_file(str(tmp_path / "f"), [], "f", hl.Target("x86-64-windows"))
    f.compile_to_static_library(str(tmp_path / "g"), [], "g", hl.Target("x86-64-windows"))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["f.h", "f.obj", "g.h", "g.lib"]
    assert (tmp_path / "f.obj").read_bytes()[:2] == b"\x64\x86"  # IMAGE_FILE_MACHINE_AMD64
