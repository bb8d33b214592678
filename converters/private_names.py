"""Lowers private names (``self.__k``) to their mangled spelling (``self._Counter__k``).

Python mangles ``__name`` (two leading underscores, not two trailing) to
``_Class__name`` when it compiles a class body, so a method reads the
attribute ``self._Counter__k``.  Converted code is compiled outside the
class, where nothing mangles, so this pass does it the way the class body
would: attribute names, variable and parameter names, nested ``def``
names and ``global``/``nonlocal`` names; keyword argument names and the
method's own name are left as they are (the compiler leaves them too).  The
class is the innermost one in the function's ``__qualname__``
(``Outer.Counter.bump``, ``f.<locals>.Counter.bump``); a function outside
any class is left unchanged.

Before (a method of ``class Counter``)::

    def bump(self, by):
        self.__count += by
        return self.__count

After::

    def bump(self, by):
        self._Counter__count += by
        return self._Counter__count
"""

from __future__ import annotations

import gast


def enclosing_class(qualname: str) -> str | None:
    """The innermost class in ``qualname`` (a part followed by a name other than ``<locals>``)."""
    parts = qualname.split(".")
    found = None
    for part, following in zip(parts, parts[1:]):
        if part != "<locals>" and following != "<locals>":
            found = part
    return found


def mangle(name: str, class_name: str) -> str:
    """``name`` as the body of ``class_name`` compiles it (CPython's ``_Py_Mangle``)."""
    if not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = class_name.lstrip("_")
    return f"_{stripped}{name}" if stripped else name


class _Mangler(gast.NodeTransformer):
    def __init__(self, class_name: str, top):
        self.class_name = class_name
        self.top = top

    def visit_Name(self, node):
        node.id = mangle(node.id, self.class_name)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = mangle(node.attr, self.class_name)
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        if node is not self.top:
            node.name = mangle(node.name, self.class_name)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        # a class nested in the method mangles with its own name: left alone, as it is compiled
        return node

    def _names(self, node):
        node.names = [mangle(n, self.class_name) for n in node.names]
        return node

    visit_Global = visit_Nonlocal = _names


def transform(node, ctx):
    class_name = enclosing_class(ctx.function_name or "")
    if class_name is None or not class_name.lstrip("_"):
        return node
    return _Mangler(class_name, node).visit(node)
