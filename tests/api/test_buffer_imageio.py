"""ferrohalide.imageio against the reference's halide.imageio."""
import os

import imageio.v2 as iio
import numpy as np
import pytest

import ferrohalide
from ferrohalide import imageio as fio


def _ref():
    hl = pytest.importorskip("halide")
    import halide.imageio  # noqa: F401  (submodule)
    return hl


def test_imread_matches_reference(data_dir):
    ref = _ref()
    path = os.path.join(data_dir, "rgb.png")
    ours = fio.imread(path)
    theirs = ref.imageio.imread(path)
    assert ours.shape == theirs.shape == (3, 256, 256)
    assert ours.dtype == theirs.dtype == np.uint8
    assert ours.strides == theirs.strides
    assert np.array_equal(ours, theirs)
    b = ferrohalide.Buffer(ours)
    assert (b.width(), b.height(), b.channels()) == (256, 256, 3)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("channels", [None, 1, 3, 4])
def test_imwrite_same_file_contents(tmp_path, dtype, channels):
    """Both modules write images that decode to the same pixels."""
    ref = _ref()
    shape = (5, 7) if channels is None else (channels, 5, 7)
    data = (np.arange(np.prod(shape)).reshape(shape) * 37 % np.iinfo(dtype).max).astype(dtype)
    decoded = []
    for hl in (ferrohalide, ref):
        buf = hl.Buffer(data.copy())  # planar (c, y, x) array -> Buffer (x, y, c)
        path = tmp_path / f"{hl.__name__}.png"
        try:
            hl.imageio.imwrite(str(path), buf)
        except Exception as e:  # noqa: BLE001 - compare failures too
            decoded.append(type(e).__name__)
            continue
        decoded.append(iio.imread(str(path)))
    ours, theirs = decoded
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        assert np.array_equal(ours, theirs)


def test_round_trip_planar(tmp_path, data_dir):
    img = fio.imread(os.path.join(data_dir, "rgb.png"))
    buf = ferrohalide.Buffer(img)
    out = tmp_path / "copy.png"
    fio.imwrite(str(out), buf)
    assert np.array_equal(fio.imread(str(out)), img)


@pytest.mark.parametrize("make", [
    lambda: np.zeros((4, 5, 3), np.uint8),
    lambda: np.zeros((3, 4, 5), np.uint8),
    lambda: np.zeros((4, 5, 3), np.uint16),
    lambda: np.zeros((4, 5, 5), np.uint8),
    lambda: np.zeros((4, 5), np.uint8),
    lambda: np.asfortranarray(np.zeros((4, 5, 3), np.uint8)),
])
def test_layout_helpers_match_reference(make):
    ref = _ref()
    a = make()
    assert fio.is_interleaved(a) == ref.imageio.is_interleaved(a)
    for name in ("copy_to_planar", "copy_to_interleaved"):
        ours = getattr(fio, name)(a)
        theirs = getattr(ref.imageio, name)(a)
        assert (ours is a) == (theirs is a)
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.shape == theirs.shape and ours.strides == theirs.strides


def test_imwrite_realized_buffer(tmp_path):
    x, y, c = ferrohalide.Var("x"), ferrohalide.Var("y"), ferrohalide.Var("c")
    f = ferrohalide.Func("f")
    f[x, y, c] = ferrohalide.cast(ferrohalide.UInt(8), x + 10 * y + 60 * c)
    buf = f.realize([8, 6, 3])
    path = tmp_path / "f.png"
    fio.imwrite(str(path), buf)
    img = iio.imread(str(path))
    assert img.shape == (6, 8, 3)
    assert img[5, 7, 2] == 7 + 50 + 120
