"""What the names of one module are, read from its AST (nothing is imported).

``ModuleSymbols(tree)`` answers, for the checker:

* ``imports``: local name -> dotted origin (``np`` -> ``numpy``, ``rt`` ->
  ``autograph.runtime``, ``function`` -> ``autograph.function``); a name
  bound at module level to ``logging.getLogger(...)`` maps to
  ``logging.<logger>`` so its method calls read as logging;
* ``constants``: module-level names bound once to a literal (Python values);
* ``defs``: for the module and every function or class, the ``def``s
  directly in its body, and ``parents``: each function's enclosing node;
* ``entries``: the functions to check and how they run -- ``"converted"``
  (``@ag.function``, ``@autograph.function``, ``@function`` imported from
  autograph, with or without arguments, and ``g = ag.function(f)``) or
  ``"unconverted"`` (``@ag.do_not_convert``, ``rt.function``,
  ``ag.function(autograph=False)``).

``qualname(expr)`` is the dotted origin of a ``Name``/``Attribute`` chain,
or ``None``.  Canonical spellings of autograph's own entry points are
below, in one place.
"""

from __future__ import annotations

import ast

AG_FUNCTION = frozenset({"autograph.function", "autograph.api.function"})
RT_FUNCTION = frozenset({"autograph.runtime.function", "autograph.runtime.function.function"})
DO_NOT_CONVERT = frozenset({"autograph.do_not_convert", "autograph.api.do_not_convert"})
RUNTIME = "autograph.runtime"
LOGGER = "logging.<logger>"

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.Module, ast.ClassDef, *_FUNCTIONS)


def literal(node) -> bool:
    """Whether ``node`` is a literal Python value: a constant, or tuples/lists/sets/arithmetic of them."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(literal(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return literal(node.operand)
    if isinstance(node, ast.BinOp):
        return literal(node.left) and literal(node.right)
    return False



def qualname_suffix(expr) -> str:
    """The attribute chain of ``expr`` after its base name: ``np.random.rand`` -> ``.random.rand``."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    return "".join("." + p for p in reversed(parts))


def import_bindings(statement) -> dict:
    """Names an ``import`` / ``from ... import`` statement binds, with their dotted origins."""
    bound = {}
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname:
                bound[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                bound[top] = top
    elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
        for alias in statement.names:
            if alias.name != "*":
                bound[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
    return bound


class ModuleSymbols:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.imports: dict = {}
        self.constants: set = set()
        self.module_names: set = set()
        self.defs: dict = {}
        self.parents: dict = {}
        self._index(tree)
        self.entries = self._entries()

    # -- the module's names -------------------------------------------------------

    def _index(self, tree):
        assigned: dict = {}
        for statement in tree.body:
            self.imports.update(import_bindings(statement))
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    for name in target_names(target):
                        assigned[name] = assigned.get(name, 0) + 1
                        self.module_names.add(name)
                        if literal(statement.value):
                            self.constants.add(name)
                if len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                    origin = self.qualname(statement.value.func) if isinstance(statement.value, ast.Call) else None
                    if origin == "logging.getLogger":
                        self.imports[statement.targets[0].id] = LOGGER
            elif isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
                self.module_names.add(statement.name)
        self.constants = {n for n in self.constants if assigned[n] == 1}
        stack = [tree]
        while stack:
            scope = stack.pop()
            children = self.defs.setdefault(scope, {})
            for node in _scope_children(scope):
                if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                    self.parents[node] = scope
                    if not isinstance(node, ast.ClassDef):
                        children[node.name] = node
                    stack.append(node)

    def qualname(self, expr, local_names=()):
        """Dotted origin of ``expr`` through the module's imports, unless a local name shadows it."""
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name) or expr.id in local_names:
            return None
        origin = self.imports.get(expr.id)
        if origin is None:
            return None
        return ".".join([origin, *reversed(parts)])

    def resolve_def(self, name: str, scope):
        """The ``def`` a plain call of ``name`` reaches from inside ``scope`` (closest scope first)."""
        while scope is not None:
            if not isinstance(scope, ast.ClassDef):
                found = self.defs.get(scope, {}).get(name)
                if found is not None:
                    return found
            scope = self.parents.get(scope)
        return None

    def enclosing_class(self, function):
        parent = self.parents.get(function)
        return parent if isinstance(parent, ast.ClassDef) else None

    # -- the functions to check -----------------------------------------------------

    def _mode_of_wrapper(self, call_or_name):
        """``"converted"``/``"unconverted"`` if this decorator (or wrapper callee) traces, else None."""
        if isinstance(call_or_name, ast.Call):
            origin = self.qualname(call_or_name.func)
            keywords = {k.arg: k.value for k in call_or_name.keywords}
        else:
            origin, keywords = self.qualname(call_or_name), {}
        if origin in DO_NOT_CONVERT or origin in RT_FUNCTION:
            return "unconverted"
        if origin in AG_FUNCTION:
            flag = keywords.get("autograph")
            off = isinstance(flag, ast.Constant) and flag.value is False
            return "unconverted" if off else "converted"
        return None

    def decorator_mode(self, function):
        """How the decorators of ``function`` make it run, or None if none of them traces it."""
        modes = {self._mode_of_wrapper(d) for d in function.decorator_list} - {None}
        if not modes:
            return None
        return "unconverted" if "unconverted" in modes else "converted"

    def is_do_not_convert(self, function) -> bool:
        return any(self.qualname(d.func if isinstance(d, ast.Call) else d) in DO_NOT_CONVERT
                   for d in function.decorator_list)

    def _entries(self) -> dict:
        entries = {}
        for scope, children in self.defs.items():
            for function in children.values():
                mode = self.decorator_mode(function)
                if mode:
                    entries[function] = mode
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name)):
                continue
            mode = self._mode_of_wrapper(node.func)  # ag.function(f), ag.function(...)(f)
            if mode is None:
                continue
            scope = self._scope_of(node)
            target = self.resolve_def(node.args[0].id, scope)
            if target is not None and entries.get(target) != "unconverted":
                entries[target] = mode
        return entries

    def _scope_of(self, node):
        """The innermost function (or the module) whose body holds ``node``."""
        best = self.tree
        for function in self.parents:
            if isinstance(function, _FUNCTIONS) and function.lineno <= node.lineno <= function.end_lineno:
                if best is self.tree or function.lineno >= best.lineno:
                    best = function
        return best


def _scope_children(scope):
    """Statements directly in ``scope``'s body, descending into compound statements but not scopes."""
    stack = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, field, ()) or ())


def target_names(target):
    """The plain names an assignment target binds (through tuples, lists and starred parts)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from target_names(element)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)
