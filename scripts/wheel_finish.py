"""Finish a wheel built by maturin: add the C API library and its header,
and give every shared library a run path inside the wheel only.

Usage: python scripts/wheel_finish.py WHEEL LIBRARY HEADER

maturin builds the wheel around the Python extension only, and its
auditwheel step copies the extension's non-system libraries (libffi,
libzstd: LLVM's) into `ferrohalide.libs/` under hashed names. The C API
library (`libferrohalide_c.so`, LLVM linked in too) needs the same
libraries, so its copy in the wheel is pointed at those bundled copies
(`patchelf`: its DT_NEEDED entries renamed and its run path set to
`$ORIGIN/../ferrohalide.libs`). The extension's run path loses the build
machine's directories that the LLVM build added (nothing is loaded from
them: LLVM is linked in). Then the wheel's RECORD is written anew.
"""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def needed(path):
    out = subprocess.run(["patchelf", "--print-needed", path], check=True, capture_output=True, text=True)
    return out.stdout.split()


def main(wheel, library, header):
    with zipfile.ZipFile(wheel) as z:
        entries = {i.filename: z.read(i) for i in z.infolist()}
    bundled = [n.split("/", 1)[1] for n in entries if n.startswith("ferrohalide.libs/")]
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, os.path.basename(library))
        shutil.copy(library, lib)
        # libffi.so.8 -> libffi-983e72b7.so.8: same stem and version suffix.
        for dep in needed(lib):
            stem, _, version = dep.partition(".so")
            match = [b for b in bundled if b.startswith(stem + "-") and b.endswith(".so" + version)]
            if match:
                subprocess.run(["patchelf", "--replace-needed", dep, match[0], lib], check=True)
        subprocess.run(["patchelf", "--set-rpath", "$ORIGIN/../ferrohalide.libs", lib], check=True)
        with open(lib, "rb") as f:
            entries["ferrohalide/" + os.path.basename(library)] = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        for name in [n for n in entries if n.startswith("ferrohalide/_core") and n.endswith(".so")]:
            ext = os.path.join(tmp, os.path.basename(name))
            with open(ext, "wb") as f:
                f.write(entries[name])
            subprocess.run(["patchelf", "--remove-rpath", ext], check=True)
            subprocess.run(["patchelf", "--force-rpath", "--set-rpath", "$ORIGIN/../ferrohalide.libs", ext], check=True)
            with open(ext, "rb") as f:
                entries[name] = f.read()
    with open(header, "rb") as f:
        entries["ferrohalide/include/" + os.path.basename(header)] = f.read()
    record = next(n for n in entries if n.endswith(".dist-info/RECORD"))
    lines = [record_line(n, d) for n, d in entries.items() if n != record] + [f"{record},,"]
    entries[record] = ("\n".join(lines) + "\n").encode()
    out = wheel + ".tmp"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            # Executable bits for shared libraries, read for everything.
            info.external_attr = (0o755 if name.endswith((".so",)) or ".so." in name else 0o644) << 16
            z.writestr(info, data)
    os.replace(out, wheel)


if __name__ == "__main__":
    main(*sys.argv[1:])
