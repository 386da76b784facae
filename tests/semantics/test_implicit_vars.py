"""The placeholder `_` and implicit vars `_0`, `_1`, ... in definitions and calls."""
import re

import numpy as np

from .harness import differential


@differential()
def test_placeholder_expands_to_implicit_vars(hl):
    x, y = hl.Var("x"), hl.Var("y")
    g = hl.Func("g")
    g[x, y] = x + 10 * y
    f = hl.Func("f")
    f[hl._] = g[hl._] * 2
    h = hl.Func("h")
    h[x, hl._] = g[x, hl._] + 1
    m = hl.Func("m")
    m[hl._] = g[hl._0, hl._1] - 1
    b = hl.Buffer(np.arange(6, dtype=np.int32).reshape(2, 3))
    q = hl.Func("q")
    q[hl._] = b[hl._] + 1
    f.vectorize(hl._0, 2)
    return {
        "dims": [f.dimensions(), h.dimensions(), m.dimensions(), q.dimensions()],
        # Unique-name counters ("g$55") depend on the process history.
        "printed": re.sub(r"\$\d+", "$N", str(g[hl._] + g[x, hl._])),
        "f": f.realize([3, 2]),
        "h": h.realize([3, 2]),
        "m": m.realize([3, 2]),
        "q": q.realize([3, 2]),
    }
