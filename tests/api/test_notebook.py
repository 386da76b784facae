"""Jupyter display: Buffer._repr_png_ (images of 2-D and 3-D buffers with a
stated mapping of value ranges, None for the rest), Func/Pipeline
.lowered_stmt() with its HTML view, and examples/notebook.ipynb executed
from start to end."""
import html
import io
import os

import numpy as np
import pytest
from PIL import Image

import ferrohalide as hl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def decode(png):
    return np.asarray(Image.open(io.BytesIO(png)))


def buffer_of(a):
    """A Buffer over NumPy array `a` (Halide's axes: x is a's last axis)."""
    return hl.Buffer(np.ascontiguousarray(a))


def test_rgb_uint8_is_the_pixels():
    rgb = np.random.default_rng(1).integers(0, 256, (3, 7, 9), dtype=np.uint8)  # c, y, x
    png = buffer_of(rgb)._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(decode(png), np.moveaxis(rgb, 0, -1))


@pytest.mark.parametrize("channels, mode", [(1, "L"), (4, "RGBA")])
def test_gray_and_rgba(channels, mode):
    a = np.random.default_rng(2).integers(0, 256, (channels, 5, 6), dtype=np.uint8)
    img = Image.open(io.BytesIO(buffer_of(a)._repr_png_()))
    assert img.mode == mode and img.size == (6, 5)
    assert np.array_equal(np.asarray(img).reshape(5, 6, channels), np.moveaxis(a, 0, -1))


def test_value_ranges():
    u16 = np.array([[0, 257, 65535]], dtype=np.uint16)
    assert decode(buffer_of(u16)._repr_png_()).tolist() == [[0, 1, 255]]
    i16 = np.array([[-32768, 0, 32767]], dtype=np.int16)
    assert decode(buffer_of(i16)._repr_png_()).tolist() == [[0, 128, 255]]
    unit = np.array([[0.0, 0.5, 1.0, np.nan]], dtype=np.float32)
    assert decode(buffer_of(unit)._repr_png_()).tolist() == [[0, 128, 255, 0]]
    wide = np.array([[-10.0, 0.0, 10.0]], dtype=np.float32)
    assert decode(buffer_of(wide)._repr_png_()).tolist() == [[0, 128, 255]]


def test_not_images_have_no_png():
    assert buffer_of(np.arange(5, dtype=np.uint8))._repr_png_() is None
    assert buffer_of(np.zeros((3, 4), dtype=np.int32))._repr_png_() is None
    assert buffer_of(np.zeros((2, 3, 4), dtype=np.uint8))._repr_png_() is None
    assert "halide.Buffer" in repr(buffer_of(np.arange(5, dtype=np.uint8)))


def test_lowered_stmt_text_and_html():
    x = hl.Var("x")
    im = hl.ImageParam(hl.UInt(8), 1, "im")
    f = hl.Func("f")
    f[x] = im[x] * 2
    s = f.lowered_stmt([im])
    assert isinstance(s, hl.LoweredStmt)
    assert f"func {f.name()} (im, {f.name()})" in str(s) and "LoweredStmt" in repr(s)
    view = s._repr_html_()
    assert view.startswith("<iframe") and html.escape("<html", quote=True) in view
    assert f"func {f.name()}" in str(hl.Pipeline(f).lowered_stmt([im]))


def test_notebook_runs():
    nbformat = pytest.importorskip("nbformat") if os.environ.get("CI") != "true" else __import__("nbformat")
    import nbclient

    nb = nbformat.read(os.path.join(ROOT, "examples", "notebook.ipynb"), as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": ROOT}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    kinds = [set(o.get("data", {})) for o in outputs if o.output_type == "execute_result"]
    assert sum("image/png" in k for k in kinds) == 2 and any("text/html" in k for k in kinds)
    assert any(o.output_type == "stream" and "vectorized" in o.text for o in outputs)
    assert not any(o.output_type == "error" for o in outputs)
