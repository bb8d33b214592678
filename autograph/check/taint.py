"""Which names of a function may hold tensors while it is traced.

A small, flow-insensitive taint analysis over ``ast``.  Every expression
gets one of four levels, ordered:

* ``PY``: certainly a Python value (a literal, ``x.shape[0]``, a
  ``range`` of Python bounds, a parameter with a literal default, ``self``);
* ``UNKNOWN``: nothing is known (a global array, a call of an unknown
  function, ``self.w``);
* ``MAYBE``: a tensor or a nest holding tensors (parameters of a traced
  function, lists built from tensors);
* ``TENSOR``: certainly a tensor while tracing (arithmetic or a comparison
  on a tensor, an ``rt.*`` op, a parameter the body uses as an array).

A local name's level is the highest level of all its bindings (iterated
until stable), so a rule that needs ``TENSOR`` or ``PY`` never fires on a
name that is sometimes the other.  ``analyse`` returns the ``Facts`` of one
function for given parameter levels; ``program.py`` joins the levels of
parameters over call sites.
"""

from __future__ import annotations

import ast
import builtins

from autograph.check import symbols as sym

PY, UNKNOWN, MAYBE, TENSOR = range(4)

STATIC_ATTRS = frozenset({"shape", "dtype", "ndim", "name"})
# rt.* results that are not plain tensors: nests (MAYBE) or Python values (PY).
_RT_RESULTS = {
    "cond": MAYBE, "while_loop": MAYBE, "py_function": MAYBE, "TensorSpec": PY, "as_dtype": PY,
    "is_tensor": PY, "random.set_seed": PY, "function": UNKNOWN, "Graph": UNKNOWN,
}
# Library functions taking a list of arrays: their arguments are no evidence of a tensor.
_LIST_TAKING = frozenset({
    "stack", "concat", "concatenate", "vstack", "hstack", "array", "asarray", "py_function", "cond", "while_loop",
})
_CONTAINER_BUILTINS = frozenset({
    "enumerate", "zip", "list", "tuple", "sorted", "reversed", "set", "frozenset", "dict", "sum", "min", "max",
    "map", "filter", "iter", "next",
})
_PY_BUILTINS = frozenset({
    "isinstance", "issubclass", "hasattr", "callable", "type", "str", "repr", "id", "format", "bool", "hash", "getattr",
})
_NUMERIC_BUILTINS = frozenset({"int", "float", "abs"})
BUILTIN_NAMES = frozenset(dir(builtins))
LIBRARIES = ("numpy", "math", "random", "time")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def walk_body(function):
    """Every node of ``function``'s body, without entering nested functions, lambdas or classes."""
    stack = list(reversed(function.body)) if not isinstance(function, ast.Lambda) else [function.body]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _is_text(node) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, type(None))))


