"""compile_to_lowered_stmt: what both implementations accept and reject, and
facts about the written statement that do not depend on how each one spells
its IR (the text itself differs: names, checks and helper calls are
implementation details)."""
import os
import re

import numpy as np
import pytest

from .harness import buffer, differential


def _pipeline(hl, schedule):
    x, y = hl.Var("x"), hl.Var("y")
    inp = buffer(hl, (np.arange(20 * 12) % 251).astype(np.uint8).reshape(12, 20))
    f = hl.Func("producer")
    f[x, y] = hl.u16(inp[x, y]) * 3
    g = hl.Func("consumer")
    g[x, y] = f[x, y] + f[x + 1, y]
    if schedule == "root":
        f.compute_root()
    elif schedule == "at_y":
        f.compute_at(g, y)
    elif schedule == "parallel_vec":
        f.compute_root().parallel(y).vectorize(x, 8)
        g.parallel(y).vectorize(x, 8)
    return g, inp


def _written(hl, tmp_path, fmt_name, schedule, with_buffer):
    g, inp = _pipeline(hl, schedule)
    path = os.path.join(str(tmp_path), "%s.%s" % (hl.__name__, fmt_name.lower()))
    g.compile_to_lowered_stmt(path, [inp] if with_buffer else [],
                              getattr(hl.StmtOutputFormat, fmt_name))
    with open(path) as fh:
        return fh.read()


@differential()
@pytest.mark.parametrize("schedule", ["inline", "root", "at_y", "parallel_vec"])
@pytest.mark.parametrize("with_buffer", [False, True])
def test_text_statement_facts(hl, tmp_path, schedule, with_buffer):
    s = _written(hl, tmp_path, "Text", schedule, with_buffer)
    # Func names may carry a uniquifying "$n" suffix (a name used before).
    has = lambda what: re.search(r"\b%s(\$\d+)? \{" % what, s) is not None  # noqa: E731
    # (Parallel loops are not compared: Halide's final statement has already
    # turned them into task closures.)
    return {
        "produces_consumer": has("produce consumer"),
        "produces_producer": has("produce producer"),
        "consumes_producer": has("consume producer"),
        "vector_ramps": "ramp(" in s,
    }


@differential()
@pytest.mark.parametrize("schedule", ["root", "parallel_vec"])
def test_html_is_a_page(hl, tmp_path, schedule):
    s = _written(hl, tmp_path, "HTML", schedule, False)
    return {
        "doctype": s.lstrip().startswith("<!DOCTYPE html>"),
        "closed": s.rstrip().endswith("</html>"),
        "mentions_produce": "produce" in s,
    }


@differential()
def test_format_enum(hl):
    F = hl.StmtOutputFormat
    return [sorted(F.__members__), int(F.Text), int(F.HTML), str(F.HTML), F.Text == F.Text,
            F.Text == F.HTML]


@differential(expect_error=True)
@pytest.mark.parametrize("bad", ["int", "str", "var", "none", "buffer_not_in_list"])
def test_bad_arguments_raise_type_error(hl, tmp_path, bad):
    g, inp = _pipeline(hl, "root")
    arg = {"int": [1], "str": ["a"], "var": [hl.Var("v")], "none": None,
           "buffer_not_in_list": inp}[bad]
    g.compile_to_lowered_stmt(os.path.join(str(tmp_path), "x.stmt"), arg)


@differential(expect_error=True)
def test_undefined_func(hl, tmp_path):
    hl.Func("nothing").compile_to_lowered_stmt(os.path.join(str(tmp_path), "x.stmt"), [])


def test_text_ends_with_the_pipeline_body(tmp_path):
    """Ours writes one function whose signature lists the inputs, then the outputs."""
    hl = pytest.importorskip("ferrohalide")
    g, inp = _pipeline(hl, "root")
    path = tmp_path / "x.stmt"
    g.compile_to_lowered_stmt(str(path), [inp])
    s = path.read_text()
    first = s.splitlines()[0]
    assert re.fullmatch(r"func (consumer\S*) \(\S+, \1\) \{", first), first
    assert s.rstrip().endswith("}")


def test_unwritable_path_raises(tmp_path):
    hl = pytest.importorskip("ferrohalide")
    g, _ = _pipeline(hl, "root")
    with pytest.raises(hl.HalideError):
        g.compile_to_lowered_stmt(str(tmp_path / "no" / "such" / "dir.stmt"), [])


@differential()
def test_classic_blur_statement_shows_folding(hl, tmp_path):
    """The benchmark's blur schedule (blur_x stored per strip, computed per
    vector of the output): both implementations fold blur_x's rows into a
    4-row circular buffer, indexed modulo 4, and still give the same image."""
    x, y, yi = hl.Var("x"), hl.Var("y"), hl.Var("yi")
    inp = buffer(hl, (np.arange(70 * 40) % 65521).astype(np.uint16).reshape(40, 70))
    bx, out = hl.Func("blur_x"), hl.Func("out")
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
    out[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3
    out.split(y, y, yi, 32).parallel(y).vectorize(x, 8)
    bx.store_at(out, y).compute_at(out, x).vectorize(x, 8)
    path = os.path.join(str(tmp_path), "%s.stmt" % hl.__name__)
    out.compile_to_lowered_stmt(path, [], hl.StmtOutputFormat.Text)
    with open(path) as fh:
        s = fh.read()
    return {
        "folded_to_4_rows": re.search(r"allocate blur_x(\$\d+)?\[uint16 \* [^\]]* \* 4\]", s) is not None,
        "indexed_mod_4": "% 4)" in s,
        "image": out.realize([64, 38]),
    }


@differential()
@pytest.mark.parametrize("on", ["func", "pipeline"])
def test_lowered_for_an_explicit_target(hl, tmp_path, on):
    """The statement is lowered for the target given: a target query folds
    to that target's answer."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.select(hl.target_has_feature(hl.TargetFeature.AVX2), 7, 3) + x
    out = []
    for t in ["x86-64-linux-sse41", "x86-64-linux-avx-avx2-sse41"]:
        p = str(tmp_path / f"{on}_{t}.stmt")
        obj = f if on == "func" else hl.Pipeline(f)
        obj.compile_to_lowered_stmt(p, [], hl.StmtOutputFormat.Text, hl.Target(t))
        store = [line for line in open(p).read().splitlines() if f.name() + "[" in line][-1]
        out.append((store.rstrip(")").endswith("7"), store.rstrip(")").endswith("3")))
    return out


@differential()
@pytest.mark.parametrize("listed", ["none", "image_only", "both"])
def test_arguments_must_name_every_input(hl, tmp_path, listed):
    from .input_helpers import error_key
    x = hl.Var("x")
    im = hl.ImageParam(hl.Int(32), 1, "im")
    p = hl.Param(hl.Int(32), "p", 1)
    f = hl.Func("f")
    f[x] = im[x] + p
    args = {"none": [], "image_only": [im], "both": [p, im]}[listed]
    path = str(tmp_path / "f.stmt")
    return [error_key(hl, lambda: obj.compile_to_lowered_stmt(path, args), "which was not found in the argument list",
                      "Parameters referenced in generated code: im p")
            for obj in (f, hl.Pipeline(f))]
