"""``x.shape`` in converted code: ``ag__.shape_of(x)``, the sizes Python would read.

A symbolic tensor's static shape holds ``None`` for a dimension that is not
known while tracing (relaxed by a tensor loop, left open by an input
signature), where Python reads the array's real size: ``y.shape[0] == 4``
would be a silent ``None == 4``.  ``shape_of`` gives the known dimensions as
Python ints and each unknown one as a weakly typed scalar int64 tensor of
its size when the graph runs (``rt.shape(y)[i]``; the convention of
``len(y)``, ``iterables.len_``), so comparisons, arithmetic, unpacking,
negative indices and ``range(y.shape[0])`` follow Python.  A fully known
shape is the tensor's own tuple (no op is added); a tensor of unknown rank
has no tuple to give, an ``ag.TracingError``.  Any other value (numpy and
JAX arrays, a user object, a staged list) gives ``value.shape`` itself.  The
numpy backend's handler is registered under ``"shape"`` in ``dispatch``.
"""

from __future__ import annotations

from autograph.runtime import ops
from autograph.runtime.core import dtypes
from autograph.runtime.core.location import quoted_user_line, user_location_text
from autograph.runtime.core.tensor import Tensor
from autograph.runtime.errors import TracingError
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.operators import dispatch
from autograph.runtime.operators.iterables import python_number


def shape_of(value):
    """``value.shape``, or the registered handler's answer for a value some backend stages."""
    handler = dispatch.handler_for("shape", value)
    if handler is None:
        return value.shape
    return handler(value)


def staged_shape(tensor):
    """The numpy backend's ``.shape`` of a symbolic tensor: ints where known, size tensors elsewhere."""
    shape = tensor.shape
    if shape is None:
        line = quoted_user_line()
        raise TracingError(
            f".shape of the tensor {tensor.name}, whose rank is unknown while tracing, at {user_location_text()}"
            f"{f' in {line}' if line else ''}: there is no tuple of its dimensions to give. Use rt.shape(x) (a "
            "1-D tensor of the sizes), or give the input a shape of known rank (input_signature)."
        )
    if None not in shape:
        return shape
    sizes = ops.shape(tensor, out_type="int64")
    return tuple(python_number(sizes[i], dtypes.int64) if d is None else d for i, d in enumerate(shape))


def _is_symbolic_tensor(value) -> bool:
    # a staged list stands for a Python list, which has no .shape: left as it was
    return isinstance(value, Tensor) and not isinstance(value, StagedList)


dispatch.register("shape", _is_symbolic_tensor, staged_shape, backend="numpy")


def array_attribute_store(value, owner, name):
    """``owner.shape = value`` (or ``.dtype``) in converted code: the value the assignment stores.

    On a numpy array the assignment changes the array in place (a reshape, or its bytes read as
    another dtype); a symbolic tensor is a value whose ``shape`` and ``dtype`` describe it, so the
    assignment is refused.  A staged list stands for a Python list, which has no such attribute."""
    if isinstance(owner, StagedList):
        raise AttributeError(f"'list' object has no attribute {name!r}")
    if isinstance(owner, Tensor):
        line = quoted_user_line()
        fix = ("write y = y.reshape(...) to give the name a reshaped value" if name == "shape" else
               "convert the values with y = y.astype(...) if that is what you mean")
        raise TracingError(
            f"assigning .{name} of the tensor {owner.name} at {user_location_text()}{f' in {line}' if line else ''} "
            f"changes a numpy array in place ({'a reshape' if name == 'shape' else 'its bytes read as another dtype'}), "
            f"which a tensor, a value, cannot do: {fix}."
        )
    return value
