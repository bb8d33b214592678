"""``autograph check`` on what a trace decides once: AG111 (a type test or match on a tensor), AG112 (text
of a tensor), AG113 (an attribute assigned after the call): what they report, what they leave alone,
and that it is real.

The golden reports of ``fixtures/check/ag111_*.py`` ... are pinned by
``tests/test_check.py``; here: the behaviour the reports describe happens
when the fixtures run, and sources close to a finding that must stay silent.
"""

from __future__ import annotations

import importlib.util
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import autograph as ag
from autograph.check import check_source

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "check"
VECTOR = np.array([1.0, 2.0, 3.0], np.float32)


def _load(name):
    spec = importlib.util.spec_from_file_location(f"check_fixture_{name}", FIXTURES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def codes(source):
    return [(f.line, f.code) for f in check_source(textwrap.dedent(source), "m.py")]


HEADER = """
import numpy as np
import autograph as ag
from autograph import runtime as rt
"""


# -- the reports describe real behaviour ----------------------------------------------


def test_a_match_class_pattern_on_a_tensor_takes_another_branch_than_python():
    m = _load("ag111_type_introspection")
    assert m.describe.python_function(VECTOR) == 6.0  # Python: case np.ndarray()
    assert m.describe(VECTOR).tolist() == [2.0, 4.0, 6.0]  # the graph: case _, as AG111 says
    assert m.double_arrays(VECTOR).tolist() == [1.0, 2.0, 3.0]  # unconverted isinstance: False while tracing
    assert m.answered(VECTOR).tolist() == [2.0, 4.0, 6.0]  # converted isinstance: numpy's answer


def test_text_of_a_tensor_is_made_once_while_tracing():
    m = _load("ag112_tensor_text")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first = m.labelled(VECTOR)
    assert "Tensor" in first[1] and "1.0" not in first[1]
    assert sum(issubclass(w.category, ag.TracingWarning) and "use rt.print" in str(w.message) for w in seen) == 4


def test_an_attribute_assigned_after_the_call_is_not_seen_by_the_graph():
    m = _load("ag113_stale_attribute")
    first, second = m.run()
    assert (first, second) == (2.0, 2.0)  # plain Python gives (2.0, 5.0): the graph kept cfg.scale = 2.0


# -- AG111 ---------------------------------------------------------------------------------


def test_converted_isinstance_and_type_are_not_reported():
    assert codes(HEADER + """
@ag.function
def f(x):
    if isinstance(x, np.ndarray) or type(x) is np.float32:
        return x + 1
    return x
""") == []


def test_a_match_on_a_python_value_is_not_reported():
    assert codes(HEADER + """
@ag.function
def f(x, mode="a"):
    match mode:
        case str():
            return x + 1
    return x
""") == []


# -- AG112 ---------------------------------------------------------------------------------


def test_text_of_python_values_and_rt_print_are_not_reported():
    assert codes(HEADER + """
@ag.function
def f(x, name="w"):
    rt.print(f"weights {name}:", x + 1)
    label = "%s-%d" % (name, 3)
    return x + 1, "{}".format(name), str(name)
""") == []


def test_each_way_of_making_text_is_reported():
    found = codes(HEADER + """
@ag.function
def f(x):
    y = x + 1
    a = f"{y}"
    b = "%s" % y
    c = "{}".format(y)
    d = str(y)
    e = format(y)
    return y
""")
    assert found == [(9, "AG112"), (10, "AG112"), (11, "AG112"), (12, "AG112"), (13, "AG112")]


# -- AG113 ---------------------------------------------------------------------------------

TRACED = HEADER + """
class Cfg:
    scale = 1.0

@ag.function
def step(x, cfg):
    return x * cfg.scale
"""


def test_assigning_after_the_call_is_reported_once_per_assignment():
    found = codes(TRACED + """
def loop(x, cfg):
    for _ in range(3):
        x = step(x, cfg)
        cfg.scale = cfg.scale / 2
    return x
""")
    assert found == [(16, "AG113")]


def test_keyword_arguments_and_wrapped_functions():
    found = codes(HEADER + """
class Cfg:
    scale = 1.0

def raw(x, cfg):
    return x * cfg.scale

step = ag.function(raw)

def run(x):
    c = Cfg()
    y = step(x, cfg=c)
    c.scale = 3.0
    return y
""")
    assert found == [(17, "AG113")]


@pytest.mark.parametrize("caller", [
    # assigned before the call: the trace sees it
    "def run(x, cfg):\n    cfg.scale = 2.0\n    return step(x, cfg)\n",
    # an attribute the traced function does not read
    "def run(x, cfg):\n    y = step(x, cfg)\n    cfg.other = 2.0\n    return y\n",
    # the name now holds another object
    "def run(x, cfg, make):\n    y = step(x, cfg)\n    cfg = make()\n    cfg.scale = 2.0\n    return y\n",
    # star arguments: which parameter gets cfg is unsure
    "def run(x, cfg, args):\n    y = step(*args)\n    cfg.scale = 2.0\n    return y\n",
    # assigned in a function defined after the call, which may never run
    "def run(x, cfg):\n    y = step(x, cfg)\n    def later():\n        cfg.scale = 2.0\n    return y, later\n",
])
def test_unsure_cases_are_not_reported(caller):
    assert codes(TRACED + "\n" + caller) == []


def test_a_traced_function_that_rebinds_its_parameter_is_not_reported():
    assert codes(HEADER + """
@ag.function
def step(x, cfg):
    cfg = cfg.child
    return x * cfg.scale

def run(x, cfg):
    y = step(x, cfg)
    cfg.child = None
    return y
""") == []
