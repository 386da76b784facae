"""hl.Target: parsing and printing Halide target strings, features, vector sizes,
the host and JIT targets, HL_JIT_TARGET (issue 5, item 4).

Host-specific details (the host's feature list, processor tuning) are never
compared across implementations: only its os / arch / bits."""
import pytest

from .harness import differential, htype
from .input_helpers import arr, error_key, run_script

VALID = [
    "x86-64-linux",
    "x86-64-linux-sse41-avx",
    "x86-64-linux-avx2-fma-f16c-sse41-avx",
    "x86-64-linux-avx512",
    "x86-64-linux-avx512_skylake",
    "x86-64-linux-avx512_sapphirerapids-avx512_cannonlake",
    "x86-64-linux-debug-no_asserts-no_bounds_query",
    "x86-64-linux-no_bounds_query-debug",
    "x86-64-linux-sse41-sse41",
    "x86-64-linux-jit",
    "x86-64-linux-tune_znver4",
    "x86-64-linux-tune_znver4-avx2",
    "x86-32-windows",
    "x86-64-osx",
    "x86-64-windows-no_runtime",
    "x86-64-noos",
    "arm-64-osx",
    "arm-32-android",
    "arm-64-linux-sve2-arm_dot_prod",
    "riscv-64-linux-rvv",
    "wasm-32-wasmrt-wasm_simd128",
    "x86-64-linux-cuda-cuda_capability_50",
    "arm-64-osx-metal",
    "x86-64-linux-opencl-cl_doubles",
    "x86-64-linux-large_buffers",
    "linux-x86-64",
    "32-x86-linux",
    "avx-x86-64-linux",
]

INVALID = ["x86-64", "x86", "linux", "x86-64-linux-bogus", "x86-65-linux",
           "x86-64-linux-linux", "X86-64-LINUX", "-x86-64-linux", "x86--64-linux",
           "x86-64-linux-", "x86-64-linux-avx 2"]


def _desc(t):
    return {"str": str(t), "to_string": t.to_string(), "os": t.os.name,
            "arch": t.arch.name, "bits": t.bits,
            "tune": t.processor_tune.name}


@differential()
def test_target_parse_and_print(hl):
    """Canonical form: arch-bits-os[-tune]-features, features sorted by name and
    deduplicated; components may come in any order when parsing."""
    out = {}
    for s in VALID:
        t = hl.Target(s)
        d = _desc(t)
        d["round_trip"] = str(hl.Target(str(t))) == str(t)
        d["equal_after_round_trip"] = hl.Target(str(t)) == t
        d["valid"] = hl.Target.validate_target_string(s)
        out[s] = d
    return out


@differential()
def test_target_invalid_strings(hl):
    out = {}
    for s in INVALID:
        out[s] = [error_key(hl, lambda: hl.Target(s), "Did not understand Halide target"),
                  hl.Target.validate_target_string(s)]
    return out


@differential()
def test_target_default_and_empty(hl):
    """Target() is the unknown target; Target("") is the host target (but "" is not
    a valid target string)."""
    d = hl.Target()
    return {"default": _desc(d),
            "empty_is_host": hl.Target("") == hl.get_host_target(),
            "empty_valid": hl.Target.validate_target_string("")}


@differential()
def test_target_from_components(hl):
    F = hl.TargetFeature
    a = hl.Target(hl.TargetOS.Linux, hl.TargetArch.X86, 64)
    b = hl.Target(hl.TargetOS.Windows, hl.TargetArch.ARM, 32, [F.Debug, F.NoAsserts])
    c = hl.Target(hl.TargetOS.OSX, hl.TargetArch.X86, 64, hl.TargetProcessorTune.TuneZnVer4,
                  [F.AVX, F.SSE41])
    e = hl.Target("x86-64-linux")
    e.bits = 32
    e.os = hl.TargetOS.Windows
    return [_desc(t) for t in (a, b, c, e)]