class Facts:
    """What one function (in one mode) holds: the levels of its names, its calls, its result."""

    __slots__ = ("node", "mode", "params", "self_name", "env", "deps", "local_imports", "bound", "declared",
                 "outer", "returns", "calls", "symbols", "returns_of")

    def __init__(self, symbols, node, mode, params, outer, returns_of):
        self.symbols = symbols
        self.node = node
        self.mode = mode
        self.params = params  # name -> level (after evidence)
        self.self_name = None
        self.outer = outer  # Facts of the enclosing analysed function, or None
        self.returns_of = returns_of  # (def, mode) -> level of what it returns
        self.env: dict = {}
        self.deps: dict = {}
        self.local_imports: dict = {}
        self.bound: set = set()  # names bound in the body (locals)
        self.declared: dict = {}  # name -> "global" / "nonlocal"
        self.returns = PY
        self.calls: list = []

    # -- names ------------------------------------------------------------------------

    def is_local(self, name) -> bool:
        return (name in self.params or name in self.bound) and name not in self.declared

    def in_chain(self, name) -> bool:
        """Bound in this function or an enclosing analysed one (so not an outside object)."""
        facts = self
        while facts is not None:
            if facts.is_local(name):
                return True
            facts = facts.outer
        return False

    def qualname(self, expr):
        """Dotted origin of ``expr`` (``np.exp`` -> ``numpy.exp``) seen from this function."""
        base = expr
        while isinstance(base, ast.Attribute):
            base = base.value
        if not isinstance(base, ast.Name):
            return None
        facts = self
        while facts is not None:
            if base.id in facts.local_imports:
                origin = facts.local_imports[base.id]
                return origin + sym.qualname_suffix(expr)
            if facts.is_local(base.id):
                return None
            facts = facts.outer
        return self.symbols.qualname(expr)

    def builtin(self, func) -> str | None:
        """The builtin's name if ``func`` is a builtin not shadowed here or in the module."""
        if isinstance(func, ast.Name) and func.id in BUILTIN_NAMES and not self.in_chain(func.id):
            if func.id not in self.symbols.module_names and func.id not in self.symbols.imports:
                return func.id
        return None

    def name_level(self, name) -> int:
        facts = self
        while facts is not None:
            if facts.is_local(name):
                return facts.env.get(name, PY)
            facts = facts.outer
        symbols = self.symbols
        if name in symbols.constants or name in symbols.imports or name in BUILTIN_NAMES:
            return PY
        if name in symbols.module_names and name in {d.name for d in symbols.defs[symbols.tree].values()}:
            return PY
        return UNKNOWN

    # -- expressions --------------------------------------------------------------------

    def level(self, node, env=None) -> int:
        env = self.env if env is None else env
        kind = type(node)
        if kind is ast.Name:
            return env[node.id] if node.id in env else self.name_level(node.id)
        if kind in (ast.Constant, ast.JoinedStr, ast.Lambda, ast.Slice):
            return PY
        if kind is ast.Attribute:
            return self._attribute(node, env)
        if kind is ast.Subscript:
            base = self.level(node.value, env)
            if base == PY and self.level(node.slice, env) >= MAYBE:
                return UNKNOWN
            return base
        if kind is ast.Call:
            return self._call(node, env)
        if kind is ast.BinOp:
            if _is_text(node.left):
                return PY
            if isinstance(node.left, (ast.List, ast.Tuple)) or isinstance(node.right, (ast.List, ast.Tuple)):
                return min(max(self.level(node.left, env), self.level(node.right, env)), MAYBE)
            return _arith(self.level(node.left, env), self.level(node.right, env))
        if kind is ast.UnaryOp:
            operand = self.level(node.operand, env)
            if isinstance(node.op, ast.Not):
                return TENSOR if operand == TENSOR else PY
            return _arith(operand, PY)
        if kind is ast.Compare:
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return PY
            levels = [self.level(n, env) for n in (node.left, *node.comparators)]
            if any(_is_text(n) for n in (node.left, *node.comparators)):
                return min(max(levels), UNKNOWN)
            return _arith(*levels)
        if kind is ast.BoolOp:
            return max(self.level(v, env) for v in node.values)
        if kind is ast.IfExp:
            return max(self.level(node.body, env), self.level(node.orelse, env))
        if kind in (ast.List, ast.Tuple, ast.Set):
            return min(max((self.level(e, env) for e in node.elts), default=PY), MAYBE)
        if kind is ast.Dict:
            return min(max((self.level(v, env) for v in node.values), default=PY), MAYBE)
        if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            return min(self._comprehension(node, env), MAYBE)
        if kind in (ast.NamedExpr, ast.Starred, ast.FormattedValue):
            return self.level(node.value, env) if kind is not ast.FormattedValue else PY
        return UNKNOWN

    def _attribute(self, node, env) -> int:
        if self.qualname(node) is not None:
            return PY  # np.pi, rt.float32, a module attribute
        base = self.level(node.value, env)
        if node.attr in STATIC_ATTRS and base >= MAYBE:
            return PY
        if node.attr == "T" and base == TENSOR:
            return TENSOR
        return UNKNOWN

    def _comprehension(self, node, env) -> int:
        inner = dict(env)
        for generator in node.generators:
            element = self.level(generator.iter, inner)
            for name in sym.target_names(generator.target):
                inner[name] = element
        if isinstance(node, ast.DictComp):
            return self.level(node.value, inner)
        return self.level(node.elt, inner)

    def _call(self, node, env) -> int:
        args = [self.level(a, env) for a in node.args] + [self.level(k.value, env) for k in node.keywords]
        highest = max(args, default=PY)
        origin = self.qualname(node.func)
        if origin is not None:
            if origin.startswith(sym.RUNTIME + "."):
                name = origin[len(sym.RUNTIME) + 1:]
                return UNKNOWN if name.startswith("data.") else _RT_RESULTS.get(name, TENSOR)
            if origin.split(".")[0] in LIBRARIES:
                return PY if highest == PY else UNKNOWN
            return UNKNOWN
        name = self.builtin(node.func)
        if name is not None:
            return _builtin_result(name, highest, self.mode)
        callee = self.callee(node)
        if callee is not None:
            return self.returns_of(callee, self.mode)
        if isinstance(node.func, ast.Attribute):
            base = self.level(node.func.value, env)
            if base >= MAYBE:
                return base
        return UNKNOWN

    def callee(self, call):
        """The ``def`` in this module that ``call`` reaches (a plain name, or ``self.method``), or None."""
        func = call.func
        symbols = self.symbols
        if isinstance(func, ast.Name):
            if self.is_local(func.id) and func.id not in self.bound:
                return None  # a parameter
            return symbols.resolve_def(func.id, self.node)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self.self_name:
            owner = symbols.enclosing_class(self.node)
            if owner is not None:
                return symbols.defs.get(owner, {}).get(func.attr)
        return None


def _arith(*levels) -> int:
    """Arithmetic or a comparison: a tensor as soon as one operand may be one."""
    top = max(levels)
    return TENSOR if top >= MAYBE else top


