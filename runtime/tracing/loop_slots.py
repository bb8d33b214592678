"""Loop variables one by one: what each flat value of a traced loop is, and what the body makes of it.

A ``Slot`` is one flat loop value (``tracing.loops.build_while`` and
``data/staged_loop.py`` flatten a loop's state to them).  Its ``kind`` starts
as what the value before the loop says (a tensor, a weakly typed number)
and ``classify`` / ``body_output`` change it from what a trace of the body
made of it: a Python value that became a tensor is a loop variable, a list
the body appends to a staged list, a dtype that widens or a dimension that
changes is recorded.  Each change answers True ("trace the body again");
the loop of traces itself is ``tracing/retrace.py``'s ``settle``.  The rules
are stated in ``autograph.runtime.tracing``'s docstring.
"""

from __future__ import annotations

import numpy as np

from autograph.runtime import ops
from autograph.runtime.core import dtypes, shapes
from autograph.runtime.core.tensor import KIND_NUMBERS, Tensor, TensorSpec, is_python_number, is_weak, weak_number
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply, list_operators
from autograph.runtime.ops.common import int_fits
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.tracing import staged_list
from autograph.runtime.tracing.values import (
    describe_value, is_numeric_array, is_return_placeholder, is_strong, is_undefined, refuse_int_beside_wrapping,
    refuse_int_beyond, refuse_int_beyond_int64, same_python, to_tensor_in, weak_dtype,
)

__all__ = ["Slot", "as_invariant", "loop_inputs", "classify", "body_output", "initial_tensor", "strong_dtype",
           "refute_speculation"]


class Slot:
    """What a traced loop knows about one flat loop value."""

    __slots__ = ("label", "init", "kind", "dtype", "shape", "invariant", "fill", "weak", "settled", "speculative",
                 "unsettled_dtype", "evidence", "numbers")

    # kind: 'tensor' (strongly typed loop variable), 'weak' (a Python number
    # or weak tensor that became a loop variable: its dtype may still widen),
    # 'list' (a staged list), 'pass' (a value the body leaves alone), 'open'
    # (not known yet: traced as its Python value).  ``weak``: the loop
    # variable is weakly typed (it started weak and the body keeps it weak).
    # ``numbers``: for a strongly typed staged list, the dtype numpy gives the Python numbers it may
    # hold beside its numpy values (``StagedList.mark``); it only widens.

    def __init__(self, label, init, invariant=None):
        self.label = label
        self.init = init
        self.invariant = invariant
        self.fill = False  # the initial value is zeros (an unset return value)
        self.settled = False  # a weak variable's dtype was checked against its uses
        self.speculative = False  # a Python number traced as a weak loop variable before that is known
        self.unsettled_dtype = None  # a weak variable's dtype before it is settled (weak_loop_vars.settle)
        self.evidence = set()  # the dtypes ops gave its placeholders in this round's traces (weak_loop_vars)
        self.dtype = None
        self.shape = None
        self.weak = False
        self.numbers = list_operators.python_numbers(init) if isinstance(init, StagedList) else None
        if isinstance(init, Tensor) or is_numeric_array(init):
            self.kind = "weak" if is_weak(init) else "tensor"
            self.weak = is_weak(init)
            self.dtype = init.dtype
            self.shape = shapes.as_shape(init.shape)
        else:
            self.kind = "open"

    @property
    def is_loop_var(self) -> bool:
        return self.kind in ("tensor", "weak", "list")

    def speculate(self):
        """Traces this Python int or float as a weak loop variable of numpy's default dtype from the
        first trace, instead of one trace on its Python value only to find out that it is one."""
        if not int_fits(self.init, np.dtype(np.int64)):
            return  # no dtype holds it: ``classify`` refuses it if the loop changes it
        self.kind, self.weak, self.speculative = "weak", True, True
        self.dtype = np.asarray(self.init).dtype
        self.shape = self.invariant if self.invariant is not None else ()

    def unspeculate(self):
        self.kind, self.weak, self.speculative, self.settled = "open", False, False, False
        self.dtype = self.shape = self.unsettled_dtype = None

    @property
    def unsettled(self) -> bool:
        """A weakly typed loop variable whose dtype ``weak_loop_vars.settle`` has not settled yet (not a
        staged list of Python numbers: it keeps numpy's dtype until a strongly typed element joins)."""
        return self.kind == "weak" and self.weak and not self.settled and not isinstance(self.init, StagedList)

    def staged_label(self, where):
        """What messages call this slot if it is a staged list (one this loop stages, or one staged
        before it), else None."""
        if isinstance(self.init, StagedList):
            return self.init.label
        return f"the staged list '{self.label}' of {where}" if self.kind == "list" else None


