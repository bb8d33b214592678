"""Tracing a tensor ``if``: both branches into sub-graphs, one ``If`` op (``build_cond``).

The rules (outputs on both paths, dtypes, Python values, unset return
values) are stated in ``autograph.runtime.tracing``'s docstring.
"""

from __future__ import annotations

from autograph.runtime.core import dtypes, nest
from autograph.runtime.core.graph import current_graph
from autograph.runtime.core.tensor import Tensor, is_weak, weak_number
from autograph.runtime.errors import TracingError
from autograph.runtime.ops import apply, list_operators
from autograph.runtime.ops.list_operators import StagedList
from autograph.runtime.tracing import staged_list
from autograph.runtime.tracing.values import (
    as_predicate, describe_value, emit, is_return_placeholder, is_strong, is_undefined, refuse_int_beside_wrapping,
    refuse_float_beyond, refuse_int_beyond, refuse_int_beyond_int64, same_python, to_tensor_in, trace_subgraph,
    unify_captures, weak_dtype, zeros_like_value,
)

__all__ = ["build_cond", "expand_return_placeholder"]


def _stack_differing_lists(then_out, else_out, then_g, else_g, labels, where):
    """Lists that differ in length between branches become stacked tensors (staged lists), and
    so does a Python list next to a staged list (a loop in the other branch staged it): at the top
    level, or inside tuples and dicts (``return len(l), l``)."""
    then_out, else_out = list(then_out), list(else_out)
    for i, (label, a, b) in enumerate(zip(labels, then_out, else_out)):
        then_out[i], else_out[i] = _staged_pair(a, b, then_g, else_g, label, where)
    return then_out, else_out


def _staged_pair(a, b, then_g, else_g, label, where):
    if type(a) is list and type(b) is list and len(a) != len(b):
        like = a + b
        with then_g.as_default():
            a = staged_list.stack(a, like=like, label=label, where=where)
        with else_g.as_default():
            b = staged_list.stack(b, like=like, label=label, where=where)
    elif type(a) is list and isinstance(b, StagedList):
        with then_g.as_default():
            a = staged_list.stack(a, like=b, label=label, where=where)
    elif type(b) is list and isinstance(a, StagedList):
        with else_g.as_default():
            b = staged_list.stack(b, like=a, label=label, where=where)
    elif type(a) is tuple and type(b) is tuple and len(a) == len(b):
        pairs = [_staged_pair(x, y, then_g, else_g, f"{label}[{k}]", where) for k, (x, y) in enumerate(zip(a, b))]
        a, b = tuple(x for x, _ in pairs), tuple(y for _, y in pairs)
    elif type(a) is dict and type(b) is dict and a.keys() == b.keys():
        for key in a:
            a[key], b[key] = _staged_pair(a[key], b[key], then_g, else_g, f"{label}[{key!r}]", where)
    return a, b


def build_cond(pred, true_fn, false_fn, *, labels, where, stage_lists=False):
    """Traces both branches and emits an ``If``; returns the merged outputs.

    ``true_fn``/``false_fn`` return a sequence with one (possibly nested)
    entry per name in ``labels``; the result has the same entries, with
    tensors for the outputs of the ``If`` and the Python values both branches
    agree on.  ``where`` (``"the if at f.py:3"``) is used in error messages.
    With ``stage_lists``, top-level lists of different lengths become stacked
    tensors (a list appended to in one branch only).
    """
    outer = current_graph()
    pred = as_predicate(pred, where)
    then_g, then_out = trace_subgraph("if_true", outer, lambda g: list(true_fn()))
    # The true branch's values as they are now: a dict or list in them that is not the statement's
    # state (a returned tuple holding the user's dict) is changed in place by the false branch.
    then_out = [nest.copy_containers(value) for value in then_out]
    else_g, else_out = trace_subgraph("if_false", outer, lambda g: list(false_fn()))
    if stage_lists:
        then_out, else_out = _stack_differing_lists(then_out, else_out, then_g, else_g, labels, where)

    results = []
    then_flat, else_flat, slots = [], [], []  # slots: (entry, leaf index, dtype)
    for index, (label, a, b) in enumerate(zip(labels, then_out, else_out)):
        a, b = expand_return_placeholder(a, b), expand_return_placeholder(b, a)
        diff = nest.mismatch(a, b)
        missing = nest.missing_key(a, b) if diff is not None else None
        if missing is not None:
            path, in_true = missing
            only, other = ("true", "false") if in_true else ("false", "true")
            raise TracingError(
                f"'{label}{path}' is set only in the {only} branch of {where}; a tensor if must give a dict "
                f"the same keys on both paths. Set {label}{path} before the if, or in the {other} branch too."
            )
        if diff is not None:
            raise TracingError(
                f"'{label}' has a different structure in the two branches of {where}: {diff} (true "
                "branch vs false branch). Make both branches give it the same structure."
            )
        _refuse_key_orders(label, a, b, where)
        leaves_a, leaves_b = nest.flatten(a), nest.flatten(b)
        merged = list(leaves_a)
        for j, (path, x, y) in enumerate(zip(nest.leaf_paths(a), leaves_a, leaves_b)):
            merged_type = _merge_dtype(label + path, x, y, where)
            if merged_type is None and is_return_placeholder(x):
                merged[j] = y
            if merged_type is not None:
                dtype, weak = merged_type
                then_flat.append(_branch_tensor(then_g, x, y, dtype, weak))
                else_flat.append(_branch_tensor(else_g, y, x, dtype, weak))
                slots.append((index, j, _list_marks(x, y)))
        results.append((a, merged))

    then_g.outputs, else_g.outputs = then_flat, else_flat
    captured = unify_captures([then_g, else_g])
    then_name = outer.add_function(then_g, "if_true")
    else_name = outer.add_function(else_g, "if_false")
    outputs = emit("If", [pred, *captured], {"then_branch": then_name, "else_branch": else_name}, [then_g, else_g])
    for (index, j, marks), tensor in zip(slots, outputs):  # a staged list on either path stays one
        results[index][1][j] = tensor if marks is None else StagedList.mark(tensor, *marks)
    return [nest.pack_as(structure, merged) for structure, merged in results]


