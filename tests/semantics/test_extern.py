"""Func.define_extern: stages computed by C functions that the process has
loaded (ctypes.CDLL(..., RTLD_GLOBAL)), with Halide's calling convention
and bounds queries, compared with Halide 21 running the same functions."""
import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

from .harness import differential

SOURCE = r"""
#include <stdint.h>
#include <stddef.h>

struct halide_dimension_t { int32_t min, extent, stride; uint32_t flags; };
struct halide_type_t { uint8_t code, bits; uint16_t lanes; };
struct halide_buffer_t {
    uint64_t device; void *device_interface; uint8_t *host; uint64_t flags;
    struct halide_type_t type; int32_t dimensions; struct halide_dimension_t *dim; void *padding;
};
typedef struct halide_buffer_t buf_t;

static int is_query(buf_t *b) { return b->host == NULL && b->device == 0; }

/* out(x) = in(x - 1) + in(x + 1) + k: asks for in over [min - 1, max + 1]. */
int fh_test_stencil(buf_t *in, int32_t k, buf_t *out) {
    if (is_query(out)) {
        in->dim[0].min = out->dim[0].min - 1;
        in->dim[0].extent = out->dim[0].extent + 2;
        return 0;
    }
    const int32_t *i = (const int32_t *)in->host;
    int32_t *o = (int32_t *)out->host;
    for (int x = 0; x < out->dim[0].extent; x++) {
        int cx = out->dim[0].min + x;
        int a = cx - 1 - in->dim[0].min, b = cx + 1 - in->dim[0].min;
        if (a < 0 || b >= in->dim[0].extent) return -77;
        o[x * out->dim[0].stride] = i[a * in->dim[0].stride] + i[b * in->dim[0].stride] + k;
    }
    return 0;
}

/* out(x, y) = img(x, y) * scale + y, and its transpose's sum in a second output. */
int fh_test_two_outputs(buf_t *img, float scale, buf_t *out0, buf_t *out1) {
    if (is_query(out0)) {
        if (is_query(img)) return 0;
        return 0;
    }
    for (int y = 0; y < out0->dim[1].extent; y++) {
        for (int x = 0; x < out0->dim[0].extent; x++) {
            int cx = out0->dim[0].min + x, cy = out0->dim[1].min + y;
            const uint8_t *p = img->host + (cx - img->dim[0].min) * img->dim[0].stride
                                         + (cy - img->dim[1].min) * img->dim[1].stride;
            ((float *)out0->host)[x * out0->dim[0].stride + y * out0->dim[1].stride] = *p * scale + cy;
            ((int16_t *)out1->host)[x * out1->dim[0].stride + y * out1->dim[1].stride] = (int16_t)(cx - cy);
        }
    }
    return 0;
}

/* A 2-D box sum over a 3x3 window of a Func. */
int fh_test_box(buf_t *in, buf_t *out) {
    if (is_query(out)) {
        for (int d = 0; d < 2; d++) {
            in->dim[d].min = out->dim[d].min - 1;
            in->dim[d].extent = out->dim[d].extent + 2;
        }
        return 0;
    }
    for (int y = 0; y < out->dim[1].extent; y++) {
        for (int x = 0; x < out->dim[0].extent; x++) {
            int cx = out->dim[0].min + x, cy = out->dim[1].min + y;
            float s = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int ix = cx + dx - in->dim[0].min, iy = cy + dy - in->dim[1].min;
                    s += ((float *)in->host)[ix * in->dim[0].stride + iy * in->dim[1].stride];
                }
            ((float *)out->host)[x * out->dim[0].stride + y * out->dim[1].stride] = s;
        }
    }
    return 0;
}

/* Asks for two more elements of its input on each side than it writes. */
int fh_test_wants_more(buf_t *in, buf_t *out) {
    if (is_query(out)) {
        in->dim[0].min = out->dim[0].min - 2;
        in->dim[0].extent = out->dim[0].extent + 4;
        return 0;
    }
    for (int x = 0; x < out->dim[0].extent; x++) {
        ((int32_t *)out->host)[x * out->dim[0].stride] =
            ((int32_t *)in->host)[(out->dim[0].min + x - in->dim[0].min) * in->dim[0].stride];
    }
    return 0;
}

int fh_test_fails(buf_t *out) { return is_query(out) ? 0 : 3; }
int fh_test_fails_query(buf_t *out) { return is_query(out) ? 4 : 0; }
"""