def as_invariant(value, label, where):
    """A shape invariant as given (a shape, an ``rt.TensorSpec`` or None) as a shape or None."""
    if value is None:
        return None
    if isinstance(value, TensorSpec):
        return value.shape
    try:
        return shapes.as_shape(value)
    except (TypeError, ValueError):
        raise TracingError(
            f"the shape invariant of '{label}' in {where} is {value!r}; give a shape such as (None, 3) "
            "or an rt.TensorSpec."
        ) from None


def loop_inputs(graph, slots, where, name="loop_var"):
    """The values a traced condition or body sees: placeholders for loop variables, else the value."""
    values = []
    for s in slots:
        if s.is_loop_var:
            placeholder = graph.add_placeholder(s.dtype, s.shape, name=name)
            placeholder.weak = s.weak
            label = s.staged_label(where)
            if label is not None:
                StagedList.mark(placeholder, label, s.numbers)
            values.append(placeholder)
        elif type(s.init) is list:
            values.append(list(s.init))  # the body may append to it: never to the user's list
        else:
            values.append(s.init)
    return values


def refute_speculation(slots, values, results) -> bool:
    """Checks the speculated slots (``Slot.speculate``) against the first trace: each must come
    out a tensor other than its placeholder (not a Python value).  True if one does not: then all
    go back to their Python values and the body is traced again."""
    speculated = [(s, before, after) for s, before, after in zip(slots, values, results) if s.speculative]
    if not speculated:
        return False
    refuted = any(after is before or not isinstance(after, Tensor) for _, before, after in speculated)
    for s, _, _ in speculated:
        if refuted:
            s.unspeculate()
        else:
            s.speculative = False
    return refuted


def classify(s, before, after, where, stage_lists, zero_trips="a tensor loop may run zero times") -> bool:
    """Decides what an 'open'/'pass' slot is from what the body made of it; True if it changed.

    ``zero_trips`` says, in the message for a variable first assigned in the
    loop, why it needs a value before it.
    """
    init = s.init
    if is_undefined(init):
        if is_undefined(after):
            s.kind = "pass"
            return False
        raise TracingError(
            f"'{s.label}' is not defined before {where} but the loop assigns it and it may be read after the "
            f"loop (by the code after it, or by a function that reads it as a closure variable); {zero_trips}, "
            f"so {s.label} needs a value before the loop. Assign {s.label} before the loop (with the dtype and "
            "shape the loop gives it)."
        )
    if is_return_placeholder(init) and is_return_placeholder(after):
        # still unset after an iteration (its only ``return`` follows a raise, say): nothing to carry
        s.kind = "pass"
        return False
    if is_return_placeholder(init) and (is_strong(after) or is_weak(after)):
        # unset until the loop returns: zeros (an empty list, for a staged list) before that
        s.kind = "list" if isinstance(after, StagedList) else "weak"
        s.fill = True
        s.dtype = after.dtype if is_strong(after) else weak_dtype(after)
        s.weak = is_weak(after)
        s.shape = s.invariant if s.invariant is not None else shapes.as_shape(getattr(after, "shape", ()))
        return True
    if type(init) is list and stage_lists:
        return _classify_list(s, before, after, where)
    if after is init or same_python(init, after):
        s.kind = "pass"
        return False
    if is_python_number(init) and (is_weak(after) or is_strong(after)):
        refuse_int_beyond_int64(s.label, init, f"before {where}, which the loop changes")
        s.kind = "weak"
        if is_strong(after):
            s.dtype = strong_dtype(after.dtype, np.asarray(init).dtype)
        else:
            s.dtype = weak_dtype(init, after)  # numpy's default; weak_loop_vars.settle may narrow it
        s.weak = not is_strong(after)
        s.shape = s.invariant if s.invariant is not None else ()
        return True
    raise TracingError(
        f"'{s.label}' is {describe_value(init)} before {where} and {describe_value(after)} after an "
        "iteration; a tensor loop can only carry tensors and numbers whose dtype does not change. Give "
        f"{s.label} its final kind of value before the loop."
    )