def _refuse_key_orders(label, a, b, where):
    """A dict whose keys the two branches insert in other orders: Python iterates it in the order of
    the path taken, which one graph cannot follow."""
    order = nest.key_order_mismatch(a, b)
    if order is not None:
        path, in_true, in_false = order
        raise TracingError(
            f"the dict '{label}{path}' has its keys in the order {in_true} in the true branch but {in_false} "
            f"in the false branch of {where}; Python iterates a dict in the order the path taken inserted "
            "its keys, which one graph cannot follow. Insert the keys in one order on both paths (set them "
            "before the if), or sort the keys where you read them."
        )


def _list_marks(a, b):
    """``(label, numbers)`` for ``StagedList.mark`` of the ``If`` output merging ``a`` and ``b`` if
    either is a staged list (the Python numbers either may hold), else None."""
    labels = [v.label for v in (a, b) if isinstance(v, StagedList)]
    if not labels:
        return None
    return labels[0], list_operators.joined_numbers(*map(list_operators.python_numbers, (a, b)))


def expand_return_placeholder(value, like):
    """An unset return value shaped like the nested value ``like`` (one placeholder per leaf).

    A function may return a tuple on one path; where the return value is
    still unset it takes that structure, each leaf filled with zeros.
    """
    if is_return_placeholder(value) and nest.is_nested(like):
        return nest.pack_as(like, [value] * len(nest.flatten(like)))
    if type(value) is tuple and type(like) is tuple and len(value) == len(like):  # partly expanded already
        return tuple(expand_return_placeholder(v, l) for v, l in zip(value, like))
    if type(value) is dict and type(like) is dict and value.keys() == like.keys():
        return {k: expand_return_placeholder(value[k], like[k]) for k in value}
    return value


def _branch_tensor(graph, value, other, dtype, weak):
    """The branch graph's output for ``value`` (zeros for a still unset return value)."""
    if is_return_placeholder(value):
        with graph.as_default():
            return zeros_like_value(other, dtype, weak)
    if isinstance(value, StagedList) and value.weak and value.dtype != dtype:
        with graph.as_default():  # Python numbers joining a list of another dtype: checked
            captured = StagedList.mark(apply.capture(graph, value), value.label)
            return list_operators.cast_numbers(captured, dtype, weak)
    return to_tensor_in(graph, value, dtype, weak)


