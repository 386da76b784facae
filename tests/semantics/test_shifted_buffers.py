"""hl.Buffer with non-zero mins: every way the Python API sets, moves and reads
them (the outputs realized into such Buffers are in test_multistage.py)."""
import numpy as np

from .harness import differential, outcome


def _filled(hl):
    b = hl.Buffer(hl.Int(16), [5, 4])
    for yy in range(4):
        for xx in range(5):
            b[xx, yy] = xx + 10 * yy
    b.set_min([2, -3])
    return b


def _shape(b):
    return [(b.dim(i).min(), b.dim(i).extent(), b.dim(i).max(), b.dim(i).stride())
            for i in range(b.dimensions())]


@differential()
def test_buffer_mins(hl):
    b = _filled(hl)
    out = {
        "shape": _shape(b),
        "edges": [b.left(), b.right(), b.top(), b.bottom()],
        "elements": [b[2, -3], b[6, 0], b[4, -1]],
        "out_of_range": outcome(hl, lambda: b[0, 0]),
        "contains": [b.contains([2, -3]), b.contains([1, -3]), b.contains([6, 0]),
                     b.contains([7, 0])],
        "array": np.asarray(b),
        "repr": repr(b),
    }
    c = b.copy()
    out["copy"] = [_shape(c), c[3, -2]]
    d = hl.Buffer(hl.Int(16), [4, 4])
    d.set_min([4, -4])
    d.fill(-1)
    d.copy_from(b)  # copies the overlap only
    out["copy_from_overlap"] = d
    t = _filled(hl)
    t.translate(0, 5)
    out["translate_dim"] = [_shape(t), t[7, -3]]
    t2 = _filled(hl).translated([1, 1])
    out["translated"] = [_shape(t2), t2[3, -2]]
    c1 = _filled(hl).cropped(1, -2, 2)
    out["cropped_dim"] = [_shape(c1), c1]
    c2 = _filled(hl).cropped([(3, 2), (-2, 3)])
    out["cropped_rect"] = [_shape(c2), c2]
    s = _filled(hl).sliced(1, -1)
    out["sliced"] = [_shape(s), s]
    e = _filled(hl).embedded(2, 3)
    out["embedded"] = [_shape(e), e[2, -3, 3]]
    tp = _filled(hl).transposed(0, 1)
    out["transposed"] = [_shape(tp), tp[-3, 2]]
    out["reverse_axes"] = _shape(_filled(hl).reverse_axes())
    sm = _filled(hl)
    sm.set_min([1])  # fewer mins than dimensions: the rest keep theirs
    out["set_min_short"] = _shape(sm)
    out["set_min_long"] = outcome(hl, lambda: _filled(hl).set_min([1, 2, 3]))
    seen = []
    _filled(hl).for_each_element(lambda *c: seen.append(list(c[0])))
    out["for_each_element"] = seen
    out["make_with_shape_of"] = _shape(hl.Buffer.make_with_shape_of(_filled(hl)))
    n = hl.Buffer(np.arange(6, dtype=np.int32).reshape(2, 3))
    n.set_min([1, 1])
    out["numpy_set_min"] = [n[1, 1], n[3, 2], np.asarray(n)]
    return out


@differential()
def test_func_reads_shifted_buffer(hl):
    """A Func reading a Buffer whose mins are not 0, realized over a domain
    inside it and over one shifted the same way."""
    x, y = hl.Var("x"), hl.Var("y")
    b = _filled(hl)
    f = hl.Func("f")
    f[x, y] = hl.i32(b[x, y]) * 3 + hl.i32(b[x + 1, y])
    out = hl.Buffer(hl.Int(32), [4, 4])
    out.set_min([2, -3])
    f.realize(out)
    g = hl.Func("g")
    g[x, y] = hl.i32(b[x + 2, y - 3])
    return {"f": out, "g": g.realize([5, 4])}