@differential()
def test_target_features(hl):
    """has_feature / with_feature / without_feature return values, leaving the
    Target unchanged; set_feature / set_features mutate it.  Features do not imply
    each other at this level (avx2 does not report avx)."""
    F = hl.TargetFeature
    t = hl.Target("x86-64-linux-avx2-fma")
    out = {
        "has": [t.has_feature(f) for f in (F.AVX2, F.FMA, F.AVX, F.SSE41, F.JIT)],
        "skylake_has_avx2": hl.Target("x86-64-linux-avx512_skylake").has_feature(F.AVX2),
    }
    t2 = t.with_feature(F.SSE41)
    t3 = t2.without_feature(F.AVX2)
    out["with"] = [str(t), str(t2), str(t3)]
    out["without_absent"] = str(t.without_feature(F.AVX512))
    out["with_present"] = str(t.with_feature(F.AVX2))
    m = hl.Target("x86-64-linux")
    m.set_feature(F.AVX)
    out["set"] = str(m)
    m.set_feature(F.AVX, False)
    out["unset"] = str(m)
    m.set_features([F.AVX, F.SSE41, F.NoAsserts])
    out["set_many"] = str(m)
    m.set_features([F.NoAsserts], False)
    out["unset_many"] = str(m)
    out["all_any"] = [m.features_all_of([F.AVX, F.SSE41]), m.features_all_of([F.AVX, F.AVX2]),
                      m.features_any_of([F.AVX2, F.SSE41]), m.features_any_of([F.AVX2]),
                      m.features_all_of([]), m.features_any_of([])]
    out["eq"] = [m == hl.Target("x86-64-linux-sse41-avx"), m != hl.Target("x86-64-linux"),
                 hl.Target("x86-64-linux-avx-avx2") == hl.Target("x86-64-linux-avx2-avx")]
    out["bad_feature_arg"] = error_key(hl, lambda: t.has_feature("avx"))
    return out


@differential()
def test_target_feature_strings(hl):
    """The spelling of individual features in target strings."""
    F = hl.TargetFeature
    names = {"sse41": F.SSE41, "avx": F.AVX, "avx2": F.AVX2, "avx512": F.AVX512,
             "avx512_skylake": F.AVX512_Skylake, "avx512_cannonlake": F.AVX512_Cannonlake,
             "avx512_sapphirerapids": F.AVX512_SapphireRapids, "fma": F.FMA, "f16c": F.F16C,
             "debug": F.Debug, "no_asserts": F.NoAsserts, "no_bounds_query": F.NoBoundsQuery,
             "jit": F.JIT, "large_buffers": F.LargeBuffers, "strict_float": F.StrictFloat,
             "user_context": F.UserContext, "profile": F.Profile}
    base = hl.Target("x86-64-linux")
    return {n: [str(base.with_feature(f)), hl.Target("x86-64-linux-" + n).has_feature(f)]
            for n, f in names.items()}


@differential()
def test_target_natural_vector_size(hl):
    targets = ["x86-64-linux", "x86-64-linux-sse41", "x86-64-linux-avx", "x86-64-linux-avx2",
               "x86-64-linux-avx512", "x86-64-linux-avx512_skylake", "x86-32-linux",
               "arm-64-linux", "arm-32-linux", "wasm-32-wasmrt-wasm_simd128",
               "x86-64-linux-avx512_sapphirerapids"]
    types = ["u8", "i16", "i32", "f32", "f64", "i64", "bool"]
    return {s: [hl.Target(s).natural_vector_size(htype(hl, t)) for t in types]
            for s in targets}


@differential()
def test_target_misc_queries(hl):
    return {
        "gpu": [hl.Target(s).has_gpu_feature() for s in
                ["x86-64-linux-cuda", "x86-64-linux-opencl", "arm-64-osx-metal", "x86-64-linux"]],
        "max_buffer": [hl.Target(s).maximum_buffer_size() for s in
                       ["x86-64-linux", "x86-64-linux-large_buffers", "x86-32-linux"]],
        "large": [hl.Target(s).has_large_buffers() for s in
                  ["x86-64-linux", "x86-64-linux-large_buffers"]],
        "trace_all": hl.Target("x86-64-linux-trace_all").has_feature(hl.TargetFeature.TraceLoads),
    }


@differential()
def test_host_and_jit_target(hl):
    """Only the stable parts of the host target are compared."""
    F = hl.TargetFeature
    h = hl.get_host_target()
    j = hl.get_jit_target_from_environment()
    return {
        "host": [h.os.name, h.arch.name, h.bits, h.has_feature(F.JIT)],
        "jit": [j.os.name, j.arch.name, j.bits, j.has_feature(F.JIT)],
        "jit_is_host_plus_jit": j == h.with_feature(F.JIT),
        "host_string_round_trip": hl.Target(str(h)) == h,
        "host_keyword": hl.Target("host") == h,
        "host_with_feature": hl.Target("host-debug") == h.with_feature(F.Debug),
    }


