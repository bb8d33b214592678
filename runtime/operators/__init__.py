"""Operators: the functions generated code calls through ``ag__``.

Converted code never runs ``if``/``while``/``for`` on a value it cannot see
statically; it calls one of these operators instead, passing the bodies as
closures.  Each operator splits in two paths, side by side in the module of
its construct:

* the **Python path** (the condition or iterable is a plain Python value):
  runs ordinary Python control flow, so converted code behaves exactly like
  the original function;
* the **graph path** (any other value): the handler the overload registry
  (``autograph.runtime.operators.dispatch``) has for the value's type.  The
  numpy runtime's symbolic ``rt.Tensor`` registers its handlers (backend
  ``"numpy"``), which trace the bodies into sub-graphs and emit a functional
  ``If`` / ``While`` operation; another backend registers its own for its
  values, without changing these modules.

The modules, by construct: ``if_statements`` (``if_stmt``),
``loop_statements`` (``while_stmt``, ``for_stmt``), ``logical`` (``and_``,
``or_``, ``not_``, ``if_exp``), ``exceptions`` (``assert_``),
``data_structures`` (the list and item operators), ``py_builtins`` (the
builtins; their graph paths in ``tensor_builtins``), ``comprehensions``;
``state`` and ``outside_writes`` hold the traced state mechanics,
``iterables`` what a tensor loop iterates over.

The state contract
------------------
Bodies are zero-argument closures (``for`` bodies take the iterate) that
read and write the enclosing function's variables through ``nonlocal``.
Alongside them the converter emits two closures over the *state*: the
variables a body modifies that are live afterwards (loop variables also when
the body reads them before writing them)::

    def get_state():
        return (i, s)

    def set_state(vars_):
        nonlocal i, s
        (i, s) = vars_

``symbol_names`` is the tuple of the state variables' names, in the same
order, used only for error messages.  A state variable that may be unbound
before the statement holds ``Undefined('name')``.  Statements with the same
state may share one pair.  A statement without state passes ``no_state`` as
both ``get_state`` and ``set_state`` (``()`` and ``0`` outputs); an ``if``
without ``else`` passes ``no_op`` as ``orelse``.

The state model (what is state, and how tensor mode keeps it sound):

* **Names** a body binds: the live ones are the outputs; for an ``if``, the
  names a branch reads or writes in the enclosing scope that are dead after
  it follow the ``nouts`` outputs, so that every traced branch starts from
  the same values (and they get their old values back afterwards).
* **Attribute chains** a body assigns (``self.total``): read with
  ``ag__.getattr_`` (``Undefined`` while unset) and restored with
  ``ag__.setattr_`` (which deletes an attribute that did not exist before).
* **Containers** a body mutates (``x['a'] = v``, ``del x[k]``,
  ``l.append(v)``, ``d.update(e)``): the local name or attribute chain
  holding them.  The graph paths give each traced branch or loop body
  fresh copies of the state's lists and dicts (so tracing never mutates the
  user's objects), compare what the paths made of them, and write the
  results back into the original objects (their identity, and so every
  alias, is kept).
* Python values equal on all paths stay Python values; values that differ
  become ``If`` outputs or loop variables (tensors of one dtype; Python
  numbers are weakly typed and take their tensor counterpart's dtype).
* What cannot be represented is an ``ag.TracingError`` naming the symbol,
  the statement and its ``file:line``: a variable or attribute defined on
  one path only, a dict key set on one path only (``x['b']``), a loop
  that creates or deletes a key, a list a tensor loop rebinds to another
  length or changes other than by ``append``/``pop`` (lists grown with
  ``append`` are *staged*: one tensor of stacked elements, which still
  means a list to Python's operators -- ``+`` concatenates, ``*`` repeats,
  truth is non-emptiness -- see ``runtime/ops/list_operators.py``; a Python
  list meeting a staged one at the end of a tensor ``if`` is staged too).

Operators (signatures are fixed; generated code calls them positionally):

* ``if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts,
  roles=())`` -- ``nouts`` is the number of state variables (the outputs of
  the ``if``); ``roles`` are the roles (below) as ``(role, name)`` pairs, a
  tuple of constants, which an ``if`` in a loop passes at no cost (Python
  builds a dict display at every call); its handler gets an ``opts`` dict.
* Roles: the state variables the return lowering made are named in ``opts``
  of every loop whose state holds them (in the ``roles`` of an ``if``):
  ``'return_value'`` (the value returned, e.g. ``'retval_1'``) and
  ``'return_flag'`` (``'do_return_1'``).
  The runtime knows them only from there, never from their names (a user
  variable called ``retval_`` is an ordinary variable); messages call them
  "the return value" and "the return flag".
* ``while_stmt(test, body, get_state, set_state, symbol_names, opts)`` --
  ``test`` is a zero-argument closure; ``opts`` is a dict
  (``maximum_iterations``, ``shape_invariants``, and ``extra_test``: a
  zero-argument closure carrying lowered ``break``/``return`` flags,
  checked before ``test``; the graph path gets the two combined,
  ``and_(extra_test(), test)``, and the other options).  The Python path
  evaluates ``test()`` before each iteration; as soon as it is a ``Tensor``
  (at once, or after some Python iterations, e.g. a ``break`` flag set in a
  tensor ``if``) the rest of the loop is handed, with the same arguments, to
  the ``while_stmt`` handler (``loop_statements.staged_while_stmt``), which
  continues from the current state and calls ``test`` again while tracing
  (the numpy runtime's own handler is also given the graph's mark from
  before the evaluation that found the test staged, and forgets its ops, so
  that a test's effects happen as often as in Python).
* ``for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names,
  opts)`` -- ``body(iterate)``; ``extra_test`` is ``None`` or a zero-argument
  closure checked before each iteration (it carries lowered ``break`` and
  ``return`` flags).  ``opts['iterate_names']`` is the loop target as
  written (``'i'``, ``'k, v'``).  A ``Tensor`` iterable, or an object whose
  class sets ``__ag_staged_iterable__ = True`` (what ``tensor_builtins.range_``
  returns for a tensor bound), goes to ``loop_statements.staged_for_stmt``;
  while tracing, an object whose class defines ``__ag_for_stmt__`` (a
  dataset) runs the loop itself.  A Python
  iterable whose ``extra_test()`` becomes a ``Tensor`` continues unrolled:
  each remaining iteration runs as ``if_stmt(extra_test_value, lambda:
  body(item), no_op, get_state, set_state, symbol_names, len(symbol_names))``.
* ``if_exp(cond, if_true, if_false, expr_repr)``, ``and_(a, b)``,
  ``or_(a, b)``, ``not_(a)`` -- the lazy operands (``if_true``,
  ``if_false``, ``b``) are zero-argument closures; ``a`` and ``cond`` are
  values (Python evaluates them first in any case); ``expr_repr`` is the
  condition's source text.  A handler gets the same arguments (``a`` as
  the value already computed, so it is never evaluated twice); the numpy
  runtime's are in ``logical``.
* ``list_comp(iter_, elt, cond)``, ``generator_exp(iter_, elt, cond)`` --
  a one-``for`` comprehension, ``elt``/``cond`` closures of the item
  (``cond`` ``None`` without a filter): Python's list or lazy generator, or
  over a staged iterable a tensor loop making a staged list;
  ``comprehension_iterable(iter_, construct)`` -- the first iterable of a
  comprehension left as written, refused if staged
  (``operators/comprehensions.py``).  ``sum``/``any``/``all`` dispatch a
  staged iterable there.
* ``raise_(exc, cause=<none>)`` -- ``raise exc`` (``from cause``) nested in
  control flow is ``raise ag__.raise_(exc)``: returns ``exc`` (its cause
  set), except while a branch of a tensor ``if`` is traced, where it records
  an op raising ``exc`` when the graph runs that branch, and the branch
  gives no values (``operators/raises.py``).
* ``python_condition(value, construct, targets)`` -- ``value`` unchanged
  unless it is a ``Tensor``, then a ``TracingError``: wraps the deciding
  operands of an ``and``/``or``/conditional expression left as written
  because a walrus in an operand Python may skip binds ``targets``.
* ``assert_(cond, message)`` -- ``message`` is ``None`` or a closure
  returning the assertion message; graph path ``exceptions.staged_assert``.
* ``Undefined('x')`` -- the value of a variable not defined on every path;
  any use raises ``UnboundLocalError`` naming ``x`` and the user's line.
  ``is_undefined(v)`` tests for it; ``defined(v)`` returns ``v`` or raises
  that error (generated code wraps a returned variable that may be unbound).
  ``UndefinedReturnValue()`` -- the initial value of ``retval_`` when the
  original function returns on every path (so it is never returned); the
  graph path recognizes it by class name and may fill it with zeros.
* ``list_append(l, x) -> l``, ``list_extend(l, xs) -> l``, ``list_pop(l, i=None) -> (l, item)``,
  ``del_item(x, i) -> x`` (``del x[i]``; a staged list loses the item),
  ``aug_setitem(x, i, op, v) -> x`` (``op`` is the operator as written,
  ``'+='``, or ``'='`` to store ``v``; ``m[i][j] += v`` nests two calls):
  generated code rebinds the receiver with the result.  ``unpacked(values,
  containers) -> values`` (``m[0], m[1] = ag__.unpacked((m[1], m[0]), (m, m))``)
  refuses a value that is a numpy view of an array an earlier target stores into.  Their
  handlers get the same arguments (the numpy runtime's, for a ``Tensor``:
  ``data_structures.staged_append``, ..., ``staged_setitem``, which is
  ``ops.indexing.setitem``, and ``staged_del_item``).
* ``converted_call(f, /, *args, **kwargs)`` -- calls ``f``, converting it
  first if it is user code (see ``calls``).
* builtins ``range``, ``len``, ``print``, ``int``, ``float``, ``bool``,
  ``abs``, ``max``, ``min``, ``enumerate``, ``zip``, ``reversed``,
  ``isinstance``, ``type`` (``py_builtins.BUILTINS``): the builtin for Python
  values; for a ``Tensor`` argument the handler registered under the
  builtin's name (``"len"``, ...): ``tensor_builtins.len_``, ``print_``,
  ``abs_``, ``enumerate_``, ``zip_``, ``range_``, ``int_``, ``float_``,
  ``bool_``, ``extremum``, ``reversed_``, ``isinstance_``, ``type_`` (Python's answers for the values the tensors
  stand for; same arguments); ``len``, ``enumerate``, ``zip``,
  ``reversed``, ``sum``, ``any`` and ``all`` also send staged iterables (classes setting
  ``__ag_staged_iterable__``, e.g. ``range(n)`` with a tensor ``n``) there.
  ``slice`` is the builtin (``x[a:b] = v`` lowers to
  ``aug_setitem(x, ag__.slice(a, b, None), '=', v)``).
* ``shape_of(x)`` -- ``x.shape`` as read: ``x.shape`` itself, except for a
  symbolic tensor with unknown dimensions, whose unknown sizes are scalar
  tensors (``operators/shapes.py``; handler ``"shape"``).
  ``array_attribute_store(v, x, name)`` -- the value of ``x.shape = v`` (or
  ``.dtype``): refused for a symbolic tensor, ``v`` for anything else.

Each graph path lives beside its Python path and registers itself with
``dispatch.register(operator, detect, handler, backend="numpy")`` when its
module is imported; a Python path asks ``dispatch.handler_for(operator,
value)`` only after its fast checks (``cond is True``, a plain type).
"""

