"""The type stubs have teeth: mypy (with the package's stubs) accepts a
correct schedule chain and rejects a misspelt method and a wrong arity."""
import os
import textwrap

import pytest

mypy_api = pytest.importorskip("mypy.api") if os.environ.get("CI") != "true" else __import__("mypy.api").api

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check(tmp_path, source):
    path = tmp_path / "snippet.py"
    path.write_text(textwrap.dedent(source))
    out, err, status = mypy_api.run(["--config-file", os.path.join(ROOT, "pyproject.toml"),
                                     "--no-incremental", str(path)])
    return status, out


def test_schedule_chain_type_checks(tmp_path):
    status, out = check(tmp_path, """
        import ferrohalide as hl
        x, y, xi, yi = hl.Var("x"), hl.Var("y"), hl.Var("xi"), hl.Var("yi")
        f = hl.Func("f")
        f[x, y] = x + y
        g: hl.Func = f.tile(x, y, xi, yi, 8, 8).vectorize(xi, 4).parallel(y)
        s: hl.Stage = f.update(0) if False else f.update(0).vectorize(x, 4)
        t: hl.Type = hl.UInt(8)
        e: hl.Expr = x * 2 + y
    """)
    assert status == 0, out


def test_misspelt_method_and_wrong_arity_are_errors(tmp_path):
    status, out = check(tmp_path, """
        import ferrohalide as hl
        x = hl.Var("x")
        f = hl.Func("f")
        f.vectorise(x, 8)
        f.compute_root(1, 2, 3)
    """)
    assert status == 1
    assert '"Func" has no attribute "vectorise"' in out
    assert 'Too many arguments for "compute_root" of "Func"' in out
