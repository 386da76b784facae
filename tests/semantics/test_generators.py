"""Python Generators run in-process (no files): declaration, GeneratorParams,
configure(), call(), compile_to_callable(), create_callable_from_generator,
aliases and their errors, against the reference.

Generator names are registered once per module and process, so every test
uses names of its own."""
import itertools
import warnings

import numpy as np
import pytest

from .harness import differential

_fresh = itertools.count()


def fresh(stem):
    """A generator name not registered yet in this process."""
    return f"{stem}{next(_fresh)}"


def jit_context(hl):
    return hl.GeneratorContext(hl.get_jit_target_from_environment())


def simple_generator(hl, name):
    x, y = hl.Var("x"), hl.Var("y")

    @hl.generator(name=name)
    class Simple:
        offset = hl.GeneratorParam(0)
        scale = hl.GeneratorParam(1.5)
        flip = hl.GeneratorParam(False)
        buffer_input = hl.InputBuffer(hl.UInt(8), 2)
        float_arg = hl.InputScalar(float)
        out = hl.OutputBuffer(hl.Float(32), 2)

        def generate(self):
            v = hl.f32(self.offset + self.buffer_input[x, y]) * self.scale + self.float_arg
            self.out[x, y] = -v if self.flip else v
            self.out.vectorize(x, self.natural_vector_size(hl.Float(32)))

    return Simple


def input_image(hl):
    a = (np.arange(80, dtype=np.uint8).reshape(5, 16) * 7) % 251
    return hl.Buffer(a)


@differential()
def test_call_by_position_keyword_and_params(hl):
    Simple = simple_generator(hl, fresh("simple"))
    b = input_image(hl)
    with jit_context(hl):
        results = [
            Simple.call(b, 3.5).realize([16, 5]),
            Simple.call(float_arg=2.0, buffer_input=b).realize([16, 5]),
            Simple.call(b, float_arg=1.0, generator_params={"offset": 4, "flip": True}).realize([16, 5]),
            Simple.call(b, 0.25, generator_params={"scale": "2.5", "offset": "3"}).realize([16, 5]),
        ]
    return results


@differential(expect_error=True)
@pytest.mark.parametrize(
    "case",
    ["too_many", "too_few", "not_a_buffer", "not_a_scalar", "twice", "params_not_dict",
     "unknown_param", "unknown_input", "bad_int_param", "no_context"],
)
def test_call_errors(hl, case):
    Simple = simple_generator(hl, fresh("simple_err"))
    b = input_image(hl)
    if case == "no_context":
        Simple.call(b, 1.0)
    with jit_context(hl):
        if case == "too_many":
            Simple.call(b, 1.0, 2)
        elif case == "too_few":
            Simple.call(b)
        elif case == "not_a_buffer":
            Simple.call(hl.f32(1), "x")
        elif case == "not_a_scalar":
            Simple.call(b, float_arg="bogus")
        elif case == "twice":
            Simple.call(b, 1.0, float_arg=2.0)
        elif case == "params_not_dict":
            Simple.call(b, 1.0, generator_params=[1])
        elif case == "unknown_param":
            Simple.call(b, 1.0, generator_params={"nope": 1})
        elif case == "unknown_input":
            Simple.call(buffer_inpt=b, float_arg=1.0)
        elif case == "bad_int_param":
            Simple.call(b, 1.0, generator_params={"offset": "many"})


@differential()
def test_call_error_messages(hl):
    Simple = simple_generator(hl, fresh("simple_msg"))
    b = input_image(hl)
    messages = []
    with jit_context(hl):
        for args, kwargs in [
            ((b, 1.0, 2), {}),
            ((b,), {}),
            ((b,), {"float_arg": "bogus"}),
            ((b, 1.0), {"float_arg": 2.0}),
            ((b, 1.0), {"generator_params": [1]}),
            ((b, 1.0), {"generator_params": {"nope": 1}}),
            ((), {"buffer_inpt": b, "float_arg": 1.0}),
        ]:
            try:
                Simple.call(*args, **kwargs)
            except hl.HalideError as e:
                text = str(e).replace(Simple._halide_registered_name, "NAME")
                messages.append(text.split("saw")[0])
    return messages


