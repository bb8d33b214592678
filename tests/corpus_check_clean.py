"""Functions that follow the tracing rules: ``autograph check`` must report none of them.

Never imported by the tests: it is only parsed (tests/test_check.py).
"""

import logging
import math

import numpy as np

import autograph as ag
from autograph import runtime as rt

LOG = logging.getLogger("corpus")
RATE = 0.5
LAYERS = (1.0, 2.0, 3.0)
STEP = rt.Variable(0)
logging.info("module level logging is not traced")
np.random.seed(0)


@ag.function
def rt_math(x):
    return rt.tanh(x) + rt.exp(-x) + rt.sqrt(rt.abs(x))


@ag.function
def numpy_constants(x):
    return x * np.float32(math.pi) + np.zeros(3, np.float32)


@ag.function
def shape_arithmetic(x):
    size = np.prod(x.shape) * math.log(2.0)
    return x / size


@ag.function
def rt_random(x):
    return x + rt.random.uniform((), 0.0, 1.0) + rt.random.normal(())


@ag.function
def staged_print(x):
    print("x =", x)
    rt.print("twice", x * 2)
    return x


@ag.function
def local_list(x):
    parts = []
    for i in range(len(x)):
        parts.append(x[i] * 2)
    return parts


@ag.function
def local_dict(x):
    state = {"a": x}
    state["b"] = x + 1
    return state["a"] + state["b"]


@ag.function
def global_variable(x):
    STEP.assign_add(1)
    return x + RATE


class Dense:
    def __init__(self, units):
        self.units = units
        self.w = None

    @ag.function
    def __call__(self, x):
        if self.w is None:
            self.w = rt.Variable(np.ones((3, 3), np.float32))
        return rt.matmul(x, self.w)


class Cached:
    @ag.function
    def __call__(self, x):
        if not hasattr(self, "scale"):
            self.scale = rt.Variable(2.0)
        return x * self.scale


@ag.function
def tensor_while(x):
    i = 0
    while i < x:
        i += 1
    return i


@ag.function
def tensor_if(x):
    if x > 0:
        y = x
    else:
        y = -x
    return y


@ag.function
def len_loop(x):
    total = 0.0
    for i in range(len(x)):
        total += x[i]
    return total


@ag.function
def rt_range_loop(x):
    total = 0.0
    for i in rt.range(rt.shape(x)[0]):
        total += x[i]
    return total


@ag.function
def dynamic_shape_test(x):
    if rt.shape(x)[0] > 0:
        x = x + 1
    return x


@ag.function
def iterate_tensor(x):
    total = 0.0
    for row in x:
        total += rt.reduce_sum(row)
    return total


@ag.function
def mode_switch(x, training=False):
    if training:
        return x * RATE
    return x


@ag.function
def string_arg(x, mode="sum"):
    if mode == "sum":
        return rt.reduce_sum(x)
    return rt.reduce_mean(x)


@ag.function
def fixed_unroll(x):
    for scale in LAYERS:
        x = x * scale
    for _ in range(2):
        x = x + 1
    return x


@ag.function
def tensor_bound(x, n):
    for i in range(n):
        x = x + i
    return x


@ag.function
def py_function_numpy(x):
    return rt.py_function(lambda v: np.sort(v), [x], "float32")


def inner_helper(x, k):
    return x * k


@ag.function
def calls_helper(x):
    return inner_helper(x, 2.0) + inner_helper(x, x)


@ag.do_not_convert
def python_helper(values, scale):
    if scale > 1:
        return [v * scale for v in values]
    return values


@ag.function
def calls_python_helper(x):
    parts = python_helper([x, x + 1], 2)
    return parts[0] + parts[1]


@ag.function
def unpack_tuple(x):
    a, b = x, x + 1
    n, m = 1, 2
    return a * n + b * m


@ag.function
def cond_and_while_loop(x):
    y = rt.cond(x > 0, lambda: x, lambda: -x)
    i, s = rt.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + x), (0, y))
    return s


@ag.function
def where_and_reduce(x):
    return rt.reduce_max(rt.where(x > 0, x, rt.zeros_like(x)))


@ag.function
def float_and_int(x):
    return float(x) + int(x) + abs(x)


@ag.function
def logical_ops(x):
    if x > 0 and x < 5 or not x > 10:
        x = x + 1
    return x


@ag.function
def nested_closure(x):
    total = x

    def add(v):
        nonlocal total
        total = total + v

    add(1.0)
    add(2.0)
    return total


@ag.function
def ignore_pragma(x):
    print("tracing once, on purpose")  # autograph: ignore[AG103]
    return x


@ag.function
def local_import(x):
    from autograph import runtime as r
    return r.exp(x)


def not_traced(x):
    print("plain Python", np.exp(x))
    TRACE_ME = []
    TRACE_ME.append(np.random.rand())
    return x


@ag.function
def comprehension_over_list(x):
    return rt.stack([x * k for k in (1.0, 2.0)])


@ag.function
def max_of_vector(x):
    return max(x * 1), min(x[0], x[1]), bool(x[0] > 0)


@ag.function
def converted_introspection(x):
    if isinstance(x, np.ndarray) and type(x[0]) is np.float32:
        return x * 2
    return x


@ag.function
def reads_rate_once(x, settings):
    return x * settings.rate


def fresh_settings_each_call(x, make):
    settings = make()
    y = reads_rate_once(x, settings)
    settings = make()
    settings.rate = 0.3  # another object: not reported
    return y


@ag.function
def staged_comprehension_and_sum(x):
    squares = [v * v for v in x * 1]
    return sum(x * 2), any(x > 0), sum(v for v in x * 1), squares
