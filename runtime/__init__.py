"""The tracing runtime: operators called by generated code, symbolic tensors,
the graph IR, the op library, the executor, the optimizer and tracing.

Imported as ``autograph.runtime`` (conventionally ``rt``).  It knows nothing
of ASTs or conversion.

    from autograph import runtime as rt
    rt.float32, rt.TensorSpec((None,), "float32"), rt.Graph, rt.Tensor
    rt.add(x, 1), rt.reduce_sum(x, axis=0), rt.matmul(a, b), ...

Outside a trace every op runs eagerly on numpy and returns numpy values.

Importing it runs its one install step (``_install`` below): the numpy
backend becomes the default backend and ``Tensor`` gets its operators.
Nothing else patches anything at import time.  ``dir(rt)`` lists the public
names (``__all__``); the internal packages (``core``, ``ops``, ``tracing``,
``exec``, ``backends``, ``optimizer``, ``operators``) stay importable by path;
``rt.data`` is the input pipelines' package (``rt.data.Dataset``).
"""

from autograph.runtime.errors import (
    AutoGraphError,
    AutoGraphWarning,
    ConversionError,
    ExecutionError,
    GraphDefError,
    ResourceLimitError,
    TracingError,
    TracingWarning,
    VerificationError,
)
from autograph.runtime.core.dtypes import (
    as_dtype,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from autograph.runtime.core.tensor import Tensor, TensorSpec, is_tensor
from autograph.runtime.core.graph import Graph, Operation, current_graph
from autograph.runtime import ops
from autograph.runtime.ops import *  # noqa: F403 - the op functions (ops.__all__)
from autograph.runtime.exec.interpreter import run_graph

bool = bool_  # noqa: A001 - rt.bool, as tf.bool

from autograph.runtime.tracing.functional_api import cond, while_loop
from autograph.runtime.ops.random_ops import random
from autograph.runtime.ops.variables import Variable
from autograph.runtime.ops.effects import py_function
from autograph.runtime.ops.effects import print  # noqa: A004 - rt.print, as tf.print
from autograph.runtime.autodiff import GradientTape  # noqa: E402 - also registers the gradient rules and ops/nn.py
from autograph.runtime.ops.array import transpose  # noqa: E402
from autograph.runtime.ops.nn import (  # noqa: E402 - the ops models need
    broadcast_to, clip_by_value, cumsum, expand_dims, log_softmax, one_hot, reduce_logsumexp, reduce_std,
    reduce_variance, sigmoid, softmax, squeeze, tile,
)

# Last: the attribute ``rt.function`` is the decorator, and it shadows the
# submodule of the same name; reach the module with
# ``from autograph.runtime.function import ...``.
from autograph.runtime.tracing.function import function


def _install() -> None:
    """The one install step: the numpy backend as the default, the ``Tensor`` operators and numpy methods."""
    from autograph.runtime.backends import numpy as numpy_backend
    from autograph.runtime.core import backend
    from autograph.runtime.ops import array_methods, tensor_operators

    backend.register(numpy_backend.BACKEND, default=True)
    tensor_operators.install()
    array_methods.install()
    from autograph.runtime import jax_overloads

    jax_overloads.install()  # a trace probe: JAX's handlers load once JAX is imported (JAX stays optional)


_install()

from autograph.runtime import data  # rt.data: input pipelines (after the install: they trace functions)

__all__ = [
    "AutoGraphError", "AutoGraphWarning", "ConversionError", "ExecutionError", "TracingError", "TracingWarning",
    "VerificationError",
    "as_dtype", "bool", "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "Graph", "Operation", "Tensor", "TensorSpec", "current_graph", "is_tensor", "run_graph",
    *ops.__all__,
    "cond", "while_loop", "random", "Variable", "py_function", "print", "function", "data", "GradientTape",
    "transpose", "broadcast_to", "clip_by_value", "cumsum", "expand_dims", "log_softmax", "one_hot",
    "reduce_logsumexp", "reduce_std", "reduce_variance", "sigmoid", "softmax", "squeeze", "tile",
]


def __dir__():
    return list(__all__)