def _classify_list(s, before, after, where) -> bool:
    """A Python list slot of a loop that stages lists: 'pass' if the body leaves it alone, else staged."""
    unchanged = type(after) is list and after is before and len(after) == len(s.init) and all(
        x is y for x, y in zip(after, s.init)
    )
    if unchanged or (after is s.init):
        s.kind = "pass"
        return False
    _check_list_change(s, before, after, where)
    elements = list(s.init) + (list(after) if type(after) is list else [])
    like = after if isinstance(after, Tensor) else None
    dtype, elem_shape, weak = staged_list.element_spec(elements, like, s.label, where)
    s.kind = "list"
    s.dtype = dtype
    s.weak = weak
    s.numbers = None if weak else list_operators.python_numbers(elements + ([like] if like is not None else []))
    s.shape = s.invariant if s.invariant is not None else (None, *elem_shape) if elem_shape is not None else None
    return True


def strong_dtype(dtype, weak_dtype) -> np.dtype:
    """The dtype of a weak (``weak_dtype``) loop variable the body makes a strongly typed ``dtype`` tensor.

    NEP 50: the strong dtype, unless the weak value's kind is higher
    (``t = 0.0`` then an int32 tensor gives float64).
    """
    return dtypes.result_type(dtype, KIND_NUMBERS[np.dtype(weak_dtype).kind])


def _check_list_change(s, before, after, where):
    """Refuses list changes a staged list cannot represent.

    A staged list is one tensor of stacked elements: the body may update
    its items in place or build a list of the same length, and may grow it
    through ``append`` (``ag__.list_append``: the same list object, its
    items so far unchanged) or shrink it through ``pop``; anything else
    (``l = l + [x]``, ``l.insert(0, x)``) would later run tensor arithmetic
    where the program means list operations.
    """
    if type(after) is not list:
        return
    if after is not before and len(after) != len(s.init):
        raise TracingError(
            f"'{s.label}' is rebound to a list of another length in the body of {where}; a tensor loop can "
            f"only grow a list in place. Use {s.label}.append(...) instead of building a new list."
        )
    if after is before and len(after) > len(s.init) and not all(x is y for x, y in zip(after, s.init)):
        raise TracingError(
            f"'{s.label}' is changed other than by appending in the body of {where}; a tensor loop can grow "
            f"a list only with {s.label}.append(...). Build the list in another order, or use rt.concat."
        )


def body_output(graph, s, value, where):
    """The body graph's tensor for loop variable ``s``; (tensor, needs another trace)."""
    value = _checked_output(graph, s, value, where)
    _refuse_python_int(s, value, where)
    retrace = False
    if s.weak and is_strong(value):
        # a weakly typed loop variable the body makes strongly typed takes that dtype: trace again
        s.weak = False
        if s.staged_label(where) is not None:  # a list of Python numbers that numpy values join
            s.numbers = dtypes.LIST_DTYPES[s.dtype.kind]
        s.dtype = (dtypes.staged_list_result_type(s.dtype, value.dtype) if s.kind == "list"
                   else strong_dtype(value.dtype, s.dtype))
        retrace = True
    if s.staged_label(where) is not None and not s.weak:  # Python numbers joining a list of numpy values
        numbers = list_operators.joined_numbers(s.numbers, list_operators.python_numbers(value))
        retrace |= numbers != s.numbers
        s.numbers = numbers
    tensor = _output_tensor(graph, s, value, where)
    if tensor.dtype != s.dtype:
        tensor, widened = _widened(graph, s, tensor, where)
        retrace |= widened
    if not shapes.is_subshape(tensor.shape, s.shape):
        if s.invariant is not None:
            raise TracingError(
                f"'{s.label}' has shape {shapes.format_shape(tensor.shape)} after an iteration of {where}, "
                f"which does not fit its shape invariant {shapes.format_shape(s.invariant)}. Relax the "
                "invariant (None for a dimension that changes)."
            )
        s.shape = shapes.relax(s.shape, tensor.shape)
        retrace = True
    return tensor, retrace


