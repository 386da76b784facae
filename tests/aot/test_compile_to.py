"""compile_to_* from Python: the files each writes, a C program linking the
object or static library (and the same program linking the reference's
object prints the same), several functions in one module, and the errors
of what is not supported."""
import os

import numpy as np
import pytest

import ferrohalide as hl

from .conftest import include_dir, run

C_DRIVER = r"""
#include <stdio.h>
#include "HalideRuntime.h"
#include "NAME.h"
int main(void) {
    uint8_t in[2][5], out[2][5];
    for (int y = 0; y < 2; y++) for (int x = 0; x < 5; x++) in[y][x] = (uint8_t)(40 * x + y);
    halide_dimension_t din[2] = {{0, 5, 1, 0}, {0, 2, 5, 0}}, dout[2] = {{0, 5, 1, 0}, {0, 2, 5, 0}};
    halide_buffer_t bin = {0}, bout = {0};
    bin.host = &in[0][0]; bin.type.code = halide_type_uint; bin.type.bits = 8; bin.type.lanes = 1;
    bin.dimensions = 2; bin.dim = din;
    bout = bin; bout.host = &out[0][0]; bout.dim = dout;
    int r = NAME(&bin, 7, &bout);
    printf("result %d\n", r);
    for (int y = 0; y < 2; y++) { for (int x = 0; x < 5; x++) printf("%d ", out[y][x]); printf("\n"); }
    halide_dimension_t dq[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    halide_buffer_t q = bin; q.host = 0; q.dim = dq;
    r = NAME(&q, 7, &bout);
    printf("query %d: %d %d %d %d %d %d\n", r, dq[0].min, dq[0].extent, dq[0].stride, dq[1].min, dq[1].extent, dq[1].stride);
#ifndef NO_ERRORS
    /* (Halide's own default error handler aborts the program.) */
    halide_buffer_t wrong = bin; wrong.type.code = halide_type_int;
    printf("wrong type %d\n", NAME(&wrong, 7, &bout));
#endif
    return 0;
}
"""


def brighten(hl_):
    """out(x, y) = in(x + 1, y) + offset (saturating), vectorized; the input
    is read one column to the right, so its required region is shifted."""
    x, y = hl_.Var("x"), hl_.Var("y")
    inp = hl_.ImageParam(hl_.UInt(8), 2, "input")
    offset = hl_.Param(hl_.UInt(8), "offset")
    f = hl_.Func("brightened")
    f[x, y] = hl_.saturating_add(inp[hl_.min(x + 1, 4), y], offset)
    f.vectorize(x, 4, hl_.TailStrategy.GuardWithIf)
    return f, [inp, offset]


def link_and_run(cc, tmp, impl, name, objects, errors=True):
    src = tmp / "main.c"
    src.write_text(C_DRIVER.replace("NAME", name))
    exe = tmp / f"main_{name}"
    run([cc, "-I", include_dir(impl), "-I", str(tmp), str(src)] + ([] if errors else ["-DNO_ERRORS"])
        + [str(o) for o in objects]
        + ["-lpthread", "-ldl", "-lm", "-o", str(exe)])
    return run([str(exe)]).stdout


def test_object_and_header_link_into_c_like_the_reference(cc, tmp_path, ref_hl):
    outputs = {}
    for impl in (hl, ref_hl):
        d = tmp_path / impl.__name__
        d.mkdir()
        f, args = brighten(impl)
        f.compile_to_file(str(d / "brighten"), args, "brighten", impl.Target("host"))
        assert (d / "brighten.h").exists() and (d / "brighten.o").exists()
        outputs[impl.__name__] = link_and_run(cc, d, impl, "brighten", [d / "brighten.o"], errors=False)
    assert outputs["ferrohalide"] == outputs["halide"], outputs
    assert "result 0" in outputs["ferrohalide"] and "query 0: 1 4 1 0 2 4" in outputs["ferrohalide"]


def test_static_library(cc, tmp_path):
    f, args = brighten(hl)
    f.compile_to_static_library(str(tmp_path / "blib"), args, "blib")
    text = link_and_run(cc, tmp_path, hl, "blib", [tmp_path / "blib.a"])
    assert "result 0\n47 87 127 167 167" in text, text
    assert "wrong type -3" in text


def test_no_runtime_object_and_standalone_runtime(cc, tmp_path):
    f, args = brighten(hl)
    t = hl.Target("host-no_runtime")
    f.compile_to_object(str(tmp_path / "bnr.o"), args, "bnr", t)
    f.compile_to_header(str(tmp_path / "bnr.h"), args, "bnr", t)
    hl.compile_standalone_runtime(str(tmp_path / "rt.o"), hl.Target("host"))
    written = hl.compile_standalone_runtime(
        {hl.OutputFileType.static_library: str(tmp_path / "rt.a"), hl.OutputFileType.c_header: "ignored.h"},
        hl.Target("host"),
    )
    assert list(written) == [hl.OutputFileType.static_library]
    text = link_and_run(cc, tmp_path, hl, "bnr", [tmp_path / "bnr.o", tmp_path / "rt.o"])
    assert "result 0\n47 87 127 167 167" in text, text


