"""``jit_compile``: a whole graph, control flow included, as ONE Python function.

``compile_graph(graph)`` returns ``(function, source)``; ``function(args)``
takes one numpy value per ``graph.all_inputs`` and returns the list of
output values, exactly like ``executor.run_graph``.  The generated code::

    def f_jit(args):
        x, n = args
        const = _const              # constants become locals
        i = const_1
        while True:                 # While -> while
            less = i < n
            if not less:
                break
            if ...:                 # If -> if / else
                ...
            i = add
        return [i]

* every tensor is a local variable named after its op;
* ops with an operator spelling (``runtime/spellings.py``: ``Add`` ->
  ``{0} + {1}``) are written as that operator, other ops call their
  registered kernel through a bound name (``_k_Reshape(x, shape)``), so
  results match the interpreter by construction;
* ``If`` becomes ``if``/``else`` and ``While`` a ``while`` loop; their
  sub-graphs are emitted inline, their placeholders standing for the
  values the op passes in;
* elementwise ops on large arrays (``INPLACE_MIN_ELEMENTS``, static shapes)
  write into the buffer of a temporary operand that is dead afterwards
  (``np.multiply(exp, const, out=exp)``), so chains allocate fewer arrays;
* the source is registered in ``linecache`` under a fake file name, so
  tracebacks, ``inspect.getsource`` and pdb show it; an error inside it is
  re-raised as the executor's ``ExecutionError`` naming the op and the
  user's ``file:line``.

A graph it cannot compile raises ``JitUnsupported`` naming the op (an op
type with neither a code rule nor a kernel; a ``PyFunc`` whose output shape
is unknown): ``rt.function(jit_compile=True)`` then falls back to the
interpreter with one warning.
"""

from __future__ import annotations

import itertools
import keyword
import linecache
import math
import re

import numpy as np

from autograph.runtime import executor, op_registry, shapes, spellings
from autograph.runtime.errors import AutoGraphError

INPLACE_MIN_ELEMENTS = 1 << 15

_counter = itertools.count()


class JitUnsupported(AutoGraphError):
    """``jit_compile=True`` met a graph it cannot compile into Python.

    The message names the op, its type and the user's ``file:line``.
    ``rt.function(jit_compile=True)`` catches it and runs the graph with the
    interpreter instead, after one ``AutoGraphWarning``.
    """


def compile_graph(graph):
    """``(function, source)``: ``graph`` compiled into one Python/numpy function."""
    gen = _Codegen(graph)
    source = gen.generate()
    filename = f"<autograph-jit {graph.name} #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    namespace = gen.namespace
    namespace["_fail"] = _failure_reporter(filename, gen.line_ops)
    exec(code, namespace)
    return namespace[gen.function_name], source


def _failure_reporter(filename, line_ops):
    def fail(error):
        """Raises ``error`` wrapped with the failing op's context (returns if none is known)."""
        tb = error.__traceback__
        op = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                op = line_ops.get(tb.tb_lineno, op)
            tb = tb.tb_next
        if op is not None and not isinstance(error, AutoGraphError):
            raise executor._wrap(error, op) from error

    return fail


# -- code generation ------------------------------------------------------

_NAME = re.compile(r"\W")
_RESERVED = frozenset(keyword.kwlist) | {"np", "args", "abs", "e", "_fail"}



def _ufunc(op_type):
    """The numpy ufunc that is ``op_type``'s kernel (``np.<name>``), or None."""
    opdef = op_registry.REGISTRY.get(op_type)
    kernel = opdef.kernel if opdef is not None else None
    if isinstance(kernel, np.ufunc) and getattr(np, kernel.__name__, None) is kernel:
        return kernel
    return None


