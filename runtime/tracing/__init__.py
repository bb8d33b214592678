r"""Tracing: Python functions, branches and loop bodies recorded into graphs.

``rt.function`` (``function``: options, binding, cache keys in
``signature``, the trace step, concrete functions), tensor ``if``\ s
(``branches.build_cond``) and loops (``loops.build_while``; each loop
value is a ``loop_slots.Slot``, a weak counter's dtype ``weak_loop_vars``,
and ``retrace`` owns retracing: the rounds of a body's traces and the
restaging of the state's structure, which the operators only ask for) over
the values and sub-graph bookkeeping of ``values``, staged lists, and
``rt.cond``/``rt.while_loop`` (``functional_api``).

The rules of traced control flow
--------------------------------
``build_cond`` traces two branches and emits an ``If``; ``build_while``
traces a loop condition and body and emits a ``While`` (the ops are defined
in ``ops/functional_control_flow``).  ``rt.cond``, ``rt.while_loop`` and the operators of
converted code all go through them.

Rules:

* Branch outputs: every output must exist in both branches with the same
  dtype; shapes merge to the most specific shape covering both (``[3]`` and
  ``[4]`` give ``[?]``).  Python values equal in both branches pass through
  without becoming tensors; Python numbers that differ become tensors.
* Weak typing (NEP 50, ``Tensor.weak``): Python numbers and weakly typed
  tensors take the dtype of a strongly typed counterpart: ``x = 0`` in one
  branch and an int32 tensor in the other gives an int32 output.  An output
  that is weakly typed in both branches (``y = 1.0`` / ``y = 2.0``) is a
  weakly typed ``If`` output, so ``y * x`` with a float32 ``x`` is float32,
  as in Python.
* Loop variables keep their dtype: a tensor whose dtype changes across an
  iteration is a ``TracingError`` (cast it before the loop).  A variable
  that starts as a Python number (or a weak tensor) stays weakly typed
  while the body keeps it a number (``n = 0; for ...: n += 1`` is a weak
  counter, so ``s / n`` keeps a float32 ``s`` float32); it takes the dtype
  a tensor in the loop gives it (``i = 0; while i < n: i += 1`` with an
  int32 ``n`` gives an int32 ``i``), and becomes strongly typed, with the
  body traced again, when the body makes it a strongly typed tensor
  (``t = 0.0; while ...: t = t + x`` with a float32 ``x`` gives a float32
  ``t``).
* Shapes: a loop variable whose static shape changes across an iteration
  is **relaxed automatically**: the dimensions that change become unknown
  (``None``; a changing rank becomes an unknown rank) and the body is traced
  again with the relaxed shape.  ``shape_invariants`` states a shape up
  front instead; a body result that does not fit a stated invariant is a
  ``TracingError``.
* Undefined variables (the operators' ``Undefined``): one defined in only
  one branch, or first assigned in a tensor loop and used after it, is a
  ``TracingError`` naming it and the statement.  The return lowering's
  ``UndefinedReturnValue`` (a return value set on every path that reaches
  the end of the function) is filled with zeros where it is still unset.
* Python values the body leaves alone pass through the loop unchanged; a
  Python list the body appends to is staged (``staged_list``: one tensor
  of stacked elements, whose element shape is what the trace knows of all
  of them, TensorArray-like; elements of different shapes when the graph
  runs are an ``ExecutionError`` naming the list; a list of Python numbers
  only is weakly typed, as its elements are), and so is a list the loop
  returns inside a tuple or dict (``return len(out), out``); any other
  Python value the body changes is a ``TracingError``.
* The body is traced more than once when needed (a first trace discovers
  which Python values become tensors, further traces relax shapes; a
  Python int or float the loop changes is traced as a weakly typed loop
  variable from the first trace, and if the body leaves it a Python value,
  or fails on it as a tensor, the loop is traced again on its value), so
  Python side effects in a tensor loop body (a Python ``print``) may run
  more than once while tracing; ``rt.print`` runs once per iteration.
  Library functions of traces that are thrown away are removed again.
"""