def tuple_and_untyped_generator(hl, name):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")

    @hl.generator(name=name)
    class Complex(hl.Generator):
        extra_input_name = hl.GeneratorParam("")
        untyped_input = hl.InputBuffer(None, 3)
        gain = hl.InputScalar(hl.Float(32))
        tuple_output = hl.OutputBuffer(None, 3)
        untyped_output = hl.OutputBuffer(None, None)
        scalar_output = hl.OutputScalar(hl.Float(32))

        def configure(self):
            if self.extra_input_name:
                self.add_input(self.extra_input_name, hl.InputBuffer(hl.UInt(16), 2))
            self.add_output("extra_output", hl.OutputBuffer(hl.Float(64), 2))

        def generate(self):
            t = hl.Func("t")
            t[x, y, c] = self.untyped_input[x, y, c] * self.gain
            self.tuple_output[x, y, c] = (t[x, y, c], t[x, y, c] + 1)
            self.untyped_output[x, y, c] = hl.cast(self.untyped_output.type(), self.untyped_input[x, y, c])
            self.scalar_output[()] = self.gain * 2
            extra = getattr(self, self.extra_input_name, None) if self.extra_input_name else None
            if extra is not None:
                self.extra_output[x, y] = hl.f64(extra[x, y] + 1)
            else:
                self.extra_output[x, y] = hl.f64(0)
            t.compute_at(self.tuple_output, y)

    return Complex


@differential()
@pytest.mark.parametrize("extra", ["", "more"])
def test_types_from_params_tuples_configure(hl, extra):
    Complex = tuple_and_untyped_generator(hl, fresh("complex"))
    a = hl.Buffer((np.arange(4 * 5 * 3, dtype=np.uint8).reshape(3, 5, 4)))
    gp = {
        "untyped_input.type": hl.UInt(8),
        "tuple_output.type": [hl.Float(32), hl.Float(32)],
        "untyped_output.type": "uint16",
        "untyped_output.dim": "3",
    }
    kwargs = {"untyped_input": a, "gain": 1.25, "generator_params": gp}
    if extra:
        gp["extra_input_name"] = extra
        kwargs[extra] = hl.Buffer(np.arange(20, dtype=np.uint16).reshape(5, 4))
    with jit_context(hl):
        tup, untyped, scalar, extra_out = Complex.call(**kwargs)
    t0, t1 = tup.realize([4, 5, 3])
    u = untyped.realize([4, 5, 3])
    return [t0, t1, u, u.type(), scalar.realize([]), extra_out.realize([4, 5])]


@differential(expect_error=True)
@pytest.mark.parametrize("case", ["no_type", "no_dim", "type_given_twice", "wrong_input_type"])
def test_declaration_errors(hl, case):
    Complex = tuple_and_untyped_generator(hl, fresh("complex_err"))
    a = hl.Buffer(np.zeros((3, 5, 4), np.uint8))
    gp = {
        "untyped_input.type": hl.UInt(8),
        "tuple_output.type": [hl.Float(32), hl.Float(32)],
        "untyped_output.type": hl.UInt(8),
        "untyped_output.dim": 3,
    }
    if case == "no_type":
        del gp["untyped_input.type"]
    elif case == "no_dim":
        del gp["untyped_output.dim"]
    elif case == "type_given_twice":
        gp["gain.type"] = hl.Float(64)
    elif case == "wrong_input_type":
        a = hl.Buffer(np.zeros((3, 5, 4), np.int16))
    with jit_context(hl):
        Complex.call(untyped_input=a, gain=1.0, generator_params=gp)


@differential()
def test_compile_to_callable(hl):
    name = fresh("simple_callable")
    Simple = simple_generator(hl, name)
    b = input_image(hl)
    target = hl.get_jit_target_from_environment()
    with hl.GeneratorContext(target):
        g = Simple(generator_params={"offset": 2})
        c = g.compile_to_callable()
    out1 = hl.Buffer(hl.Float(32), [16, 5])
    c(b, 0.5, out1)
    return out1


