"""Image file I/O for ferrohalide buffers, with the behaviour of Halide's
``halide.imageio``: a thin layer over the ``imageio`` package that converts
between the interleaved (row, column, channel) layout image files use and
the planar layout Halide pipelines usually want.

- ``imread`` returns a NumPy array. A 3-D result that looks interleaved
  (last axis has 1-4 channels and a one-byte stride) is copied to planar
  ``(c, y, x)`` order, which ``hl.Buffer`` turns into Halide's ``(x, y, c)``.
- ``imwrite`` accepts anything with the buffer protocol (``hl.Buffer``, NumPy
  arrays). A 3-D input that is not interleaved is taken to be planar
  ``(c, y, x)`` and is written through an interleaved copy.

As in Halide, "interleaved" is judged from a stride of exactly one *byte* on
the last axis, so wider element types (e.g. uint16) are treated as planar.
"""

try:
    import imageio.v2 as _imageio
except ImportError:  # very old imageio
    import imageio as _imageio  # type: ignore[no-redef]
import numpy as np

__all__ = ["imread", "imwrite", "is_interleaved", "copy_to_interleaved", "copy_to_planar"]

_MAX_INTERLEAVED_CHANNELS = 4


def is_interleaved(im):
    """True if ``im`` is 3-D and looks interleaved: a one-byte stride on its
    last axis, which holds at most 4 channels."""
    view = memoryview(im)
    if view.ndim != 3:
        return False
    return view.strides[2] == 1 and 1 <= view.shape[2] <= _MAX_INTERLEAVED_CHANNELS


def copy_to_interleaved(im):
    """For a 3-D buffer that is not interleaved (so taken to be planar,
    ``(c, y, x)``), return an interleaved ``(y, x, c)`` copy. Anything else
    is returned unchanged (not copied)."""
    view = memoryview(im)
    if view.ndim == 3 and not is_interleaved(view):
        planar = np.asarray(view)
        return np.copy(np.moveaxis(planar, 0, -1), order="F")
    return im


def copy_to_planar(im):
    """For a 3-D buffer that looks interleaved (``(y, x, c)``), return a planar
    ``(c, y, x)`` copy, which ``hl.Buffer`` sees as ``(x, y, c)``. Anything
    else is returned unchanged (not copied)."""
    view = memoryview(im)
    if is_interleaved(view):
        interleaved = np.asarray(view)
        return np.copy(np.moveaxis(interleaved, -1, 0), order="C")
    return im


def imread(uri, format=None, **kwargs):
    """Read an image with ``imageio``; interleaved colour images come back planar."""
    return copy_to_planar(_imageio.imread(uri, format, **kwargs))


def imwrite(uri, im, format=None, **kwargs):
    """Write ``im`` (an ``hl.Buffer`` or array) with ``imageio``; planar
    colour data is written through an interleaved copy."""
    _imageio.imwrite(uri, copy_to_interleaved(im), format, **kwargs)
