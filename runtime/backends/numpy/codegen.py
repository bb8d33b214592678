"""``jit_compile``: a whole graph, control flow included, as ONE Python function.

``compile_graph(graph)`` returns ``(function, source)``; ``function(args)``
takes one numpy value per ``graph.all_inputs`` and returns the list of
output values, exactly like ``executor.run_graph``.  The generated code::

    def f_jit(args):
        try:
            x, n = args
            const = _const          # constants become locals
            i = const_1
            while True:             # While -> while
                less = i < n
                if not less:
                    break
                if ...:             # If -> if / else
                    ...
                i = add
            return [i]
        except Exception as e:      # re-raised naming the failing op
            _fail(e)
            raise

* every tensor is a local variable named after its op;
* nothing taken from the graph is written into the source as text:
  identifiers are generated (``identifiers.py``: an op's name contributes
  only its ASCII letters, digits and underscores, made unique, and never
  gives a keyword, a builtin, a dunder or a name the generator writes),
  and values go through the module's constant table (globals bound by
  ``bind``);
* ops with an operator spelling (``runtime/core/spellings.py``: ``Add`` ->
  ``{0} + {1}``) are written as that operator, other ops call their
  backend kernel (``kernels.py``) through a bound name, with their attributes bound to
  it (``functools.partial``, as the interpreter does:
  ``_k_reshape(x, shape)``), so results match the interpreter by
  construction; scalar operators used once are written inline, nested at
  most ``expressions.MAX_INLINE_DEPTH`` deep (a longer chain goes through a temporary);
* ``If`` becomes ``if``/``else`` and ``While`` a ``while`` loop; their
  sub-graphs are emitted inline, their placeholders standing for the
  values the op passes in -- except a library function called from more
  than one place (a graph file may name one function in both branches of
  an ``If``, a dozen levels down), which is emitted once as a function of
  its own and called, so the source grows with the size of the graph,
  never with the number of paths through it;
* elementwise ops on large arrays (``memory.donations``, static shapes)
  write into the buffer of a temporary that is dead by then, an operand
  (``np.multiply(exp, const, out=exp)``) or an earlier one, so chains
  allocate fewer arrays;
* the source is registered in ``linecache`` under a fake file name, so
  tracebacks, ``inspect.getsource`` and pdb show it; an error inside it is
  re-raised as the executor's ``ExecutionError`` naming the op and the
  user's ``file:line``.

A graph it cannot compile raises ``JitUnsupported`` naming the op (an op
type with neither a code rule nor a kernel; a ``PyFunc`` whose output shape
is unknown; generated source Python refuses to compile):
``rt.function(jit_compile=True)`` then falls back to the interpreter with
one warning.
"""

from __future__ import annotations

import functools

import numpy as np

from autograph.runtime.backends.numpy import compiled, expressions, kernels
from autograph.runtime.backends.numpy.compiled import JitUnsupported
from autograph.runtime.backends.numpy.identifiers import Namer
from autograph.runtime.backends.numpy.kernels import KERNELS
from autograph.runtime.core import opdef, shapes
from autograph.runtime.exec import fp_warnings, limits, memory, plan

def compile_graph(graph):
    """``(function, source)``: ``graph`` compiled into one Python/numpy function."""
    gen = _Codegen(graph.name, [graph])
    function, source = gen.load(gen.generate(graph))
    function = fp_warnings.naming_user_lines(function, graph)  # numpy's warnings at the user's lines
    return limits.scoped(function, graph), source  # a loaded graph: one iteration budget per call


def compile_loop(cond, body, bounded: bool = True):
    """``(function, source)`` for a ``While`` over library graphs ``cond``/``body``.

    ``function(args, limit)`` takes the loop variables then the invariant
    captures (``body.all_inputs``), runs at most ``limit`` iterations and
    returns the final loop variables: the ``While`` kernel's loop, compiled.
    With ``bounded=False`` there is no iteration counter and ``limit`` must
    be None.  ``tiering.run_loop`` uses it for hot loops.
    """
    gen = _Codegen(body.name, [cond, body])
    function, source = gen.load(gen.generate_loop(cond, body, bounded))
    return limits.scoped(function, body), source  # (the budget of the run that calls it, if any)


# -- code generation ------------------------------------------------------

_ufunc = kernels.ufunc_of


def _shared_graphs(roots) -> set[int]:
    """ids of the library graphs called from more than one place (one visit per graph)."""
    calls = {id(g): 1 for g in roots}
    stack = list(roots)
    while stack:
        graph = stack.pop()
        for op in graph.operations:
            for name in opdef.function_attr_names(op.type):
                sub = graph.library[op.attrs[name]]
                calls[id(sub)] = calls.get(id(sub), 0) + 1
                if calls[id(sub)] == 1:
                    stack.append(sub)
    return {key for key, n in calls.items() if n > 1}


