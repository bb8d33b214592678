"""Graph paths of the operators converted code calls, for symbolic tensors.

``autograph.runtime.operators`` runs Python control flow on Python values
and hands a call here, with the same arguments, when the condition or the
iterable is a ``Tensor`` (see its docstring for the state contract):

* ``if_stmt`` traces both branches into sub-graphs and emits an ``If``;
  ``while_stmt`` and ``for_stmt`` trace the condition and body and emit a
  ``While`` (``tracing.branches.build_cond`` / ``tracing.loops.build_while`` hold the rules:
  dtypes, shapes, Python values, undefined variables, staged lists);
* ``for_stmt`` loops over the first dimension of a tensor, over
  ``range_(t)`` (a ``TensorRange``) or ``rt.range`` (counted, not
  materialized), ``enumerate_`` and ``zip_`` of those, or a Python range or
  list handed over mid-loop, with a hidden counter; ``extra_test`` (lowered
  ``break`` and ``return`` flags) joins the loop condition;
* ``if_exp``, ``and_``, ``or_`` emit an ``If`` so the lazy operand runs
  only when Python would evaluate it -- except a bool ``and``/``or`` whose
  lazy operand is a cheap scalar expression that cannot fail, which becomes
  ``LogicalAnd``/``LogicalOr``; ``not_`` is ``LogicalNot``;
* builtins on tensors: ``range_``, ``len_`` (the static first dimension
  when known), ``int_``/``float_`` (casts), ``abs_``, ``enumerate_``,
  ``zip_``, ``print_`` (``rt.print``, which prints at every execution);
  what Python gives as a Python number -- ``int()``, ``float()``,
  ``len()``, the items of ``range()`` and the positions of ``enumerate()``
  -- is a weakly typed tensor (NEP 50), so ``float(n) * x`` or
  ``i * x`` keep a float32 ``x`` float32 as in Python; iterating
  ``rt.range`` gives strongly typed numpy values, as ``np.arange`` does;
* ``list_append``/``list_pop`` on staged lists (``staged_list``) and
  ``aug_setitem`` (``x[i] += v`` on a tensor, which is immutable: a new
  tensor with row ``i`` updated); ``assert_`` emits a stateful ``Assert``.
"""

from __future__ import annotations

import operator
import re

import numpy as np

from autograph.runtime.core import nest
from autograph.runtime import ops
from autograph.runtime.core import dtypes
from autograph.runtime.ops import apply, spellings
from autograph.runtime.tracing import staged_list
from autograph.runtime.tracing.branches import build_cond, expand_return_placeholder
from autograph.runtime.tracing.loops import build_while
from autograph.runtime.tracing.values import as_predicate, is_return_placeholder, is_undefined
from autograph.runtime.errors import TracingError
from autograph.runtime.core.location import user_location, user_location_text
from autograph.runtime.core.graph import current_graph
from autograph.runtime.ops import state
from autograph.runtime.ops._common import static_value
from autograph.runtime.core.tensor import Tensor

__all__ = [
    "if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_", "assert_",
    "range_", "len_", "int_", "float_", "abs_", "enumerate_", "zip_", "print_",
    "list_append", "list_pop", "aug_setitem", "TensorRange",
]


def _here(construct: str) -> str:
    return f"{construct} at {user_location_text()}"


# --------------------------------------------------------------------------
# State: the variables a statement changes, flattened to loop values
# --------------------------------------------------------------------------


# generated names (the return lowering's) -> what messages call them
_INTERNAL = re.compile(r"^(retval_|do_return)(_\d+)?$")
_DESCRIBED = {"retval_": "the return value", "do_return": "the return flag"}


def _names(symbol_names, state):
    """The state's labels for messages: its symbols as written, generated ones described."""
    names = [_DESCRIBED[m.group(1)] if (m := _INTERNAL.match(n)) else n for n in symbol_names or ()]
    names += [f"<state {i}>" for i in range(len(names), len(state))]
    return names


