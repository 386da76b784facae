"""How ferrohalide objects show themselves in Jupyter (IPython's rich
display): an `hl.Buffer` of 2 or 3 dimensions as a PNG image, a lowered
statement as its HTML view.

Value ranges map to 8-bit pixels as an image viewer would:
- uint8 as it is; uint16 scaled down by 257 (65535 -> 255);
- int8 and int16 from their type's range to 0..255;
- floats in [0, 1] (Halide's convention for float images) scaled by 255;
  other floats stretched from their smallest to their largest finite value;
  NaN shows as 0;
- 2-D buffers are grayscale (x across, y down); 3-D buffers with 1, 3 or 4
  channels in the last dimension are gray, RGB or RGBA.
Other buffers (other types, dimension counts or channel counts) have no
image, and IPython shows their text repr.
"""
import struct
import zlib

# NumPy is imported where an image is made, not with ferrohalide: it would
# double the time `import ferrohalide` takes.


def _to_u8(a):
    import numpy as np

    if a.dtype == np.uint8:
        return a
    if a.dtype == np.bool_:
        return a.astype(np.uint8) * 255
    if a.dtype == np.uint16:
        return ((a.astype(np.uint32) + 128) // 257).astype(np.uint8)
    if a.dtype in (np.int8, np.int16):
        info = np.iinfo(a.dtype)
        scaled = (a.astype(np.float64) - info.min) * (255.0 / (info.max - info.min))
        return np.rint(scaled).astype(np.uint8)
    if a.dtype.kind == "f":
        f = a.astype(np.float64)
        finite = f[np.isfinite(f)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if lo < 0.0 or hi > 1.0:
            f = (f - lo) / (hi - lo) if hi > lo else np.zeros_like(f)
        f = np.nan_to_num(f, nan=0.0, posinf=1.0, neginf=0.0)
        return np.rint(np.clip(f, 0.0, 1.0) * 255.0).astype(np.uint8)
    return None


def _png(pixels):
    """An 8-bit PNG of an (h, w) or (h, w, c) array, c in 1, 3, 4."""
    import numpy as np

    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    h, w, c = pixels.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    rows = np.zeros((h, 1 + w * c), dtype=np.uint8)  # filter byte 0 per row
    rows[:, 1:] = pixels.reshape(h, w * c)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def buffer_png(buf):
    """PNG bytes showing `buf`, or None when it is not an image (see the
    module's doc)."""
    import numpy as np

    if not buf.defined() or buf.dimensions() not in (2, 3):
        return None
    if buf.dimensions() == 3 and buf.dim(2).extent() not in (1, 3, 4):
        return None
    if any(buf.dim(d).extent() <= 0 for d in range(buf.dimensions())):
        return None
    a = np.asarray(buf)  # (y, x) or (c, y, x): Halide's axes reversed
    if a.ndim == 3:
        a = np.moveaxis(a, 0, -1)
    pixels = _to_u8(a)
    if pixels is None:
        return None
    return _png(np.ascontiguousarray(pixels))


class LoweredStmt:
    """A pipeline's final lowered statement, from `Func.lowered_stmt()` or
    `Pipeline.lowered_stmt()`: `str()` is the text form; in Jupyter it shows
    as the HTML view that `compile_to_lowered_stmt(..., hl.StmtOutputFormat.HTML)`
    writes, in a frame of its own so that its styles and scripts stay
    inside it."""

    def __init__(self, text, html):
        self.text = text
        self.html = html

    def __str__(self):
        return self.text

    def __repr__(self):
        lines = self.text.count("\n")
        return f"<ferrohalide.LoweredStmt, {lines} lines: print() it for the text>"

    def _repr_html_(self):
        import html

        return ('<iframe style="width: 100%; height: 640px; border: 1px solid #ccc" '
                f'srcdoc="{html.escape(self.html, quote=True)}"></iframe>')
