"""The staged list type, ``StagedList``, and Python's operators on it: what they mean on lists, or an error.

A staged list (a list appended to in a tensor loop or branch, carried as
one tensor of its stacked elements; ``tracing/staged_list.py`` stages one)
is a ``StagedList``: a ``Tensor`` whose ``label`` is what messages call it
("the staged list 'acc' of the for loop at f.py:3").  A tensor becomes one
in place (``StagedList.mark``), since graphs know their tensors by identity.
Its mutations are its methods (``appended``, ``popped``, ``extended``,
``without`` for ``del l[i]``; converted code rebinds the list to what they
return), and what is made from a list as a list is one too: those, a slice
(``l[1:]``), ``l + [x]``, ``l * 2`` and item assignment; an item (``l[i]``)
is a tensor.  Its truth value is non-emptiness
(``operators/tensor_builtins.bool_``); the methods Python lists have and it
lacks are an ``AttributeError`` naming it.

It stands for a Python list, so ``l + [x]`` concatenates and ``l * 2``
repeats, where the same operators on a tensor would add and multiply
element by element.  Per the other operand, as Python decides for a
``list``:

* another list (a Python list or a staged list): ``+`` concatenates;
  comparisons (``==``, ``<``, ...) compare lists as a whole, which a staged
  list cannot (``TracingError``: compare the stacked tensors with ``rt`` ops);
  other operators are Python's ``TypeError``;
* a Python or numpy integer on either side of ``*``: it repeats; a scalar
  integer tensor count cannot be staged (``TracingError``), a float one is
  Python's ``TypeError``;
* another Python number (a weakly typed scalar tensor too: a loop counter,
  an item of a list of Python numbers): ``==``/``!=`` are ``False``/``True``;
  anything else is Python's ``TypeError``;
* a numpy value or another tensor: numpy converts the list to an array, so
  the operator is element by element, as on the stacked tensor (``None``:
  the caller applies the tensor operator).  A list of Python numbers is
  then a *strong* array of numpy's default dtype (``np.asarray([1, 2])`` is
  int64, as ``common.promote`` makes it), not a weak one: ``np.uint8(0) +
  [-2]`` is int64 ``[-2]``, never uint8 ``[254]``.

Unary operators on a list are Python's ``TypeError``.
"""

from __future__ import annotations

import numbers

import numpy as np

from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.location import construct_at, user_location_text
from autograph.runtime.core.tensor import Tensor, is_python_number, is_weak, weak_number
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply, array
from autograph.runtime.ops.basic import cast

# dunder -> the operator as Python names it in its TypeError
_SYMBOLS = {
    "add": "+", "sub": "-", "mul": "*", "matmul": "@", "truediv": "/", "floordiv": "//", "mod": "%",
    "pow": "** or pow()", "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^",
    "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=",
}
_COMPARISONS = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})


# methods of Python lists that a staged list does not have (converted code calls the operators instead
# of append, extend and pop)
_LIST_METHODS = frozenset({"insert", "remove", "clear", "reverse", "sort", "index", "count", "copy"})
# the methods converted code calls the operators for, where a list is a local variable (``xs.append(v)``)
_GROWTH_METHODS = {"append": "append to", "extend": "extend", "pop": "pop from"}


class MethodRefused(TracingError, AttributeError):
    """A list method called on a staged list, which does not have it: a refusal, and an
    ``AttributeError`` too (``hasattr`` and ``getattr`` with a default see no such method)."""


class StagedList(Tensor):
    """A tensor standing for a Python list: its elements stacked on a new first axis; ``label`` is
    what messages call it."""

    __slots__ = ()

    @staticmethod
    def mark(tensor, label=None, numbers=None) -> "StagedList":
        """``tensor``, made the staged list ``label`` in place (its graph keeps the same object).

        ``numbers``: for a strongly typed list, the dtype ``np.asarray`` gives the Python numbers it may
        hold beside its numpy values (``python_numbers``), None if it holds none; a weakly typed list
        holds Python numbers only, which its own dtype's kind says."""
        tensor.__class__ = StagedList
        tensor.label = label or f"the staged list {tensor.name}"
        tensor.numbers = None if tensor.weak else numbers
        return tensor

    def __getattr__(self, name):  # only for names a StagedList does not have
        if name in _GROWTH_METHODS:
            raise MethodRefused(
                f"'Tensor' object has no attribute '{name}': {self.label} (at {user_location_text()}) is "
                f"carried as one tensor of its elements; converted code can {_GROWTH_METHODS[name]} it only as a "
                f"local variable (`xs.{name}(...)` rebinds `xs`), not where it is reached through an item or "
                "attribute. Grow the list in a local variable and assign it to the item or attribute afterwards."
            )
        if name in _LIST_METHODS:
            raise MethodRefused(
                f"'Tensor' object has no attribute '{name}': {self.label} (at {user_location_text()}) is "
                "carried as one tensor of its elements, which can be appended to, extended, popped, indexed and "
                "iterated, but not "
                f".{name}(). Build the list in another way (append in order), or work on rt.stack(...) of it."
            )
        return Tensor.__getattr__(self, name)

    def appended(self, item):
        """``l.append(x)``: this list with ``item`` appended (a Python number joins it as NEP 50 says;
        another element dtype is a ``TracingError``).  Called on the class, ``StagedList.appended(t, x)``
        takes the tensor ``t`` as the list of its rows."""
        return _appended(self, item)

    def popped(self, index=None):
        """``l.pop(i)``: ``(this list without item i, that item)``; the last item by default."""
        check_items_readable(self)
        rest, item = _pop(self, index)
        return StagedList.mark(rest, describe(self), python_numbers(self)), item

    def extended(self, items):
        """``l.extend(xs)``: this list with ``items`` (a Python list, or a tensor: its rows) appended."""
        return _concat(self, items)

    def without(self, index):
        """``del l[i]``: this list without item ``i`` (an int or a scalar tensor; Python's
        IndexError, when the graph runs, for an index out of range)."""
        return _deleted(self, index)