def test_text_outputs(tmp_path):
    f, args = brighten(hl)
    base = str(tmp_path / "b")
    f.compile_to_assembly(base + ".s", args, "bfn")
    f.compile_to_llvm_assembly(base + ".ll", args, hl.Target("host"))  # (filename, args, target)
    f.compile_to_bitcode(base + ".bc", args, "bfn")
    f.compile_to_conceptual_stmt(base + ".stmt", args)
    assert "bfn_argv" in open(base + ".s").read()
    assert "define" in open(base + ".ll").read() and "brightened" in open(base + ".ll").read()
    assert open(base + ".bc", "rb").read(2) == b"BC"
    assert "brightened" in open(base + ".stmt").read()
    outs = {k: base + "." + k.name for k in (hl.OutputFileType.registration,
                                             hl.OutputFileType.function_info_header,
                                             hl.OutputFileType.schedule, hl.OutputFileType.stmt_html)}
    f.compile_to(outs, args, "bfn")
    assert "halide_register_argv_and_metadata" in open(outs[hl.OutputFileType.registration]).read()
    assert '{"offset", ::HalideFunctionInfo::InputScalar, 0' in open(outs[hl.OutputFileType.function_info_header]).read()


def test_module_append_and_link_modules(cc, tmp_path):
    f, args = brighten(hl)
    m1 = f.compile_to_module(args, "first")
    m2 = f.compile_to_module(args, "second")
    assert m1.name() == "first" and str(m1.target()) == str(hl.get_target_from_environment())
    both = hl.link_modules("both", [m1, m2])
    both.compile({hl.OutputFileType.object: str(tmp_path / "both.o"),
                  hl.OutputFileType.c_header: str(tmp_path / "both.h")})
    header = open(tmp_path / "both.h").read()
    assert "int first(" in header and "int second(" in header
    src = tmp_path / "two.c"
    src.write_text(r"""
#include <stdio.h>
#include "HalideRuntime.h"
#include "both.h"
int main(void) {
    uint8_t in[5] = {1, 2, 3, 4, 5}, out[5];
    halide_dimension_t d[2] = {{0, 5, 1, 0}, {0, 1, 5, 0}}, e[2] = {{0, 5, 1, 0}, {0, 1, 5, 0}};
    halide_buffer_t bi = {0}, bo = {0};
    bi.host = in; bi.type.code = halide_type_uint; bi.type.bits = 8; bi.type.lanes = 1; bi.dimensions = 2; bi.dim = d;
    bo = bi; bo.host = out; bo.dim = e;
    int a = first(&bi, 1, &bo);
    int b = second(&bi, 2, &bo);
    printf("%d %d %d\n", a, b, out[0]);
    return 0;
}
""")
    run(["cc", "-I", include_dir(hl), "-I", str(tmp_path), str(src), str(tmp_path / "both.o"),
         "-lpthread", "-ldl", "-lm", "-o", str(tmp_path / "two")])
    assert run([str(tmp_path / "two")]).stdout.strip() == "0 0 4"
    with pytest.raises(hl.HalideError, match="already has a function named first"):
        m1.append(m1)


def test_argument_list_must_name_every_input(tmp_path):
    f, (inp, offset) = brighten(hl)
    with pytest.raises(hl.HalideError, match="Generated code refers to parameter offset"):
        f.compile_to_object(str(tmp_path / "x.o"), [inp], "x")
    with pytest.raises(TypeError):
        f.compile_to_object(str(tmp_path / "x.o"), [inp, 3], "x")


def test_unsupported_outputs_and_targets_are_errors(tmp_path):
    f, args = brighten(hl)
    with pytest.raises(hl.HalideError, match="not implemented"):
        f.compile_to({hl.OutputFileType.pytorch_wrapper: str(tmp_path / "x.h")}, args, "x")
    with pytest.raises(hl.HalideError, match="x86-32-linux"):
        f.compile_to_object(str(tmp_path / "x.o"), args, "x", hl.Target("x86-32-linux"))
    assert not os.path.exists(tmp_path / "x.h")


