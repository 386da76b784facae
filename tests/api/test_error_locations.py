"""A HalideError naming a Func also says where in the user's code that Func
was defined (file and line, captured when it was first defined), which
Halide's bindings cannot: in the exception's notes (PEP 678), which a
traceback prints after the message, so that str(e) stays Halide's text."""
import traceback
import inspect

import pytest

import ferrohalide as hl


def test_error_names_definition_sites():
    x, y = hl.Var("x"), hl.Var("y")
    producer_site = inspect.currentframe().f_lineno + 2
    producer = hl.Func("loc_producer")
    producer[x, y] = x + y
    consumer = hl.Func("loc_consumer")
    consumer[x, y] = producer[x, y] * 2
    consumer_site = producer_site + 2
    producer.compute_at(consumer, hl.Var("z"))
    with pytest.raises(hl.HalideError) as e:
        consumer.realize([4, 4])
    text = "".join(traceback.format_exception(e.value))
    assert "is computed at the following invalid location" in text
    assert f"Func loc_producer was defined at {__file__}:{producer_site}" in text
    assert f"Func loc_consumer was defined at {__file__}:{consumer_site}" in text


def test_only_whole_names_count():
    x = hl.Var("x")
    f = hl.Func("loc_f")
    f[x] = x
    longer = hl.Func("loc_f_longer")
    longer[x] = f[x]
    f.compute_at(longer, hl.Var("nowhere"))
    with pytest.raises(hl.HalideError) as e:
        longer.realize([4])
    text = "".join(traceback.format_exception(e.value))
    assert text.count("Func loc_f was defined at") == 1
    assert text.count("Func loc_f_longer was defined at") == 1


def _define_in_helper(f, x):
    f[x] = x * 3  # the line the error points at
    return inspect.currentframe().f_lineno - 1


def test_site_is_the_line_that_defined_it():
    x = hl.Var("x")
    f = hl.Func("loc_helper")
    line = _define_in_helper(f, x)
    g = hl.Func("loc_helper_user")
    g[x] = f[x]
    f.compute_at(g, hl.Var("nowhere"))
    with pytest.raises(hl.HalideError) as e:
        g.realize([3])
    assert f"Func loc_helper was defined at {__file__}:{line}" in e.value.__notes__
    assert "was defined at" not in str(e.value)