def check_items_readable(value) -> None:
    """A ``TracingError`` when an item is read (indexed, iterated, popped, reduced) from a staged list of
    Python numbers and values of a dtype that wraps (bool, unsigned, 8/16-bit): Python keeps each item's
    type, so the item may compute as a Python int or wrap as that dtype, which one staged list (one dtype
    for all its items) cannot tell apart (``acc = [125]`` appended int8 values: ``114 + acc[0]`` is 239
    in Python, int8 wraps it to -17).  The list itself -- returned, measured, appended to -- is fine."""
    if not isinstance(value, StagedList) or value.numbers is None or not dtypes.wraps(value.dtype):
        return
    dtype = value.dtype.name
    raise TracingError(
        f"{value.label} holds Python numbers beside {dtype} values, and an item of it is read at "
        f"{user_location_text()}: Python keeps each item's own type, so an item computes as a Python number or "
        f"wraps as {dtype} does, and a staged list, one tensor of one dtype, cannot keep both apart. Make the "
        f"items one kind: start the list from {dtype} values (np.{dtype}(0)), or cast what is appended to a "
        "wide dtype (rt.cast(..., 'int64'))."
    )


def python_numbers(value):
    """The dtype ``np.asarray`` gives the Python numbers ``value`` is or holds (bool, int64, float64,
    joined), or None if none: a Python number; a weakly typed tensor (a number, or a list of them);
    a strongly typed staged list: its ``numbers``; a Python list: its elements'.  Numpy converts a
    list of numpy values and Python numbers to an array of the dtype joining both
    (``np.asarray([np.int32(1), 2])`` is int64), which the list's one dtype (int32) may not be."""
    if isinstance(value, StagedList) and not value.weak:
        return value.numbers
    if isinstance(value, Tensor):
        return dtypes.LIST_DTYPES[value.dtype.kind] if value.weak else None
    if is_python_number(value):
        return np.asarray(value).dtype if not isinstance(value, int) or abs(value) < 2**63 else dtypes.float64
    if type(value) in (list, tuple):
        return joined_numbers(*(python_numbers(v) for v in value))
    return None


def joined_numbers(*numbers):
    """The dtype joining the ``python_numbers`` dtypes given (None for none)."""
    known = [n for n in numbers if n is not None]
    return dtypes.result_type(*known) if known else None


def describe(target) -> str:
    """What messages call the staged list ``target``: ``"the staged list 'rows' of the for loop at f.py:3"``."""
    return target.label if isinstance(target, StagedList) else f"the staged list {target.name}"


def _describe_element(value) -> str:
    if isinstance(value, Tensor):
        return f"a {value.dtype.name}{shapes.format_shape(value.shape)} tensor"
    return f"the {type(value).__name__} {value!r}"


def check_element(value, label, where):
    """A ``TracingError`` unless ``value`` can be an element of a staged list (a tensor or a number)."""
    if isinstance(value, Tensor) or is_weak(value):
        return
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf":
        return
    raise TracingError(
        f"the list '{label}' of {where} holds {_describe_element(value)}; a list changed in a tensor loop or "
        "branch is staged as a tensor, so its elements must be tensors or numbers."
    )