def _read_state(get_state, where):
    """``get_state()``, with a variable the traced code deleted (``del x``) as a ``TracingError``."""
    try:
        return tuple(get_state())
    except NameError as e:
        raise TracingError(
            f"a variable of {where} has no value after tracing it ({e}): a tensor if or loop cannot "
            "delete (del) a variable on some paths. Assign it a value instead of deleting it."
        ) from None


def _is_state_leaf(value, staged: bool) -> bool:
    """Top-level state entries that are one loop value: a staged list, or a non-container."""
    return (staged and type(value) is list) or is_undefined(value) or not nest.is_nested(value)


class _Restage(Exception):
    """A loop body changed the kind of state entry ``index``: trace the loop again.

    Either a top-level list changed its length (it is staged next time), or
    an unset return value became a nested value (``entry``: the unset value
    in that structure).
    """

    def __init__(self, index, entry=None):
        super().__init__(index)
        self.index = index
        self.entry = entry


def _flatten_state(state, names, staged):
    flat, labels = [], []
    for index, (name, entry) in enumerate(zip(names, state)):
        if _is_state_leaf(entry, index in staged):
            flat.append(entry)
            labels.append(name)
        else:
            flat.extend(nest.flatten(entry))
            labels.extend(name + path for path in nest.leaf_paths(entry))
    return flat, labels


def _flatten_like(init, new, names, where, staged):
    """Flattens the state ``new`` a body produced, checking it against ``init``'s structure.

    A top-level list whose length the body changes (or that an inner tensor
    ``if`` staged) raises ``_Restage``: the loop is traced again with that
    list staged (one tensor of its elements).
    """
    new = tuple(new)
    if len(new) != len(init):
        raise TracingError(f"get_state() of {where} returned {len(new)} values, expected {len(init)}")
    flat = []
    for index, (name, before, after) in enumerate(zip(names, init, new)):
        if is_return_placeholder(before) and nest.is_nested(after):
            raise _Restage(index, expand_return_placeholder(before, after))
        if _is_state_leaf(before, index in staged):
            flat.append(after)
            continue
        if type(before) is list and (type(after) is not list or len(before) != len(after)):
            raise _Restage(index)  # grown or shrunk (maybe staged by a tensor if inside the body)
        diff = nest.mismatch(before, after)
        missing = nest.missing_key(before, after) if diff is not None else None
        if missing is not None:
            path, existed = missing
            change = "deletes" if existed else "creates"
            raise TracingError(
                f"the body of {where} {change} '{name}{path}'; a tensor loop must keep a dict's keys. Set "
                f"{name}{path} before the loop (with the dtype the loop gives it)."
            )
        if diff is not None:
            raise TracingError(
                f"'{name}' changes structure in {where}: {diff} (before vs after an iteration). A loop "
                "variable must keep its structure; build it with its final structure before the loop."
            )
        flat.extend(nest.flatten(after))
    return flat


def _pack_state(init, flat, staged):
    flat = list(flat)
    out, index = [], 0
    for position, entry in enumerate(init):
        if _is_state_leaf(entry, position in staged):
            out.append(flat[index])
            index += 1
        else:
            count = len(nest.flatten(entry))
            out.append(nest.pack_as(entry, flat[index:index + count]))
            index += count
    return tuple(out)


def _trace_loop(trace, init):
    """``trace(init, staged)`` with no list staged first, then again as each ``_Restage`` says.

    Lists are loop state item by item (a list that keeps its length stays a
    list); only a list the body grows or shrinks becomes a staged list.
    Returns ``(final values, init, staged)``.
    """
    outer = current_graph()
    staged = frozenset()
    while True:
        before = set(outer.library)
        try:
            return trace(init, staged), init, staged
        except _Restage as restage:
            for name in [n for n in outer.library if n not in before]:
                del outer.library[name]
            if restage.entry is None:
                staged = staged | {restage.index}
            else:
                init = init[:restage.index] + (restage.entry,) + init[restage.index + 1:]


def _fresh(state):
    """The state with its lists and dicts copied: tracing a body never mutates the user's containers."""
    return tuple(nest.copy_containers(v) for v in state)


def _write_back(init, final):
    """``final`` as the state to bind, written into ``init``'s containers (their identity is kept)."""
    return tuple(nest.write_back(before, after) for before, after in zip(init, final))