@differential(expect_error=True)
def test_create_callable_from_an_unknown_generator(hl):
    hl.create_callable_from_generator(hl.get_jit_target_from_environment(), fresh("nonexistent"))


# Halide 21's create_callable_from_generator only finds generators written
# in C++; ferrohalide's finds the Python ones too. Checked against the
# same pipeline built with call().


def test_create_callable_from_a_python_generator():
    import ferrohalide as hl

    name = fresh("simple_callable")
    Simple = simple_generator(hl, name)
    b = input_image(hl)
    target = hl.get_jit_target_from_environment()
    with hl.GeneratorContext(target):
        expected = [
            np.asarray(Simple.call(b, 0.5, generator_params=gp).realize([16, 5]))
            for gp in [{"scale": 3, "flip": True}, {}]
        ]
    c2 = hl.create_callable_from_generator(hl.GeneratorContext(target), name, {"scale": "3", "flip": "true"})
    out2 = hl.Buffer(hl.Float(32), [16, 5])
    c2(b, 0.5, out2)
    c3 = hl.create_callable_from_generator(target, name)
    out3 = hl.Buffer(hl.Float(32), [16, 5])
    c3(b, 0.5, out3)
    np.testing.assert_array_equal(np.asarray(out2), expected[0])
    np.testing.assert_array_equal(np.asarray(out3), expected[1])


def test_aliases_and_registry():
    import ferrohalide as hl

    name = fresh("aliased")
    x = hl.Var("x")

    @hl.alias(**{name + "_plus42": {"k": 42}, name + "_minus1": {"k": -1}})
    @hl.generator(name=name)
    class Adder:
        k = hl.GeneratorParam(0)
        inp = hl.InputBuffer(hl.Int(32), 1)
        out = hl.OutputBuffer(hl.Int(32), 1)

        def generate(self):
            self.out[x] = self.inp[x] + self.k

    b = hl.Buffer(np.arange(5, dtype=np.int32))
    target = hl.get_jit_target_from_environment()
    for n, k in [(name, 0), (name + "_plus42", 42), (name + "_minus1", -1)]:
        out = hl.Buffer(hl.Int(32), [5])
        hl.create_callable_from_generator(target, n)(b, out)
        np.testing.assert_array_equal(np.asarray(out), np.arange(5) + k)
    assert {name, name + "_plus42", name + "_minus1"} <= set(hl._get_python_generator_names())


@differential()
def test_generator_context_and_target(hl):
    t = hl.Target("x86-64-linux-avx2")
    outer = hl.GeneratorContext(t)
    seen = []
    with outer:
        seen.append(str(hl.active_generator_context().target()))
        with hl.GeneratorContext(hl.Target("x86-64-linux-sse41")):
            seen.append(str(hl.active_generator_context().target()))
        seen.append(str(hl.active_generator_context().target()))
    name = fresh("ctx")

    @hl.generator(name=name)
    class Sizes:
        out = hl.OutputBuffer(hl.Int(32), 1)

        def generate(self):
            x = hl.Var("x")
            self.out[x] = x + self.natural_vector_size(hl.UInt(8))
            seen.append(str(self.target()))
            seen.append(self.using_autoscheduler())

    with outer:
        seen.append(Sizes.call().realize([2], hl.get_jit_target_from_environment()).type())
    return seen


@differential(expect_error=True)
def test_no_active_context(hl):
    hl.active_generator_context()


@differential(expect_error=True)
@pytest.mark.parametrize("case", ["duplicate_name", "bad_name", "add_input_outside_configure", "no_outputs",
                                  "undefined_output", "alias_without_generator", "reserved_param"])
