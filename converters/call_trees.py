"""Lowers function calls to ``ag__.converted_call``, so called user code is converted too.

Before::

    def f(x, ys):
        z = helper(x)
        n = len(ys)
        return np.sum(ys) + math.sqrt(n) + obj.method(z, k=1)

After::

    def f(x, ys):
        z = ag__.converted_call(helper, x)
        n = ag__.len(ys)
        return np.sum(ys) + math.sqrt(n) + ag__.converted_call(obj.method, z, k=1)

A callee is resolved at conversion time when it is a name (or a dotted
path through modules, or a method of a builtin type such as ``str.join``)
found in the function's globals or the builtins --
never a local or closure variable, which may change.  Calls resolved to a
builtin, to numpy, the standard library or autograph, to a class, or to a
``do_not_convert``-ed function, and methods of literals (``', '.join``),
are left alone; the builtins ``range``,
``len``, ``print``, ``int``, ``float``, ``bool``, ``abs``, ``max``, ``min``, ``enumerate``, ``zip``,
``reversed``, ``isinstance``, ``type``, ``slice`` (the context's ``builtin_names``)
become ``ag__.<name>`` (they dispatch to the graph for tensors).  Without a
live namespace (``autograph show``) only builtin names are resolved.  The
policy (which resolved callees to leave alone) comes with the context, from
``autograph.callees``.
"""

from __future__ import annotations

import builtins
import types

import gast

from autograph.pyct import anno, ast_util, templates
from autograph.pyct.context import AG_NAME

_MISSING = object()
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
# Receivers whose methods are always builtin methods.
_LITERALS = (gast.Constant, gast.JoinedStr, gast.List, gast.Tuple, gast.Dict, gast.Set) + _COMPREHENSIONS


def _is_builtin_type(value) -> bool:
    return type(value) is type and value.__module__ == "builtins"


def _dotted(node):
    """``['np', 'linalg', 'norm']`` for ``np.linalg.norm``; None for anything else."""
    parts = []
    while type(node) is gast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not gast.Name:
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


class _CallLowering:
    __slots__ = ("ctx", "locals_stack")

    def __init__(self, ctx, local_names):
        self.ctx = ctx
        self.locals_stack = [frozenset(local_names) | ctx.freevars]

    def _is_local(self, name) -> bool:
        return any(name in names for names in self.locals_stack)

    def _resolve(self, path):
        root = path[0]
        if self._is_local(root):
            return _MISSING
        namespace = self.ctx.namespace
        if namespace is None:
            value = getattr(builtins, root, _MISSING)
            if len(path) > 2 or (len(path) == 2 and not _is_builtin_type(value)):
                return _MISSING
        else:
            value = namespace.get(root, _MISSING)
            if value is _MISSING:
                value = getattr(builtins, root, _MISSING)
        for attr in path[1:]:
            # Through modules, and to the methods of builtin types (`str.join`).
            if type(value) is not types.ModuleType and not _is_builtin_type(value):
                return _MISSING
            value = getattr(value, attr, _MISSING)
        return value

    def _decision(self, path):
        """How a call of the name ``path`` is lowered: "builtin" (to ``ag__.<name>``), "alone" (left
        as it is) or None (through ``converted_call``); recorded in ``ctx.decisions``, or taken
        from ``ctx.replay``."""
        replay = self.ctx.replay
        if replay is not None:
            return next(replay)
        value = self._resolve(path)
        decision = None
        if value is not _MISSING:
            if len(path) == 1 and path[0] in self.ctx.builtin_names and value is getattr(builtins, path[0]):
                decision = "builtin"
            elif self.ctx.leave_alone(value):
                decision = "alone"
        self.ctx.decisions.append(decision)
        return decision

    def lower_call(self, node):
        func = node.func
        if type(func) is gast.Attribute and type(func.value) in _LITERALS:
            return node  # a method of a literal (`', '.join`): a builtin method
        path = _dotted(func)
        if path is not None:
            if path[0] == AG_NAME:
                return node
            decision = self._decision(path)
            if decision == "builtin":
                node.func = templates.replace_as_expression(f"{AG_NAME}.{path[0]}", origin=node.func)
                return node
            if decision == "alone":
                return node
        # The user's argument list is kept as written (stars included); the
        # callee becomes the first argument.
        call = gast.Call(
            func=templates.replace_as_expression("ag__.converted_call", origin=node),
            args=[node.func] + node.args,
            keywords=node.keywords,
        )
        return gast.copy_location(call, node)

    def expr(self, node):
        """Lowers the calls in ``node``; returns its replacement."""
        kind = type(node)
        if kind in ast_util.FUNCTIONS or kind is gast.Lambda:
            self._function(node)
        elif kind in _COMPREHENSIONS:
            targets = {n.id for g in node.generators for n in gast.walk(g.target) if type(n) is gast.Name}
            self.locals_stack.append(frozenset(targets))
            self.children(node)
            self.locals_stack.pop()
        elif kind is not gast.ClassDef:
            self.children(node)
        if kind is gast.Call:
            return self.lower_call(node)
        return node

    def children(self, node):
        ast_util.map_children(node, self.expr)

    def _function(self, node):
        """A nested function or lambda: its own names shadow the enclosing ones."""
        args = node.args
        args.defaults = [self.expr(d) for d in args.defaults]
        args.kw_defaults = [self.expr(d) if d is not None else None for d in args.kw_defaults]
        if type(node) is gast.Lambda:
            if anno.get(node, anno.IN_PLACE, False):  # a generated closure: only its parameters are its own
                names = {a.id for a in args.args}
            else:
                names = anno.get(node, anno.SCOPE).locals
            self.locals_stack.append(frozenset(names))
            node.body = self.expr(node.body)
            self.locals_stack.pop()
            return
        node.decorator_list = [self.expr(d) for d in node.decorator_list]
        if anno.get(node, ast_util.SKIP, False):
            return
        self.locals_stack.append(frozenset(anno.get(node, anno.SCOPE).locals))
        node.body = [self.expr(s) for s in node.body]
        self.locals_stack.pop()


def transform(node, ctx):
    scope = anno.get(node, anno.SCOPE)
    lowering = _CallLowering(ctx, scope.locals)
    if type(node) is gast.Lambda:
        node.body = lowering.expr(node.body)
    else:
        node.body = [lowering.expr(s) for s in node.body]
    return node