def _merge_dtype(label, a, b, where):
    """``(dtype, weak)`` of the ``If`` output merging ``a`` and ``b``; None if ``a`` passes through.

    Two weakly typed values merge weakly typed (numpy's dtype for both); a
    weak value next to a strong one takes the strong one's dtype (NEP 50).
    """
    if a is b:  # the same value in both branches (a tensor from outside them, or a Python value)
        return None
    unset_a, unset_b = is_return_placeholder(a), is_return_placeholder(b)
    if unset_a and unset_b:
        return None
    if unset_a or unset_b:
        other = b if unset_a else a
        if is_strong(other):
            return other.dtype, False
        if is_weak(other):
            return weak_dtype(other), True
        if not isinstance(other, Tensor) and not is_undefined(other):
            return None  # a Python value: the unset one (never used on its path) takes it
    undefined_a, undefined_b = is_undefined(a), is_undefined(b)
    if undefined_a and undefined_b:
        return None
    if undefined_a or undefined_b:
        only = "false" if undefined_a else "true"
        raise TracingError(
            f"'{label}' must be defined in both branches of {where}; it is defined only in the {only} "
            f"branch. Assign {label} before the if or in both branches."
        )
    if not is_strong(a) and not is_strong(b):
        if same_python(a, b):
            return None
        if is_weak(a) and is_weak(b):
            _refuse_bool_beside_number(label, a, b, where)
            return _holding(label, a, b, where, weak_dtype(a, b)), True
        raise TracingError(
            f"'{label}' is {describe_value(a)} in the true branch but {describe_value(b)} in the false "
            f"branch of {where}; a tensor if can only merge tensors and numbers. Compute {label} outside "
            "the if, or make it a tensor in both branches."
        )
    if not all(is_strong(v) or is_weak(v) for v in (a, b)):
        raise TracingError(
            f"'{label}' is {describe_value(a)} in the true branch but {describe_value(b)} in the false "
            f"branch of {where}; a tensor if can only merge tensors and numbers. Give {label} a tensor or "
            "a number in both branches."
        )
    strong = [v.dtype for v in (a, b) if is_strong(v)]
    if len(strong) == 2 and strong[0] != strong[1]:
        raise TracingError(
            f"'{label}' is {strong[0].name} in the true branch but {strong[1].name} in the false branch of "
            f"{where}; both branches must give it the same dtype. Cast one of them, e.g. "
            f"rt.cast({label}, '{strong[1].name}')."
        )
    numbers = [v for v in (a, b) if isinstance(v, StagedList) and v.weak]
    if numbers:  # a staged list of Python numbers: never narrowed (its numbers stay what they are)
        return dtypes.staged_list_result_type(numbers[0].dtype, strong[0]), False
    for value, strong_branch in ((a, "false"), (b, "true")):
        if is_weak(value):
            refuse_int_beside_wrapping(label, strong[0], value, f"in the {strong_branch} branch of {where}")
    return _holding(label, a, b, where, _strong_kept(label, a, b, where, strong[0])), False


def _refuse_bool_beside_number(label, a, b, where):
    """A Python bool on one path and a Python int or float on the other (``ok = False``, ``ok = 1``):
    Python keeps each, and ``ok is False`` or ``isinstance(ok, bool)`` tells them apart; one graph value
    cannot."""
    bools = [type(v) is bool or (isinstance(v, Tensor) and v.dtype == dtypes.bool_) for v in (a, b)]
    if bools[0] != bools[1]:
        number = b if bools[0] else a
        raise TracingError(
            f"'{label}' is a Python bool in the {'true' if bools[0] else 'false'} branch but "
            f"{describe_value(number)} in the other branch of {where}; Python keeps each (`{label} is False`, "
            f"isinstance tell them apart), one graph value cannot. Give it one type on both paths "
            f"(`{label} = bool(...)` or `int(...)`)."
        )


def _strong_kept(label, a, b, where, strong):
    """The merge of the strong dtype ``strong`` of one branch with the Python number of the other, if
    it is ``strong`` (NEP 50); a ``TracingError`` if the number would change it (a Python float
    beside an int or bool tensor, a Python int beside a bool): Python keeps each path's type."""
    merged = dtypes.result_type(strong, *[weak_number(v) for v in (a, b) if is_weak(v)])
    if merged == strong:
        return merged
    branch, number = ("true", b) if is_strong(a) else ("false", a)
    raise TracingError(
        f"'{label}' is {strong.name} in the {branch} branch but {describe_value(number)} in the other "
        f"branch of {where}; one value for both would make the {strong.name} path {merged.name}, where "
        f"Python keeps {strong.name}. Give both branches one kind of number, e.g. "
        f"rt.cast({label}, '{merged.name}') in the {branch} branch, or a number of its kind in the other."
    )


def _holding(label, a, b, where, dtype):
    """``dtype``, the merge of ``a`` and ``b``, if it holds the Python ints among them; else a
    ``TracingError`` naming ``label`` (an int beyond int64, or beside a narrower strong dtype)."""
    for value, branch in ((a, "true"), (b, "false")):
        told = f"in the {branch} branch of {where}"
        refuse_int_beyond_int64(label, value, told)
        refuse_int_beyond(label, dtype, value, told)
        refuse_float_beyond(label, dtype, value, told)
    return dtype