class _Codegen:
    """Writes the source of one compiled function; ``namespace`` holds its globals.

    ``lines``/``line_ops``/``prologue`` are those of the function being written: the
    main one, or a shared library function (``shared_function``), whose finished
    text waits in ``functions_text`` to be placed before the main function."""

    def __init__(self, name: str, roots):
        self.lines: list[str] = []
        self.line_ops: dict[int, object] = {}
        self.namespace: dict[str, object] = {"np": np}
        self.names: dict[int, str] = {}
        self.namer = Namer()
        self.prologue: list[str] = []
        self.kernels: dict[str, str] = {}  # op type -> the global name bound to its kernel
        self.inlined: set[int] = set()  # ids of tensors written as an expression where they are used
        self.budget: str | None = None  # the local holding a loaded graph's iteration budget (_budget)
        self.shared = _shared_graphs(roots)
        self.functions: dict[int, str] = {}  # id of a shared graph -> its function's name
        self.functions_text: list[tuple[list[str], dict[int, object]]] = []
        self.function_name = self.fresh(name + "_jit")

    def load(self, source):
        """``(function, source)``: ``source`` compiled and run in ``namespace`` (``compiled.load``)."""
        return compiled.load(source, self.namespace, self.function_name, self.line_ops), source

    # names ------------------------------------------------------------------

    def fresh(self, base: str) -> str:
        return self.namer.fresh(base)

    def bind(self, value, base: str) -> str:
        """A global name of the generated module holding ``value``."""
        name = self.fresh("_" + base)
        self.namespace[name] = value
        return name

    def var(self, tensor) -> str:
        """The tensor as an operand: its variable, or its parenthesized expression if inlined."""
        return self.names[id(tensor)]

    def expr(self, tensor) -> str:
        """The tensor where a whole expression stands (``if ...:``, ``x = ...``)."""
        text = self.names[id(tensor)]
        return text[1:-1] if id(tensor) in self.inlined else text

    def define(self, tensor) -> str:
        base = tensor.op.name if len(tensor.op.outputs) == 1 else f"{tensor.op.name}_{tensor.value_index}"
        name = self.names[id(tensor)] = self.fresh(base)
        return name

    # emission ---------------------------------------------------------------

    def emit(self, depth: int, line: str, op=None) -> None:
        self.lines.append("    " * depth + line)
        if op is not None:
            self.line_ops[len(self.lines)] = op

    def generate(self, graph) -> str:
        """Source of ``function(args) -> outputs`` computing ``graph``."""
        params = [self.define(t) for t in graph.all_inputs]
        outs = self.block(graph, 2)
        inlined = [t.op for t in graph.outputs if id(t) in self.inlined]
        self.emit(2, f"return [{', '.join(outs)}]", inlined[0] if inlined else None)
        return self.assemble("args", params)

    def generate_loop(self, cond, body, bounded) -> str:
        """Source of ``function(args, limit) -> final loop variables`` (see ``compile_loop``)."""
        nvars = len(body.outputs)
        params = [self.fresh(f"var{i}" if i < nvars else f"invariant{i - nvars}") for i in range(len(body.all_inputs))]
        limit = self.fresh("limit")
        _loop(self, None, cond, body, params, limit if bounded else None, 2)
        self.emit(2, f"return [{', '.join(params[:nvars])}]")
        return self.assemble(f"args, {limit}", params)

    def assemble(self, signature, params) -> str:
        """The shared functions, then the main function around the lines emitted (prologue,
        error handler); ``line_ops`` renumbered to lines of the whole source."""
        header = [f"def {self.function_name}({signature}):", "    try:"]
        if params:
            header.append(f"        {', '.join(params)}{',' if len(params) == 1 else ''} = args")
        header += ["        " + line for line in self.prologue]
        footer = ["    except Exception as e:", "        _fail(e)", "        raise"]
        source, line_ops = [], {}
        for lines, ops in self.functions_text:
            line_ops.update((n + len(source), op) for n, op in ops.items())
            source += lines
        line_ops.update((n + len(source) + len(header), op) for n, op in self.line_ops.items())
        source += header + self.lines + footer
        self.line_ops = line_ops
        return "\n".join(source) + "\n"

    def block(self, graph, depth: int) -> list[str]:
        """Emits ``graph``'s needed ops (placeholders already named); returns output expressions."""
        needed = plan.needed_ops(graph)
        reuse = memory.donations(graph, needed)
        self.inlined |= expressions.inlinable(graph, needed, RULES)
        for op in graph.operations:
            if id(op) not in needed or op.type == "Placeholder":
                continue
            rule = RULES.get(op.type, _default_rule)
            _guard(self, op, depth)
            rule(self, op, depth, reuse)
        return [self.expr(t) for t in graph.outputs]

    def subgraph(self, graph, args, depth: int, op) -> list[str]:
        """Emits library graph ``graph`` applied to the variables ``args`` (for its
        ``all_inputs``): inline, or a call of its function if it is shared; returns
        the output expressions."""
        if id(graph) not in self.shared:
            for placeholder, arg in zip(graph.all_inputs, args):
                self.names[id(placeholder)] = arg
            return self.block(graph, depth)
        function = self.shared_function(graph)
        results = [self.fresh(f"{graph.name}_{i}") for i in range(len(graph.outputs))]
        targets = f"{', '.join(results)}{',' if len(results) == 1 else ''} = " if results else ""
        self.emit(depth, f"{targets}{function}({', '.join(args)})", op)
        return results

    def shared_function(self, graph) -> str:
        """The name of the function computing shared library graph ``graph`` (written once)."""
        name = self.functions.get(id(graph))
        if name is not None:
            return name
        name = self.functions[id(graph)] = self.fresh(f"_f_{graph.name}")
        outer = self.lines, self.line_ops, self.prologue
        self.lines, self.line_ops, self.prologue = [], {}, []
        params = [self.define(t) for t in graph.all_inputs]
        outs = self.block(graph, 1)
        self.emit(1, f"return [{', '.join(outs)}]")
        header = [f"def {name}({', '.join(params)}):"] + ["    " + line for line in self.prologue]
        self.functions_text.append((header + self.lines, {n + len(header): o for n, o in self.line_ops.items()}))
        self.lines, self.line_ops, self.prologue = outer
        return name


