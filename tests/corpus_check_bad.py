"""Functions that break the tracing rules, for ``autograph check`` (tests/test_check.py).

Never imported by the tests: it is only parsed.  ``EXPECTED`` names the
codes each function must get, no more and no fewer.
"""

import logging
import math
import random
import time
import warnings

import numpy as np

import autograph
import autograph as ag
from autograph import function
from autograph import runtime as rt

LOG = logging.getLogger("corpus")
TRACE = []
CACHE = {}
TOTAL = 0


@ag.function
def np_tanh(x):
    return np.tanh(x) + 1


@ag.function
def np_mean_of_sum(x, y):
    return np.mean(x + y)


@autograph.function
def math_exp(x):
    return math.exp(x * 2.0)


@ag.function(input_signature=[rt.TensorSpec((None,), "float32")])
def np_matmul(x):
    return np.dot(x, x)


@function
def np_cast(x):
    return np.float32(x) + 1


@ag.function
def np_random_normal(x):
    return x + np.random.normal(size=3)


@ag.function
def np_random_seed(x):
    np.random.seed(0)
    return x


@ag.function
def py_random_choice(x):
    return x * random.choice([1.0, 2.0])


@ag.function
def clock(x):
    start = time.perf_counter()
    return x + start


@ag.function
def prints_constant(x):
    print("compiling")
    return x * 2


@ag.function
def logs_module(x):
    LOG.debug("called")
    return x


@ag.function
def warns(x):
    warnings.warn("slow path")
    return x


@ag.function
def prints_shape(x):
    print("shape", x.shape)
    return x


@ag.function
def appends_global(x):
    TRACE.append(x)
    return x


@ag.function
def caches_global(x):
    CACHE["last"] = x
    return x


class Tracker:
    def __init__(self):
        self.history = []
        self.steps = 0

    @ag.function
    def record(self, x):
        self.history.append(x)
        return x

    @ag.function
    def step(self, x):
        self.steps += 1
        return x


@ag.function
def global_counter(x):
    global TOTAL
    TOTAL = TOTAL + 1
    return x


def make_nonlocal_counter():
    hits = 0

    @ag.function
    def hit(x):
        nonlocal hits
        hits += 1
        return x

    return hit


@ag.function
def new_variable(x):
    acc = rt.Variable(np.zeros(3, np.float32))
    acc.assign_add(x)
    return acc.read_value()


class Unguarded:
    @ag.function
    def __call__(self, x):
        self.v = rt.Variable(1.0)
        return self.v * x


@ag.function
def loop_python_arg(x, layers=5):
    for _ in range(layers):
        x = rt.tanh(x)
    return x


@ag.function
def while_python_arg(x, limit=10):
    k = 0
    while k < limit:
        x = x * 0.5
        k = k + 1
    return x


def stack_layers(x, count):
    for _ in range(1, count + 1):
        x = x + 1
    return x


@ag.function
def calls_stack_layers(x):
    return stack_layers(x, 4)


@ag.function
def loop_shape_dim(x):
    acc = rt.zeros(())
    for i in range(x.shape[0]):
        acc = acc + x[i]
    return acc


@ag.function
def loop_shape_last(x):
    out = x
    for j in range(0, x.shape[-1], 2):
        out = out + 1
    return out


@ag.function
def if_static_shape(x):
    if x.shape[0] > 2:
        x = x[:2]
    return x


@ag.function
def ternary_static_shape(x):
    return x * 2 if x.shape[0] == 3 else x


@ag.do_not_convert
def dnc_if(x):
    if x > 0:
        return x
    return -x


@ag.function
def calls_dnc_if(x):
    return dnc_if(x + 1)


@ag.do_not_convert
def dnc_while(x):
    while x > 1:
        x = x / 2
    return x


@ag.function(autograph=False)
def unconverted_and(x):
    return (x > 0) and (x < 5)


@rt.function
def unconverted_len(x):
    return rt.zeros(()) + len(x * 1)


@ag.function
def sorted_builtin(x):
    return sorted(x * 1)


@ag.function
def match_class_pattern(x):
    match x:
        case np.ndarray():
            return x
    return x * 2


@ag.do_not_convert
def unconverted_isinstance(x):
    return x * 2 if type(x) is np.float32 else x


@ag.function
def calls_unconverted_isinstance(x):
    return unconverted_isinstance(x + 1)


@ag.function
def fstring_tensor(x):
    return x, f"{x + 1:}"


@ag.function
def percent_tensor(x):
    return x, "%s" % (x + 1)


class Settings:
    rate = 0.1


@ag.function
def reads_rate(x, settings):
    return x * settings.rate


def stale_caller(x):
    settings = Settings()
    y = reads_rate(x, settings)
    settings.rate = 0.2
    return y


@ag.function
def unpack_tensor(x):
    a, b = x + 0
    return a + b


def wrapped_later(x):
    return np.abs(x - 1)


wrapped = ag.function(wrapped_later)


EXPECTED = {
    "np_tanh": {"AG101"},
    "np_mean_of_sum": {"AG101"},
    "math_exp": {"AG101"},
    "np_matmul": {"AG101"},
    "np_cast": {"AG101"},
    "np_random_normal": {"AG102"},
    "np_random_seed": {"AG102"},
    "py_random_choice": {"AG102"},
    "clock": {"AG102"},
    "prints_constant": {"AG103"},
    "logs_module": {"AG103"},
    "warns": {"AG103"},
    "prints_shape": {"AG103"},
    "appends_global": {"AG104"},
    "caches_global": {"AG104"},
    "Tracker.record": {"AG104"},
    "Tracker.step": {"AG104"},
    "global_counter": {"AG105"},
    "make_nonlocal_counter.hit": {"AG105"},
    "new_variable": {"AG106"},
    "Unguarded.__call__": {"AG104", "AG106"},
    "loop_python_arg": {"AG107"},
    "while_python_arg": {"AG107"},
    "stack_layers": {"AG107"},
    "loop_shape_dim": {"AG108"},
    "loop_shape_last": {"AG108"},
    "if_static_shape": {"AG109"},
    "ternary_static_shape": {"AG109"},
    "dnc_if": {"AG110"},
    "dnc_while": {"AG110"},
    "unconverted_and": {"AG110"},
    "unconverted_len": {"AG110"},
    "sorted_builtin": {"AG110"},
    "match_class_pattern": {"AG111"},
    "unconverted_isinstance": {"AG111"},
    "fstring_tensor": {"AG112"},
    "percent_tensor": {"AG112"},
    "stale_caller": {"AG113"},
    "unpack_tensor": {"AG110"},
    "wrapped_later": {"AG101"},
}
