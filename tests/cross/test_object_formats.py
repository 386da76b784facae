"""Objects for the targets checked statically here (no emulator runs them
on this machine): each is the right object format for its machine, and
defines the pipeline's entry points under the names that platform's C
compilers use (Mach-O puts an underscore before C names), in the object
and in the static library's symbol index."""
import os
import shutil
import struct
import subprocess

import pytest

import ferrohalide as hl

from tests.cross.conftest import cross_tool
from tests.cross.pipelines import widening_blur


def _llvm_nm():
    prefix = os.environ.get("LLVM_SYS_191_PREFIX", "/usr/lib/llvm-19")
    path = os.path.join(prefix, "bin", "llvm-nm")
    return path if os.path.exists(path) else (shutil.which("llvm-nm-19") or cross_tool("llvm-nm"))


def _elf_aarch64(b):
    return b[:4] == b"\x7fELF" and b[4] == 2 and struct.unpack_from("<H", b, 18)[0] == 183


def _macho(cputype):
    # MH_MAGIC_64, then cputype (CPU_TYPE_ARM64 = 0x0100000c, CPU_TYPE_X86_64 = 0x01000007)
    return lambda b: struct.unpack_from("<II", b, 0) == (0xFEEDFACF, cputype)


def _elf_arm32(b):
    return b[:4] == b"\x7fELF" and b[4] == 1 and struct.unpack_from("<H", b, 18)[0] == 40


def _macho32_arm(subtype):
    # MH_MAGIC, CPU_TYPE_ARM (12), CPU_SUBTYPE_ARM_V7 (9) / _V7S (11)
    return lambda b: struct.unpack_from("<III", b, 0) == (0xFEEDFACE, 12, subtype)


def _coff_amd64(b):
    return struct.unpack_from("<H", b, 0)[0] == 0x8664


# (target, object suffix, library suffix, object check, symbol prefix)
TARGETS = [
    ("arm-64-android", ".o", ".a", _elf_aarch64, ""),
    ("arm-64-android-arm_dot_prod-arm_fp16", ".o", ".a", _elf_aarch64, ""),
    ("arm-64-osx", ".o", ".a", _macho(0x0100000C), "_"),
    ("arm-64-ios", ".o", ".a", _macho(0x0100000C), "_"),
    ("x86-64-osx-avx-avx2-f16c-fma-sse41", ".o", ".a", _macho(0x01000007), "_"),
    ("x86-64-windows-avx-avx2-f16c-fma-sse41", ".obj", ".lib", _coff_amd64, ""),
    ("x86-64-linux-avx512_skylake", ".o", ".a", None, ""),
    ("arm-32-android", ".o", ".a", _elf_arm32, ""),
    ("arm-32-ios", ".o", ".a", _macho32_arm(9), "_"),
    ("arm-32-ios-armv7s", ".o", ".a", _macho32_arm(11), "_"),
]


@pytest.mark.parametrize("target,obj,lib,check,prefix", TARGETS, ids=[t[0] for t in TARGETS])
def test_object_format_and_symbols(target, obj, lib, check, prefix, tmp_path):
    func, params, *_ = widening_blur()
    func.compile_to_file(str(tmp_path / "blur"), params, "blur", hl.Target(target))
    func.compile_to_static_library(str(tmp_path / "blur_lib"), params, "blur", hl.Target(target))
    data = (tmp_path / f"blur{obj}").read_bytes()
    if check:
        assert check(data), data[:32]
    nm = _llvm_nm()
    defined = subprocess.run([nm, "--defined-only", str(tmp_path / f"blur{obj}")],
                             capture_output=True, text=True, check=True).stdout.split()
    for sym in ["blur", "blur_argv", "blur_metadata", "halide_malloc", "halide_do_par_for"]:
        assert prefix + sym in defined, (sym, defined[:40])
    index = subprocess.run([nm, "--print-armap", str(tmp_path / f"blur_lib{lib}")],
                           capture_output=True, text=True, check=True).stdout
    assert f"{prefix}blur in " in index and f"{prefix}blur_argv in " in index


@pytest.mark.parametrize("target", ["x86-32-linux", "x86-32-windows", "hexagon-32-qurt-hvx_128",
                                    "arm-64-linux-sve2", "riscv-64-linux", "arm-64-windows", "wasm-32-wasmrt"])
def test_targets_not_supported_yet_are_refused_by_name(target, tmp_path):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    with pytest.raises(hl.HalideError) as e:
        f.compile_to_object(str(tmp_path / "f.o"), [], "f", hl.Target(target))
    assert "not supported" in str(e.value)
    assert not (tmp_path / "f.o").exists()