@pytest.fixture(scope="module", autouse=True)
def extern_library(tmp_path_factory):
    cc = shutil.which(os.environ.get("CC", "") or "cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("extern")
    src, lib = d / "fh_extern.c", d / "libfh_extern.so"
    src.write_text(SOURCE)
    subprocess.run([cc, "-shared", "-fPIC", "-O1", str(src), "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)


@differential()
def test_extern_stage_between_funcs(hl):
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = x * x
    g.compute_root()
    f = hl.Func("f")
    f.define_extern("fh_test_stencil", [g, hl.i32(10)], hl.Int(32), 1)
    h = hl.Func("h")
    h[x] = f[x] * 2 + f[x + 1]
    return [h.realize([12]), f.is_extern(), f.extern_function_name(), g.is_extern()]


@differential()
def test_extern_stage_as_output_with_param(hl):
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = 3 * x - 7
    g.compute_root()
    k = hl.Param(hl.Int(32), "k", 5)
    f = hl.Func("f")
    f.define_extern("fh_test_stencil", [hl.ExternFuncArgument(g), k], [hl.Int(32)], [x])
    out = hl.Buffer(hl.Int(32), [9])
    out.set_min([-4])
    f.realize(out)
    k.set(-2)
    return [np.array(out), f.realize([3])]


@differential()
def test_two_outputs_over_an_image(hl):
    x, y = hl.Var("x"), hl.Var("y")
    img = hl.ImageParam(hl.UInt(8), 2, "img")
    img.set(hl.Buffer(np.arange(48, dtype=np.uint8).reshape(6, 8)))
    f = hl.Func("f")
    f.define_extern("fh_test_two_outputs", [img, hl.f32(0.5)], [hl.Float(32), hl.Int(16)], [x, y])
    g = hl.Func("g")
    g[x, y] = f[x, y][0] + hl.f32(f[x, y][1])
    r = f.realize([8, 6])
    return [r[0], r[1], g.realize([8, 6])]


@differential()
def test_two_dimensional_extern_reads_a_func_region(hl):
    x, y = hl.Var("x"), hl.Var("y")
    src = hl.Func("src")
    src[x, y] = hl.f32(x) * 0.25 + hl.f32(y * y)
    src.compute_root()
    box = hl.Func("box")
    box.define_extern("fh_test_box", [src], hl.Float(32), [x, y])
    out = hl.Func("out")
    out[x, y] = box[x, y] - box[x + 1, y - 1]
    return out.realize([10, 7])


@differential(expect_error=True)
def test_image_must_cover_what_the_query_asks(hl):
    im = hl.ImageParam(hl.Int(32), 1, "im")
    im.set(hl.Buffer(np.arange(6, dtype=np.int32)))
    f = hl.Func("f")
    f.define_extern("fh_test_wants_more", [im], hl.Int(32), 1)
    f.realize([6])


@differential()
def test_image_covering_the_query(hl):
    b = hl.Buffer(np.arange(12, dtype=np.int32) * 3)
    b.set_min([-2])
    f = hl.Func("f")
    f.define_extern("fh_test_wants_more", [b], hl.Int(32), 1)
    return f.realize([8])


@differential(expect_error=True)
def test_extern_failure_is_an_error(hl):
    f = hl.Func("f")
    f.define_extern("fh_test_fails", [], hl.Int(32), 1)
    f.realize([4])


@differential(expect_error=True)
def test_bounds_query_failure_is_an_error(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f.define_extern("fh_test_fails_query", [], hl.Int(32), 1)
    g = hl.Func("g")
    g[x] = f[x]
    g.realize([4])


@differential(expect_error=True)
def test_input_of_an_extern_stage_cannot_be_inline(hl):
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = x
    f = hl.Func("f")
    f.define_extern("fh_test_stencil", [g, hl.i32(1)], hl.Int(32), 1)
    f.realize([4])


@differential(expect_error=True)
def test_extern_definition_after_a_pure_one(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f.define_extern("fh_test_fails", [], hl.Int(32), 1)


@differential()
def test_extern_func_argument(hl):
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = x
    b = hl.Buffer(hl.Int(32), [3])
    im = hl.ImageParam(hl.Int(32), 1, "im")
    out = []
    for a in [hl.ExternFuncArgument(), hl.ExternFuncArgument(g), hl.ExternFuncArgument(b),
              hl.ExternFuncArgument(hl.Expr(3)), hl.ExternFuncArgument(im), hl.ExternFuncArgument(2)]:
        out.append([a.defined(), a.is_func(), a.is_buffer(), a.is_expr(), a.is_image_param()])
    return out


@differential()
def test_extern_stage_computed_per_row(hl):
    # The extern stage and its input computed inside the consumer's rows.
    x, y = hl.Var("x"), hl.Var("y")
    src = hl.Func("src")
    src[x, y] = hl.f32(x * 3 - y)
    box = hl.Func("box")
    box.define_extern("fh_test_box", [src], hl.Float(32), [x, y])
    out = hl.Func("out")
    out[x, y] = box[x, y] * 2.0 + box[x + 2, y]
    box.compute_at(out, y)
    src.compute_at(out, y)
    return out.realize([9, 5])


def test_schedules_not_supported_yet_say_so():
    import ferrohalide as hl
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = x
    g.compute_root()
    f = hl.Func("f")
    f.define_extern("fh_test_stencil", [g, hl.i32(1)], hl.Int(32), [x])
    h = hl.Func("h")
    h[x] = f[x]
    f.compute_at(h, x)
    with pytest.raises(hl.HalideError, match="not implemented"):
        h.realize([4])
    f.compute_root()
    f.split(x, x, hl.Var("xi"), 2)
    with pytest.raises(hl.HalideError, match="not implemented"):
        h.realize([4])


def test_ahead_of_time_object_calls_the_extern(tmp_path):
    # The object leaves the symbol to the linker: a C program links it with
    # the library defining the extern stage.
    import sys
    import ferrohalide as hl
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))
    from c_backend import halide_buffer
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = x * x
    g.compute_root()
    f = hl.Func("f")
    f.define_extern("fh_test_stencil", [g, hl.i32(1)], hl.Int(32), 1)
    obj = tmp_path / "pipe.o"
    f.compile_to_object(str(obj), [], "pipe")
    src = tmp_path / "ext.c"
    src.write_text(SOURCE)
    lib = tmp_path / "libpipe.so"
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-shared", "-fPIC", str(obj), str(src), "-o", str(lib), "-lpthread", "-ldl", "-lm"],
                   check=True)
    so = ctypes.CDLL(str(lib))
    out = np.zeros(6, dtype=np.int32)
    b, _dims = halide_buffer(out)
    so.pipe.restype = ctypes.c_int
    assert so.pipe(ctypes.byref(b)) == 0
    assert list(out) == [(i - 1) ** 2 + (i + 1) ** 2 + 1 for i in range(6)]
