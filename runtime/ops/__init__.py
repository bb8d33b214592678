"""The op library: every ``rt.*`` op, grouped by family.

* ``basic``: ``Placeholder``, ``Const``, ``Identity``, ``Cast``;
* ``math``: elementwise arithmetic, comparison and logic, ``MatMul``;
* ``reduction``: ``Sum`` ... ``All``, ``ArgMax``, ``ArgMin``;
* ``array``: ``Reshape``, ``Shape``, ``Size``, ``Pack``, ``ConcatV2``,
  ``Select``, ``Range``, ``Fill``, ``ZerosLike``/``OnesLike``, ``GatherV2``,
  ``ListAppend`` (the append of a staged list, ``tracing/staged_list.py``);
* ``indexing``: ``StridedSlice`` and ``t[...]``.

Importing this package registers every op type (the families above, and
``functional_control_flow``: ``If``/``While``/``Assert``; ``variables``: variables;
``effects``: ``print``, ``py_function``; ``random_ops``).  Each function runs eagerly on
the default backend when no graph is being traced and adds an op otherwise
(``apply.apply_op``).  ``rt.cond``/``rt.while_loop`` are tracing's
(``tracing/functional_api.py``).

The op types of ``variables``, ``effects`` and ``random_ops`` are registered
``stateful=True``, so while tracing the graph chains them through automatic
control dependencies (``graph.last_stateful``): their side effects happen in
program order at every execution of the graph, and the executor and the
optimizer never drop them even when their results are unused.
"""

from autograph.runtime.ops.array import (
    concat,
    fill,
    gather,
    ones,
    ones_like,
    reshape,
    shape,
    size,
    stack,
    where,
    zeros,
    zeros_like,
)
from autograph.runtime.ops.array import tensor_range as range  # noqa: A001 - rt.range, as tf.range
from autograph.runtime.ops.basic import cast, constant, identity
from autograph.runtime.ops.indexing import getitem
from autograph.runtime.ops.math import (
    abs,  # noqa: A004
    add,
    cos,
    divide,
    equal,
    exp,
    floordiv,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    matmul,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,  # noqa: A004
    sin,
    sqrt,
    square,
    subtract,
    tanh,
)
from autograph.runtime.ops.reduction import (
    argmax,
    argmin,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from autograph.runtime.ops import effects, functional_control_flow, random_ops, variables  # noqa: F401 - register their op types

# The op functions ``autograph.runtime`` exports (``rt.add``, ...); ``getitem`` is ``t[...]``'s.
__all__ = [
    "abs", "add", "argmax", "argmin", "cast", "concat", "constant", "cos", "divide", "equal", "exp", "fill",
    "floordiv", "gather", "greater", "greater_equal", "identity", "less", "less_equal", "log",
    "logical_and", "logical_not", "logical_or", "logical_xor", "matmul", "maximum", "minimum", "mod",
    "multiply", "negative", "not_equal", "ones", "ones_like", "pow", "range", "reduce_all", "reduce_any",
    "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "reshape", "shape", "sin",
    "size", "sqrt", "square", "stack", "subtract", "tanh", "where", "zeros", "zeros_like",
]