def _host_base(hl):
    h = hl.get_host_target()
    return "-".join(str(h).split("-")[:3]), h.arch == hl.TargetArch.X86


@differential()
def test_realize_with_explicit_targets(hl):
    """Realizing for host-compatible targets (and the unknown Target()) gives the
    same values."""
    x = hl.Var("x")
    base, x86 = _host_base(hl)
    out = {}
    for feats in ["", "-sse41", "-no_bounds_query", "-no_asserts"] if x86 else ["", "-no_asserts"]:
        f = hl.Func("f")
        f[x] = hl.f32(x) * 0.75 + hl.f32(x * x)
        out[feats] = arr(f.realize([9], hl.Target(base + feats)))
    g = hl.Func("g")
    g[x] = x * 3
    out["unknown"] = arr(g.realize([5], hl.Target()))
    out["pipeline"] = arr(hl.Pipeline(g).realize([5], hl.Target(base)))
    return out


@differential()
def test_no_asserts_skips_param_range_check(hl):
    """With no_asserts the out-of-range Param is not checked (the value is used)."""
    x = hl.Var("x")
    base, _ = _host_base(hl)
    p = hl.Param(hl.Int(32), "p", 1)
    p.set_range(0, 3)
    p.set(7)
    f = hl.Func("f")
    f[x] = x + p
    return arr(f.realize([4], hl.Target(base + "-no_asserts")))


# The start of the scripts run in a fresh interpreter: the module, and
# show(), which prints a step's value or the kind of error it raised.
SCRIPT_PRELUDE = r"""
import os, sys
hl = __import__(sys.argv[1])
def show(tag, fn):
    try:
        print(tag, fn())
    except Exception as e:
        print(tag, "raised", type(e).__name__, "HL_JIT_TARGET must match" in str(e),
              "Did not understand Halide target" in str(e))
"""

ENV_SCRIPT = SCRIPT_PRELUDE + r"""
jt = hl.get_jit_target_from_environment()
print("jit", str(jt), jt.has_feature(hl.TargetFeature.JIT))
print("target", str(hl.get_target_from_environment()))
x = hl.Var("x")
f = hl.Func("f")
f[x] = x * 2 + 1
print("realize", list(f.realize([4])))
os.environ["HL_JIT_TARGET"] = "host"
show("host", lambda: hl.get_jit_target_from_environment() ==
     hl.get_host_target().with_feature(hl.TargetFeature.JIT))
os.environ["HL_JIT_TARGET"] = sys.argv[2]
show("other_arch", lambda: str(hl.get_jit_target_from_environment()))
os.environ["HL_JIT_TARGET"] = "bogus-target"
show("bogus", lambda: str(hl.get_jit_target_from_environment()))
del os.environ["HL_JIT_TARGET"]
show("unset", lambda: hl.get_jit_target_from_environment() ==
     hl.get_host_target().with_feature(hl.TargetFeature.JIT))
"""


@differential()
def test_hl_jit_target_environment(hl):
    """HL_JIT_TARGET (read at each get_jit_target_from_environment call) must match
    the host's arch-bits-os; the result gets the jit feature; HL_TARGET feeds
    get_target_from_environment."""
    base, x86 = _host_base(hl)
    other = "arm-64-linux" if x86 else "x86-64-linux"
    jit = base + ("-sse41-no_asserts" if x86 else "-no_asserts")
    script = ENV_SCRIPT.replace("sys.argv[2]", repr(other))
    rc, out, err = run_script(hl, script, env={"HL_JIT_TARGET": jit,
                                               "HL_TARGET": "x86-32-windows-debug"})
    return rc, out


REUSE_SCRIPT = SCRIPT_PRELUDE + r"""
x = hl.Var("x")
f = hl.Func("f")
f[x] = x * 2
show("first", lambda: list(f.realize([3])))
os.environ["HL_JIT_TARGET"] = "bogus-target"
show("same pipeline", lambda: list(f.realize([3])))
f.vectorize(x, 4)
show("rescheduled", lambda: list(f.realize([3])))
g = hl.Func("g")
g[x] = x
show("another pipeline", lambda: list(g.realize([3])))
"""