def fits(number, dtype) -> bool:
    """The Python number ``number`` is exactly a value of ``dtype`` (as an element of a list it
    keeps its value, so a list of it and int8 elements is not int8 if it is 1000)."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(number, dtype=dtype).item() == number
    except (OverflowError, ValueError):
        return False


def cast_numbers(value, dtype, weak=False):
    """``value`` cast to ``dtype``; for a staged list of Python numbers (a weak non-scalar tensor)
    cast to a dtype that cannot hold all of its dtype's values (Python ints next to an int8: int8),
    an ``Assert`` checks at every run that its numbers are unchanged, so a number the new dtype
    cannot hold (``1000``) is an error naming the list, never another number."""
    result = cast(value, dtype, weak=weak)
    if isinstance(value, Tensor) and value.weak and value.shape != () and dtypes.narrows(value.dtype, dtype):
        from autograph.runtime.ops import math, reduction  # math's operators reach this module

        unchanged = reduction.reduce_all(math.equal(cast(result, value.dtype), value))
        label = value.label if isinstance(value, StagedList) else f"the staged list {value.name}"
        apply.apply_op("Assert", [unchanged], {"message": (
            f"{label} holds a Python number that {dtypes.as_dtype(dtype).name} cannot hold, the dtype of the "
            f"tensor it is combined with (at {user_location_text()}); cast that tensor to a wider dtype first "
            f"(rt.cast(..., '{value.dtype.name}'))"
        )})
    return result


def binary(name: str, left, right):
    """``left <op> right`` (``name``: ``"add"``, ``"mul"``, ...) where one operand is a staged list;
    None when numpy's element-by-element meaning applies (then the tensor operator runs)."""
    lst, other = (left, right) if isinstance(left, StagedList) else (right, left)
    listlike = isinstance(other, Tensor) and other.weak and other.shape != ()  # an item of a list of lists
    if type(other) in (list, tuple) or isinstance(other, StagedList) or listlike:
        if name == "add" and type(other) is not tuple:
            return _concat(left, right)
        if name in _COMPARISONS:
            raise TracingError(
                f"comparing {lst.label} with a list ({_SYMBOLS[name]}) at {user_location_text()}: "
                "a list appended to in a tensor loop or branch is one tensor of its elements, which cannot "
                "be compared as a Python list. Compare the elements with rt ops, e.g. "
                "rt.reduce_all(rt.equal(rt.stack(a), rt.stack(b))) for lists of one length."
            )
        raise _type_error(name, left, right)
    if name == "mul":
        if isinstance(other, (numbers.Integral, np.integer)):  # Python and numpy ints repeat a list
            return _repeat(lst, int(other))
        if isinstance(other, Tensor) and other.shape == ():  # stands for a numpy scalar or a Python number
            if other.dtype.kind in "iu" or other.weak and other.dtype.kind == "b":  # a Python bool is an int
                raise TracingError(
                    f"repeating {lst.label} by a tensor count at {user_location_text()} cannot be "
                    "staged; repeat it by a Python int, or build the list in a loop."
                )
            spelled = "float" if other.weak else f"numpy.{other.dtype.name}"
            raise TypeError(f"can't multiply sequence by non-int of type '{spelled}'")
        if isinstance(other, (float, np.floating)):
            raise _type_error(name, left, right)
    # a weakly typed scalar tensor stands for a Python number (a loop counter, an item of the list)
    weak_scalar = isinstance(other, Tensor) and other.weak and other.shape == ()
    if is_python_number(other) or other is None or isinstance(other, str) or weak_scalar:
        if name in ("eq", "ne"):
            return name == "ne"
        raise _type_error(name, left, right)
    return None


def unary(symbol: str, operand):
    if symbol.endswith(")"):  # abs()
        raise TypeError(f"bad operand type for {symbol}: 'list'")
    raise TypeError(f"bad operand type for unary {symbol}: 'list'")


def _type_error(name, left, right):
    def kind(v):
        if isinstance(v, StagedList) or isinstance(v, Tensor) and v.weak and v.shape != ():
            return "list"
        if isinstance(v, Tensor) and v.weak:  # a Python number
            return {"b": "bool", "f": "float"}.get(v.dtype.kind, "int")
        return type(v).__name__

    symbol = _SYMBOLS.get(name, name)
    if name in _COMPARISONS:
        return TypeError(f"'{symbol}' not supported between instances of '{kind(left)}' and '{kind(right)}'")
    if name == "add" and isinstance(left, StagedList):
        return TypeError(f'can only concatenate list (not "{kind(right)}") to list')
    if name == "mul":
        other = type(right if isinstance(left, StagedList) else left)
        spelled = other.__name__ if other.__module__ == "builtins" else f"{other.__module__}.{other.__name__}"
        return TypeError(f"can't multiply sequence by non-int of type '{spelled}'")
    return TypeError(f"unsupported operand type(s) for {symbol}: '{kind(left)}' and '{kind(right)}'")


