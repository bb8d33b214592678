"""The benchmarked computations, each in three spellings.

* ``ag_*``: ordinary Python control flow, for ``ag.function`` (converted,
  traced, run as a graph);
* ``rt_*``: the same graph written with ``rt.cond`` / ``rt.while_loop``, for
  ``rt.function`` when the converter is not available;
* ``np_*``: the same computation written by hand in plain Python / numpy,
  the baseline every ratio is measured against.

The first-call benchmark needs a new code object per measurement (conversion
is cached per code object), so ``FIRST_CALL_SOURCE`` is written to fresh
module files and imported.
"""

from __future__ import annotations

import numpy as np

import fresh

import autograph.runtime as rt

# -- first call: an ``if`` inside a ``while`` ----------------------------------

FIRST_CALL_SOURCE = '''
def {name}(x, n):
    i = 0
    total = x * 0.0
    while i < n:
        if total > 10.0:
            total = total - x
        else:
            total = total + x * 2.0
        i += 1
    return total
'''



def fresh_first_call(folder, name):
    """The first-call function under the name ``name``, from a module of its own (``fresh.py``)."""
    return fresh.fresh_function(folder, name, FIRST_CALL_SOURCE)


def np_first_call(x, n):
    i = 0
    total = x * 0.0
    while i < n:
        if total > 10.0:
            total = total - x
        else:
            total = total + x * 2.0
        i += 1
    return total


# -- cached call of a tiny function ---------------------------------------------


def ag_tiny(x):
    return x + 1


rt_tiny = ag_tiny
np_tiny = ag_tiny


# -- scalar While loop with a branch in the body ------------------------------


def ag_scalar_loop(n):
    i = 0
    s = 0.0
    while i < n:
        if i % 3 == 0:
            s = s + 1.0
        else:
            s = s - 0.25
        i += 1
    return s


def rt_scalar_loop(n):
    def body(i, s):
        s = rt.cond(rt.equal(i % 3, 0), lambda: s + 1.0, lambda: s - 0.25)
        return i + 1, s

    return rt.while_loop(lambda i, s: i < n, body, (0, rt.constant(0.0, "float64")))[1]


def np_scalar_loop(n):
    i = np.int32(0)
    s = np.float64(0.0)
    one, three, zero = np.int32(1), np.int32(3), np.int32(0)
    step_up, step_down = np.float64(1.0), np.float64(0.25)
    while i < n:
        if i % three == zero:
            s = s + step_up
        else:
            s = s - step_down
        i = i + one
    return s


# -- elementwise chain ------------------------------------------------------------


def ag_chain(x):
    return rt.exp(x) * 2.0 + rt.sqrt(rt.abs(x)) - x * x


rt_chain = ag_chain


def np_chain(x):
    return np.exp(x) * np.float32(2.0) + np.sqrt(np.abs(x)) - x * x


# -- matmul loop --------------------------------------------------------------------


def ag_matmul_loop(x, w, n):
    i = 0
    while i < n:
        x = x @ w
        i += 1
    return x


def rt_matmul_loop(x, w, n):
    return rt.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x @ w), (0, x))[1]


def np_matmul_loop(x, w, n):
    for _ in range(int(n)):
        x = x @ w
    return x


# -- two independent compute-heavy chains ---------------------------------------------


def ag_two_chains(a, b):
    for _ in range(5):  # a Python loop: unrolled at trace time
        a = rt.sin(rt.exp(a))
        b = rt.sin(rt.exp(b))
    return a, b


rt_two_chains = ag_two_chains


def np_two_chains(a, b):
    for _ in range(5):
        a = np.sin(np.exp(a))
        b = np.sin(np.exp(b))
    return a, b


def np_two_chains_threaded(a, b, pool):
    """``np_two_chains`` by hand on two threads: chain ``a`` on ``pool``, chain ``b`` here."""

    def chain(x):
        for _ in range(5):
            x = np.sin(np.exp(x))
        return x

    future = pool.submit(chain, a)
    b = chain(b)
    return future.result(), b