@differential()
def test_a_compiled_pipeline_keeps_its_jit_target(hl):
    """A realization that names no target reuses the target the pipeline was
    last compiled for, without reading HL_JIT_TARGET again, until a Func of
    it changes (Halide's Pipeline::compile_jit)."""
    rc, out, err = run_script(hl, REUSE_SCRIPT)
    return rc, out


DEVICE_TARGETS = ["x86-64-linux", "x86-64-linux-cuda", "x86-64-linux-opencl",
                  "x86-64-linux-opencl-cl_doubles", "x86-64-osx-metal", "arm-64-android-hvx-no_runtime",
                  "x86-64-linux-vulkan", "x86-64-linux-vulkan-vk_int64-vk_float64-vk_int8",
                  "x86-64-windows-d3d12compute", "x86-64-linux-webgpu"]


HOST_SUPPORT_TARGETS = ["x86-64-linux", "x86-64-linux-cuda", "x86-64-linux-opencl",
                        "x86-64-linux-opencl-cl_doubles", "x86-64-osx-metal"]


def test_host_supports_no_device_runtime():
    """Where Halide 21 segfaults (hvx) or errors while loading a GPU runtime
    (vulkan, webgpu, d3d12compute), ferrohalide answers: no device runtime here."""
    import ferrohalide as hl
    for s in ["arm-64-android-hvx", "x86-64-linux-vulkan", "x86-64-linux-webgpu",
              "x86-64-windows-d3d12compute", "x86-64-linux-hexagon_dma"]:
        assert hl.host_supports_target_device(hl.Target(s)) is False, s
    assert hl.host_supports_target_device(hl.Target("x86-64-linux")) is True


@differential()
def test_device_api_queries(hl):
    """hl.DeviceAPI, Target.supports_device_api / supports_type (with and without a
    device), target_feature_for_device_api and host_supports_target_device (this
    machine has no GPU runtime: only targets without a device are supported)."""
    apis = list(hl.DeviceAPI.__members__.items())
    types = [hl.Float(64), hl.Float(16), hl.Int(64), hl.UInt(16), hl.Int(8),
             hl.Float(32).with_lanes(4), hl.Float(64).with_lanes(4)]
    out = {"members": [(n, int(v), str(v), repr(v)) for n, v in apis],
           "features": [str(hl.target_feature_for_device_api(v)) for _, v in apis]}
    for s in DEVICE_TARGETS:
        t = hl.Target(s)
        out[s] = {
            "device_api": [t.supports_device_api(v) for _, v in apis],
            "type": [t.supports_type(ty) for ty in types],
            "type_on": [[t.supports_type(ty, v) for ty in types] for _, v in apis],
            # Halide 21 crashes or fails to load a runtime library on the others.
            "host_supports": error_key(hl, lambda: hl.host_supports_target_device(t))
            if s in HOST_SUPPORT_TARGETS else None,
        }
    return out


@differential()
def test_enum_str_names_member(hl):
    return [str(hl.TargetFeature.AVX), str(hl.TargetOS.Linux), str(hl.TargetArch.X86),
            repr(hl.TargetFeature.AVX)]


@pytest.mark.parametrize("feature", ["Profile", "ProfileByTimer", "ASAN", "MSAN", "TSAN",
                                     "SanitizerCoverage", "FuzzFloatStores",
                                     "CheckUnsafePromises", "CPlusPlusMangling",
                                     "EmbedBitcode", "SoftFloatABI"])
def test_unimplemented_target_features_are_refused_by_name(feature):
    """A feature that would change what the compiled code does (Halide's
    profiler report, sanitizer instrumentation, ...) is refused when
    compiling, naming it, not accepted and ignored; constructing and printing
    such a Target still works."""
    import ferrohalide as hl
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    t = hl.get_jit_target_from_environment().with_feature(getattr(hl.TargetFeature, feature))
    assert t.has_feature(getattr(hl.TargetFeature, feature)) and hl.Target(str(t)) == t
    with pytest.raises(hl.HalideError, match="Target feature .* is not implemented"):
        f.realize([4], t)
    assert list(f.realize([4])) == [0, 1, 2, 3]
