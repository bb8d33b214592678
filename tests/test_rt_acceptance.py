"""Acceptance checks of the tracing runtime, as a new user meets it.

Each test exercises one promise of DESIGN.md end to end: the public op
names running eagerly, portable graphs loaded in a fresh process that never
imports the user's module, and the errors a user sees for bad input (each
naming the op or argument and the user's ``file:line``).
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import autograph as ag
from autograph import runtime as rt
from autograph.runtime.core import dtypes

HERE = os.path.abspath(__file__)

X = np.array([1.0, 2.0, 3.0], np.float32)
B = X > 1.5

# DESIGN.md's list of runtime ops, each with one eager call.
EAGER_CALLS = {
    "constant": lambda: rt.constant(X),
    "range": lambda: rt.range(5),
    "zeros": lambda: rt.zeros((2, 3)),
    "ones": lambda: rt.ones((2,), "int32"),
    "cast": lambda: rt.cast(X, "int32"),
    "reshape": lambda: rt.reshape(X, (3, 1)),
    "shape": lambda: rt.shape(X),
    "size": lambda: rt.size(X),
    "stack": lambda: rt.stack([X, X]),
    "concat": lambda: rt.concat([X, X], 0),
    "where": lambda: rt.where(B, X, -X),
    "matmul": lambda: rt.matmul(X[None, :], X[:, None]),
    "reduce_sum": lambda: rt.reduce_sum(X),
    "reduce_mean": lambda: rt.reduce_mean(X),
    "reduce_max": lambda: rt.reduce_max(X),
    "reduce_min": lambda: rt.reduce_min(X),
    "reduce_prod": lambda: rt.reduce_prod(X),
    "reduce_any": lambda: rt.reduce_any(B),
    "reduce_all": lambda: rt.reduce_all(B),
    "sqrt": lambda: rt.sqrt(X),
    "exp": lambda: rt.exp(X),
    "log": lambda: rt.log(X),
    "sin": lambda: rt.sin(X),
    "cos": lambda: rt.cos(X),
    "tanh": lambda: rt.tanh(X),
    "abs": lambda: rt.abs(-X),
    "square": lambda: rt.square(X),
    "maximum": lambda: rt.maximum(X, 2.0),
    "minimum": lambda: rt.minimum(X, 2.0),
    "greater": lambda: rt.greater(X, 2.0),
    "less": lambda: rt.less(X, 2.0),
    "equal": lambda: rt.equal(X, 2.0),
    "not_equal": lambda: rt.not_equal(X, 2.0),
    "logical_and": lambda: rt.logical_and(B, ~B),
    "logical_or": lambda: rt.logical_or(B, ~B),
    "logical_not": lambda: rt.logical_not(B),
    "argmax": lambda: rt.argmax(X),
    "gather": lambda: rt.gather(X, np.array([2, 0])),
    "py_function": lambda: rt.py_function(lambda a: a * 2, [X], "float32"),
    "random.uniform": lambda: rt.random.uniform((2,), seed=1),
    "random.normal": lambda: rt.random.normal((2,), seed=1),
}


@pytest.mark.parametrize("name", sorted(EAGER_CALLS))
def test_every_design_op_runs_eagerly_and_returns_numpy(name):
    result = EAGER_CALLS[name]()
    assert isinstance(result, (np.ndarray, np.generic)), (name, type(result))
    assert result.dtype in dtypes.SUPPORTED, (name, result.dtype)


def test_the_remaining_design_names_exist():
    for name in ("print", "cond", "while_loop", "Variable", "Tensor", "TensorSpec", "Graph", "function"):
        assert callable(getattr(rt, name)), name
    assert rt.cond(np.bool_(False), lambda: X, lambda: -X)[0] == -1.0
    assert rt.while_loop(lambda i: i < 10, lambda i: i + 1, [np.int32(0)]) == [10]
    v = rt.Variable(np.float32(1.0))
    v.assign_add(np.float32(2.0))
    assert v.numpy() == np.float32(3.0) and v.read_value() == np.float32(3.0)


def test_eager_cond_and_while_loop_return_numpy_values():
    taken = rt.cond(True, lambda: (1.5, "tag"), lambda: (2.5, "other"))
    assert taken == (np.float64(1.5), "tag") and isinstance(taken[0], np.float64)
    final = rt.while_loop(lambda i, d: i < 3, lambda i, d: (i + 1, {"k": d["k"] * 2.0}), [0, {"k": 1.0}])
    assert final == [3, {"k": 8.0}]
    assert isinstance(final[0], np.int64) and isinstance(final[1]["k"], np.float64)
    capped = rt.while_loop(lambda i: i < 10, lambda i: (i + 1,), (0,), maximum_iterations=3)
    assert capped == (3,) and isinstance(capped[0], np.integer)


def test_tensor_names_count_per_op_type():
    graph = rt.Graph("g")
    with graph.as_default():
        x = graph.add_placeholder(np.dtype("float32"), (3,), name="x")
        added = [x + 1 for _ in range(4)]
    assert [t.name for t in added] == ["add:0", "add_1:0", "add_2:0", "add_3:0"]
    last = added[-1]
    assert (last.dtype, last.shape, last.op.type, last.graph) == (np.float32, (3,), "Add", graph)


# -- Python constructs on symbolic tensors ------------------------------------


def _truthy(x):
    if x > 0:  # unconverted: bool() of a tensor
        return x
    return -x


def _iterate(x):
    return [v for v in x]


def _length(x):
    return len(x)


@pytest.mark.parametrize(
    "fn, construct",
    [(_truthy, "as a Python bool"), (_iterate, "iterating over a symbolic tensor"), (_length, "len\\(\\)")],
)
def test_python_constructs_on_tensors_name_the_use_site(fn, construct):
    line = fn.__code__.co_firstlineno + 1
    with pytest.raises(ag.TracingError, match=construct + f".* at {HERE}:{line} .*(Convert|convert)"):
        rt.function(fn)(X)


# -- portable graphs -----------------------------------------------------------

USER_MODULE = '''
import autograph as ag
from autograph import runtime as rt


def model(x, n):
    total = 0.0
    history = []
    for i in range(n):
        if x[i % 3] > 1.5:
            total = total + x[i % 3]
        else:
            total = total - 1.0
        history.append(total)
    return total, rt.stack(history)
'''

LOADER = '''
import json, sys
import numpy as np
from autograph import runtime as rt

graph = rt.Graph.from_graph_def(json.load(open(sys.argv[1])))
graph.verify()
values = rt.run_graph(graph, [np.array([1.0, 2.0, 3.0], np.float32), np.int32(5)])
assert "usermodel" not in sys.modules
print(json.dumps([np.asarray(v).tolist() for v in values]))
'''


@pytest.mark.parametrize("optimized", [False, True])
def test_saved_graph_runs_in_a_process_without_the_source(tmp_path, monkeypatch, optimized):
    (tmp_path / "usermodel.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import usermodel

    try:
        traced = ag.function(usermodel.model)
        expected = traced(X, np.int32(5))
        cf = traced.get_concrete_function(X, np.int32(5))
    finally:
        sys.modules.pop("usermodel", None)
    graph = cf.execution_graph if optimized else cf.graph
    assert {"If", "While"} <= {op.type for g in [graph, *graph.library.values()] for op in g.operations}
    saved = tmp_path / "graph.json"
    saved.write_text(json.dumps(graph.as_graph_def()))
    (tmp_path / "usermodel.py").unlink()  # the source is gone
    loader = tmp_path / "loader.py"
    loader.write_text(LOADER)
    done = subprocess.run(
        [sys.executable, str(loader), str(saved)], capture_output=True, text=True, timeout=120, cwd=str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    total, history = json.loads(done.stdout)
    assert np.float32(total) == expected[0]
    np.testing.assert_array_equal(np.asarray(history, np.float32), expected[1])


# -- bad input -----------------------------------------------------------------


def test_eager_op_failures_name_the_op_and_the_line():
    line = sys._getframe().f_lineno + 2
    with pytest.raises(ValueError, match=f"^Add at {HERE}:{line}: .*broadcast"):
        rt.add(np.ones((2, 3)), np.ones((4,)))
    line = sys._getframe().f_lineno + 2
    with pytest.raises(IndexError, match=f"^GatherV2 at {HERE}:{line}: index 5"):
        rt.gather(X, 5)


def test_unsupported_dtypes_name_the_line():
    line = sys._getframe().f_lineno + 2
    with pytest.raises(TypeError, match=f"unsupported dtype 'complex64' at {HERE}:{line}"):
        rt.zeros((2,), "complex64")
    line = sys._getframe().f_lineno + 2
    with pytest.raises(TypeError, match=f"at {HERE}:{line} has dtype <U1, which the runtime does not support"):
        rt.add(np.array(["a"]), 1)
    with pytest.raises(TypeError, match=f"^Add at {HERE}:.*unsupported dtype"):
        rt.add(np.array(["a"]), np.ones(1))


def test_traced_unsupported_operand_names_op_and_line():
    def f(x):
        return x + np.array([1j])

    with pytest.raises(TypeError, match=f"^Add at {HERE}:{f.__code__.co_firstlineno + 1}: .*complex128"):
        rt.function(f)(X)


def test_trace_time_shape_mismatch_names_op_and_line():
    def f(a, b):
        return a @ b

    with pytest.raises(ValueError, match=f"^MatMul at {HERE}:{f.__code__.co_firstlineno + 1}: matmul"):
        rt.function(f)(np.ones((2, 3)), np.ones((2, 3)))


def test_wrong_number_of_arguments_names_the_function():
    @rt.function
    def scale(x, k):
        return x * k

    with pytest.raises(TypeError, match=r"function 'scale' \(defined at .*\): cannot call scale\(x, k\).*"
                                        r"too many positional arguments \(called at " + HERE):
        scale(X, 1, 2)


def test_non_numeric_argument_names_the_argument():
    @rt.function
    def f(x):
        return x

    with pytest.raises(TypeError, match=r"argument 'x\[1\]' = bytearray.*neither hashable nor weakly referenceable"):
        f([X, bytearray(b"a")])
    with pytest.raises(TypeError, match=r"argument 'x' = array\(\['a'\].*does not support"):
        f(np.array(["a"]))


def test_execution_failure_names_op_printed_form_and_line():
    def f(x, i):
        return rt.gather(x, i)

    line = f.__code__.co_firstlineno + 1
    with pytest.raises(rt.ExecutionError) as info:
        rt.function(f)(X, np.int32(7))
    message = str(info.value)
    assert f"GatherV2 op 'gather' created at {HERE}:{line}" in message
    assert "= GatherV2(%x:0, %i:0)" in message


# -- results -------------------------------------------------------------------


def test_concrete_function_structured_outputs_and_packing():
    @rt.function
    def f(x):
        return {"a": x + 1, "b": (x, [2 * x]), "c": "label"}

    out = f(X)
    assert out["c"] == "label" and out["b"][1][0].dtype == np.float32
    np.testing.assert_array_equal(out["a"], X + 1)
    structure = f.get_concrete_function(X).structured_outputs
    assert isinstance(structure["a"], rt.Tensor) and structure["c"] == "label"
    assert isinstance(f(np.float32(2.0))["a"], np.float32)  # 0-d results are numpy scalars


def test_eager_py_function_keeps_the_users_own_exception():
    class Mine(ValueError):
        pass

    def boom(a):
        raise Mine("from the user")

    with pytest.raises(Mine, match="^from the user$"):
        rt.py_function(boom, [np.float32(1.0)], "float32")