def test_definition_errors(hl, case):
    x = hl.Var("x")
    name = fresh("deferr")
    if case == "duplicate_name":
        hl.generator(name=name)(type("A", (), {"generate": lambda self: None}))
        hl.generator(name=name)(type("B", (), {"generate": lambda self: None}))
    if case == "alias_without_generator":
        hl.alias(other={})(type("C", (), {}))
    body = {
        "bad_name": {"_hidden": hl.GeneratorParam(1), "out": hl.OutputBuffer(hl.Int(32), 1)},
        "add_input_outside_configure": {"out": hl.OutputBuffer(hl.Int(32), 1)},
        "no_outputs": {"inp": hl.InputScalar(hl.Int(32))},
        "undefined_output": {"out": hl.OutputBuffer(hl.Int(32), 1)},
        "reserved_param": {"out": hl.OutputBuffer(hl.Int(32), 1)},
    }[case]

    def generate(self):
        if case == "add_input_outside_configure":
            self.add_input("late", hl.InputScalar(hl.Int(32)))
        if case not in ("undefined_output",):
            self.out[x] = x

    body["generate"] = generate
    G = hl.generator(name=name)(type("G", (), body))
    with jit_context(hl):
        if case == "reserved_param":
            G(generator_params={"target": "host"})
        G.call()


@differential()
def test_type_generator_param_default(hl):
    name = fresh("gpdefault")
    x = hl.Var("x")

    @hl.generator(name=name)
    class Typed:
        out_type = hl.GeneratorParam(hl.UInt(16))
        out = hl.OutputBuffer(hl.UInt(16), 1)

        def generate(self):
            self.out[x] = hl.cast(self.out_type, x * 3)

    with jit_context(hl):
        return Typed.call().realize([4])


def test_bool_and_type_generator_params():
    # Halide 21 cannot override a Type GeneratorParam (its parsed value, a
    # list, is then an unsupported type); ferrohalide can.
    import ferrohalide as hl

    name = fresh("gp")
    x = hl.Var("x")

    @hl.generator(name=name)
    class Typed:
        out_type = hl.GeneratorParam(hl.UInt(16))
        negate = hl.GeneratorParam(False)
        out = hl.OutputBuffer(None, 1)

        def configure(self):
            pass

        def generate(self):
            v = hl.cast(self.out_type, x * 3)
            self.out[x] = -v if self.negate else v

    with jit_context(hl):
        a = Typed.call(generator_params={"out.type": hl.Int(16), "out_type": "int16", "negate": True})
        b = Typed.call(generator_params={"out.type": "uint16"})
    assert a.type() == hl.Int(16)
    np.testing.assert_array_equal(np.asarray(a.realize([4])), -np.arange(4, dtype=np.int16) * 3)
    np.testing.assert_array_equal(np.asarray(b.realize([4])), np.arange(4, dtype=np.uint16) * 3)


def test_a_bool_param_given_as_text_false_is_false():
    # Halide 21 reads the text "false" as True (bool of a non-empty string);
    # ferrohalide reads the word.
    import ferrohalide as hl

    name = fresh("boolword")
    x = hl.Var("x")

    @hl.generator(name=name)
    class G:
        on = hl.GeneratorParam(True)
        out = hl.OutputBuffer(hl.Int(32), 1)

        def generate(self):
            self.out[x] = 1 if self.on else 0

    with jit_context(hl):
        assert G.call(generator_params={"on": "false"}).realize([1])[0] == 0
        assert G.call(generator_params={"on": "True"}).realize([1])[0] == 1
        with pytest.raises(hl.HalideError, match="cannot be parsed as a bool"):
            G.call(generator_params={"on": "maybe"})


def test_out_of_order_inputs_warn():
    import ferrohalide as hl

    x = hl.Var("x")

    @hl.generator(name=fresh("order"))
    class G:
        out = hl.OutputBuffer(hl.Int(32), 1)
        inp = hl.InputScalar(hl.Int(32))

        def generate(self):
            self.out[x] = x + self.inp

    with jit_context(hl), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f = G.call(5)
    assert any("Inputs before all Outputs" in str(m.message) for m in w)
    assert f.realize([3])[2] == 7
