"""Control flow v1 lowering (``runtime/optimizer/lower_if.py``): ``If`` ops vs their lowered form.

``python benchmarks/v1_lowering.py [--quick]``.  Each row traces one function
once and optimizes its graph twice, with and without the lowering
(``optimizer.optimize(graph, lower_ifs=...)``), then times both graphs in the
same run, interleaved: in the interpreter (``Plan.run``), in the runner
``ag.function`` uses (``parallel.runner``: the plan, or for a graph with
independent heavy work the adaptive parallel runner), in the threaded runner
forced on (``Dataflow.run``, which ``ag.function`` uses only for graphs with
heavy work; the pass leaves those alone) and compiled (``jit_compile``'s code
generator, for which ``ag.function`` leaves the lowering out too).  It prints seconds per call and the ratio unlowered / lowered
(above 1: the lowering is faster).  The rows: ten small tensor ``if``s in
sequence on float32 scalars and on 4-element vectors, and one ``if`` whose
branches are too costly to lower (both forms are the same graph there: the
ratios show the noise of the measurement).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time

import numpy as np

import autograph as ag
from autograph import runtime as rt
from autograph.runtime import optimizer
from autograph.runtime.backends.numpy import codegen
from autograph.runtime.exec import interpreter, parallel


def ten_ifs(x, y):
    for k in range(10):  # a Python loop: unrolled while tracing, ten If ops in sequence
        if y > k * 0.25:
            x = x * 0.5
        else:
            x = x + 1.0
    return x


def costly_if(x, y):
    if y > 0.5:
        x = rt.sqrt(rt.abs(x)) * 2.0 + 1.0
    else:
        x = rt.exp(x) - 1.0
    return x


ROWS = [
    ("ten small tensor ifs, float32 scalars", ten_ifs, (np.float32(1.5), np.float32(1.0))),
    ("ten small tensor ifs, float32[4]", ten_ifs, (np.arange(4, dtype=np.float32), np.float32(1.0))),
    ("one if, branches too costly to lower, float32[4096]", costly_if,
     (np.linspace(-1, 1, 4096, dtype=np.float32), np.float32(1.0))),
]


def compare(fns, repeats: int, number: int) -> list[float]:
    """Seconds per call of each of ``fns``: the fastest of ``repeats`` batches of ``number``
    calls, the batches of all ``fns`` timed in turn, in alternating order (this machine is
    shared: the fastest batch is the one least disturbed, and the load hits every function
    alike)."""
    times = [[] for _ in fns]
    for repeat in range(repeats):
        pairs = list(zip(fns, times))
        for fn, bucket in pairs if repeat % 2 == 0 else reversed(pairs):  # neither always goes first
            gc.disable()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            bucket.append((time.perf_counter() - start) / number)
            gc.enable()
    return [min(t) for t in times]


def count(graph, op_type) -> int:
    return sum(1 for op in graph.operations if op.type == op_type)


def measure(name, fn, args, repeats, number) -> dict:
    traced = ag.function(fn).get_concrete_function(*args).graph
    plain = optimizer.optimize(traced, lower_ifs=False)
    lowered = optimizer.optimize(traced)
    args = list(args)
    for graph in (plain, lowered):  # the same values, in every mode
        want = interpreter.run_graph(graph, args)
        assert all(np.array_equal(a, b) for a, b in zip(want, interpreter.run_graph(plain, args)))
        assert all(np.array_equal(a, b) for a, b in zip(want, parallel.dataflow(graph).run(args)))
        assert all(np.array_equal(a, b) for a, b in zip(want, codegen.compile_graph(graph)[0](args)))
    result = {"benchmark": name, "ifs": count(plain, "If"), "ifs_lowered": count(plain, "If") - count(lowered, "If")}
    modes = {
        "interpreter": lambda g: interpreter.plan(g).run,
        "parallel": lambda g: parallel.runner(g),
        "threads": lambda g: parallel.dataflow(g).run,
        "jit": lambda g: codegen.compile_graph(g)[0],
    }
    for mode, make in modes.items():
        run_plain, run_lowered = make(plain), make(lowered)
        t_plain, t_lowered = compare([lambda: run_plain(args), lambda: run_lowered(args)], repeats, number)
        result[f"{mode}_if_s"] = t_plain
        result[f"{mode}_lowered_s"] = t_lowered
        result[f"{mode}_speedup"] = t_plain / t_lowered
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON to FILE")
    options = parser.parse_args(argv)
    repeats, number = (15, 100) if options.quick else (61, 100)
    rows = [measure(name, fn, args, repeats, number) for name, fn, args in ROWS]
    print(f"{'benchmark':<52} {'lowered':>8} {'interp':>8} {'parallel':>9} {'threads':>8} {'jit':>8}"
          "   (speedup: If / lowered)")
    for r in rows:
        print(f"{r['benchmark']:<52} {r['ifs_lowered']:>3}/{r['ifs']:<4} {r['interpreter_speedup']:>7.2f}x "
              f"{r['parallel_speedup']:>8.2f}x {r['threads_speedup']:>7.2f}x {r['jit_speedup']:>7.2f}x")
    text = json.dumps(rows, indent=2)
    print(text)
    if options.json:
        with open(options.json, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