def _as_stacked(value, like):
    """A list operand as one tensor of stacked elements, of ``like``'s element kind."""
    if isinstance(value, Tensor):
        return value
    items = list(value)
    if not items:
        shape = (0, *(0 if d is None else d for d in (like.shape[1:] if like.shape is not None else ())))
        return apply.constant(np.zeros(shape, like.dtype), like.dtype, weak=like.weak)
    tensors = [v if isinstance(v, Tensor) else apply.constant(v, dtypes.result_type(like.dtype, v)
                                                               if is_python_number(v) else None,
                                                               weak=is_python_number(v))
               for v in items]
    return array.stack(tensors, axis=0, weak=all(t.weak for t in tensors))


def _concat(left, right):
    like = left if isinstance(left, StagedList) else right
    a, b = _as_stacked(left, like), _as_stacked(right, like)
    weak = a.weak and b.weak  # lists of Python numbers only: so is the concatenation
    numbers = joined_numbers(python_numbers(a), python_numbers(b))
    if a.dtype != b.dtype:
        if weak or not (a.weak or b.weak):  # numpy's dtype for both
            dtype = dtypes.result_type(a.dtype, b.dtype)
        else:  # a list of Python numbers joined by a strongly typed one
            numbers, other = (a, b) if a.weak else (b, a)
            dtype = dtypes.staged_list_result_type(numbers.dtype, other.dtype)
        a, b = (x if x.dtype == dtype else cast_numbers(x, dtype, weak=weak) for x in (a, b))
    return StagedList.mark(array.concat([a, b], axis=0, weak=weak), getattr(like, "label", None), numbers)


def _repeat(lst, count):
    if count <= 0:
        return StagedList.mark(lst[:0], lst.label, lst.numbers)
    return (StagedList.mark(array.concat([lst] * count, axis=0, weak=lst.weak), lst.label, lst.numbers)
            if count > 1 else lst)


def _deleted(target, index):
    where = f"`del` of an item of {target.label} at {user_location_text()}"
    if isinstance(index, (slice, tuple)) or isinstance(index, Tensor) and index.shape not in ((), None):
        raise TracingError(f"{where}: only one item at a time can be deleted from a staged list (del l[i]).")
    target[index]  # noqa: B018 - checks the index when the graph runs (ops/indexing.py: CheckIndex)
    length = target.shape[0] if target.shape is not None and target.shape[0] is not None else None
    if isinstance(index, Tensor) or length is None:
        from autograph.runtime.ops import math  # math's operators reach this module

        size = array.shape(target, out_type=index.dtype if isinstance(index, Tensor) else "int64")[0]
        index = array.where(math.less(index, 0), math.add(index, size), index)
    elif int(index) < 0:
        index = int(index) + length
    rest = array.concat([target[:index], target[index + 1:]], axis=0)
    return StagedList.mark(rest, target.label, python_numbers(target))


def _appended(target, item):
    where = construct_at("the append")
    label = describe(target)
    if current_graph() is None:
        raise TracingError(f"{where}: {label} is a staged list, used outside the trace that created it.")
    numbers = joined_numbers(python_numbers(target), python_numbers(item))  # before items become tensors
    if is_weak(item) and not isinstance(item, Tensor):
        if not target.weak and not fits(item, target.dtype):
            raise TracingError(
                f"{where} adds the Python number {item!r} to {label}, of {target.dtype.name} elements, which "
                f"cannot hold it; all elements of a staged list share one dtype. Give the list a wider dtype "
                f"(start it from rt.cast(x, 'int64'), say)."
            )
        item = apply.constant(item, dtypes.result_type(target.dtype, item), weak=True)
    elif not isinstance(item, Tensor):
        check_element(item, "list", where)
        item = apply.constant(item)
    if target.weak:  # a list of Python numbers: the element joins it (never narrowing its numbers)
        dtype = (dtypes.result_type(target.dtype, item.dtype) if item.weak
                 else dtypes.staged_list_result_type(target.dtype, item.dtype))
        if target.dtype != dtype:
            target = StagedList.mark(cast_numbers(target, dtype, weak=item.weak), label)
    if item.dtype != target.dtype:
        if dtypes.result_type(target.dtype, weak_number(item) if item.weak else item.dtype) != target.dtype:
            raise TracingError(
                f"{where} adds a {item.dtype.name} element to {label}, of {target.dtype.name} elements; all "
                "elements of a staged list share one dtype. Cast the "
                f"element, e.g. rt.cast(x, '{target.dtype.name}')."
            )
        item = cast(item, target.dtype, weak=item.weak)
    return StagedList.mark(array.list_append(target, item, label), label, numbers)


def _pop(target, index):
    if index is None:
        return target[:-1], target[-1]
    if isinstance(index, Tensor):
        raise TracingError(
            f"list pop at {user_location_text()}: popping a staged list at a tensor index is not "
            "supported; pop the last element (l.pop()) or index it (l[i])."
        )
    index = int(index)
    item = target[index]
    if index == -1:
        return target[:-1], item
    return array.concat([target[:index], target[index + 1:]], axis=0), item
