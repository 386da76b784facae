"""A typed pipeline: mypy checks this file (with the wheel's stubs) in CI.

    python examples/typed_example.py
"""
import numpy as np
import numpy.typing as npt

import ferrohalide as hl


def blur_3x3(input: hl.Buffer) -> hl.Func:
    """A separable 3x3 box blur of a 2-D uint16 image, edges repeated."""
    x, y = hl.Var("x"), hl.Var("y")
    clamped: hl.Func = hl.BoundaryConditions.repeat_edge(input)
    blur_x = hl.Func("blur_x")
    blur_y = hl.Func("blur_y")
    blur_x[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) / 3
    blur_y[x, y] = (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) / 3
    xi, yi = hl.Var("xi"), hl.Var("yi")
    blur_y.tile(x, y, xi, yi, 64, 32).vectorize(xi, 8).parallel(y)
    blur_x.compute_at(blur_y, x).vectorize(x, 8)
    return blur_y


def run(image: npt.NDArray[np.uint16]) -> npt.NDArray[np.uint16]:
    out: hl.Buffer = blur_3x3(hl.Buffer(image)).realize([image.shape[1], image.shape[0]])
    result: npt.NDArray[np.uint16] = np.asarray(out)
    return result


if __name__ == "__main__":
    img = np.random.default_rng(0).integers(0, 4096, (120, 160), dtype=np.uint16)
    blurred = run(img)
    print(blurred.shape, blurred.dtype)
