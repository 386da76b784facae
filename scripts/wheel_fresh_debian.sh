#!/usr/bin/env bash
# The wheel on a fresh Debian 12: a minimal bookworm system made with
# debootstrap (Python 3 and venv only: no C compiler, no Rust, no LLVM), the
# wheel pip-installed into a venv there, then, inside it, the smoke test's
# parts that need no compiler (JIT, PNG, C API, headers) and a generator
# compiled to an object, a header and a static library. Needs root.
#
#   scripts/wheel_fresh_debian.sh WHEEL
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WHEEL="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
command -v debootstrap >/dev/null || { echo "[fresh debian] debootstrap is missing (scripts/setup.sh installs it)" >&2; exit 1; }
SYS="$(mktemp -d)"
cleanup() {
    umount "$SYS/proc" "$SYS/dev" 2>/dev/null || true
    # Never recurse into a mount that is still there (the host's /dev).
    if mountpoint -q "$SYS/dev" || mountpoint -q "$SYS/proc"; then
        echo "[fresh debian] $SYS is still mounted: left in place" >&2
        return
    fi
    rm -rf --one-file-system "$SYS"
}
trap cleanup EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$SYS" >"$SYS.log" 2>&1 \
    || { tail -20 "$SYS.log"; exit 1; }
rm -f "$SYS.log"
for tool in cc gcc clang cargo rustc llvm-config-19; do
    if chroot "$SYS" /bin/sh -c "command -v $tool" >/dev/null; then
        echo "[fresh debian] $tool is present: not a fresh system" >&2
        exit 1
    fi
done
# The network as this machine reaches it: name servers, and pip's settings
# and certificates when this machine has its own.
cp /etc/resolv.conf "$SYS/etc/resolv.conf"
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$SYS/etc/pip.conf"
cp /etc/ssl/certs/ca-certificates.crt "$SYS/etc/ssl/certs/ca-certificates.crt"
mount -t proc proc "$SYS/proc"
mount --bind /dev "$SYS/dev"
cp "$WHEEL" "$ROOT/tests/wheel/smoke.py" "$SYS/root/"
cat >"$SYS/root/aot.py" <<'EOF'
import os, subprocess, sys
sys.path.insert(0, "/root")
import smoke
with open("/tmp/brighten_gen.py", "w") as f:
    f.write(smoke.GENERATOR)
os.makedirs("/tmp/out")
subprocess.run([sys.executable, "/tmp/brighten_gen.py", "-g", "brighten", "-o", "/tmp/out",
                "-e", "object,c_header,static_library", "target=host", "gain=3.0"], check=True)
made = sorted(os.listdir("/tmp/out"))
assert made == ["brighten.a", "brighten.h", "brighten.o"], made
with open("/tmp/out/brighten.o", "rb") as f:
    assert f.read(4) == b"\x7fELF"
print("ok: generator -> object, header and static library (no compiler here)")
EOF
chroot "$SYS" /bin/sh -c "cd /root && python3 -m venv v && v/bin/pip install -q --disable-pip-version-check ./$(basename "$WHEEL") \
    && cd /tmp && /root/v/bin/python -I /root/smoke.py --no-compiler && /root/v/bin/python /root/aot.py"
echo "[fresh debian] the wheel works on a minimal Debian 12 with no compiler, Rust or LLVM"
