"""Numeric functions traced by ag.function compute what the Python function computes, in every mode.

Each function below is called plainly on its numpy arguments and through
``ag.function`` (interpreter, unoptimized interpreter, jit_compile); the
results must agree (floats with ``assert_allclose``), and the traced graph
must hold an ``If``/``While`` exactly where the control flow depends on an
input (``ops=``), and none where it is plain Python on constants
(``no_ops=``).  Several argument lists per function exercise every branch
through one trace.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.tracing.function import RetracingWarning
from modes import MODES

i32 = np.int32
f32 = np.float32
f64 = np.float64


def vec(*values, dtype=np.float32):
    return np.array(values, dtype=dtype)


@dataclasses.dataclass(frozen=True)
class Case:
    fn: object
    calls: tuple
    ops: frozenset
    no_ops: frozenset
    list_result: bool

    @property
    def name(self):
        return self.fn.__name__


CASES: list[Case] = []


def case(*calls, ops=(), no_ops=(), list_result=False):
    """Registers the decorated function with its argument lists (each a tuple)."""

    def register(fn):
        CASES.append(Case(fn, tuple(calls), frozenset(ops), frozenset(no_ops), list_result))
        return fn

    return register


# --------------------------------------------------------------------------
# Branches on scalars
# --------------------------------------------------------------------------


@case((f32(3),), (f32(-2),), ops={"If"})
def abs_if(x):
    if x > 0:
        y = x
    else:
        y = -x
    return y


@case((f32(3),), (f32(-2),), ops={"If"})
def relu(x):
    if x < 0:
        x = 0.0
    return x


@case((f32(3),), (f32(-2),), (f32(0),), ops={"If"})
def sign(x):
    if x > 0:
        s = 1.0
    elif x < 0:
        s = -1.0
    else:
        s = 0.0
    return s * 1


@case((f32(5), f32(0), f32(3)), (f32(-1), f32(0), f32(3)), (f32(2), f32(0), f32(3)), ops={"If"})
def clip(x, lo, hi):
    if x < lo:
        x = lo
    if x > hi:
        x = hi
    return x


@case((i32(1), i32(5), i32(3)), (i32(9), i32(2), i32(3)), (i32(1), i32(2), i32(7)), ops={"If"})
def max3(a, b, c):
    m = a
    if b > m:
        m = b
    if c > m:
        m = c
    return m


@case((i32(4),), (i32(7),), ops={"If"})
def parity_label(n):
    if n % 2 == 0:
        r = n // 2
    else:
        r = 3 * n + 1
    return r


@case((f32(2), f32(3)), (f32(5), f32(1)), ops={"If"})
def ordered_pair(a, b):
    if a > b:
        a, b = b, a
    return a, b


@case((f32(0.5),), (f32(2.5),), (f32(-3),), ops={"If"})
def piecewise(x):
    if x < 0:
        y = x * x
    elif x < 1:
        y = 2 * x
    elif x < 2:
        y = x + 1
    else:
        y = 3 * x - 1
    return y


@case((f32(4),), (f32(-4),), ops={"If"})
def branch_uses_ops(x):
    if x > 0:
        y = rt.sqrt(x)
    else:
        y = rt.exp(x)
    return y


@case((i32(3), i32(4)), (i32(4), i32(3)), ops={"If"})
def swap_and_diff(a, b):
    if a < b:
        t = a
        a = b
        b = t
    return a - b


@case((f32(1.5),), (f32(-1.5),), ops={"If"})
def nested_if(x):
    if x > 0:
        if x > 1:
            y = x * 10
        else:
            y = x
    else:
        if x < -1:
            y = x * 100
        else:
            y = -x
    return y


@case((i32(10), i32(3)), (i32(2), i32(3)), ops={"If"})
def only_true_branch_assigns(n, k):
    r = n
    if n > k:
        r = n - k
    return r


@case((f32(2),), (f32(-2),), ops={"If"})
def if_with_multiple_outputs(x):
    a = x
    b = x * 2
    c = 0.0
    if x > 0:
        a = a + 1
        b = b + 1
        c = a * b
    else:
        c = a - b
    return a, b, c


# --------------------------------------------------------------------------
# Logical operators and conditional expressions
# --------------------------------------------------------------------------


@case((f32(5),), (f32(20),), (f32(-1),), ops={"If"})
def in_range_and(x):
    if x > 0 and x < 10:
        y = x
    else:
        y = -x
    return y


@case((f32(5),), (f32(20),), (f32(-1),), ops={"If"})
def out_of_range_or(x):
    if x < 0 or x > 10:
        y = 1.0
    else:
        y = 0.0
    return y * x


@case((f32(5),), (f32(-5),), ops={"If"})
def negated(x):
    if not x > 0:
        x = x * -2
    return x


@case((f32(4),), (f32(-4),))
def ternary(x):
    return x if x > 0 else -x


@case((i32(4),), (i32(5),))
def ternary_int(n):
    return n // 2 if n % 2 == 0 else 3 * n + 1


@case((f32(1), f32(2)), (f32(3), f32(2)))
def logical_values(a, b):
    both = a > 0 and b > a
    either = a > 2 or b > 2
    return both, either, not both


@case((i32(3),), (i32(-3),), (i32(30),), ops={"If"})
def chained_compare_style(n):
    if 0 < n and n < 10:
        r = 1
    elif n >= 10:
        r = 2
    else:
        r = 3
    return r * 1


@case((f32(2), f32(3)), (f32(-2), f32(3)), (f32(2), f32(-3)))
def nested_ternary(a, b):
    return a if a > 0 and b > 0 else (b if b > 0 else a * b)


# --------------------------------------------------------------------------
# While loops
# --------------------------------------------------------------------------


@case((i32(6),), (i32(27),), (i32(1),), ops={"While"})
def collatz(n):
    count = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        count += 1
    return count


@case((i32(10),), (i32(0),), ops={"While"})
def sum_below(n):
    s = 0
    i = 0
    while i < n:
        s += i
        i += 1
    return s


@case((i32(48), i32(18)), (i32(17), i32(5)), ops={"While"})
def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@case((i32(12345),), (i32(7),), ops={"While"})
def count_digits(n):
    digits = 1
    while n >= 10:
        n = n // 10
        digits += 1
    return digits


@case((i32(9875),), ops={"While"})
def digit_sum(n):
    s = 0
    while n > 0:
        s += n % 10
        n = n // 10
    return s


@case((f32(2.0),), (f32(10.0),), ops={"While"})
def newton_sqrt(x):
    y = x
    steps = 0
    while abs(y * y - x) > 1e-4 and steps < 50:
        y = (y + x / y) / 2
        steps += 1
    return y


@case((f32(100.0),), (f32(1.0),), ops={"While"})
def halvings(x):
    n = 0
    while x > 1:
        x = x / 2
        n += 1
    return n, x


@case((i32(10),), (i32(1),), ops={"While"})
def fib_while(n):
    a, b = 0, 1
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a


@case((f32(2.0), i32(5)), (f32(0.5), i32(3)), ops={"While"})
def power_loop(x, n):
    r = 1.0
    i = 0
    while i < n:
        r = r * x
        i += 1
    return r


@case((f32(0.0), f32(3.0)), (f32(-1.0), f32(5.0)), ops={"While"})
def bisection_cube_root_of_two(lo, hi):
    it = 0
    while hi - lo > 1e-3 and it < 40:
        mid = (lo + hi) / 2
        if mid * mid * mid > 2:
            hi = mid
        else:
            lo = mid
        it += 1
    return lo


@case((i32(20),), (i32(3),), ops={"While"})
def while_with_python_counter_start(n):
    i = 1
    total = 1
    while total < n:
        i += 1
        total = total * i
    return i, total


@case((f32(1.0),), ops={"While"})
def while_float_accumulate(x):
    t = 0.0
    while t < 5:
        t = t + x
    return t


@case((i32(5), i32(3)), (i32(2), i32(9)), ops={"While"})
def nested_while(n, m):
    total = 0
    i = 0
    while i < n:
        j = 0
        while j < m:
            total += i * j
            j += 1
        i += 1
    return total


@case((i32(30),), (i32(7),), ops={"While"})
def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i * i >= n:
            break
    return i


@case((i32(10),), (i32(2),), ops={"While"})
def while_with_continue(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        s += i
    return s


@case((i32(25),), (i32(2),), ops={"While"})
def is_prime(n):
    prime = n > 1
    d = 2
    while d * d <= n:
        if n % d == 0:
            prime = False
            break
        d += 1
    return prime


@case((i32(100), i32(7)), (i32(5), i32(7)), ops={"While"})
def largest_multiple_below(n, k):
    m = 0
    while m + k < n:
        m += k
    return m


# --------------------------------------------------------------------------
# For loops over tensor ranges
# --------------------------------------------------------------------------


@case((i32(5),), (i32(1),), ops={"While"})
def factorial(n):
    r = 1
    for i in range(1, n + 1):
        r *= i
    return r


@case((i32(10),), (i32(0),), ops={"While"})
def sum_range(n):
    s = 0
    for i in range(n):
        s += i
    return s


@case((i32(10),), ops={"While"})
def sum_even_range_step(n):
    s = 0
    for i in range(0, n, 2):
        s += i
    return s


@case((i32(12),), (i32(5),), ops={"While"})
def sum_odd_continue(n):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            continue
        s += i
    return s


@case((i32(20),), (i32(3),), ops={"While"})
def first_square_above(n):
    found = -1
    for i in range(n):
        if i * i > n:
            found = i
            break
    return found


@case((i32(20),), (i32(0),), ops={"While"})
def early_return_in_loop(n):
    for i in range(n):
        if i * i > n:
            return i
    return -1


@case((i32(8),), (i32(1),), ops={"While"})
def fib_for(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@case((i32(4), i32(3)), ops={"While"})
def nested_for_ranges(n, m):
    total = 0
    for i in range(n):
        for j in range(m):
            total += i * 10 + j
    return total


@case((f32(0.5), i32(10)), ops={"While"})
def geometric_series(r, n):
    s = 0.0
    term = 1.0
    for _ in range(n):
        s += term
        term = term * r
    return s


@case((i32(6),), ops={"While"})
def harmonic(n):
    h = 0.0
    for k in range(1, n + 1):
        h += 1.0 / k
    return h


@case((i32(10), i32(3)), (i32(10), i32(30)), ops={"While"})
def count_multiples(n, k):
    c = 0
    for i in range(1, n + 1):
        if i % k == 0:
            c += 1
    return c


@case((i32(15),), ops={"While"})
def fizzbuzz_score(n):
    score = 0
    for i in range(1, n + 1):
        if i % 15 == 0:
            score += 15
        elif i % 5 == 0:
            score += 5
        elif i % 3 == 0:
            score += 3
        else:
            score += 1
    return score


@case((f32(2.0), i32(4)), ops={"While"})
def loop_with_branch_on_counter(x, n):
    for i in range(n):
        if i % 2 == 0:
            x = x * 2
        else:
            x = x - 1
    return x


# --------------------------------------------------------------------------
# Loops over tensors (first dimension)
# --------------------------------------------------------------------------


@case((vec(1, 2, 3, 4),), (vec(-1, 5),), ops={"While"})
def sum_elements(x):
    s = 0.0
    for v in x:
        s += v
    return s


@case((vec(1, 7, 3, 4),), (vec(-1, -5),), ops={"While"})
def running_max(x):
    m = x[0]
    for v in x:
        if v > m:
            m = v
    return m


@case((vec(1, -7, 3, 4),), (vec(-1, -5),), ops={"While"})
def count_positive(x):
    c = 0
    for v in x:
        if v > 0:
            c += 1
    return c


@case((vec(1, 2, 3),), ops={"While"})
def dot_self_loop(x):
    s = 0.0
    for v in x:
        s += v * v
    return s


@case((np.arange(6, dtype=np.float32).reshape(3, 2),), ops={"While"})
def sum_rows(m):
    total = m[0] * 0
    for row in m:
        total = total + row
    return total


@case((vec(3, 1, 4, 1, 5),), ops={"While"})
def index_of_max(x):
    best = 0
    i = 0
    top = x[0]
    for v in x:
        if v > top:
            top = v
            best = i
        i += 1
    return best


@case((vec(1, 2, 3, 4),), no_ops={"While"})
def index_loop_with_len(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * i
    return s


@case((vec(2, 4, 6, 7, 8),), (vec(1, 3),), ops={"While"})
def first_odd(x):
    result = -1.0
    for v in x:
        if v % 2 == 1:
            result = v
            break
    return result


# --------------------------------------------------------------------------
# Arrays: branches and loops with array-valued variables
# --------------------------------------------------------------------------


@case((vec(1, 2, 3),), (vec(-1, -2, -3),), ops={"If"})
def scale_if_positive_sum(x):
    if rt.reduce_sum(x) > 0:
        x = x * 2
    else:
        x = x - 1
    return x


@case((vec(8, 2, 3),), (vec(0.5, 0.1),), ops={"While"})
def halve_until_small(x):
    while rt.reduce_max(x) > 1:
        x = x / 2
    return x


@case((np.array([[0.5, 0.1], [0.2, 0.3]], np.float32), i32(3)), ops={"While"})
def matrix_power(m, n):
    r = m
    for _ in range(n - 1):
        r = r @ m
    return r


@case((vec(1, 2, 3), f32(2)), (vec(1, 2, 3), f32(-2)), ops={"If"})
def array_branch_on_scalar(x, s):
    if s > 0:
        y = x * s
    else:
        y = x / s
    return y


@case((vec(1, 2, 3),), (vec(3, 2, 1),), ops={"If"})
def compare_ends(x):
    if x[0] < x[2]:
        r = x[2] - x[0]
    else:
        r = x[0] - x[2]
    return r


@case((vec(1, 2, 3, 4),))
def elementwise_expression(x):
    return rt.exp(x) * 2 + rt.sqrt(rt.abs(x)) - x * x


@case((vec(1, 2, 3), vec(4, 5, 6)))
def dot_product(a, b):
    return rt.reduce_sum(a * b)


@case((np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)))
def matmul_plus_bias(a, b):
    return a @ b + 1.0


@case((vec(1, 2, 3, 4),), no_ops={"While"})
def cumulative_sum_loop(x):
    acc = x * 0
    total = 0.0
    i = 0
    while i < 4:
        total += x[i]
        i += 1
    return total + rt.reduce_sum(acc)


@case((vec(1, 2, 3),), (vec(-1, 2, 3),), ops={"If"})
def where_vs_if(x):
    y = rt.where(x > 0, x, -x)
    if rt.reduce_all(x > 0):
        y = y + 100
    return y


@case((vec(1, 2, 3, 4),))
def slicing(x):
    return x[1:3] * 2, x[::-1], x[-1]


@case((np.arange(12, dtype=np.int32).reshape(3, 4),))
def reductions(m):
    return rt.reduce_sum(m, axis=0), rt.reduce_max(m, axis=1), rt.reduce_mean(rt.cast(m, "float32"))


@case((vec(0.1, 0.2, 0.3),))
def trig_identity(x):
    return rt.sin(x) * rt.sin(x) + rt.cos(x) * rt.cos(x)


@case((vec(1, 5, 2),), (vec(7, 1, 1),), ops={"If"})
def argmax_branch(x):
    i = rt.argmax(x)
    if i == 0:
        r = x[0]
    else:
        r = -x[0]
    return r


@case((vec(4, 9, 16),), ops={"While"})
def iterate_sqrt(x):
    for _ in range(rt.constant(2)):
        x = rt.sqrt(x)
    return x


# --------------------------------------------------------------------------
# Python control flow on constants: unrolled / taken at trace time
# --------------------------------------------------------------------------


@case((f32(1.5),), no_ops={"While", "If"})
def python_loop_unrolled(x):
    for _ in range(3):
        x = x * 2
    return x


@case((f32(1.5), "double"), (f32(1.5), "square"), no_ops={"If"})
def python_mode_switch(x, mode):
    if mode == "double":
        y = x * 2
    else:
        y = x * x
    return y


@case((f32(1.5), 3), (f32(1.5), 0), no_ops={"While", "If"})
def python_int_argument_loop(x, n):
    i = 0
    while i < n:
        x = x + i
        i += 1
    return x


@case((vec(1, 2, 3),), no_ops={"While"})
def loop_over_python_list(x):
    total = x * 0
    for w in [1.0, 2.0, 3.0]:
        total = total + x * w
    return total


@case((f32(2), True), (f32(2), False), no_ops={"If"})
def python_bool_flag(x, flag):
    if flag:
        x = -x
    return x


@case((vec(1, 2, 3),), no_ops={"If", "While"})
def static_shape_branch(x):
    if x.shape[0] == 3:
        y = x * 3
    else:
        y = x
    return y


@case((f32(2),), no_ops={"If", "While"})
def python_helper_in_loop(x):
    coefficients = [1.0, -2.0, 0.5]
    y = 0.0
    for c in coefficients:
        y = y * x + c
    return y


# --------------------------------------------------------------------------
# Nested structures, helpers, nested ag.function calls
# --------------------------------------------------------------------------

Pair = collections.namedtuple("Pair", "left right")


def _helper_square(v):
    return v * v


def _helper_pick(a, b):
    if a > b:
        return a
    return b


@case((f32(3),), (f32(-3),))
def calls_helper(x):
    return _helper_square(x) + 1


@case((f32(3), f32(4)), (f32(5), f32(4)), ops={"If"})
def calls_helper_with_branch(a, b):
    return _helper_pick(a, b) * 2


@case(({"a": f32(1), "b": f32(2)},), ({"a": f32(5), "b": f32(2)},), ops={"If"})
def dict_argument(d):
    if d["a"] > d["b"]:
        r = d["a"]
    else:
        r = d["b"]
    return {"max": r, "sum": d["a"] + d["b"]}


@case((Pair(i32(3), i32(4)),), (Pair(i32(9), i32(4)),), ops={"If"})
def namedtuple_argument(p):
    if p.left < p.right:
        out = Pair(p.right, p.left)
    else:
        out = p
    return out


@case(((f32(1), f32(2), f32(3)),))
def tuple_argument(t):
    a, b, c = t
    return a + b * c


def _inner_body(x):
    if x > 0:
        x = x * 10
    return x


@functools.cache
def _inner_function():
    """An ag.function made on first use (so a broken ag.function fails tests, not collection)."""
    return ag.function(_inner_body)


@case((f32(2),), (f32(-2),), ops={"If"})
def calls_ag_function(x):
    return _inner_function()(x) + 1


@case((i32(5),), ops={"While"})
def return_tuple_from_loop(n):
    lo, hi = 0, 0
    for i in range(n):
        lo = lo - i
        hi = hi + i
    return lo, hi


@case((f32(3), i32(4)), (f32(-3), i32(2)), ops={"If", "While"})
def loop_then_branch(x, n):
    for _ in range(n):
        x = x + 1
    if x > 4:
        x = x * 2
    return x


@case((f32(3), i32(4)), (f32(-3), i32(2)), ops={"If", "While"})
def branch_then_loop(x, n):
    if x > 0:
        n = n + 1
    for _ in range(n):
        x = x * 1.5
    return x


@case((i32(7),), ops={"While", "If"})
def loop_in_branch(n):
    total = 0
    if n > 5:
        for i in range(n):
            total += i
    else:
        total = -1
    return total


# --------------------------------------------------------------------------
# Lists built in loops (staged lists), returned stacked
# --------------------------------------------------------------------------


@case((i32(5),), ops={"While"}, list_result=True)
def squares_list(n):
    out = []
    for i in range(n):
        out.append(i * i)
    return rt.stack(out)


@case((vec(1, 2, 3),), ops={"While"}, list_result=True)
def doubled_elements(x):
    out = []
    for v in x:
        out.append(v * 2)
    return rt.stack(out)


# --------------------------------------------------------------------------
# Numeric kernels of moderate size
# --------------------------------------------------------------------------


@case((vec(1, 2, 3, 4, 5),), ops={"While"})
def mean_and_variance(x):
    n = 0
    s = 0.0
    sq = 0.0
    for v in x:
        n += 1
        s += v
        sq += v * v
    mean = s / n
    return mean, sq / n - mean * mean


@case((f32(0.5),), no_ops={"While"})
def exp_taylor(x):
    term = 1.0
    total = 1.0
    k = 1
    while k < 12:
        term = term * x / k
        total += term
        k += 1
    return total


@case((f32(1.0), f32(0.1), i32(10)), ops={"While"})
def euler_decay(y, dt, steps):
    t = 0.0
    for _ in range(steps):
        y = y - dt * y
        t += dt
    return y, t


@case((i32(10),), ops={"While"})
def triangular_numbers_sum(n):
    total = 0
    tri = 0
    for i in range(1, n + 1):
        tri += i
        total += tri
    return total


@case((i32(30),), ops={"While"})
def count_primes(n):
    count = 0
    k = 2
    while k < n:
        d = 2
        prime = True
        while d * d <= k:
            if k % d == 0:
                prime = False
            d += 1
        if prime:
            count += 1
        k += 1
    return count


@case((i32(1000), i32(7)), ops={"While"})
def modular_power(base, exp):
    result = 1
    b = base % 13
    e = exp
    while e > 0:
        if e % 2 == 1:
            result = (result * b) % 13
        b = (b * b) % 13
        e = e // 2
    return result


@case((i32(10),), ops={"While"})
def reverse_digits(n):
    r = 0
    m = n * 123
    while m > 0:
        r = r * 10 + m % 10
        m = m // 10
    return r


@case((f32(10.0),), ops={"While"})
def log2_floor(x):
    k = 0
    while x >= 2:
        x = x / 2
        k += 1
    return k


@case((i32(3), i32(4)), ops={"While"})
def grid_walk(w, h):
    steps = 0
    x = 0
    y = 0
    while x < w or y < h:
        if x < w:
            x += 1
        else:
            y += 1
        steps += 1
    return steps


@case((f32(5.0),), (f32(-5.0),), ops={"If"})
def smooth_abs(x):
    if x > 1:
        y = x - 0.5
    elif x < -1:
        y = -x - 0.5
    else:
        y = 0.5 * x * x
    return y


@case((f32(0.3), f32(0.4)), (f32(3), f32(4)), ops={"If"})
def hypot_branch(a, b):
    h = rt.sqrt(a * a + b * b)
    if h > 1:
        h = h - 1
    return h


@case((vec(1, 2, 3), vec(1, 2, 4)), (vec(1, 2, 3), vec(1, 2, 3)), ops={"If"})
def arrays_equal(a, b):
    if rt.reduce_all(rt.equal(a, b)):
        r = 1
    else:
        r = 0
    return r


@case((vec(3, 4),), no_ops={"While"})
def normalize_loop(x):
    norm = rt.sqrt(rt.reduce_sum(x * x))
    i = 0
    while i < 3:
        x = x / norm
        norm = rt.sqrt(rt.reduce_sum(x * x))
        i += 1
    return x


@case((vec(1, 2, 3, 4, 5, 6),), ops={"While"})
def alternating_sum(x):
    s = 0.0
    sign_ = 1.0
    for v in x:
        s += sign_ * v
        sign_ = -sign_
    return s


@case((i32(6), i32(4)), ops={"While"})
def lcm(a, b):
    x, y = a, b
    while y != 0:
        x, y = y, x % y
    return a * b // x


@case((i32(37),), ops={"While"})
def binary_ones(n):
    ones = 0
    while n > 0:
        ones += n % 2
        n = n // 2
    return ones


@case((f32(3.0), f32(2.0)), (f32(1.0), f32(2.0)), ops={"If"})
def safe_divide(a, b):
    if b != 0 and a > b:
        r = a / b
    else:
        r = a
    return r


@case((i32(8),), ops={"While"})
def catalan(n):
    c = 1
    for i in range(n):
        c = c * 2 * (2 * i + 1) // (i + 2)
    return c


@case((f32(2.0),), ops={"While"})
def doubling_until_large(x):
    steps = 0
    while x < 1000:
        x = x * x
        steps += 1
    return x, steps


@case((i32(5), i32(7)), (i32(7), i32(5)), ops={"If"})
def min_max_pair(a, b):
    if a < b:
        lo, hi = a, b
    else:
        lo, hi = b, a
    return hi - lo, lo, hi


@case((vec(0.5, -0.5, 2.0),), ops={"While"})
def clamp_each(x):
    total = 0.0
    for v in x:
        if v > 1:
            v = 1.0
        elif v < 0:
            v = 0.0
        total += v
    return total


@case((i32(12),), ops={"While"})
def sum_of_divisors(n):
    s = 0
    d = 1
    while d <= n:
        if n % d == 0:
            s += d
        d += 1
    return s


@case((i32(5),), ops={"While"})
def pascal_row_sum(n):
    row_sum = 1
    for _ in range(n):
        row_sum = row_sum * 2
    return row_sum


@case((f32(0.25),), no_ops={"While"})
def continued_fraction(x):
    r = x
    for _ in range(5):
        r = 1.0 / (1.0 + r)
    return r


# --------------------------------------------------------------------------
# The harness
# --------------------------------------------------------------------------


def _all_op_types(graph):
    types = {op.type for op in graph.operations}
    for sub in graph.library.values():
        types |= {op.type for op in sub.operations}
    return types


def _flatten(value):
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _flatten(value[k])]
    if isinstance(value, (list, tuple)) and not isinstance(value, np.ndarray):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _assert_same(got, expected, where, list_result=False, check_dtypes=False):
    if list_result:
        got, expected = np.asarray(got), np.asarray(expected)
    got_leaves, expected_leaves = _flatten(got), _flatten(expected)
    assert len(got_leaves) == len(expected_leaves), f"{where}: structure {got!r} != {expected!r}"
    assert type(got) is type(expected) or isinstance(got, (np.ndarray, np.generic)), f"{where}: {got!r} vs {expected!r}"
    for g, e in zip(got_leaves, expected_leaves):
        assert isinstance(g, (np.ndarray, np.generic, int, float, bool)) or g is None, f"{where}: returned {g!r}"
        e_arr = np.asarray(e)
        g_arr = np.asarray(g)
        assert g_arr.shape == e_arr.shape, f"{where}: shape {g_arr.shape} != {e_arr.shape}"
        if check_dtypes and isinstance(e, (np.ndarray, np.generic)):
            assert g_arr.dtype == e_arr.dtype, f"{where}: dtype {g_arr.dtype} != {e_arr.dtype} ({g!r} vs {e!r})"
        if e_arr.dtype.kind == "f" or g_arr.dtype.kind == "f":
            np.testing.assert_allclose(
                g_arr.astype(np.float64), e_arr.astype(np.float64), rtol=2e-5, atol=1e-6, err_msg=where
            )
        else:
            np.testing.assert_array_equal(g_arr, e_arr, err_msg=where)


def test_corpus_is_large_enough():
    assert len(CASES) >= 100
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_traced_equals_python(c, mode):
    with warnings.catch_warnings():
        # Many calls with new Python scalars retrace on purpose; any other warning (a jit_compile
        # fallback to the interpreter, a function run unconverted) would hide what is under test.
        warnings.simplefilter("error", rt.AutoGraphWarning)
        warnings.simplefilter("ignore", RetracingWarning)
        traced = ag.function(c.fn, **MODES[mode])
        for args in c.calls:
            expected = c.fn(*args)
            got = traced(*args)
            _assert_same(got, expected, f"{c.name}{args!r} [{mode}]", c.list_result)


# (lists built from Python's range hold Python ints, where the graph's counter has the bound's dtype)
@pytest.mark.parametrize("c", [c for c in CASES if not c.list_result], ids=lambda c: c.name)
def test_result_dtypes_match(c):
    """Where the Python function returns numpy values, the graph returns the same dtypes (NEP 50)."""
    traced = ag.function(c.fn)
    for args in c.calls:
        _assert_same(traced(*args), c.fn(*args), f"{c.name}{args!r}", c.list_result, check_dtypes=True)


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_graph_has_functional_control_flow_where_data_dependent(c):
    traced = ag.function(c.fn)
    types = _all_op_types(traced.get_concrete_function(*c.calls[0]).graph)
    missing = c.ops - types
    unexpected = c.no_ops & types
    assert not missing, f"{c.name}: graph lacks {sorted(missing)} (ops: {sorted(types)})"
    assert not unexpected, f"{c.name}: graph should not hold {sorted(unexpected)}"
    assert traced.tracing_count == 1


SCALAR_CASES = [c for c in CASES if all(isinstance(a, np.generic) for a in c.calls[0])]


@pytest.mark.parametrize("c", SCALAR_CASES, ids=lambda c: c.name)
def test_python_scalars_give_same_values(c):
    """The original function on Python numbers agrees with the graph on numpy scalars."""
    traced = ag.function(c.fn)
    for args in c.calls:
        python_args = tuple(a.item() for a in args)
        expected = c.fn(*python_args)
        got = traced(*args)
        for g, e in zip(_flatten(got), _flatten(expected)):
            np.testing.assert_allclose(
                np.asarray(g, dtype=np.float64), np.asarray(e, dtype=np.float64), rtol=1e-4, atol=1e-4
            )
