"""The table of gradient rules: op type -> vector-Jacobian rule, beside ``opdef.REGISTRY``.

A rule is ``rule(fwd, grads) -> list`` with one entry per input of the
op: the cotangent of that input (a tensor, or ``None`` for no gradient).
``grads`` holds one cotangent per output of the op (``None`` for an output
nobody differentiates; a rule of a one-output op always gets a tensor).
``fwd`` is the forward op as the rule may read it (``backprop.Forward``):
``fwd.x(i)`` / ``fwd.y(i)`` give input / output ``i`` as a value usable in
the graph the gradient is built in (inside a gradient ``If``/``While`` that
exposes a forward intermediate: ``cond_grad.py``, ``while_grad.py``),
``fwd.inputs`` / ``fwd.outputs`` the forward tensors themselves (for their
dtypes and static shapes: reading those exposes nothing), ``fwd.attrs``,
``fwd.wants(i)`` whether input ``i`` needs a cotangent.

A rule may return a cotangent of another shape or dtype than its input:
the walker sums it down to the input's shape (undoing broadcasting, once,
for every op) and casts it to the input's dtype.  A cotangent wrapped in
``backprop.Exact`` has the input's shape by construction and is only cast
(where a shape is known only at run time, summing down would read it from
the forward value, which inside a loop means accumulating that value).

``NOT_DIFFERENTIABLE`` lists the op types whose outputs carry no gradient
(comparisons, logical and bit ops, the piecewise constant ``FloorDiv``/
``Rint``/``Round``, ``ArgMax``/``ArgMin``, shapes; integer-valued tensors carry no
gradient whatever made them): paths through them give
none.  ``WITHOUT_RULE`` names the op types that would have a gradient but
have no rule, each with the reason its error gives.  An op type in none of
the tables on a differentiated path is an error naming the op type and the
user's ``file:line`` (``backprop.py``); ops without inputs (``ReadVariable``)
are sources, never on a path.

Each module of rules adds its table here with ``register(rules)``; a new
op's gradient is one entry in one of them.
"""

from __future__ import annotations

GRADIENTS: dict = {}

NOT_DIFFERENTIABLE = frozenset({
    "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
    "LogicalAnd", "LogicalOr", "LogicalXor", "LogicalNot",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift", "Invert",
    "FloorDiv", "Rint", "Round", "PyInt", "PyBool",
    "ArgMax", "ArgMin", "Shape", "Size", "ZerosLike", "OnesLike", "Const", "Placeholder", "Any", "All", "Assert",
    "CheckIndex", "Print",
    # state flows through a variable, not through the graph: as in TensorFlow, an assignment's result
    # carries no gradient to the value assigned (differentiate the read that follows it: ReadVariable)
    "AssignVariable", "AssignAddVariable", "AssignSubVariable",
})

# op types that have a gradient in principle but no rule (yet): op type -> why, for the error
WITHOUT_RULE = {
    "DatasetReduce": "the gradient of a loop over a dataset (one DatasetReduce op) is not supported: loop "
                     "over a tensor of the elements instead",
}


def register(rules: dict) -> None:
    """Adds ``rules`` (op type -> rule) to the table; a type given a rule twice is a programming error."""
    for op_type, rule in rules.items():
        if op_type in GRADIENTS or op_type in NOT_DIFFERENTIABLE:
            raise ValueError(f"op type {op_type!r} already has a gradient entry")
        GRADIENTS[op_type] = rule