# -- rules: op type -> emitter ------------------------------------------------


def _const(gen, op, depth, reuse):
    """Constants are bound once and copied into locals in the prologue (0-d as numpy scalars)."""
    value = op.attrs["value"]
    bound = gen.bind(value[()] if value.ndim == 0 else value, op.name)
    gen.prologue.append(f"{gen.define(op.outputs[0])} = {bound}")


def _identity(gen, op, depth, reuse):
    gen.names[id(op.outputs[0])] = gen.var(op.inputs[0])


def _choose(gen, op, depth, reuse):
    """``Choose``: a conditional expression, as its kernel (``x if pred else y``)."""
    pred, x, y = (gen.var(t) for t in op.inputs)
    _assign(gen, op, depth, f"{x} if {pred} else {y}")


def _call(gen, op, depth, reuse):
    """Calls the op's numpy kernel: identical to the interpreter."""
    found = KERNELS.get(op.type)
    if found is None:
        raise JitUnsupported(
            f"{op.type} op '{op.name}' created at {op.location or '<unknown>'} has no kernel and no "
            "code rule, so the graph cannot be compiled"
        )
    if op.attrs:  # the attributes are bound with the kernel: no key or value of them is in the source
        attrs = dict(op.attrs)
        if opdef.function_attr_names(op.type):  # a functional op with a kernel (DatasetReduce)
            attrs["library"] = op.graph.library
        kernel = gen.bind(functools.partial(found, **attrs), "k_" + op.name)
    else:
        kernel = gen.kernels.get(op.type)
        if kernel is None:
            kernel = gen.kernels[op.type] = gen.bind(found, "k_" + op.type)
    call = f"{kernel}({', '.join(gen.var(t) for t in op.inputs)})"
    _assign(gen, op, depth, call)


def _stack_push(gen, op, depth, reuse):
    """``StackPush`` (a gradient's accumulator): the kernel's common case inline -- an entry within
    the buffer, for an item of the entries' shape (stated by the static shapes, else checked) -- and
    the kernel for the rest (the first push, growing: an ``IndexError`` inline, an item of another
    shape: padded if ragged, else refused)."""
    buffer, index, item = op.inputs
    b, i, v = (gen.var(t) for t in op.inputs)
    out = gen.define(op.outputs[0])
    kernel = gen.bind(functools.partial(KERNELS["StackPush"], **op.attrs), "k_" + op.name)
    static = (buffer.shape is not None and item.shape is not None and buffer.shape[1:] == item.shape
              and shapes.is_fully_defined(item.shape))
    if not static:  # the kernel's own test, then
        gen.emit(depth, f"if {i} < len({b}) and {b}.shape[1:] == {gen.bind(np.shape, 'shape_of')}({v}):", op)
    else:  # the entries have the item's shape: only an index past the end (IndexError) needs the kernel
        gen.emit(depth, "try:", op)
    gen.emit(depth + 1, f"{b}[{i}] = {v}", op)
    gen.emit(depth + 1, f"{out} = {b}", op)
    gen.emit(depth, "else:" if not static else "except IndexError:", op)
    gen.emit(depth + 1, f"{out} = {kernel}({b}, {i}, {v})", op)