def _builtin_result(name, highest, mode) -> int:
    if name in _PY_BUILTINS:
        return PY
    if name == "len":
        return UNKNOWN if highest >= UNKNOWN else PY
    if name == "range":
        return PY if highest == PY else MAYBE
    if name in _NUMERIC_BUILTINS:
        return TENSOR if highest >= MAYBE and mode == "converted" else highest
    if name in _CONTAINER_BUILTINS:
        return min(highest, MAYBE)
    return PY if highest == PY else UNKNOWN


# -- building the facts of a function ----------------------------------------------------------


def parameters(function):
    """``(name, default)`` pairs of ``function``'s parameters, ``default`` None when it has none."""
    args = function.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip((a.arg for a in positional), defaults))
    if args.vararg:
        pairs.append((args.vararg.arg, None))
    pairs += list(zip((a.arg for a in args.kwonlyargs), args.kw_defaults))
    if args.kwarg:
        pairs.append((args.kwarg.arg, None))
    return pairs


def self_parameter(symbols, function):
    """The name of ``self``/``cls`` if ``function`` is a method, else None."""
    if symbols.enclosing_class(function) is None or not (function.args.posonlyargs + function.args.args):
        return None
    if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list):
        return None
    return (function.args.posonlyargs + function.args.args)[0].arg


def array_evidence(symbols, function) -> set:
    """Names the body uses as arrays: operands of arithmetic or comparisons, ``.shape``, library arguments."""
    used = set()
    for node in walk_body(function):
        kind = type(node)
        if kind is ast.BinOp and not any(_is_text(n) or isinstance(n, (ast.List, ast.Tuple)) for n in (node.left, node.right)):
            used.update(n.id for n in (node.left, node.right) if isinstance(n, ast.Name))
        elif kind is ast.UnaryOp and isinstance(node.op, (ast.USub, ast.Invert)) and isinstance(node.operand, ast.Name):
            used.add(node.operand.id)
        elif kind is ast.Compare:
            operands = (node.left, *node.comparators)
            if any(_is_text(n) for n in operands) or all(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in node.ops):
                continue
            used.update(n.id for n in operands if isinstance(n, ast.Name))
        elif kind is ast.Attribute and node.attr in ("shape", "dtype", "ndim") and isinstance(node.value, ast.Name):
            used.add(node.value.id)
        elif kind is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr not in _LIST_TAKING:
            origin = symbols.qualname(node.func) or ""
            if origin.split(".")[0] in LIBRARIES or origin.startswith(sym.RUNTIME + "."):
                used.update(a.id for a in node.args if isinstance(a, ast.Name))
    return used


def analyse(symbols, function, mode, params, outer, returns_of) -> Facts:
    """The ``Facts`` of ``function`` run in ``mode`` with parameters at ``params`` levels."""
    facts = Facts(symbols, function, mode, params, outer, returns_of)
    facts.self_name = self_parameter(symbols, function)
    bindings = _bindings(facts, function)
    env = dict(params)
    for _ in range(8):  # levels only grow; a handful of rounds reaches the fixpoint
        facts.env = env
        changed = False
        for name, level_of in bindings:
            level = max(env.get(name, PY), level_of(env))
            if level != env.get(name):
                env[name] = level
                changed = True
        if not changed:
            break
    facts.env = env
    facts.returns = max((facts.level(n.value) for n in walk_body(function) if isinstance(n, ast.Return) and n.value),
                        default=PY)
    return facts


def _bindings(facts, function):
    """``(name, level_of(env))`` for every binding in the body; fills ``bound``, ``deps``, imports."""
    bindings = []

    def bind(target, value):
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
            for t, v in zip(target.elts, value.elts):
                bind(t, v)
            return
        names = list(sym.target_names(target))
        refs = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} if value is not None else set()
        for name in names:
            facts.bound.add(name)
            facts.deps.setdefault(name, set()).update(refs)
            if value is None:
                bindings.append((name, lambda env: UNKNOWN))
            else:
                bindings.append((name, lambda env, v=value: facts.level(v, env)))

    for node in walk_body(function):
        kind = type(node)
        if kind is ast.Assign:
            for target in node.targets:
                bind(target, node.value)
        elif kind in (ast.AnnAssign,) and node.value is not None:
            bind(node.target, node.value)
        elif kind is ast.AugAssign and isinstance(node.target, ast.Name):
            operation = ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
            bind(node.target, operation)
        elif kind in (ast.For, ast.AsyncFor):
            bind(node.target, node.iter)  # an element has the level of what it is taken from
        elif kind is ast.NamedExpr:
            bind(node.target, node.value)
        elif kind in (ast.Import, ast.ImportFrom):
            for name, origin in sym.import_bindings(node).items():
                facts.local_imports[name] = origin
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            facts.bound.add(node.name)
        elif kind is ast.ExceptHandler and node.name:
            facts.bound.add(node.name)
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, None)
        elif kind is ast.Global or kind is ast.Nonlocal:
            for name in node.names:
                facts.declared[name] = "global" if kind is ast.Global else "nonlocal"
        elif kind in (ast.MatchAs, ast.MatchStar) and node.name:
            bind(ast.Name(id=node.name, ctx=ast.Store()), None)
    return bindings
