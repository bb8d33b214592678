"""Indexing a tensor: ``t[i]``, ``t[1:-1, ::2]``, ``t[..., None]``, ``t[idx]``.

Basic indexing becomes one ``StridedSlice`` op whose ``spec`` attribute
spells the index, one item per entry of the key::

    ("index", i)                   an integer: removes the dimension
    ("slice", start, stop, step)   a slice (None for omitted parts)
    ("newaxis",)                   None / np.newaxis: inserts a dimension of 1
    ("ellipsis",)                  ...: as many full slices as needed

Any integer in the spec may instead be the string ``"$k"``: the value of the
op's input ``k`` (a scalar int tensor), so ``t[i]`` with a tensor ``i`` and
``t[:n]`` work while tracing.  A non-scalar integer index (a tensor, list or
array) selects along its dimension with ``GatherV2``, as numpy's integer
array indexing does for a single index array.  Static shapes follow numpy;
a constant index out of range for a known dimension is an ``IndexError``
at trace time.

``x[key] = v`` and ``x[key] += v`` on a tensor (``setitem``) are one
``SetItem`` op: a new tensor, ``x`` with the item updated, computed by the
very Python statement on a copy of ``x``'s value when the graph runs.  So
numpy decides everything as it does for the user's array: bounds
(``IndexError``), broadcasting ``v`` into the item (``ValueError``), the
cast into ``x``'s dtype (``x[i] = 2.7`` into an int array stores 2), Python
numbers that do not fit (``OverflowError``: the op knows a Python value came
in, ``python_value``), and the casting rule of in-place operators on slices.
Its ``key`` attribute spells the index like a spec, plus ``("array", "$k")``
for an index array or mask (input ``k``); a failure names the statement and
the user's ``file:line``.
"""

from __future__ import annotations

import io
import linecache
import tokenize

import numpy as np

from autograph.runtime.core import dtypes, opdef, shapes

from autograph.runtime.ops import apply
from autograph.runtime.ops.list_operators import StagedList, joined_numbers, python_numbers
from autograph.runtime.ops.array import gather, reshape, tensor_range
from autograph.runtime.ops.array import shape as array_shape
from autograph.runtime.core.location import user_frame, user_location_text
from autograph.runtime.core.tensor import Tensor, is_python_number
from autograph.runtime.errors import TracingError

_FULL = ("slice", None, None, None)


def sliced_shape(shape, spec):
    """Static shape of ``x[spec]`` for ``x`` of ``shape``; IndexError/ValueError when it is invalid."""
    consuming = sum(1 for item in spec if item[0] in ("index", "slice"))
    if shape is None:
        return None
    rank = len(shape)
    if consuming > rank:
        raise IndexError(f"too many indices ({consuming}) for a tensor of rank {rank}")
    out = []
    dim = 0
    for item in spec:
        kind = item[0]
        if kind == "newaxis":
            out.append(1)
        elif kind == "ellipsis":
            n = rank - consuming
            out.extend(shape[dim : dim + n])
            dim += n
        elif kind == "index":
            size, index = shape[dim], item[1]
            if isinstance(index, int) and size is not None and not -size <= index < size:
                raise IndexError(f"index {index} is out of bounds for axis {dim} with size {size}")
            dim += 1
        else:
            size = shape[dim]
            start, stop, step = item[1:]
            if step == 0:
                raise ValueError("slice step cannot be zero")
            static = not any(isinstance(v, str) for v in (start, stop, step))
            out.append(len(range(*slice(start, stop, step).indices(size))) if static and size is not None else None)
            dim += 1
    out.extend(shape[dim:])
    return tuple(out)


def _strided_slice_infer(inputs, attrs):
    x, *dynamic = inputs
    for t in dynamic:
        if not dtypes.is_integer(t.dtype) or (t.shape is not None and t.shape != ()):
            raise TypeError(
                f"a tensor used in an index must be an integer scalar, got {t.name} "
                f"{t.dtype.name}{shapes.format_shape(t.shape)}"
            )
    return [(x.dtype, sliced_shape(x.shape, attrs["spec"]))]