def test_pipeline_requirements_fail_with_halides_code(cc, tmp_path):
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p")
    f = hl.Func("req")
    f[x] = x + p
    pipe = hl.Pipeline(f)
    pipe.add_requirement(p > 0, "p must be positive, not", p)
    pipe.compile_to_file(str(tmp_path / "req"), [p], "req")
    src = tmp_path / "r.c"
    src.write_text(r"""
#include <stdio.h>
#include "HalideRuntime.h"
#include "req.h"
int main(void) {
    int32_t out[3];
    halide_dimension_t d = {0, 3, 1, 0};
    halide_buffer_t b = {0};
    b.host = (uint8_t *)out; b.type.code = halide_type_int; b.type.bits = 32; b.type.lanes = 1; b.dimensions = 1; b.dim = &d;
    int ok = req(2, &b);
    int bad = req(-4, &b);
    char msg[256];
    ferrohalide_last_error_message(msg, sizeof msg);
    printf("%d %d %d|%s\n", ok, out[2], bad, msg);
    return 0;
}
""")
    run(["cc", "-I", include_dir(hl), "-I", str(tmp_path), str(src), str(tmp_path / "req.o"),
         "-lpthread", "-ldl", "-lm", "-o", str(tmp_path / "r")])
    out = run([str(tmp_path / "r")]).stdout.strip()
    assert out == "0 4 -27|Requirement Failed: (false) p must be positive, not -4", out
    # The JIT checks the same requirement.
    assert list(np.asarray(pipe.realize([3]) if p.set(1) is None else None)) == [1, 2, 3]
    p.set(0)
    with pytest.raises(hl.HalideError, match=r"Requirement Failed: \(false\) p must be positive, not 0"):
        pipe.realize([3])


def test_buffers_in_the_code_tuples_and_two_objects_with_runtimes(cc, tmp_path):
    """A Buffer the algorithm reads travels in the object (min included); a
    Tuple output is one buffer per element; two objects that each carry the
    runtime link into one program (its symbols are weak)."""
    x = hl.Var("x")
    lut = hl.Buffer(np.array([10, 20, 30, 40], dtype=np.int16), "lut")
    lut.set_min([-1])
    f = hl.Func("f")
    f[x] = lut[hl.clamp(x, -1, 2)] * 2
    f.compile_to_file(str(tmp_path / "f"), [], "f")
    g = hl.Func("g")
    g[x] = hl.Tuple([x * 2, hl.f32(x) / 2])
    g.compile_to_file(str(tmp_path / "g"), [], "g")
    src = tmp_path / "m.c"
    src.write_text(r"""
#include <stdio.h>
#include "HalideRuntime.h"
#include "f.h"
#include "g.h"
int main(void) {
    int16_t out[6];
    halide_dimension_t d = {-2, 6, 1, 0};
    halide_buffer_t b = {0};
    b.host = (uint8_t *)out; b.type.code = halide_type_int; b.type.bits = 16; b.type.lanes = 1;
    b.dimensions = 1; b.dim = &d;
    int r = f(&b);
    printf("%d:", r);
    for (int i = 0; i < 6; i++) printf(" %d", out[i]);
    int32_t o0[3]; float o1[3];
    halide_dimension_t d0 = {0, 3, 1, 0}, d1 = {0, 3, 1, 0};
    halide_buffer_t b0 = {0}, b1 = {0};
    b0.host = (uint8_t *)o0; b0.type.code = halide_type_int; b0.type.bits = 32; b0.type.lanes = 1;
    b0.dimensions = 1; b0.dim = &d0;
    b1 = b0; b1.host = (uint8_t *)o1; b1.type.code = halide_type_float; b1.dim = &d1;
    r = g(&b0, &b1);
    printf(" | %d: %d %d %d %g %g %g\n", r, o0[0], o0[1], o0[2], o1[0], o1[1], o1[2]);
    return 0;
}
""")
    run([cc, "-I", include_dir(hl), "-I", str(tmp_path), str(src), str(tmp_path / "f.o"), str(tmp_path / "g.o"),
         "-lpthread", "-ldl", "-lm", "-o", str(tmp_path / "m")])
    assert run([str(tmp_path / "m")]).stdout.strip() == "0: 20 20 40 60 80 80 | 0: 0 2 4 0 0.5 1"
    # The buffers are named after the Func, which is `g$n` when an earlier
    # test in this process already made a Func "g" (names are unique, as
    # in Halide); the C names replace the `$` and `.` with `_`.
    c_name = g.name().replace("$", "_")
    assert (f"int g(struct halide_buffer_t *_{c_name}_0_buffer, struct halide_buffer_t *_{c_name}_1_buffer)"
            in (tmp_path / "g.h").read_text())


METADATA_NAMES = r"""
#include <stdio.h>
#include "HalideRuntime.h"
const struct halide_filter_metadata_t *remapped_metadata(void);
int main(void) {
    const struct halide_filter_metadata_t *md = remapped_metadata();
    for (int i = 0; i < md->num_arguments; i++) printf("%s\n", md->arguments[i].name);
    return 0;
}
"""


