"""Small AST helpers shared by the converters: walking statement lists and scopes."""

from __future__ import annotations

import gast

from autograph.pyct import anno

BLOCK_FIELDS = ("body", "orelse", "finalbody")
FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)
SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
LOOPS = (gast.While, gast.For, gast.AsyncFor)

SKIP = "skip"
"""Annotation on nested functions converters must leave alone (generators, async)."""

FUNCTIONS_CACHE = "functions"
"""Annotation on the converted function: the result of ``functions`` (set once
the ``unsupported`` pass has marked the ``SKIP`` functions; passes add none)."""


def child_blocks(node):
    """The statement lists directly owned by ``node`` (bodies, handlers, cases)."""
    fields, owners = _block_layout(type(node))
    if not fields and not owners:  # most statements: no block
        return []
    values = node.__dict__
    blocks = [(node, field) for field in fields if type(values.get(field)) is list]
    for field in owners:
        blocks.extend((owner, "body") for owner in values.get(field) or ())
    return blocks


_BLOCK_LAYOUTS: dict = {}  # node class -> (its BLOCK_FIELDS, its fields of handlers or cases)


def _block_layout(kind):
    layout = _BLOCK_LAYOUTS.get(kind)
    if layout is None:
        fields = kind._fields
        layout = _BLOCK_LAYOUTS[kind] = (tuple(f for f in BLOCK_FIELDS if f in fields),
                                         tuple(f for f in ("handlers", "cases") if f in fields))
    return layout


def transform_blocks(node, fn, into_functions=True):
    """Replaces every statement list under ``node`` by ``fn(list)``, innermost first.

    Does not enter nested functions when ``into_functions`` is false, nor
    functions annotated ``SKIP``, nor class bodies.
    """
    for owner, field in child_blocks(node):
        statements = getattr(owner, field)
        for statement in statements:
            kind = type(statement)
            if kind is gast.ClassDef or anno.get(statement, SKIP, False):
                continue
            if kind in FUNCTIONS and not into_functions:
                continue
            transform_blocks(statement, fn, into_functions)
        setattr(owner, field, fn(statements))


def walk_scope(node):
    """Every node of ``node``'s own scope, in source order (not entering nested scopes)."""
    stack = _children_reversed(node)
    while stack:
        current = stack.pop()
        yield current
        if type(current) not in SCOPES:
            stack.extend(_children_reversed(current))


def scope_statements(statements):
    """Every statement in ``statements`` and in the blocks nested in them, in source order,
    not entering nested scopes (a nested ``def`` is yielded, its body is not).

    For questions about statements only (``return``, ``nonlocal``): it skips the
    expressions, which are most of the nodes ``walk_scope`` visits.
    """
    stack = list(reversed(statements))
    while stack:
        statement = stack.pop()
        yield statement
        if type(statement) not in SCOPES:
            stack.extend(reversed(_blocks_in_order(statement)))


def _blocks_in_order(statement) -> list:
    """The statements of ``statement``'s blocks, in source order (a try's handlers
    before its ``else``)."""
    nested = []
    values = statement.__dict__
    for field in statement._fields:
        if field in BLOCK_FIELDS:
            nested.extend(values[field])
        elif field in ("handlers", "cases"):
            for owner in values[field]:
                nested.extend(owner.body)
    return nested