opdef.register("StridedSlice", infer=_strided_slice_infer, weak=opdef.weak_if_first_input_weak, inputs=(1, None),
               attrs={"spec": "spec"})


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _refuse_index(v, what, list_label=None):
    """The error numpy gives for ``v`` (a tensor or a Python/numpy value) as ``what``: a float (or
    other non-integer) index, ``IndexError``; a float slice bound, ``TypeError``; or a refusal (a bool
    scalar index, which numpy takes as a mask).  An index of a staged list (``list_label``) is
    Python's ``TypeError``, as for the list it stands for."""
    where = user_location_text()
    if isinstance(v, Tensor):
        got, dtype, shape = f"the {v.dtype.name}{shapes.format_shape(v.shape)} tensor {v.name}", v.dtype, v.shape
    else:
        dtype = v.dtype if isinstance(v, (np.ndarray, np.generic)) else np.dtype(bool) if isinstance(v, bool) else None
        got, shape = f"the {type(v).__name__} {v!r}", np.shape(v) if dtype is not None else ()
    if list_label is not None and what == "an index":
        kind = type(v).__name__ if not isinstance(v, Tensor) else f"a {v.dtype.name} tensor"
        raise TypeError(f"an index at {where} is {got}, into {list_label}: list indices must be integers "
                        f"or slices, not {kind}; convert it with int(...) first")
    if dtype is not None and dtype.kind == "b" and shape == () and what == "an index":
        raise TracingError(
            f"{what} at {where} is {got}: numpy takes a bool scalar index as a mask (a new axis of one "
            "item, or none), which autograph does not stage. Index with an integer, or use rt.where."
        )
    if what == "an index" and shape == ():
        valid = ("arrays used as indices must be of integer (or boolean) type" if isinstance(v, np.ndarray) else
                 "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                 "boolean arrays are valid indices")
        raise IndexError(f"{what} at {where} is {got}: {valid}; convert it with int(...) first")
    if not isinstance(v, Tensor):
        raise TypeError(f"{what} at {where} is {got}: slice indices must be integers or None or have an "
                        "__index__ method; convert it with int(...) first")
    raise TypeError(f"{what} at {where} must be an int or an integer scalar tensor, got {got}")


class _SpecBuilder:
    """Turns key entries into spec items, collecting tensor-valued ints as inputs."""

    def __init__(self, list_label=None):
        self.dynamic = []
        self.list_label = list_label  # the staged list indexed, if it is one

    def scalar(self, v, what):
        if v is None:
            return None
        if _is_int(v):
            return int(v)
        if isinstance(v, Tensor):
            if not dtypes.is_integer(v.dtype) or (v.shape is not None and v.shape != ()):
                _refuse_index(v, what, self.list_label)
            self.dynamic.append(v)
            return f"${len(self.dynamic)}"
        if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iu":
            return int(v)
        if isinstance(v, (bool, np.bool_)) and (what != "an index" or self.list_label is not None):
            return int(v)  # a bool slice bound or list index is the int it stands for (``__index__``)
        _refuse_index(v, what, self.list_label)

    def item(self, entry):
        if entry is None:
            return ("newaxis",)
        if entry is Ellipsis:
            return ("ellipsis",)
        if isinstance(entry, slice):
            return (
                "slice",
                self.scalar(entry.start, "a slice start"),
                self.scalar(entry.stop, "a slice stop"),
                self.scalar(entry.step, "a slice step"),
            )
        return ("index", self.scalar(entry, "an index"))


def _is_advanced(entry) -> bool:
    """True for an index that selects several positions (integer array / list / tensor of rank > 0)."""
    if isinstance(entry, Tensor):
        return entry.shape is None or len(entry.shape) > 0
    if isinstance(entry, (list, np.ndarray)):
        return np.ndim(entry) > 0
    return False


def _check_advanced(entry):
    dtype = entry.dtype if isinstance(entry, Tensor) else np.asarray(entry).dtype
    if dtypes.is_bool(dtype):
        raise TracingError(
            f"indexing with a boolean mask at {user_location_text()} gives a data-dependent shape and is not "
            "supported; use rt.where(mask, x, fill_value) to select elementwise"
        )
    if not dtypes.is_integer(dtype):
        raise IndexError(f"an index array at {user_location_text()} must hold integers, got {dtype}")


def _check_index_infer(inputs, attrs):
    x, index = inputs
    if not dtypes.is_integer(index.dtype) or index.shape not in ((), None):
        raise TypeError(f"CheckIndex: the index {index.name} must be an integer scalar")
    if x.shape is not None and not 0 <= attrs["axis"] < len(x.shape):
        raise ValueError(f"CheckIndex: axis {attrs['axis']} of a tensor of rank {len(x.shape)}")
    return [(index.dtype, index.shape)]


# ``CheckIndex(x, i; axis, where, is_list)``: ``i`` once ``-n <= i < n`` for ``n = x.shape[axis]``, else the
# IndexError numpy raises; stateful, so an out-of-range read fails where Python's does, used or not
opdef.register("CheckIndex", infer=_check_index_infer, weak=lambda inputs, attrs: inputs[1].weak,
               stateful=True, cost=0, inputs=2,
               attrs={"axis": "axis", "where": "plain", "is_list": opdef.optional("plain", False)})


def _checked(tensor, spec, dynamic):
    """``(spec, dynamic)`` with each index not checked statically -- a tensor, or an int on an axis
    of unknown size -- behind a ``CheckIndex`` of its axis (an int becomes an input for it)."""
    spec, dynamic = list(spec), list(dynamic)
    consuming = sum(1 for item in spec if item[0] in ("index", "slice"))
    axis, where = 0, None
    for position, item in enumerate(spec):
        if item[0] == "ellipsis":
            if tensor.shape is None:
                break  # the axes after '...' are unknown: numpy's own IndexError when run
            axis += len(tensor.shape) - consuming
            continue
        if tensor.shape is not None and axis >= len(tensor.shape):
            break  # too many indices: StridedSlice's own IndexError, while tracing
        known = tensor.shape is not None and tensor.shape[axis] is not None
        if item[0] == "index" and (isinstance(item[1], str) or not known):
            if not isinstance(item[1], str):
                dynamic.append(item[1])
                spec[position] = ("index", f"${len(dynamic)}")
            where = where or user_statement()
            k = int(spec[position][1][1:]) - 1
            is_list = isinstance(tensor, StagedList)
            attrs = {"axis": axis, "where": f"{where} ({tensor.label})" if is_list else where, "is_list": is_list}
            dynamic[k] = apply.apply_op("CheckIndex", [tensor, dynamic[k]], attrs, name="check_index")
        if item[0] in ("index", "slice"):
            axis += 1
    return tuple(spec), dynamic


def getitem(tensor, key):
    """``tensor[key]`` with numpy semantics: ``StridedSlice`` and, for an index array, ``GatherV2``.
    An index not checked while tracing is checked when the graph runs (``CheckIndex``): out of
    range, numpy's IndexError, whether or not the value is used."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(1 for e in key if e is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    advanced = [i for i, e in enumerate(key) if _is_advanced(e)]
    if not advanced:
        builder = _SpecBuilder(tensor.label if isinstance(tensor, StagedList) else None)
        spec = tuple(builder.item(e) for e in key)
        if all(item == _FULL for item in spec) or not spec:
            return tensor
        spec, dynamic = _checked(tensor, spec, builder.dynamic)
        return apply.apply_op("StridedSlice", [tensor, *dynamic], {"spec": spec}, name="strided_slice")
    if len(advanced) > 1:
        return _points(tensor, key)
    (position,) = advanced
    _check_advanced(key[position])
    ints = [i for i, e in enumerate(key) if not _is_advanced(e) and not isinstance(e, slice) and e is not None and e is not Ellipsis]
    group = sorted(ints + [position])
    if ints and group != list(range(group[0], group[-1] + 1)):
        raise TypeError(
            "an index array separated from integer indices by slices follows numpy's transposing rule, "
            "which is not supported; index in two steps (first the integers, then the array)"
        )
    axis = _gather_axis(tensor, key, position)
    rest = key[:position] + (slice(None),) + key[position + 1 :]
    return gather(getitem(tensor, rest), key[position], axis=axis)


def _points(tensor, key):
    """``x[a, b]`` with index arrays only (``logp[np.arange(n), y]``): numpy's elements at the points
    of the broadcast arrays, one gather of ``x`` flattened over the indexed axes (each array first
    checked against its own axis: numpy's ``IndexError``, negative indices counted from the end)."""
    for entry in key:
        if _is_advanced(entry):
            _check_advanced(entry)
    rest = None if tensor.shape is None else tuple(tensor.shape[len(key):])
    if not all(_is_advanced(e) for e in key) or rest is None or len(key) > len(tensor.shape) or None in rest:
        raise TracingError(
            f"indexing with several index arrays beside slices, integers, '...' or new axes (or a tensor of "
            f"unknown shape past them) at {user_location_text()} is not supported; index with the arrays alone "
            "(x[a, b]), or in two steps"
        )
    arrays = [e if isinstance(e, Tensor) else np.asarray(e) for e in key]
    try:
        shapes.broadcast(*[a.shape for a in arrays])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(shapes.format_shape(a.shape) for a in arrays)) from None
    flat = None
    for axis, index in enumerate(arrays):
        size = tensor.shape[axis]
        if size is None:  # known when the graph runs
            size = array_shape(tensor, out_type="int64")[axis]
            positions = tensor_range(size, dtype="int64")
        else:
            positions = np.arange(size, dtype=np.int64)
        checked = gather(positions, index)  # numpy's IndexError out of range; -1 is the last
        flat = checked if flat is None else flat * size + checked
    return gather(reshape(tensor, (-1, *rest)), flat, axis=0)


def _gather_axis(tensor, key, position) -> int:
    """The axis, after basic indexing, where the index array at ``key[position]`` lands."""
    consuming = sum(1 for e in key if e is not None and e is not Ellipsis)
    axis = 0
    for e in key[:position]:
        if e is Ellipsis:
            if tensor.shape is None:
                raise TypeError("an index array after '...' needs a tensor of known rank")
            axis += len(tensor.shape) - consuming
        elif isinstance(e, slice) or e is None:
            axis += 1
    return axis


# -- x[key] = v, x[key] op= v --------------------------------------------------------

# the augmented assignments Python spells (``'='`` stores the value)
AUGMENTED = ("=", "+=", "-=", "*=", "@=", "/=", "//=", "%=", "**=", "<<=", ">>=", "&=", "|=", "^=")


def _set_item_infer(inputs, attrs):
    x, value, *dynamic = inputs
    for item in attrs["key"]:
        for part in item[1:]:
            if isinstance(part, str) and not (part[:1] == "$" and part[1:].isdigit() and 0 < int(part[1:]) <= len(dynamic)):
                raise ValueError(f"SetItem: {part!r} names no index input")
    if attrs["operator"] not in AUGMENTED:
        raise ValueError(f"SetItem: unknown operator {attrs['operator']!r}")
    return [(x.dtype, x.shape)]


opdef.register("SetItem", infer=_set_item_infer, weak=opdef.weak_if_first_input_weak, inputs=(2, None),
               attrs={"key": "plain", "operator": "plain", "python_value": "plain", "where": "plain"})


class _KeyBuilder(_SpecBuilder):
    """A ``SetItem`` key: spec items, plus ``("array", "$k")`` for index arrays and masks."""

    def item(self, entry):
        if _is_advanced(entry):
            if not isinstance(entry, Tensor):
                entry = np.asarray(entry)
            if not (dtypes.is_integer(entry.dtype) or dtypes.is_bool(entry.dtype)):
                raise TypeError(f"an index array must hold integers or bools, got {entry.dtype}")
            self.dynamic.append(entry)
            return ("array", f"${len(self.dynamic)}")
        return super().item(entry)


def user_statement() -> str:
    """The user's statement (``x[i] = v``, its comment left out) and ``file:line``, for messages."""
    frame = user_frame(2)
    text = _without_comment(linecache.getline(*frame)) if frame else ""
    return f"`{text}` at {user_location_text()}" if text else f"the store at {user_location_text()}"


def _without_comment(line: str) -> str:
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                return line[: token.start[1]].strip()
    except (tokenize.TokenError, SyntaxError):
        pass  # a line of a statement spanning several: shown as it is
    return line.strip()


def _is_python_value(value) -> bool:
    """True for what Python itself holds: a number (or a weak tensor standing for one), a list or tuple."""
    if isinstance(value, Tensor):
        return value.weak and value.shape == ()
    return is_python_number(value) or type(value) in (list, tuple)


def setitem(tensor, key, operator, value):
    """``tensor[key] = value`` (``operator`` ``'='``) or ``tensor[key] += value`` (``'+='``, ...):
    a new tensor, updated as numpy updates a copy of the array (see the module docstring)."""
    where = user_statement()
    if isinstance(tensor, StagedList):
        return _list_setitem(tensor, key, operator, value, where)
    if not isinstance(key, tuple):
        key = (key,)
    if sum(1 for e in key if e is Ellipsis) > 1:
        raise IndexError(f"{where}: an index can only have a single ellipsis ('...')")
    builder = _KeyBuilder()
    spec = tuple(builder.item(e) for e in key)
    attrs = {"key": spec, "operator": operator, "python_value": _is_python_value(value), "where": where}
    return apply.apply_op("SetItem", [tensor, value, *builder.dynamic], attrs, name="set_item")


def _list_setitem(target, index, operator, value, where):
    """``l[i] = v`` on a staged list: one element replaced, as in the Python list it stands for."""
    if isinstance(index, (tuple, slice)) or _is_advanced(index):
        raise TracingError(
            f"{where}: {target.label} is carried as one tensor of its elements; assigning to a slice "
            "of it (which may change its length) is not supported. Build the new list with append, or "
            "assign one item at a time."
        )
    element = None if target.shape is None else target.shape[1:]
    shape = getattr(value, "shape", None) if not is_python_number(value) else ()
    if shape is None and type(value) in (list, tuple):
        shape = np.shape(value)
    if operator == "=" and (element is None or shape is None or tuple(shape) != tuple(element)):
        raise TracingError(
            f"{where}: the value stored in {target.label} must have the shape of its elements "
            f"({shapes.format_shape(element)}), got {shapes.format_shape(shape)}; a Python list would hold it "
            "as it is, a staged list cannot."
        )
    _check_list_dtype(target, value, where)
    builder = _KeyBuilder(target.label)
    spec = (builder.item(index),)
    attrs = {"key": spec, "operator": operator, "python_value": _is_python_value(value),
             "where": f"{where} ({target.label}): list assignment"}
    result = apply.apply_op("SetItem", [target, value, *builder.dynamic], attrs, name="set_item")
    return StagedList.mark(result, target.label, joined_numbers(python_numbers(target), python_numbers(value)))


def _check_list_dtype(target, value, where):
    """A staged list keeps one dtype: a value Python would store as another type is refused."""
    if isinstance(value, StagedList):
        raise TracingError(f"{where}: storing a list in an item of {target.label} is not supported.")
    weak = _is_python_value(value)
    dtype = value.dtype if isinstance(value, Tensor) else np.asarray(value).dtype
    fits = np.can_cast(dtype, target.dtype, "same_kind") if weak else dtype == target.dtype
    if not fits:
        raise TracingError(
            f"{where}: {target.label} holds {target.dtype.name} elements; storing a "
            f"{'Python ' + type(value).__name__ if not isinstance(value, Tensor) else dtype.name} value would "
            f"hold another type in the Python list. Cast the value to {target.dtype.name} first."
        )
