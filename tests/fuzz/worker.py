"""Child process of runner.py: runs generated programs with one module.

    python worker.py MODULE        (ferrohalide or halide)

Protocol on stdin / the original stdout: 4-byte big-endian length + pickle.
Requests are (job_id, program_text, sched); each answer is (job_id, result) with
result one of
    ("ok", [numpy arrays]) | ("ok", [numpy arrays], [region arrays])
    ("error", exception type name, message)
Anything the programs or the compilers print goes to stderr (the runner keeps it
in a log to quote when this process dies).  Crashes and hangs are detected by the
runner, which restarts the worker; a worker therefore never tries to survive one.
"""

import gc
import importlib
import os
import pickle
import struct
import sys


def read_msg(stream):
    head = stream.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack(">I", head)
    return pickle.loads(stream.read(n))


def write_msg(stream, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


# Scheduled async programs run this many times in ferrohalide: a consumer
# that does not wait for its producer shows as values that change from run
# to run (stop 45's sliding-window warm-up bug computed the right values on
# most runs).
ASYNC_RUNS = 3


def run_once(hl, np, text, sched):
    namespace = {"__name__": "fuzz_program"}
    try:
        exec(compile(text, "<program>", "exec"), namespace)
        res = namespace["pipeline"](hl, sched)
        if isinstance(res, dict):  # values, plus the outputs' regions (gen.py realize_lines)
            return ("ok", [np.array(a, copy=True) for a in res["values"]],
                    [np.array(a, copy=True) for a in res["regions"]])
        return ("ok", [np.array(a, copy=True) for a in res])
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # pyo3's PanicException is a BaseException
        return ("error", type(e).__name__, str(e))
    finally:
        namespace.clear()
        gc.collect()


def run_program(hl, np, text, sched):
    out = run_once(hl, np, text, sched)
    if out[0] == "ok" and sched and hl.__name__ == "ferrohalide" and ".async_(" in text:
        for _ in range(ASYNC_RUNS - 1):
            again = run_once(hl, np, text, sched)
            same = again[0] == "ok" and len(again[1]) == len(out[1]) and all(
                a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
                for a, b in zip(out[1], again[1]))
            if not same:
                return ("nondeterministic", "a second run of the scheduled program gave other values: "
                        + (again[2][:200] if again[0] == "error" else "outputs differ"))
    return out


def main():
    proto = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints (warnings, hl.print) must not corrupt the protocol
    hl = importlib.import_module(sys.argv[1])
    import numpy as np

    write_msg(proto, ("ready", sys.argv[1]))
    while True:
        msg = read_msg(sys.stdin.buffer)
        if msg is None:
            return
        job_id, text, sched = msg
        print(f"=== job {job_id} sched={sched}", file=sys.stderr, flush=True)
        write_msg(proto, (job_id, run_program(hl, np, text, sched)))


if __name__ == "__main__":
    main()