def test_remapped_metadata_names_like_the_reference(cc, tmp_path, ref_hl):
    printed = {}
    for impl in (hl, ref_hl):
        d = tmp_path / impl.__name__
        d.mkdir()
        f, args = brighten(impl)
        m = f.compile_to_module(args, "remapped", impl.Target("host"))
        assert m.get_metadata_name_map() == {}
        m.remap_metadata_name("offset", "gain")
        m.remap_metadata_name("input", "image")
        m.remap_metadata_name(f.name(), "result")
        assert m.get_metadata_name_map() == {"offset": "gain", "input": "image", f.name(): "result"}
        m.compile({impl.OutputFileType.object: str(d / "remapped.o")})
        (d / "main.c").write_text(METADATA_NAMES)
        run(["cc", "-I", include_dir(impl), str(d / "main.c"), str(d / "remapped.o"),
             "-lpthread", "-ldl", "-lm", "-o", str(d / "main")])
        printed[impl.__name__] = run([str(d / "main")]).stdout
    assert printed["ferrohalide"] == printed["halide"] == "image\ngain\nresult\n", printed


def test_module_buffer_submodules_and_autoscheduler_results():
    f, args = brighten(hl)
    m = f.compile_to_module(args, "mod", hl.Target("host"))
    # Halide 21's binding cannot return this Buffer; here it holds the object.
    b = m.compile_to_buffer()
    assert b.type() == hl.UInt(8) and bytes(np.asarray(b)[:4]) == b"\x7fELF"
    r = m.resolve_submodules()
    assert r.name() == "mod" and m.submodules() == []
    assert m.get_auto_scheduler_results() is None
    x, y = hl.Var("x"), hl.Var("y")
    g = hl.Func("g")
    g[x, y] = x + y
    g.set_estimates([(0, 64), (0, 64)])
    res = hl.Pipeline(g).apply_autoscheduler(hl.Target("host"), hl.AutoschedulerParams("Mullapudi2016"))
    m.set_auto_scheduler_results(res)
    got = m.get_auto_scheduler_results()
    assert got.autoscheduler_params.name == "Mullapudi2016"
    assert got.schedule_source == res.schedule_source


MEMO_DRIVER = r"""
#include <stdio.h>
#include "HalideRuntime.h"
#include "memo.h"
static int out[3];
static void call(const char *what, uint64_t k) {
    halide_dimension_t d = {0, 3, 1, 0};
    halide_buffer_t b = {0};
    b.host = (uint8_t *)out; b.type.code = halide_type_int; b.type.bits = 32; b.type.lanes = 1;
    b.dimensions = 1; b.dim = &d;
    int r = memo(k, &b);
    printf("%s: %d -> %d %d %d\n", what, r, out[0], out[1], out[2]);
}
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    call("first", 5);
    call("cached", 5);
    halide_memoization_cache_evict(NULL, 6);
    call("other key evicted", 5);
    halide_memoization_cache_evict(NULL, 5);
    call("own key evicted", 5);
    return 0;
}
"""


def test_memoize_eviction_key_like_the_reference(cc, tmp_path, ref_hl):
    printed = {}
    for impl in (hl, ref_hl):
        d = tmp_path / impl.__name__
        d.mkdir()
        x = impl.Var("x")
        k = impl.Param(impl.UInt(64), "k")
        f = impl.Func("f")
        f[x] = impl.print(x * 2, "computed")
        g = impl.Func("g")
        g[x] = f[x] + 1
        f.compute_root().memoize(impl.EvictionKey(k + 0))
        g.compile_to_file(str(d / "memo"), [k], "memo", impl.Target("host"))
        (d / "main.c").write_text(MEMO_DRIVER)
        run([cc, "-I", include_dir(impl), "-I", str(d), str(d / "main.c"), str(d / "memo.o"),
             "-lpthread", "-ldl", "-lm", "-o", str(d / "main")])
        printed[impl.__name__] = run([str(d / "main")]).stdout
    assert printed["ferrohalide"] == printed["halide"], printed
    text = printed["ferrohalide"]
    assert text.count("computed") == 6 and "own key evicted: 0 -> 1 3 5" in text, text


def test_eviction_key_errors():
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    with pytest.raises(hl.HalideError, match="Can't use floating-point types as a memoization eviction key"):
        f.memoize(hl.EvictionKey(hl.f32(1.5)))
    f.memoize(hl.EvictionKey(hl.u64(3)))
    f.memoize(hl.EvictionKey(hl.u64(3)))  # the same key again is fine (Halide 21 refuses it)
    with pytest.raises(hl.HalideError, match="Can't redefine memoize eviction key"):
        f.memoize(hl.EvictionKey(hl.u64(4)))
    with pytest.raises(TypeError):
        f.memoize(3)