def _loop_invariants(opts, flat, labels, where):
    """``opts['shape_invariants']`` (pairs ``(value, shape)`` or a dict ``{name: shape}``) per flat value."""
    spec = (opts or {}).get("shape_invariants")
    if not spec:
        return None
    result = [None] * len(flat)
    pairs = spec.items() if isinstance(spec, dict) else spec
    for key, shape in pairs:
        if isinstance(key, str):
            matches = [i for i, label in enumerate(labels) if label == key]
        else:
            matches = [i for i, value in enumerate(flat) if value is key]
        if not matches:
            raise TracingError(
                f"a shape invariant of {where} is given for {key!r}, which is not a variable the loop "
                f"changes (those are {', '.join(labels) or 'none'}). Give invariants only for loop variables."
            )
        for i in matches:
            result[i] = shape
    return result


# --------------------------------------------------------------------------
# if / while / for
# --------------------------------------------------------------------------


def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts):
    """Graph path of ``if``: both branches traced, one ``If`` op, outputs bound by ``set_state``.

    The state is the ``nouts`` outputs followed by the names the branches
    use but that are dead after the ``if``: every branch starts from the
    same state, and afterwards the outputs take the ``If``'s results while
    the rest gets its values from before back.
    """
    if not isinstance(cond, Tensor):
        return body() if cond else orelse()
    where = _here("the if")
    init = tuple(get_state())
    names = _names(symbol_names, init)

    def branch(fn):
        def run():
            set_state(_fresh(init))
            fn()
            return _read_state(get_state, where)[:nouts]

        return run

    outputs = build_cond(cond, branch(body), branch(orelse), labels=names[:nouts], where=where, stage_lists=True)
    set_state(_write_back(init[:nouts], outputs) + init[nouts:])


def while_stmt(test, body, get_state, set_state, symbol_names, opts):
    """Graph path of ``while``: a ``While`` op whose loop variables are the state."""
    where = _here("the while loop")
    init = tuple(get_state())
    names = _names(symbol_names, init)
    opts = opts or {}

    def trace(init, staged):
        flat, labels = _flatten_state(init, names, staged)

        def cond_fn(values):
            set_state(_pack_state(init, values, staged))
            return test()

        def body_fn(values):
            set_state(_pack_state(init, values, staged))
            body()
            return _flatten_like(init, _read_state(get_state, where), names, where, staged)

        return build_while(cond_fn, body_fn, flat, labels=labels, where=where,
                           invariants=_loop_invariants(opts, flat, labels, where),
                           maximum_iterations=opts.get("maximum_iterations"), stage_lists=True)

    final, init, staged = _trace_loop(trace, init)
    set_state(_write_back(init, _pack_state(init, final, staged)))


def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """Graph path of ``for``: a ``While`` over a hidden counter that indexes the iterable."""
    where = _here("the for loop")
    sequence = _as_sequence(iter_, where)
    length = sequence.length()
    counter0 = apply.constant(0, sequence.index_dtype, weak=True)  # an index: a Python int
    init = tuple(get_state())
    names = _names(symbol_names, init)
    opts = opts or {}

    def trace(init, staged):
        flat, labels = _flatten_state(init, names, staged)

        def cond_fn(values):
            set_state(_pack_state(init, values[1:], staged))
            more = ops.less(values[0], length)
            if extra_test is None:
                return more
            extra = extra_test()
            if isinstance(extra, Tensor):
                return ops.logical_and(more, as_predicate(extra, where))
            return more if extra else apply.constant(False)

        def body_fn(values):
            index = values[0]
            set_state(_pack_state(init, values[1:], staged))
            body(sequence.item(index))
            return [index + 1, *_flatten_like(init, _read_state(get_state, where), names, where, staged)]

        invariants = _loop_invariants(opts, flat, labels, where)
        return build_while(cond_fn, body_fn, [counter0, *flat], labels=["<loop counter>", *labels], where=where,
                           invariants=None if invariants is None else [None, *invariants],
                           maximum_iterations=opts.get("maximum_iterations"), stage_lists=True)

    final, init, staged = _trace_loop(trace, init)
    set_state(_write_back(init, _pack_state(init, final[1:], staged)))