def _checked_output(graph, s, value, where):
    """``value`` (a staged list's Python list stacked) if it can be loop variable ``s``'s next value."""
    if is_undefined(value):
        raise TracingError(
            f"'{s.label}' becomes undefined in the body of {where}; assign it on every path through the body."
        )
    if s.kind == "list":
        if type(value) is list:
            with graph.as_default():
                value = staged_list.stack(value, dtype=s.dtype)
        elif not isinstance(value, Tensor):
            raise TracingError(
                f"'{s.label}' is a list appended to in {where} but becomes {describe_value(value)} in the "
                "body; keep it a list."
            )
    if not (is_strong(value) or is_weak(value)):
        raise TracingError(
            f"'{s.label}' is a {s.dtype.name} tensor before {where} but {describe_value(value)} after an "
            f"iteration; a loop variable must stay a tensor of one dtype."
        )
    return value


def _output_tensor(graph, s, value, where):
    """``value`` as a tensor of the body graph, in the dtype NEP 50 gives it beside ``s``'s."""
    if s.weak:
        if is_python_number(value):
            refuse_int_beyond_int64(s.label, value, f"after an iteration of {where}")
        dtype = weak_dtype(s.dtype, value) if is_python_number(value) else value.dtype
        return to_tensor_in(graph, value, dtype, weak=True)
    if is_weak(value) and isinstance(value, StagedList):  # Python numbers joining a list
        with graph.as_default():
            tensor = StagedList.mark(apply.capture(graph, value), value.label)
            dtype = dtypes.staged_list_result_type(value.dtype, s.dtype)
            if tensor.dtype != dtype:
                tensor = list_operators.cast_numbers(tensor, dtype)
        return tensor
    if is_weak(value):
        dtype = dtypes.result_type(s.dtype, weak_number(value))
        refuse_int_beyond(s.label, dtype, value, f"after an iteration of {where}")
        return to_tensor_in(graph, value, dtype=dtype)
    return to_tensor_in(graph, value, value.dtype)


def _refuse_python_int(s, value, where):
    """A strong loop variable of a wrapping integer dtype that an iteration makes a Python int."""
    if s.kind == "tensor" and not s.weak and is_weak(value):
        refuse_int_beside_wrapping(s.label, s.dtype, value, f"before {where}")


def _widened(graph, s, tensor, where):
    """A body output of another dtype than ``s``'s: refused for a tensor, else the dtype widens
    (monotonic, so retracing ends); (tensor, needs another trace)."""
    if s.kind == "tensor":
        example = f"rt.cast(<initial value>, '{tensor.dtype.name}')"
        if s.label.isidentifier():
            example = f"{s.label} = rt.cast({s.label}, '{tensor.dtype.name}')"
        raise TracingError(
            f"'{s.label}' is {s.dtype.name} before {where} but {tensor.dtype.name} after an iteration; a "
            f"loop variable must keep its dtype. Cast it before the loop, e.g. {example}, or cast the new "
            f"value in the body (rt.cast(..., '{s.dtype.name}'))."
        )
    joined = dtypes.result_type(s.dtype, tensor.dtype)
    if joined == s.dtype:
        with graph.as_default():
            return ops.cast(tensor, s.dtype, weak=s.weak), False
    s.dtype = joined
    return tensor, True


def initial_tensor(s, where):
    """The loop op's input for loop variable ``s`` before the first iteration."""
    if s.fill and s.kind == "list":
        return staged_list.empty(s.dtype, None if s.shape is None else s.shape[1:], s.weak)
    if s.kind == "list":
        elem_shape = None if s.shape is None else s.shape[1:]
        if not s.init:
            return staged_list.empty(s.dtype, elem_shape, s.weak)
        return staged_list.stack(list(s.init), dtype=s.dtype, elem_shape=elem_shape, weak=s.weak, label=s.label,
                                 where=where)
    if isinstance(s.init, Tensor):
        if s.init.dtype != s.dtype:  # a weakly typed initial value that widened or became strongly typed
            return list_operators.cast_numbers(s.init, s.dtype, weak=s.weak)
        return s.init
    if s.fill:
        shape = () if s.shape is None else tuple(0 if d is None else d for d in s.shape)
        return apply.constant(np.zeros(shape, s.dtype), s.dtype, weak=s.weak)
    # (a weak variable's dtype holds its start: weak_loop_vars; one the body makes strong may not)
    refuse_int_beyond(s.label, s.dtype, s.init, f"before {where}")
    return apply.constant(s.init, s.dtype, weak=s.weak and is_python_number(s.init))