def walk(node):
    """``node`` and every node under it, parents before children (``gast.walk``'s nodes,
    in depth-first order: for analyses that collect into sets)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(_children_reversed(current))


def _children_reversed(node) -> list:
    """The direct child nodes of ``node``, last first (fields are read from the node's
    dict: every pass walks every node, so this is the converters' innermost loop)."""
    children = []
    values = node.__dict__
    for field in node._fields:
        value = values.get(field)
        if type(value) is list:
            children.extend([item for item in value if isinstance(item, gast.AST)])
        elif isinstance(value, gast.AST):
            children.append(value)
    children.reverse()
    return children


def functions(node):
    """``node`` (a def) and every convertible def nested in it, outermost first.

    A lambda has no statements: for a lambda ``node`` the result is empty.
    """
    if type(node) is gast.Lambda:
        return []
    cached = anno.get(node, FUNCTIONS_CACHE, None)
    if cached is not None:
        return cached
    result = [node]
    stack = [node]
    while stack:
        current = stack.pop()
        for child in walk_scope(current):
            if type(child) in FUNCTIONS and not anno.get(child, SKIP, False):
                result.append(child)
                stack.append(child)
    return result


def body_start(function) -> int:
    """Index of the first statement after the docstring."""
    body = function.body
    if body and type(body[0]) is gast.Expr and type(body[0].value) is gast.Constant and isinstance(body[0].value.value, str):
        return 1
    return 0


def negate(test):
    """``not test`` (hand-built: a single operator node)."""
    return _located_like(gast.UnaryOp(op=gast.Not(), operand=test), test)


_INVERSE_COMPARISONS = {gast.Is: gast.IsNot, gast.IsNot: gast.Is, gast.In: gast.NotIn, gast.NotIn: gast.In}


def negate_condition(test):
    """``not test`` for a condition (only its truth value matters): ``not not x`` folds to
    ``x``, ``not x is None`` to ``x is not None`` (``is``/``in`` have exact inverses)."""
    if type(test) is gast.UnaryOp and type(test.op) is gast.Not:
        return test.operand
    if type(test) is gast.Compare and len(test.ops) == 1 and type(test.ops[0]) in _INVERSE_COMPARISONS:
        test.ops = [_INVERSE_COMPARISONS[type(test.ops[0])]()]
        return test
    return negate(test)


def _is_true(node) -> bool:
    return type(node) is gast.Constant and node.value is True


def conjoin(first, second):
    """``first and second``, flattening nested ``and``s; ``first and True`` is ``first``
    (only used for conditions, where just the truth value matters)."""
    if _is_true(second):
        return first
    if _is_true(first):
        return second
    values = []
    for operand in (first, second):
        if type(operand) is gast.BoolOp and type(operand.op) is gast.And:
            values.extend(operand.values)
        else:
            values.append(operand)
    return _located_like(gast.BoolOp(op=gast.And(), values=values), values[-1])


def _located_like(node, origin):
    if getattr(origin, "lineno", None) is not None:
        gast.copy_location(node, origin)
    return node


def map_children(node, fn):
    """Replaces each direct child ``c`` of ``node`` (in fields and lists) by ``fn(c)``."""
    values = node.__dict__
    for field in node._fields:
        value = values.get(field)
        if type(value) is list:
            for index, item in enumerate(value):
                if isinstance(item, gast.AST):
                    value[index] = fn(item)
        elif isinstance(value, gast.AST):
            values[field] = fn(value)
    return node


def rewrite(node, visit):
    """Rebuilds ``node`` bottom-up: every descendant ``n`` is replaced by ``visit(n)``.

    ``visit`` returns the node to use (``n`` itself to keep it).  Nested
    functions annotated ``SKIP`` are left alone, and so are class bodies (a
    scope of their own, run as written: a closure made there would not see
    the class's names); a class's bases, keywords and decorators are rewritten.
    """

    def rebuild(child):
        if anno.get(child, SKIP, False):
            return child
        return visit(rewrite(child, visit))

    if type(node) is gast.ClassDef:
        for field in ("bases", "keywords", "decorator_list"):
            setattr(node, field, [rebuild(child) for child in getattr(node, field)])
        return node
    return map_children(node, rebuild)


def rewrite_body(function, visit):
    """``rewrite`` over the statements of ``function``'s body only (not its signature)."""
    for index, statement in enumerate(function.body):
        rewrite(statement, visit)
        replacement = visit(statement)
        if replacement is not statement:
            function.body[index] = replacement
    return function


def contains_type(node, types) -> bool:
    """True if ``node`` or a descendant is an instance of ``types``."""
    for child in walk(node):
        if isinstance(child, types):
            return True
    return False