# --------------------------------------------------------------------------
# What a tensor for loop iterates over
# --------------------------------------------------------------------------


def _static_int(tensor):
    """A Python int for a tensor whose value is known while tracing (a Const), else the tensor."""
    value = static_value(tensor)
    return tensor if value is None else int(value)


class _TensorItems:
    """The rows of a tensor (its first dimension)."""

    def __init__(self, tensor, where):
        if tensor.shape is not None and len(tensor.shape) == 0:
            raise TracingError(
                f"{where} iterates over the scalar tensor {tensor.name}; only tensors with at least one "
                "dimension can be iterated (over their first dimension)."
            )
        self.tensor = tensor
        self.index_dtype = dtypes.int32

    def length(self):
        return len_(self.tensor)

    def item(self, index):
        return ops.gather(self.tensor, index, axis=0)


class TensorRange:
    """``range(start, stop, step)`` with tensor bounds: what ``range_`` returns for a ``for`` loop."""

    __ag_staged_iterable__ = True

    def __init__(self, start, stop, step, dtype=None, python_ints=True):
        for value in (start, stop, step):
            kind = value.dtype.kind if isinstance(value, Tensor) else np.asarray(value).dtype.kind
            if kind not in "iub":
                raise TracingError(
                    f"range() at {user_location_text()} got {value!r}, which is not an integer; "
                    "cast it with int() first."
                )
        if type(step) is int and step == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop, self.step = start, stop, step
        # Python's range() yields Python ints (weakly typed); iterating rt.range gives numpy values
        self.python_ints = python_ints
        strong = [v.dtype for v in (start, stop, step) if isinstance(v, Tensor)]
        weak = [v for v in (start, stop, step) if not isinstance(v, Tensor)]
        if dtype is not None:
            self.index_dtype = dtypes.as_dtype(dtype)
        elif strong:
            self.index_dtype = dtypes.result_type(*strong, *[int(v) for v in weak])
        else:
            self.index_dtype = dtypes.int64

    def __repr__(self):
        return f"TensorRange({self.start!r}, {self.stop!r}, {self.step!r})"

    def __iter__(self):
        raise TracingError(
            f"{self!r} is a range with tensor bounds; only a converted `for` loop can iterate over it. "
            "Convert the function, or use rt.while_loop."
        )

    def length(self):
        """``len(range(start, stop, step))``: a Python int when the bounds are, else a scalar tensor."""
        start, stop, step = self.start, self.stop, self.step
        if not any(isinstance(v, Tensor) for v in (start, stop, step)):
            return len(range(start, stop, step))
        span = stop if type(start) is int and start == 0 else stop - start
        if type(step) is int:
            if step == 1:
                count = span
            elif step > 0:
                count = (span + (step - 1)) // step
            else:
                count = (span + (step + 1)) // step
        else:
            count = ops.where(step > 0, (span + step - 1) // step, (span + step + 1) // step)
        return ops.maximum(count, 0)

    def item(self, index):
        value = index
        if not (type(self.step) is int and self.step == 1):
            value = value * self.step
        if not (type(self.start) is int and self.start == 0):
            value = value + self.start
        if self.python_ints:
            return _python_number(value, value.dtype)
        if value.weak:
            return ops.cast(value, value.dtype)
        return value


class _Enumerate:
    __ag_staged_iterable__ = True

    def __init__(self, sequence, start):
        self.sequence, self.start = sequence, start
        self.index_dtype = sequence.index_dtype

    def length(self):
        return self.sequence.length()

    def item(self, index):
        position = index if type(self.start) is int and self.start == 0 else index + self.start
        return _python_number(position, position.dtype), self.sequence.item(index)


class _Zip:
    __ag_staged_iterable__ = True

    def __init__(self, sequences):
        self.sequences = sequences
        self.index_dtype = dtypes.result_type(*[s.index_dtype for s in sequences])

    def length(self):
        lengths = [s.length() for s in self.sequences]
        result = lengths[0]
        for other in lengths[1:]:
            if isinstance(result, int) and isinstance(other, int):
                result = min(result, other)
            else:
                result = ops.minimum(result, other)
        return result

    def item(self, index):
        return tuple(s.item(index) for s in self.sequences)


def _as_sequence(iterable, where):
    if isinstance(iterable, Tensor):
        if iterable.op.type == "Range" and dtypes.is_integer(iterable.dtype):
            # rt.range(...): count instead of materializing the range and gathering from it
            return TensorRange(*[_static_int(t) for t in iterable.op.inputs], dtype=iterable.dtype,
                               python_ints=False)
        return _TensorItems(iterable, where)
    if isinstance(iterable, (TensorRange, _Enumerate, _Zip)):
        return iterable
    if isinstance(iterable, range):
        return TensorRange(iterable.start, iterable.stop, iterable.step)
    if type(iterable) in (list, tuple) and iterable:
        return _TensorItems(staged_list.stack(list(iterable), label="iterable", where=where), where)
    raise TracingError(
        f"{where} iterates over {type(iterable).__name__} {iterable!r} together with tensors; a tensor loop "
        "can iterate over tensors, range() and non-empty lists of numbers or tensors."
    )


# --------------------------------------------------------------------------
# Expressions: a if c else b, and, or, not, assert
# --------------------------------------------------------------------------


def if_exp(cond, if_true, if_false, expr_repr):
    """``if_true() if cond else if_false()`` for a tensor ``cond``: an ``If``."""
    if not isinstance(cond, Tensor):
        return if_true() if cond else if_false()
    where = _here(f"the conditional expression `... if {expr_repr} else ...`")
    (value,) = build_cond(cond, lambda: (if_true(),), lambda: (if_false(),), labels=["value"], where=where)
    return value


def and_(a, b):
    """``a() and b()`` where ``a()`` is a tensor: ``b`` runs (in an ``If``) only when ``a`` is true."""
    value = a()
    if not isinstance(value, Tensor):
        return value and b()
    where = _here("the `and`")
    (result,) = build_cond(value, lambda: (b(),), lambda: (value,), labels=["result"], where=where)
    return _without_branching(result, value, "then_branch", "else_branch", "logical_and")


def or_(a, b):
    """``a() or b()`` where ``a()`` is a tensor: ``b`` runs (in an ``If``) only when ``a`` is false."""
    value = a()
    if not isinstance(value, Tensor):
        return value or b()
    where = _here("the `or`")
    (result,) = build_cond(value, lambda: (value,), lambda: (b(),), labels=["result"], where=where)
    return _without_branching(result, value, "else_branch", "then_branch", "logical_or")


# Ops that cannot fail and have no side effects: a right operand of and/or
# computed only with these, on scalars, needs no If -- evaluating it always
# gives the same result, more cheaply (LogicalAnd / LogicalOr).
_TOTAL_OPS = frozenset({
    "Const", "Identity", "Cast", "Add", "Sub", "Mul", "Neg", "Abs", "Square", "Maximum", "Minimum",
    "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
    "LogicalAnd", "LogicalOr", "LogicalNot",
})


def _without_branching(result, value, operand_attr, passthrough_attr, logical_op):
    """Replaces the ``If`` of a bool ``and``/``or`` by ``LogicalAnd``/``LogicalOr`` when that is safe.

    Safe when the lazy operand's branch holds only ``_TOTAL_OPS`` on scalars
    and the other branch just passes ``value`` through.  The ``If`` was the
    last op added, so it is removed and its operand branch inlined.
    """
    op = result.op
    graph = op.graph
    if op.type != "If" or graph.operations[-1] is not op or len(op.outputs) != 1:
        return result
    if value.dtype != dtypes.bool_ or result.dtype != dtypes.bool_ or value.shape != ():
        return result
    operand = graph.library[op.attrs[operand_attr]]
    passthrough = graph.library[op.attrs[passthrough_attr]]
    pred = op.inputs[0]  # ``value`` in this graph
    outer_of = {id(inner): outer for outer, inner in operand.captures}
    passed = {id(inner): outer for outer, inner in passthrough.captures}.get(id(passthrough.outputs[0]))
    if passed is not pred:
        return result
    if operand.is_stateful() or any(o.type != "Placeholder" and o.type not in _TOTAL_OPS for o in operand.operations):
        return result
    if any(t.shape != () for o in operand.operations for t in o.outputs):
        return result
    graph.operations.pop()
    for attr in (operand_attr, passthrough_attr):
        del graph.library[op.attrs[attr]]
    rhs = _inline(operand, outer_of, graph)
    return getattr(ops, logical_op)(pred, rhs)


def _inline(sub_graph, outer_of, graph):
    """Copies the ops of ``sub_graph`` into ``graph`` (captures mapped by ``outer_of``); returns its output."""
    mapped = dict(outer_of)
    for op in sub_graph.operations:
        if op.type == "Placeholder":
            continue
        inputs = [mapped[id(t)] for t in op.inputs]
        copy = graph.add_op(op.type, inputs, op.attrs, [(t.dtype, t.shape) for t in op.outputs],
                            location=op.location, name=op.name)
        for old, new in zip(op.outputs, copy.outputs):
            new.weak = old.weak
            mapped[id(old)] = new
    return mapped[id(sub_graph.outputs[0])]


def not_(a):
    """``not a`` for a tensor: ``LogicalNot`` (``a == 0`` for numbers, as Python's truth)."""
    if not isinstance(a, Tensor):
        return not a
    if a.dtype == dtypes.bool_:
        return ops.logical_not(a)
    return ops.equal(a, 0)


def assert_(cond, message=None):
    """``assert cond, message()`` for a tensor ``cond``: a stateful ``Assert`` checked at every run."""
    if not isinstance(cond, Tensor):
        if not cond:
            raise AssertionError(message() if message is not None else None)
        return None
    location = user_location() or "<unknown>"
    text = message() if message is not None else None
    if isinstance(text, Tensor):
        text = f"assertion failed at {location} (message tensor {text.name})"
    elif text is None:
        text = f"assertion failed at {location}"
    else:
        text = str(text)
    if cond.dtype != dtypes.bool_:
        cond = ops.not_equal(cond, 0)
    apply.apply_op("Assert", [cond], {"message": text})
    return None


# --------------------------------------------------------------------------
# Builtins on tensors
# --------------------------------------------------------------------------


def range_(*args):
    """``range(...)`` with a tensor bound: a ``TensorRange`` that ``for_stmt`` loops over."""
    if not 1 <= len(args) <= 3:
        raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
    if len(args) == 1:
        return TensorRange(0, args[0], 1)
    if len(args) == 2:
        return TensorRange(args[0], args[1], 1)
    return TensorRange(*args)


def len_(obj):
    """``len(t)``: the static first dimension if known, else a weakly typed scalar ``int32`` tensor."""
    if isinstance(obj, (TensorRange, _Enumerate, _Zip)):
        return obj.length()
    if not isinstance(obj, Tensor):
        return len(obj)
    if obj.shape is not None:
        if len(obj.shape) == 0:
            raise TracingError(
                f"len() of the scalar tensor {obj.name} at {user_location_text()}: a scalar has no "
                "length. Use it directly, or reshape it."
            )
        if obj.shape[0] is not None:
            return obj.shape[0]
    return _python_number(ops.shape(obj)[0], dtypes.int32)


def _python_number(x, dtype):
    """``x`` as the weakly typed tensor Python's ``int()``/``float()``/``len()`` would give (a Python number)."""
    if x.weak and x.dtype == dtype:
        return x
    return ops.cast(x, dtype, weak=True)


def int_(x, base=None):
    """``int(t)``: a weakly typed integer tensor (int64; an integer tensor keeps its dtype).

    Python's ``int()`` gives a Python number, which NEP 50 types weakly:
    ``int(n) * x`` keeps a float32 ``x`` float32.
    """
    if base is not None:
        raise TracingError(f"int() of the tensor {x.name} with a base is not supported; tensors are numbers.")
    return _python_number(x, x.dtype if dtypes.is_integer(x.dtype) else dtypes.int64)


def float_(x):
    """``float(t)``: a weakly typed float64 tensor (a Python float)."""
    return _python_number(x, dtypes.float64)


def abs_(x):
    return ops.abs(x)


def extremum(args, which):
    """``max(a, b, ...)`` / ``min(...)`` with tensors: ``rt.maximum``/``rt.minimum`` of them; of one
    tensor, ``rt.reduce_max``/``reduce_min`` over its first axis (what Python's loop over its rows gives)."""
    if len(args) == 1:
        (only,) = args
        if not isinstance(only, Tensor) or only.shape == ():
            raise TracingError(
                f"{_here(which + '()')}: {which}() of one value needs an iterable; give it a tensor with at "
                f"least one dimension, or several values."
            )
        return (ops.reduce_max if which == "max" else ops.reduce_min)(only, axis=0)
    combine = ops.maximum if which == "max" else ops.minimum
    result = args[0]
    for value in args[1:]:
        result = combine(result, value)
    return result


def enumerate_(iterable, start=0):
    """``enumerate(t)``: pairs ``(index, row)`` that ``for_stmt`` loops over."""
    return _Enumerate(_as_sequence(iterable, _here("enumerate()")), start)


def zip_(*iterables, strict=False):
    """``zip(a, b, ...)`` with tensors: tuples of rows that ``for_stmt`` loops over."""
    where = _here("zip()")
    if strict:
        raise TracingError(f"{where}: zip(strict=True) over tensors is not supported; check lengths first.")
    return _Zip([_as_sequence(x, where) for x in iterables])


def print_(*args, sep=" ", end="\n", file=None, flush=False):
    """``print(...)`` with tensors: ``rt.print``, which prints at every execution of the graph."""
    del flush
    return state.print(*args, sep=sep, end=end, output_stream=file)


# --------------------------------------------------------------------------
# Lists and item updates
# --------------------------------------------------------------------------


def list_append(target, item):
    """``l.append(x)`` on a staged list (a tensor of stacked elements)."""
    return staged_list.list_append(target, item)


def list_pop(target, index=None):
    """``l.pop(i)`` on a staged list: ``(rest, item)``."""
    return staged_list.list_pop(target, index)


# augmented assignment as written (``'+='``) -> the Python operator, from the one table of
# spellings (the binary operators with a reflected form: arithmetic, ``@``, ``&``, ``|``, ``^``)
_AUGMENTED = {
    "=": lambda old, new: new,
    **{s.template.split()[1] + "=": getattr(operator, s.dunder) for s in spellings.SPELLINGS if s.reflected},
}


def aug_setitem(target, index, op, value):
    """``target[index] op= value`` for a tensor: a new tensor with entry ``index`` (first axis) updated.

    ``op`` is the operator as written (``'+='``); ``'='`` replaces the entry.
    """
    where = _here(f"the `x[i] {op} v`")
    if isinstance(index, tuple) or isinstance(index, slice) or op not in _AUGMENTED:
        raise TracingError(
            f"{where}: updating a tensor in place is supported for one integer index on the first axis "
            "only. Build the new tensor with rt.where or rt.concat."
        )
    if isinstance(index, Tensor) and index.shape not in ((), None):
        raise TracingError(f"{where}: the index {index.name} must be a scalar.")
    if target.shape is None or not target.shape:
        raise TracingError(f"{where}: {target.name} must have a known rank of at least 1.")
    updated = _AUGMENTED[op](target[index], value)
    if isinstance(updated, Tensor) and updated.dtype != target.dtype:
        updated = ops.cast(updated, target.dtype)
    length = len_(target)
    if type(index) is int and index < 0:
        index = index + length
    elif isinstance(index, Tensor):
        index = ops.where(index < 0, index + ops.cast(length, index.dtype) if isinstance(length, Tensor)
                          else index + length, index)
    index_dtype = index.dtype if isinstance(index, Tensor) else dtypes.int32
    positions = ops.range(0, length, 1, dtype=index_dtype)
    mask = ops.equal(positions, index)
    mask = ops.reshape(mask, [-1] + [1] * (len(target.shape) - 1))
    return ops.where(mask, updated, target)
