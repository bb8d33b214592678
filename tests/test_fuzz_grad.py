"""Differential fuzzing of gradients: random differentiable programs with tensor control flow.

Each program ``prog(x, v, n)`` keeps float state (scalars ``t``, ``u``, a
vector ``s``, a dict item ``d['w']`` and a list ``acc`` it appends to; its
results read some of them only) and changes it with smooth expressions under tensor ``if``s,
``for`` loops over ``range(n)`` and over the elements of ``v``, counter-bounded
``while`` loops, ``break``
and early ``return``.  Its gradient with respect to ``x`` and ``v``
(``ag.grad``, interpreter and ``jit_compile=True``) must equal central
finite differences of the traced function, which must itself equal the
plain Python function.  Where a branch switches at the point or next to it
(the one-sided slopes, or the central differences of two step sizes,
disagree), the function has no derivative there and the example is
discarded (``hypothesis.assume``).

The generator is its own, not ``fuzz_programs.py``'s: those programs are
integer-exact by design (every stored value reduced ``% 97``, ``//`` and
comparisons of small integers, int counters mixed into the state), so that
float32 and int32 runs compare exactly; as functions of their inputs they
are piecewise constant, and their gradients zero or undefined almost
everywhere.  A gradient fuzzer needs smooth expressions of float state
instead, and the same control flow around them (tensor ``if``/``for``/
``while``, ``break``, early ``return``, state in a dict item and a staged
list, as there).
"""

import importlib.util
import os
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

import autograph as ag

SCALARS = ["t * 0.7 + u", "rt.sin(t) + 0.2 * u", "rt.tanh(u * t)", "t - 0.3 * u", "rt.reduce_sum(s * s) * 0.1",
           "rt.cos(x) * t", "u * x + 0.5"]
VECTORS = ["s * 0.9 + v * t", "rt.sin(s) + x", "rt.tanh(s * u)", "s * v + 0.1"]
ROW_SCALARS = ["t * 0.9 + e * u", "rt.sin(e * t) + u", "e * e * 0.5 + t"]  # inside `for e in v:`
ITEMS = ["d['w'] * 0.8 + t", "rt.sin(d['w']) * u", "d['w'] + e * 0.3"]  # the last inside `for e in v:`
APPENDS = ["t * 0.5", "u * t", "d['w'] - 0.2"]  # onto the list acc (staged where a tensor loop or if grows it)
RETURNS = ["rt.reduce_sum(s) * t + u", "t + 0.0", "rt.reduce_sum(s * v)", "u * 2.0 - t",  # some leave state unread
           "d['w'] * t", "rt.reduce_sum(rt.stack(acc)) * 0.3 + u"]
CONDITIONS = ["t > 0.3", "rt.reduce_sum(s) < u", "u > t and t > -1.0", "not (u > 0.8)", "x * t > 0.1"]


