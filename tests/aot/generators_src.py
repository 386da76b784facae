"""Generators exercising the Generator API, written against a module named
`hl` (the tests write this file out with `import ferrohalide as hl` or
`import halide as hl`)."""

SOURCE = '''
import IMPL as hl

x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")


@hl.generator(name="brighten")
class Brighten:
    gain = hl.GeneratorParam(2.0)
    bias = hl.GeneratorParam(1)
    invert = hl.GeneratorParam(False)
    layout = hl.GeneratorParam("planar")

    input = hl.InputBuffer(hl.UInt(8), 3)
    offset = hl.InputScalar(hl.Int(32))
    output = hl.OutputBuffer(hl.UInt(8), 3)

    def generate(self):
        v = hl.f32(self.input[x, y, c]) * self.gain + self.offset + self.bias
        if self.invert:
            v = 255.0 - v
        if self.layout == "interleaved":
            v = v + 1
        self.output[x, y, c] = hl.u8_sat(v)
        self.output.vectorize(x, self.natural_vector_size(hl.UInt(8)), hl.TailStrategy.GuardWithIf).parallel(y)


@hl.generator(name="stats")
class Stats:
    input = hl.InputBuffer(None, None)
    weights = hl.InputBuffer(hl.Float(32), 1)
    sums = hl.OutputBuffer([hl.Int(32), hl.Float(32)], 1)
    total = hl.OutputScalar(hl.Int(32))

    def generate(self):
        r = hl.RDom([(0, 4)])
        self.sums[x] = (hl.sum(hl.i32(self.input[x, r.x])), hl.sum(hl.f32(self.input[x, r.x]) * self.weights[r.x]))
        k = hl.RDom([(0, 3), (0, 4)])
        self.total[()] = hl.sum(hl.i32(self.input[k.x, k.y]))


@hl.generator(name="configured")
class Configured:
    channels = hl.GeneratorParam(2)
    scale = hl.InputScalar(hl.Float(32))

    def configure(self):
        self.add_input("planes", hl.InputBuffer(hl.UInt(16), 2))
        self.add_output("mixed", hl.OutputBuffer(hl.Float(32), 1))

    def generate(self):
        r = hl.RDom([(0, self.channels)])
        self.mixed[x] = hl.sum(hl.f32(self.planes[x, r.x])) * self.scale
        self.add_requirement(self.scale > 0, "scale must be positive, not", self.scale)


if __name__ == "__main__":
    hl.main()
'''


def write(path, impl):
    path.write_text(SOURCE.replace("IMPL", impl))
    return path