def _stack_read(gen, op, depth, reuse):
    """``StackRead``: an entry of the buffer, copied as the kernel copies it (a 0-d entry is read
    as a numpy scalar, a copy already)."""
    buffer, index = op.inputs
    if buffer.shape is None:
        _call(gen, op, depth, reuse)
        return
    copy = "" if len(buffer.shape) == 1 else ".copy()"
    _assign(gen, op, depth, f"{gen.var(buffer)}[{gen.var(index)}]{copy}")


def _assign(gen, op, depth, expr):
    outs = [gen.define(t) for t in op.outputs]
    if not outs:
        gen.emit(depth, expr, op)
    elif len(outs) == 1:
        gen.emit(depth, f"{outs[0]} = {expr}", op)
    else:
        gen.emit(depth, f"{', '.join(outs)} = {expr}", op)


def _default_rule(gen, op, depth, reuse):
    donor = reuse.get(id(op))
    if donor is not None:
        ufunc = _ufunc(op.type)
        args = [gen.var(t) for t in op.inputs]
        target = gen.var(donor)
        gen.names[id(op.outputs[0])] = target
        gen.emit(depth, f"np.{ufunc.__name__}({', '.join(args)}, out={target})", op)
        return
    template = expressions.template(op, RULES)
    if template is not None:
        expr = template.format(*[gen.var(t) for t in op.inputs])
        if id(op.outputs[0]) in gen.inlined:
            gen.names[id(op.outputs[0])] = f"({expr})"
        else:
            _assign(gen, op, depth, expr)
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
                "shape, which jit_compile cannot compile (give rt.py_function a shape to compile it)"
            )
    _call(gen, op, depth, reuse)


def _if(gen, op, depth, reuse):
    then_graph, else_graph = (op.graph.library[op.attrs[a]] for a in ("then_branch", "else_branch"))
    outs = [gen.define(t) for t in op.outputs]
    gen.emit(depth, f"if {gen.expr(op.inputs[0])}:", op)
    for branch, header in ((then_graph, None), (else_graph, "else:")):
        if header:
            gen.emit(depth, header, op)
        start = len(gen.lines)
        results = gen.subgraph(branch, [gen.var(arg) for arg in op.inputs[1:]], depth + 1, op)
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
    _loop(gen, op, cond, body, state, None if limit is None else str(int(limit)), depth)
    for t, name in zip(op.outputs, state):
        gen.names[id(t)] = name


def _loop(gen, op, cond, body, state, limit, depth):
    """Emits ``while`` over ``state`` (variable names: loop variables, then invariants)."""
    nvars = len(body.outputs)
    counter = None
    if limit is not None:
        counter = gen.fresh(f"{op.name}_iterations" if op is not None else "iterations")
        gen.emit(depth, f"{counter} = 0", op)
    gen.emit(depth, "while True:", op)
    header = len(gen.lines) - 1
    if counter is not None:
        gen.emit(depth + 1, f"if {counter} >= {limit}:", op)
        gen.emit(depth + 2, "break", op)
    (test,) = gen.subgraph(cond, state, depth + 1, op)
    if len(gen.lines) == header + 1:  # the condition is one expression: ``while <test>:``
        gen.lines[header] = "    " * depth + f"while {test}:"
    else:
        gen.emit(depth + 1, f"if not {test}:", op)
        gen.emit(depth + 2, "break", op)
    if limits.limit_of(body) is not None:  # a loaded graph: every iteration spends the run's budget
        spend = gen.bind(limits.spend, "spend")
        loop = gen.bind(limits.describe_loop(None if op is None else op.name, cond, body), "loop")
        gen.emit(depth + 1, f"{spend}({loop})", op)
    results = gen.subgraph(body, state, depth + 1, op)
    if nvars:
        gen.emit(depth + 1, f"{', '.join(state[:nvars])} = {', '.join(results)}", op)
    if counter is not None:
        gen.emit(depth + 1, f"{counter} += 1", op)


def _guard(gen, op, depth) -> None:
    """An op of a loaded graph that could grow past ``max_elements`` checks its inputs first."""
    check = limits.guard(op)
    if check is not None:
        gen.emit(depth, f"{gen.bind(check, 'check_' + op.name)}({', '.join(gen.var(t) for t in op.inputs)})", op)


RULES = {
    "Const": _const,
    "Identity": _identity,
    "Choose": _choose,
    "PyFunc": _pyfunc,
    "If": _if,
    "While": _while,
    "StackPush": _stack_push,
    "StackRead": _stack_read,
}