class Writer:
    def __init__(self, rng):
        self.rng, self.lines, self.loops = rng, [], 0

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def block(self, depth, in_loop, size, row=False):
        for _ in range(size):
            self.statement(depth, in_loop, row)

    def statement(self, depth, in_loop, row=False):
        kinds = ["scalar", "scalar", "vector", "item", "append"] + (["if", "for", "while", "rows"] if depth < 3 else [])
        kinds += ["break", "return"] if in_loop else ["return"] if depth else []
        kind = self.rng.choice(kinds)
        if kind == "scalar":
            choices = SCALARS + ROW_SCALARS if row else SCALARS
            self.emit(depth, f"{self.rng.choice('tu')} = {self.rng.choice(choices)}")
        elif kind == "rows" and not row:
            self.emit(depth, "for e in v:")
            self.emit(depth + 1, f"{self.rng.choice('tu')} = {self.rng.choice(ROW_SCALARS)}")
            self.block(depth + 1, True, self.rng.randint(0, 2), row=True)
        elif kind == "rows":
            self.emit(depth, "t = t * 0.5")
        elif kind == "item":
            self.emit(depth, f"d['w'] = {self.rng.choice(ITEMS if row else ITEMS[:-1])}")
        elif kind == "append":
            self.emit(depth, f"acc.append({self.rng.choice(APPENDS)})")
        elif kind == "vector":
            self.emit(depth, f"s = {self.rng.choice(VECTORS)}")
        elif kind == "if":
            self.emit(depth, f"if {self.rng.choice(CONDITIONS)}:")
            self.block(depth + 1, in_loop, self.rng.randint(1, 2), row)
            if self.rng.random() < 0.6:
                self.emit(depth, "else:")
                self.block(depth + 1, in_loop, self.rng.randint(1, 2), row)
        elif kind == "for":
            self.emit(depth, "for i in range(n):")
            self.block(depth + 1, True, self.rng.randint(1, 3), row)
        elif kind == "while":
            self.loops += 1
            counter = f"j{self.loops}"
            self.emit(depth, f"{counter} = 0")
            self.emit(depth, f"while {counter} < 3:")
            self.emit(depth + 1, f"{counter} += 1")
            self.block(depth + 1, True, self.rng.randint(1, 3), row)
        elif kind == "break":
            self.emit(depth, f"if {self.rng.choice(CONDITIONS)}:")
            self.emit(depth + 1, "break")
        else:
            self.emit(depth, f"if {self.rng.choice(CONDITIONS)}:")
            self.emit(depth + 1, f"return {self.rng.choice(RETURNS)}")

    def program(self):
        self.emit(0, "def prog(x, v, n):")
        self.emit(1, "t = x")
        self.emit(1, "u = rt.reduce_sum(v) * 0.5")
        self.emit(1, "s = v * x")
        self.emit(1, "d = {'w': x * 0.5}")
        self.emit(1, "acc = [u * 0.1]")
        self.block(1, False, self.rng.randint(2, 4))
        self.emit(1, f"return {self.rng.choice(RETURNS)}")
        return "\n".join(self.lines) + "\n"


def load(source, tmp_path, index):
    path = tmp_path / f"fuzz_grad_{index}.py"
    path.write_text("from autograph import runtime as rt\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.prog


def finite_differences(f, x, v, n, eps):
    """(central, forward, backward) differences, each as (d/dx, d/dv)."""
    center = float(f(x, v, n))
    steps = [(x + eps, v), (x - eps, v)] + [(x, v + sign * eps * e) for e in np.eye(len(v)) for sign in (1, -1)]
    values = np.array([float(f(a, b, n)) for a, b in steps]).reshape(-1, 2)  # rows: x, v[0], v[1], ...
    plus, minus = values[:, 0], values[:, 1]
    return (plus - minus) / (2 * eps), (plus - center) / eps, (center - minus) / eps


_COUNTER = [0]
EXAMPLES = int(os.environ.get("FUZZ_GRAD_EXAMPLES", 25))  # more for a longer local run


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**32 - 1), st.floats(-1.0, 1.0), st.integers(0, 3))
@example(1633, -1.0, 2)  # a branch's value of unknown length, in a loop where the other branch runs too
def test_gradients_of_random_programs(tmp_path, seed, x, n):
    _COUNTER[0] += 1
    source = Writer(random.Random(seed)).program()
    prog = load(source, tmp_path, _COUNTER[0])
    x, v, n = np.float64(x), np.random.default_rng(seed).uniform(-1.0, 1.0, 3), np.int32(n)
    traced = ag.function(prog)
    assert float(traced(x, v, n)) == pytest.approx(float(prog(x, v, n)), rel=1e-9, abs=1e-9), source
    central, forward, backward = finite_differences(traced, x, v, n, 1e-6)
    coarse = finite_differences(traced, x, v, n, 1e-4)[0]
    # a branch switching at x (or nearby): the one-sided slopes, or two step sizes, disagree
    assume(np.allclose(forward, backward, rtol=1e-3, atol=1e-3) and np.allclose(central, coarse, rtol=1e-3, atol=1e-4))
    for mode in ({}, {"jit_compile": True}):
        gx, gv = ag.grad(prog, argnums=(0, 1), **mode)(x, v, n)
        np.testing.assert_allclose(gx, central[0], rtol=1e-4, atol=1e-5, err_msg=source)
        np.testing.assert_allclose(gv, central[1:], rtol=1e-4, atol=1e-5, err_msg=source)
