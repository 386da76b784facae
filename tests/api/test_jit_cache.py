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
    # Each test's processes measure the gather form as a user's do: the
    # first measurement is stored in the folder, and the rest take it.
    e.pop("FERROHALIDE_GATHERS", None)
    e.update(env)
    p = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(k)], env=e, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ok"), p.stdout
    return p.stdout, p.stderr


def entries(cache):
    """Every entry: objects by lowered pipeline (`.o`) and by front end (`.f`)."""
    d = cache / "jit"
    return sorted([*d.glob("*.o"), *d.glob("*.f")]) if d.exists() else []


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    out1, err1 = run(tmp_path)
    assert "JIT cache miss" in err1 and "LLVM optimization" in err1
    # The runtime, and the pipeline by its lowered form and by its front end.
    assert len(entries(tmp_path)) == 3
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
    assert len(entries(tmp_path)) == 5


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
    new = set(entries(tmp_path)) - first
    # Put k=1's pipeline entries under k=2's names.
    for suffix in [".o", ".f"]:
        (target,) = [p for p in new if p.suffix == suffix]
        source = next(p for p in first if p.suffix == suffix)
        target.write_bytes(source.read_bytes())
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
    assert len(list((tmp_path / "xdg" / "ferrohalide" / "jit").glob("*.[of]"))) == 3


def test_files_are_private(tmp_path):
    cache = tmp_path / "c"
    run(cache)
    d = cache / "jit"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert list(d.glob("*.m"))  # the gather measurement
    for path in d.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(d.glob(".tmp-*"))


def gather_choice(err):
    return [line for line in err.splitlines() if line.startswith("gathers:")]


def test_the_gather_measurement_is_made_once_per_folder(tmp_path):
    # The choice is part of every key: were it measured again by each
    # process, a loaded machine could flip it, and processes would miss
    # each other's entries. The second process prints the first's figures.
    _, err1 = run(tmp_path)
    _, err2 = run(tmp_path)
    assert len(gather_choice(err1)) == 1 and gather_choice(err2) == gather_choice(err1)
    assert "JIT cache hit" in err2
    # A damaged measurement is measured again, never read.
    (fact,) = (tmp_path / "jit").glob("*.m")
    fact.write_bytes(fact.read_bytes()[:-3])
    _, err3 = run(tmp_path)
    assert "damaged" in err3 and len(gather_choice(err3)) == 1
    (fact,) = (tmp_path / "jit").glob("*.m")
    _, err4 = run(tmp_path)
    assert gather_choice(err4) == gather_choice(err3)


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
    e.pop("FERROHALIDE_GATHERS", None)  # they race to store one measurement
    procs = [
        subprocess.Popen([sys.executable, "-c", PROGRAM, str(k % 2)], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for k in range(6)
    ]
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0 and out.startswith("ok"), err
    assert len(entries(tmp_path)) == 5  # the runtime; two pipelines, two entries each
    assert len(list((tmp_path / "jit").glob("*.m"))) == 1  # one gather measurement
    assert not list((tmp_path / "jit").glob(".tmp-*"))
    _, err = run(tmp_path, k=1)
    assert "JIT cache hit" in err and "damaged" not in err


# The front-end entries: a fresh process skips lowering too. Their key is
# the pipeline as written, so each thing lowering reads must change it; the
# variants below each change one, and every run checks its values with
# FERROHALIDE_CACHE_VERIFY=1 (a hit is lowered anyway and compared).
VARIANTS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import ferrohalide as hl
    variant = sys.argv[1]
    x, y = hl.Var("x"), hl.Var("y")
    p = hl.Param(hl.Int(32), "p", 3)
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    data = np.arange(40 * 12, dtype=np.int32).reshape(12, 40)
    if variant == "layout":
        data = np.ascontiguousarray(data.T).T  # the same values, x not dense
    table = hl.Buffer(data, "table")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y * p + table[x, y]
    g[x, y] = f[x, y] + f[x + 1, y] + hl.cast(hl.Int(32), im[x, y])
    if variant == "schedule":
        g.vectorize(x, 4)
    if variant == "compute_root":
        f.compute_root()
    if variant == "range":
        p.set_range(0, 10)
    if variant == "wrapper":
        im.in_().compute_root()
    if variant == "constraint":
        im.dim(0).set_min(0)
    if variant == "bound":
        g.bound(x, 0, 32)
    if variant == "requirement":
        pipeline = hl.Pipeline(g)
        pipeline.add_requirement(p > 0)
    else:
        pipeline = hl.Pipeline(g)
    if variant == "inline_warning":
        f.bound(x, 0, 64)  # f is inline: a warning, from lowering
    pixels = (np.arange(41 * 12) % 251).astype(np.uint8).reshape(12, 41)
    im.set(hl.Buffer(pixels))
    target = hl.get_jit_target_from_environment()
    if variant == "target":
        target = target.with_feature(hl.TargetFeature.NoAsserts)
    out = np.asarray(pipeline.realize([32, 11], target))
    xs, ys = np.meshgrid(np.arange(32), np.arange(11))
    fv = lambda xx: xx + ys * 3 + data[ys, xx]
    expect = fv(xs) + fv(xs + 1) + pixels[ys, xs]
    assert (out == expect).all(), "wrong values"
    print("ok", int(out.sum()))
    """
)

VARIANT_NAMES = ["schedule", "compute_root", "range", "wrapper", "constraint", "bound",
                 "requirement", "layout", "target", "inline_warning"]


def run_variant(cache, variant):
    e = dict(os.environ, HL_DEBUG_CODEGEN="1", FERROHALIDE_CACHE_DIR=str(cache), FERROHALIDE_CACHE_VERIFY="1")
    p = subprocess.run([sys.executable, "-c", VARIANTS, variant], env=e, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1].startswith("ok"), p.stdout
    return p.stdout, p.stderr


def lowered(err):
    """Did the process lower a pipeline (HL_DEBUG_CODEGEN=1 times each pass)?"""
    return "storage flattening:" in err


def test_a_front_end_hit_skips_lowering(tmp_path):
    out1, err1 = run_variant(tmp_path, "base")
    assert "front-end miss" in err1 and lowered(err1)
    out2, err2 = run_variant(tmp_path, "base")  # verified: lowered, and compared
    assert out2 == out1 and "front-end hit" in err2
    e = dict(os.environ, HL_DEBUG_CODEGEN="1", FERROHALIDE_CACHE_DIR=str(tmp_path))
    e.pop("FERROHALIDE_CACHE_VERIFY", None)
    p = subprocess.run([sys.executable, "-c", VARIANTS, "base"], env=e, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == out1, p.stderr
    assert "front-end hit" in p.stderr
    assert not lowered(p.stderr) and "LLVM optimization" not in p.stderr


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_what_lowering_reads_is_in_the_front_end_key(tmp_path, variant):
    run_variant(tmp_path, "base")
    _, err = run_variant(tmp_path, variant)
    assert "front-end miss" in err and lowered(err)
    _, err = run_variant(tmp_path, variant)
    assert "front-end hit" in err


def test_a_hit_gives_lowerings_warnings_again(tmp_path):
    out1, _ = run_variant(tmp_path, "inline_warning")
    assert "meaningless" in out1
    out2, err2 = run_variant(tmp_path, "inline_warning")
    assert "front-end hit" in err2 and out2 == out1
