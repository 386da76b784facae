"""The persistent JIT cache: a pipeline compiled by one process is loaded,
not compiled, by the next; a damaged entry is compiled again, never
loaded; the cache can be moved, turned off and bounded, and it keeps its
files private. Each case runs fresh Python processes with their own cache
folder and reads what `HL_DEBUG_CODEGEN=1` reports."""
import os
import stat
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import sys
    import numpy as np
    import ferrohalide as hl
    k = int(sys.argv[1])
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = hl.sin(x * 0.25) + y * k
    g[x, y] = f[x, y] + f[x + 1, y] * 2
    g.vectorize(x, 8).parallel(y)
    f.compute_at(g, y).vectorize(x, 8)
    out = np.asarray(g.realize([37, 11]))
    xs, ys = np.meshgrid(np.arange(37), np.arange(11))
    f0 = np.sin(xs * np.float32(0.25)).astype(np.float32) + ys * k
    f1 = np.sin((xs + 1) * np.float32(0.25)).astype(np.float32) + ys * k
    assert np.allclose(out, f0 + f1 * 2, rtol=1e-5, atol=1e-5), "wrong values"
    print("ok", float(out.sum()))
    """
)


def run(cache, k=1, **env):
    e = dict(os.environ, HL_DEBUG_CODEGEN="1")
    e["FERROHALIDE_CACHE_DIR"] = str(cache)
    e.update(env)
    p = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(k)], env=e, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok"), p.stdout
    return p.stdout, p.stderr


def entries(cache):
    d = cache / "jit"
    return sorted(d.glob("*.o")) if d.exists() else []


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    out1, err1 = run(tmp_path)
    assert "JIT cache miss" in err1 and "LLVM optimization" in err1
    assert len(entries(tmp_path)) == 2  # the runtime and the pipeline
    out2, err2 = run(tmp_path)
    assert out2 == out1
    assert "JIT cache hit" in err2
    assert "JIT cache miss" not in err2
    assert "LLVM optimization" not in err2 and "LLVM machine code" not in err2


def test_a_different_pipeline_gets_its_own_entry(tmp_path):
    out1, _ = run(tmp_path, k=1)
    out2, err2 = run(tmp_path, k=2)
    assert out1 != out2  # and each checked its own values
    assert "JIT cache miss" in err2
    assert len(entries(tmp_path)) == 3


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_a_damaged_entry_is_compiled_again_never_loaded(tmp_path, damage):
    run(tmp_path)
    for path in entries(tmp_path):
        data = path.read_bytes()
        if damage == "truncate":
            data = data[: len(data) // 2]
        elif damage == "flip":
            i = len(data) - 17
            data = data[:i] + bytes([data[i] ^ 0x40]) + data[i + 1 :]
        elif damage == "empty":
            data = b""
        else:
            data = b"\x7fELF" + os.urandom(len(data))
        path.write_bytes(data)
    out, err = run(tmp_path)
    assert "damaged" in err
    assert "JIT cache hit" not in err
    assert "LLVM optimization" in err
    # The entries were rewritten whole: the next process loads them.
    _, err = run(tmp_path)
    assert "JIT cache hit" in err and "damaged" not in err


def test_an_entry_moved_to_another_key_is_not_loaded(tmp_path):
    run(tmp_path, k=1)
    first = set(entries(tmp_path))
    run(tmp_path, k=2)
    (new,) = set(entries(tmp_path)) - first
    # Put k=1's pipeline entry under k=2's name.
    pipeline_k1 = max(first, key=lambda p: p.stat().st_size)
    new.write_bytes(pipeline_k1.read_bytes())
    _, err = run(tmp_path, k=2)  # the program checks k=2's values
    assert "damaged" in err


def test_off_and_empty_disable_the_cache(tmp_path):
    for value in ["off", ""]:
        _, err = run(tmp_path, FERROHALIDE_CACHE_DIR=value)
        assert "JIT cache" not in err
    assert not (tmp_path / "jit").exists()
    assert not any(tmp_path.iterdir())


def test_the_default_folder_is_under_the_users_cache_home(tmp_path):
    env = dict(XDG_CACHE_HOME=str(tmp_path / "xdg"))
    e = dict(os.environ, HL_DEBUG_CODEGEN="1", **env)
    e.pop("FERROHALIDE_CACHE_DIR", None)
    p = subprocess.run([sys.executable, "-c", PROGRAM, "1"], env=e, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert len(list((tmp_path / "xdg" / "ferrohalide" / "jit").glob("*.o"))) == 2


def test_files_are_private(tmp_path):
    cache = tmp_path / "c"
    run(cache)
    d = cache / "jit"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    for path in entries(cache):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(d.glob(".tmp-*"))


def test_a_folder_others_can_write_is_not_used(tmp_path):
    d = tmp_path / "jit"
    d.mkdir()
    os.chmod(d, 0o777)
    _, err = run(tmp_path)
    assert "not using the JIT cache" in err and "other users can write" in err
    assert not list(d.iterdir())


def test_the_size_bound_evicts_the_least_recently_used(tmp_path):
    run(tmp_path, k=1)
    size = sum(p.stat().st_size for p in entries(tmp_path))
    # Room for about two entries: each new pipeline pushes out the oldest.
    limit_mb = (size * 1.5) / (1024 * 1024)
    for k in [2, 3, 4]:
        run(tmp_path, k=k, FERROHALIDE_CACHE_SIZE_MB=str(limit_mb))
        assert sum(p.stat().st_size for p in entries(tmp_path)) <= size * 1.5
    # The newest pipeline is still there.
    _, err = run(tmp_path, k=4, FERROHALIDE_CACHE_SIZE_MB=str(limit_mb))
    assert "JIT cache hit" in err


def test_processes_filling_the_cache_at_once(tmp_path):
    e = dict(os.environ, FERROHALIDE_CACHE_DIR=str(tmp_path))
    procs = [
        subprocess.Popen([sys.executable, "-c", PROGRAM, str(k % 2)], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for k in range(6)
    ]
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0 and out.startswith("ok"), err
    assert len(entries(tmp_path)) == 3
    assert not list((tmp_path / "jit").glob(".tmp-*"))
    _, err = run(tmp_path, k=1)
    assert "JIT cache hit" in err and "damaged" not in err