class _Codegen:
    """Writes the source of one compiled graph; ``namespace`` holds its globals."""

    def __init__(self, graph):
        self.graph = graph
        self.lines: list[str] = []
        self.line_ops: dict[int, object] = {}
        self.namespace: dict[str, object] = {"np": np}
        self.names: dict[int, str] = {}
        self.taken: set[str] = set(_RESERVED)
        self.prologue: list[str] = []
        self.function_name = self.fresh(_NAME.sub("_", graph.name) + "_jit")

    # names ------------------------------------------------------------------

    def fresh(self, base: str) -> str:
        base = _NAME.sub("_", base) or "v"
        if base[0].isdigit():
            base = "v" + base
        name = base
        for i in itertools.count(1):
            if name not in self.taken:
                break
            name = f"{base}_{i}"
        self.taken.add(name)
        return name

    def bind(self, value, base: str) -> str:
        """A global name of the generated module holding ``value``."""
        name = self.fresh("_" + base)
        self.namespace[name] = value
        return name

    def var(self, tensor) -> str:
        return self.names[id(tensor)]

    def define(self, tensor) -> str:
        base = tensor.op.name if len(tensor.op.outputs) == 1 else f"{tensor.op.name}_{tensor.value_index}"
        name = self.names[id(tensor)] = self.fresh(base)
        return name

    # emission ---------------------------------------------------------------

    def emit(self, depth: int, line: str, op=None) -> None:
        self.lines.append("    " * depth + line)
        if op is not None:
            self.line_ops[len(self.lines)] = op

    def generate(self) -> str:
        graph = self.graph
        params = [self.define(t) for t in graph.all_inputs]
        body_start = len(self.lines)
        outs = self.block(graph, 2)
        self.emit(2, f"return [{', '.join(outs)}]")
        body = self.lines[body_start:]
        header = [f"def {self.function_name}(args):", "    try:"]
        if params:
            header.append(f"        {', '.join(params)}{',' if len(params) == 1 else ''} = args")
        header += ["        " + line for line in self.prologue]
        footer = ["    except Exception as e:", "        _fail(e)", "        raise"]
        self.line_ops = {n - body_start + len(header): op for n, op in self.line_ops.items()}
        return "\n".join(header + body + footer) + "\n"

    def block(self, graph, depth: int) -> list[str]:
        """Emits ``graph``'s needed ops (placeholders already named); returns output expressions."""
        needed = _needed_ops(graph)
        reuse = _reusable_buffers(graph, needed)
        for op in graph.operations:
            if id(op) not in needed or op.type == "Placeholder":
                continue
            rule = RULES.get(op.type, _default_rule)
            rule(self, op, depth, reuse)
        return [self.var(t) for t in graph.outputs]


def _needed_ops(graph) -> set[int]:
    """ids of ops the outputs or a stateful op depend on: what the interpreter runs."""
    roots = [t.op for t in graph.outputs]
    for op in graph.operations:
        opdef = op_registry.REGISTRY.get(op.type)
        if op.control_inputs or (opdef is not None and opdef.stateful):
            roots.append(op)
            roots.extend(op.control_inputs)
    if graph.last_stateful is not None:
        roots.append(graph.last_stateful)
    needed: set[int] = set()
    while roots:
        op = roots.pop()
        if id(op) not in needed:
            needed.add(id(op))
            roots.extend(t.op for t in op.inputs)
            roots.extend(op.control_inputs)
    return needed


def _large(tensor) -> bool:
    return shapes.is_fully_defined(tensor.shape) and math.prod(tensor.shape) >= INPLACE_MIN_ELEMENTS


def _reusable_buffers(graph, needed) -> dict[int, int]:
    """id(op) -> index of the operand whose buffer that op may overwrite.

    The operand must be a large temporary of this graph, made by a ufunc op
    (so a fresh array, never a view or a constant), of the op's dtype and
    shape, used only by ufunc ops of this graph, and this op must be its
    last use; it must not be an output.
    """
    users: dict[int, list] = {}
    for op in graph.operations:
        if id(op) in needed:
            for t in op.inputs:
                users.setdefault(id(t), []).append(op)
    outputs = {id(t) for t in graph.outputs}
    reuse = {}
    for op in graph.operations:
        if id(op) not in needed or _ufunc(op.type) is None or not _large(op.outputs[0]):
            continue
        out = op.outputs[0]
        for index, t in enumerate(op.inputs):
            if (
                _ufunc(t.op.type) is not None and t.op.graph is graph and id(t) not in outputs
                and t.dtype == out.dtype and t.shape == out.shape
                and all(_ufunc(u.type) is not None for u in users[id(t)])
                and users[id(t)][-1] is op
            ):
                reuse[id(op)] = index
                break
    return reuse


# -- rules: op type -> emitter ------------------------------------------------


def _const(gen, op, depth, reuse):
    """Constants are bound once and copied into locals in the prologue (0-d as numpy scalars)."""
    value = op.attrs["value"]
    bound = gen.bind(value[()] if value.ndim == 0 else value, op.name)
    gen.prologue.append(f"{gen.define(op.outputs[0])} = {bound}")


def _identity(gen, op, depth, reuse):
    gen.names[id(op.outputs[0])] = gen.var(op.inputs[0])


