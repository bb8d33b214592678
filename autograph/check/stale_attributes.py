"""AG113: an attribute of an argument that a traced function reads, assigned after calling it.

``ag.function`` traces once per input signature; an object argument is part
of that signature by identity, so the attributes the function read while
tracing are constants of its graph.  Changing one afterwards is not seen::

    @ag.function
    def step(x, cfg):
        return x * cfg.scale      # read while tracing: a constant of the graph

    step(x, cfg)
    cfg.scale = 0.5               # AG113: the next step(x, cfg) still multiplies by the old scale

``findings(symbols)`` yields ``(node, code, fields)`` for each assignment
(``cfg.scale = ...``, ``cfg.scale *= ...``, ``setattr(cfg, "scale", ...)``)
that follows a call of a traced function of the module in the same block
(or in a block nested in it), where the argument at the parameter's
position is the same plain name, not rebound in between, and the function
reads ``param.scale`` without ever rebinding the parameter.  Anything less
certain (star arguments, attributes read through another name) is left
unreported.
"""

from __future__ import annotations

import ast

from autograph.check import symbols as sym
from autograph.check import taint

_BLOCKS = ("body", "orelse", "finalbody")
_TRACING = sym.AG_FUNCTION | sym.RT_FUNCTION
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _walk(statement):
    """``ast.walk`` of one statement, not into the functions and classes it defines (they run later, if ever)."""
    stack = [] if isinstance(statement, _SCOPES) else [statement]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES))


def _traced_callables(symbols) -> dict:
    """Module-level names that call a traced function: ``{name: def}`` (decorated defs and ``g = ag.function(f)``)."""
    names = {}
    top = symbols.defs.get(symbols.tree, {})
    for name, function in top.items():
        if symbols.decorator_mode(function) is not None and not symbols.is_do_not_convert(function):
            names[name] = function
    for statement in symbols.tree.body:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)):
            continue
        call = statement.value
        wrapper = call.func.func if isinstance(call.func, ast.Call) else call.func  # ag.function(...)(f)
        if symbols.qualname(wrapper) in _TRACING and call.args and isinstance(call.args[0], ast.Name):
            target = top.get(call.args[0].id)
            if target is not None:
                names[statement.targets[0].id] = target
    return names


def _attributes_read(function) -> dict:
    """``{parameter: {attributes}}`` the function reads from parameters it never rebinds."""
    params = [name for name, _default in taint.parameters(function)]
    rebound = {n.id for n in taint.walk_body(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    read: dict = {}
    for node in taint.walk_body(function):
        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                and node.value.id in params and node.value.id not in rebound and node.attr not in taint.STATIC_ATTRS):
            read.setdefault(node.value.id, set()).add(node.attr)
    return read


def _passed(call, function) -> dict:
    """``{argument name: parameter}`` for plain names passed to ``function`` at ``call``."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return {}
    positional = [a.arg for a in function.args.posonlyargs + function.args.args]
    passed = {}
    for argument, param in zip(call.args, positional):
        if isinstance(argument, ast.Name):
            passed[argument.id] = param
    for keyword in call.keywords:
        if isinstance(keyword.value, ast.Name):
            passed[keyword.value.id] = keyword.arg
    return passed


def _assignments(statement, name):
    """``(node, attribute)`` for each ``name.attr = ...`` / ``name.attr op= ...`` / ``setattr(name, "attr", ...)``."""
    for node in _walk(statement):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == name:
                yield target, target.attr
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                and len(node.args) == 3 and isinstance(node.args[0], ast.Name) and node.args[0].id == name
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            yield node, node.args[1].value


def _rebinds(statement, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in _walk(statement))


def _blocks(tree):
    """Every statement list of the module, module body and function bodies included."""
    for node in ast.walk(tree):
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def findings(symbols, source):
    """``(node, "AG113", fields)`` for attributes assigned after a traced call that read them."""
    traced = _traced_callables(symbols)
    if not traced:
        return []
    reads = {name: _attributes_read(function) for name, function in traced.items()}
    found = []
    for block in _blocks(symbols.tree):
        for index, statement in enumerate(block):
            for call in _walk(statement):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in traced):
                    continue
                function = traced[call.func.id]
                for argument, param in _passed(call, function).items():
                    attributes = reads[call.func.id].get(param, set())
                    if attributes:
                        found += _later(block[index + 1:], argument, param, attributes, call, function, source)
    return found


def _later(statements, argument, param, attributes, call, function, source):
    found = []
    for statement in statements:
        for node, attribute in _assignments(statement, argument):
            if attribute in attributes:
                found.append((node, "AG113", {
                    "target": f"{argument}.{attribute}", "call": _shortened(ast.get_source_segment(source, call) or call.func.id),
                    "function": function.name, "param": param, "attr": attribute, "arg": argument,
                }))
        if _rebinds(statement, argument):
            break
    return found


def _shortened(text, limit=48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
