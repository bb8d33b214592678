"""Operators: the functions generated code calls through ``ag__``.

Converted code never runs ``if``/``while``/``for`` on a value it cannot see
statically; it calls one of these operators instead, passing the bodies as
closures.  Each operator splits in two paths:

* the **Python path** (the condition or iterable is a plain Python value):
  runs ordinary Python control flow, so converted code behaves exactly like
  the original function;
* the **graph path** (the condition or iterable is a symbolic ``rt.Tensor``
  while tracing): traces the bodies into sub-graphs and emits a functional
  ``If`` / ``While`` operation (``autograph.runtime.control_flow``).

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
before the statement holds ``Undefined('name')``.

Operators (signatures are fixed; generated code calls them positionally):

* ``if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts)``
  -- ``nouts`` is the number of state variables (the outputs of the ``if``).
* ``while_stmt(test, body, get_state, set_state, symbol_names, opts)`` --
  ``test`` is a zero-argument closure; ``opts`` is a dict
  (``maximum_iterations``, ``shape_invariants``).
* ``for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names,
  opts)`` -- ``body(iterate)``; ``extra_test`` is ``None`` or a zero-argument
  closure checked before each iteration (it carries lowered ``break`` and
  ``return`` flags).
* ``if_exp(cond, if_true, if_false, expr_repr)``, ``and_(a, b)``,
  ``or_(a, b)``, ``not_(a)`` -- the lazy operands are zero-argument closures.
"""
