# The Hexagon SDK's first form of dilate3x3: an hl.Target built field by
# field and Func.compile_to_file. Run as `python dilate3x3_hand_built.py
# MODULE OUTDIR` with MODULE ferrohalide or halide (Halide 21, for the
# side-by-side link test); writes OUTDIR/dilate3x3.o and .h.
import importlib
import os
import sys

hl = importlib.import_module(sys.argv[1])
target = hl.Target()
target.os = hl.TargetOS.Android
target.arch = hl.TargetArch.ARM
target.bits = 64
target.set_features([hl.TargetFeature.HVX, hl.TargetFeature.HVX_v66])
input_img = hl.ImageParam(hl.UInt(8), 2, "input")
x, y = hl.Var("x"), hl.Var("y")
bounded_input, max_y, output = hl.Func("bounded_input"), hl.Func("max_y"), hl.Func("output")
height, width, x_min = input_img.height(), input_img.dim(0).extent(), input_img.dim(0).min()
bounded_input[x, y] = hl.BoundaryConditions.repeat_edge(
    input_img, [(x_min, width), (hl.Expr(), hl.Expr())])[x, y]
max_y[x, y] = hl.max(bounded_input[x, hl.clamp(y - 1, 0, height - 1)],
                     bounded_input[x, hl.clamp(y, 0, height - 1)],
                     bounded_input[x, hl.clamp(y + 1, 0, height - 1)])
output[x, y] = hl.max(max_y[x - 1, y], max_y[x, y], max_y[x + 1, y])
output.hexagon().vectorize(x, 128)
output.compile_to_file(os.path.join(sys.argv[2], "dilate3x3"), [input_img], "dilate3x3", target)