from autograph.runtime.operators.calls import (
    DO_NOT_CONVERT_ATTR,
    converted_call,
    register_converted_code,
    set_conversion_hook,
)
from autograph.runtime.operators.data_structures import (
    aug_setitem, del_item, getattr_, list_append, list_extend, list_pop, setattr_, unpacked,
)
from autograph.runtime.operators.exceptions import assert_
from autograph.runtime.operators.logical import and_, compare_chain, if_exp, not_, or_, python_condition
from autograph.runtime.operators.comprehensions import comprehension_iterable, generator_exp, list_comp
from autograph.runtime.operators.py_builtins import (
    abs_ as abs,
    all_ as all,
    any_ as any,
    bool_ as bool,
    enumerate_ as enumerate,
    float_ as float,
    int_ as int,
    isinstance_ as isinstance,
    len_ as len,
    max_ as max,
    min_ as min,
    print_ as print,
    range_ as range,
    reversed_ as reversed,
    slice_ as slice,
    sum_ as sum,
    type_ as type,
    zip_ as zip,
)
from autograph.runtime.operators.handlers import python_try, python_with
from autograph.runtime.operators.raises import caught, raise_
from autograph.runtime.operators.shapes import array_attribute_store, shape_of
from autograph.runtime.operators.if_statements import if_stmt, no_op, no_state
from autograph.runtime.operators.loop_statements import for_stmt, while_stmt
from autograph.runtime.core.undefined import Undefined, UndefinedReturnValue, defined, is_undefined

__all__ = [
    "DO_NOT_CONVERT_ATTR", "Undefined", "UndefinedReturnValue", "abs", "and_", "array_attribute_store", "assert_",
    "aug_setitem",
    "del_item",
    "compare_chain",
    "converted_call", "defined", "enumerate", "float", "for_stmt", "getattr_", "if_exp", "if_stmt", "int",
    "is_undefined",
    "bool", "isinstance", "reversed", "slice", "type",
    "len", "list_append", "list_extend", "list_pop", "max", "min", "no_op", "no_state", "not_", "or_", "print",
    "python_condition", "python_try", "python_with", "caught", "raise_", "range", "all", "any", "sum", "list_comp", "generator_exp",
    "comprehension_iterable",
    "register_converted_code", "set_conversion_hook", "setattr_", "shape_of", "unpacked", "while_stmt", "zip",
]