def _call(gen, op, depth, reuse):
    """Calls the op's registered kernel: identical to the interpreter."""
    opdef = op_registry.REGISTRY.get(op.type)
    if opdef is None or opdef.kernel is None:
        raise JitUnsupported(
            f"{op.type} op '{op.name}' created at {op.location or '<unknown>'} has no kernel and no "
            "code rule, so the graph cannot be compiled; it runs in the interpreter instead"
        )
    kernel = gen.bind(opdef.kernel, "k_" + op.type)
    args = [gen.var(t) for t in op.inputs]
    if op.attrs:
        args.append("**" + gen.bind(dict(op.attrs), "a_" + op.name))
    call = f"{kernel}({', '.join(args)})"
    _assign(gen, op, depth, call)


def _assign(gen, op, depth, expr):
    outs = [gen.define(t) for t in op.outputs]
    if not outs:
        gen.emit(depth, expr, op)
    elif len(outs) == 1:
        gen.emit(depth, f"{outs[0]} = {expr}", op)
    else:
        gen.emit(depth, f"{', '.join(outs)} = {expr}", op)


def _default_rule(gen, op, depth, reuse):
    index = reuse.get(id(op))
    if index is not None:
        ufunc = _ufunc(op.type)
        args = [gen.var(t) for t in op.inputs]
        target = args[index]
        gen.names[id(op.outputs[0])] = target
        gen.emit(depth, f"np.{ufunc.__name__}({', '.join(args)}, out={target})", op)
        return
    template = spellings.template(op.type)
    spelling = spellings.BY_OP_TYPE.get(op.type)
    if template is not None and (not spelling.kinds or all(t.dtype.kind in spelling.kinds for t in op.inputs)):
        _assign(gen, op, depth, template.format(*[gen.var(t) for t in op.inputs]))
        return
    ufunc = _ufunc(op.type)
    if ufunc is not None:
        _assign(gen, op, depth, f"np.{ufunc.__name__}({', '.join(gen.var(t) for t in op.inputs)})")
        return
    _call(gen, op, depth, reuse)


def _pyfunc(gen, op, depth, reuse):
    for t in op.outputs:
        if t.shape is None:
            raise JitUnsupported(
                f"PyFunc op '{op.name}' created at {op.location or '<unknown>'} has an output of unknown "
                "shape, which jit_compile cannot compile; it runs in the interpreter instead (give "
                "rt.py_function a shape to compile it)"
            )
    _call(gen, op, depth, reuse)


def _if(gen, op, depth, reuse):
    then_graph, else_graph = (op.graph.library[op.attrs[a]] for a in ("then_branch", "else_branch"))
    outs = [gen.define(t) for t in op.outputs]
    gen.emit(depth, f"if {gen.var(op.inputs[0])}:", op)
    for branch, header in ((then_graph, None), (else_graph, "else:")):
        if header:
            gen.emit(depth, header, op)
        for placeholder, arg in zip(branch.all_inputs, op.inputs[1:]):
            gen.names[id(placeholder)] = gen.var(arg)
        start = len(gen.lines)
        results = gen.block(branch, depth + 1)
        if outs:
            gen.emit(depth + 1, f"{', '.join(outs)} = {', '.join(results)}", op)
        elif len(gen.lines) == start:
            gen.emit(depth + 1, "pass", op)


def _while(gen, op, depth, reuse):
    cond, body = (op.graph.library[op.attrs[a]] for a in ("cond", "body"))
    nvars = len(body.outputs)
    state = []
    for i, arg in enumerate(op.inputs):
        if i < nvars:
            name = gen.fresh(f"{op.name}_var{i}")
            gen.emit(depth, f"{name} = {gen.var(arg)}", op)
        else:
            name = gen.var(arg)
        state.append(name)
    limit = op.attrs.get("maximum_iterations")
    counter = None
    if limit is not None:
        counter = gen.fresh(f"{op.name}_iterations")
        gen.emit(depth, f"{counter} = 0", op)
    gen.emit(depth, "while True:", op)
    if counter is not None:
        gen.emit(depth + 1, f"if {counter} >= {int(limit)}:", op)
        gen.emit(depth + 2, "break", op)
    for placeholder, name in zip(cond.all_inputs, state):
        gen.names[id(placeholder)] = name
    (test,) = gen.block(cond, depth + 1)
    gen.emit(depth + 1, f"if not {test}:", op)
    gen.emit(depth + 2, "break", op)
    for placeholder, name in zip(body.all_inputs, state):
        gen.names[id(placeholder)] = name
    results = gen.block(body, depth + 1)
    if nvars:
        gen.emit(depth + 1, f"{', '.join(state[:nvars])} = {', '.join(results)}", op)
    if counter is not None:
        gen.emit(depth + 1, f"{counter} += 1", op)
    for t, name in zip(op.outputs, state):
        gen.names[id(t)] = name


RULES = {
    "Const": _const,
    "Identity": _identity,
    "PyFunc": _pyfunc,
    "If": _if,
    "While": _while,
}
