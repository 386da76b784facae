"""Summarize a valgrind log: one line per error context (kind, count, top frames),
and whether any frame is in ferrohalide's extension (Rust/LLVM) code."""
import re, sys, collections
ctx = collections.OrderedDict()
for path in sys.argv[1:]:
    lines = open(path).read().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r'==\d+== (Invalid (read|write|free).*|Conditional jump.*|Use of uninitialised.*|Syscall param.*|Mismatched.*|Source and destination overlap.*|Invalid .*|Argument .*|.*bytes in .* blocks are definitely lost.*)$', lines[i])
        if not m:
            i += 1; continue
        kind = m.group(1)
        frames = []
        i += 1
        while i < len(lines) and re.match(r'==\d+==\s+(at|by) ', lines[i]):
            frames.append(re.sub(r'==\d+==\s+(at|by) 0x[0-9A-F]+: ', '', lines[i]))
            i += 1
        key = (re.sub(r'\d+ bytes in \d+ blocks', 'N bytes', kind), tuple(frames[:6]))
        ctx.setdefault(key, [0, frames])[0] += 1
ours = lambda fr: any(('_core.cpython' in f or 'ferrohalide' in f or 'pyo3' in f or 'llvm' in f.lower() or '???' in f) for f in fr)
for (kind, top), (n, frames) in ctx.items():
    tag = 'OURS?' if ours(frames) else 'python'
    print(f'{tag:6s} {n:5d}x {kind}')
    for f in frames[:8]:
        print('          ', f[:150])
