# The Hexagon SDK's pygen example (a 3x3 dilate), unchanged but for its
# import line (the SDK's says `import halide as hl`) and a user parameter.
import ferrohalide as hl
import pygen

pygen.add_param("use_parallel_sched", bool, True)
params = pygen.get_params()
target = params["target"]
input_img = hl.ImageParam(hl.UInt(8), 2)
x, y = hl.Var("x"), hl.Var("y")
bounded_input, max_y, output = hl.Func("bounded_input"), hl.Func("max_y"), hl.Func("output")
height, width, x_min = input_img.height(), input_img.dim(0).extent(), input_img.dim(0).min()
bounded_input[x, y] = hl.BoundaryConditions.repeat_edge(
    input_img, [(x_min, width), (hl.Expr(), hl.Expr())])[x, y]
max_y[x, y] = hl.max(bounded_input[x, hl.clamp(y - 1, 0, height - 1)],
                    bounded_input[x, hl.clamp(y, 0, height - 1)],
                    bounded_input[x, hl.clamp(y + 1, 0, height - 1)])
output[x, y] = hl.max(max_y[x - 1, y], max_y[x, y], max_y[x + 1, y])
if target.has_feature(hl.TargetFeature.HVX):
    output.hexagon()
vector = 128 if target.has_feature(hl.TargetFeature.HVX) else 16
output.vectorize(x, vector)
if params["use_parallel_sched"]:
    output.parallel(y, 8)
pygen.compile(output, [input_img])
