"""A generator written for Halide's autoschedulers (estimates set, its own
schedule only when `using_autoscheduler()` is false), built ahead of time
with `autoscheduler=...`: the command line writes the schedule chosen, and
the extension built by `python -m ferrohalide build` gives the reference's
results."""
import json
import subprocess
import sys

import numpy as np

from .conftest import run

SOURCE = '''
import IMPL as hl

x, y = hl.Var("x"), hl.Var("y")


@hl.generator(name="autoblur")
class AutoBlur:
    input = hl.InputBuffer(hl.UInt(16), 2)
    output = hl.OutputBuffer(hl.UInt(16), 2)

    def generate(self):
        clamped = hl.BoundaryConditions.repeat_edge(self.input)
        bx, by = hl.Func("bx"), hl.Func("by")
        bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) // 3
        by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) // 3
        r = hl.RDom([(0, 8)])
        hist = hl.Func("hist")
        hist[x] = hl.u16(0)
        hist[x] += by[x, r.x] // 8
        self.output[x, y] = by[x, y] + hist[x]
        self.input.set_estimates([(0, 300), (0, 200)])
        self.output.set_estimates([(0, 300), (0, 200)])
        if not self.using_autoscheduler():
            bx.compute_root()
            by.compute_root()
            hist.compute_root()


if __name__ == "__main__":
    hl.main()
'''

IMAGE = "np.random.default_rng(5).integers(0, 20000, size=(37, 41), dtype=np.uint16)"


def write(path, impl):
    path.write_text(SOURCE.replace("IMPL", impl))
    return path


def test_command_line_writes_the_chosen_schedule(tmp_path):
    src = write(tmp_path / "g.py", "ferrohalide")
    out = tmp_path / "out"
    p = run([sys.executable, str(src), "-g", "autoblur", "-o", str(out), "-e", "object,schedule,c_header",
             "-p", "libautoschedule_mullapudi2016.so", "target=host-no_runtime",
             "autoscheduler=Mullapudi2016", "autoscheduler.parallelism=4", "autoscheduler.balance=40"])
    text = (out / "autoblur.schedule.h").read_text()
    assert "inline void apply_schedule_autoblur(" in text, text
    assert "autoscheduler=Mullapudi2016 autoscheduler.balance=40 autoscheduler.parallelism=4" in text, text
    assert ".compute_root()" in text and ".parallel(" in text and ".vectorize(x, " in text, text
    assert "no 'Mullapudi2016' autoscheduler" in p.stdout + p.stderr


def test_command_line_rejects_what_halide_rejects(tmp_path):
    src = write(tmp_path / "g.py", "ferrohalide")
    for extra, message in [(["autoscheduler=Nope"], "Unknown autoscheduler name 'Nope'"),
                           (["autoscheduler=Li2018", "autoscheduler.balance=4"], "unknown keys"),
                           (["-p", "libother.so", "autoscheduler=Li2018"], "Failed to load: libother.so")]:
        p = subprocess.run([sys.executable, str(src), "-g", "autoblur", "-o", str(tmp_path / "o"),
                            "target=host"] + extra, capture_output=True, text=True)
        assert p.returncode == 1 and message in p.stderr, (extra, p.stderr)
        assert "Traceback" not in p.stderr


def test_autoscheduled_extension_matches_the_reference(tmp_path):
    src = write(tmp_path / "autoblur_src.py", "ferrohalide")
    cmd = [sys.executable, "-m", "ferrohalide", "build", str(src), "-g", "autoblur", "-m", "autoblur",
           "-o", str(tmp_path), "autoscheduler=Adams2019", "autoscheduler.parallelism=2"]
    run(cmd)
    mine = run([sys.executable, "-c", f'''
import sys, json, numpy as np
sys.path.insert(0, {str(tmp_path)!r})
import autoblur
img = {IMAGE}
out = np.zeros_like(img)
autoblur.autoblur(img, out)
print(json.dumps(out.tolist()))
'''])
    write(tmp_path / "autoblur_ref.py", "halide")
    # The reference's JIT runs the generator with its own schedule.
    ref = run([sys.executable, "-c", f'''
import sys, json, numpy as np, halide as hl
sys.path.insert(0, {str(tmp_path)!r})
import autoblur_ref
img = {IMAGE}
out = np.zeros_like(img)
with hl.GeneratorContext(hl.get_jit_target_from_environment()):
    autoblur_ref.AutoBlur().compile_to_callable()(img, out)
print(json.dumps(out.tolist()))
'''])
    got = np.array(json.loads(mine.stdout.strip().splitlines()[-1]))
    want = np.array(json.loads(ref.stdout.strip().splitlines()[-1]))
    assert got.shape == (37, 41) and (got == want).all()
