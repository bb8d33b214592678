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
  variable names are generated (an op's name contributes only its ASCII
  letters, digits and underscores, made unique), and values go through
  the module's constant table (globals bound by ``bind``);
* ops with an operator spelling (``runtime/core/spellings.py``: ``Add`` ->
  ``{0} + {1}``) are written as that operator, other ops call their
  backend kernel (``kernels.py``) through a bound name, with their attributes bound to
  it (``functools.partial``, as the interpreter does:
  ``_k_reshape(x, shape)``), so results match the interpreter by
  construction; scalar operators used once are written inline, nested at
  most ``MAX_INLINE_DEPTH`` deep (a longer chain goes through a temporary);
* ``If`` becomes ``if``/``else`` and ``While`` a ``while`` loop; their
  sub-graphs are emitted inline, their placeholders standing for the
  values the op passes in;
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
import itertools
import keyword
import linecache
import re
import weakref

import numpy as np

from autograph.runtime.backends.numpy.kernels import KERNELS
from autograph.runtime.core import spellings
from autograph.runtime.exec import interpreter as executor, limits, memory, plan
from autograph.runtime.errors import AutoGraphError

_counter = itertools.count()


class JitUnsupported(AutoGraphError):
    """``jit_compile=True`` met a graph it cannot compile into Python.

    The message names the op, its type and the user's ``file:line``.
    ``rt.function(jit_compile=True)`` catches it and runs the graph with the
    interpreter instead, after one ``AutoGraphWarning``.
    """


def compile_graph(graph):
    """``(function, source)``: ``graph`` compiled into one Python/numpy function."""
    gen = _Codegen(graph.name)
    return gen.load(gen.generate(graph))


def compile_loop(cond, body, bounded: bool = True):
    """``(function, source)`` for a ``While`` over library graphs ``cond``/``body``.

    ``function(args, limit)`` takes the loop variables then the invariant
    captures (``body.all_inputs``), runs at most ``limit`` iterations and
    returns the final loop variables: the ``While`` kernel's loop, compiled.
    With ``bounded=False`` there is no iteration counter and ``limit`` must
    be None.  ``tiering.run_loop`` uses it for hot loops.
    """
    gen = _Codegen(body.name)
    return gen.load(gen.generate_loop(cond, body, bounded))


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
            wrapped = executor.wrap_error(error, op)
            if wrapped is not error:  # (the user's own exception returns with a note: re-raised as it is)
                raise wrapped from error

    return fail


# -- code generation ------------------------------------------------------

# Identifiers are generated: op and graph names (data from the graph, maybe from a
# file) contribute only their ASCII letters, digits and underscores.
_NAME = re.compile(r"[^0-9A-Za-z_]")
# Operators written inline nest at most this deep (Python's parser refuses ~200
# nested parentheses); a longer chain continues from a temporary variable.
MAX_INLINE_DEPTH = 24
_RESERVED = frozenset(keyword.kwlist) | {"np", "args", "abs", "e", "_fail"}


_ufunc = memory.ufunc_of


class _Codegen:
    """Writes the source of one compiled function; ``namespace`` holds its globals."""

    def __init__(self, name: str):
        self.lines: list[str] = []
        self.line_ops: dict[int, object] = {}
        self.namespace: dict[str, object] = {"np": np}
        self.names: dict[int, str] = {}
        self.taken: set[str] = set(_RESERVED)
        self.prologue: list[str] = []
        self.kernels: dict[str, str] = {}  # op type -> the global name bound to its kernel
        self.inlined: set[int] = set()  # ids of tensors written as an expression where they are used
        self.budget: str | None = None  # the local holding a loaded graph's iteration budget (_budget)
        self.function_name = self.fresh(_NAME.sub("_", name) + "_jit")

    def load(self, source):
        """Compiles ``source`` under a fake file name registered in ``linecache`` for as long
        as the compiled function lives; a source Python cannot compile is ``JitUnsupported``."""
        filename = f"<autograph-jit {self.function_name} #{next(_counter)}>"
        try:
            code = compile(source, filename, "exec")
        except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError) as e:
            raise JitUnsupported(
                f"the code generated for graph {self.function_name!r} does not compile "
                f"({type(e).__name__}: {e}); this is a bug in autograph's code generator"
            ) from e
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        self.namespace["_fail"] = _failure_reporter(filename, self.line_ops)
        exec(code, self.namespace)
        function = self.namespace[self.function_name]
        weakref.finalize(function, linecache.cache.pop, filename, None)
        return function, source

    # names ------------------------------------------------------------------

    def fresh(self, base: str) -> str:
        base = _NAME.sub("_", base)[:48] or "v"
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
        start = len(self.lines)
        outs = self.block(graph, 2)
        inlined = [t.op for t in graph.outputs if id(t) in self.inlined]
        self.emit(2, f"return [{', '.join(outs)}]", inlined[0] if inlined else None)
        return self.assemble("args", params, start)

    def generate_loop(self, cond, body, bounded) -> str:
        """Source of ``function(args, limit) -> final loop variables`` (see ``compile_loop``)."""
        nvars = len(body.outputs)
        params = [self.fresh(f"var{i}" if i < nvars else f"invariant{i - nvars}") for i in range(len(body.all_inputs))]
        start = len(self.lines)
        limit = self.fresh("limit")
        _loop(self, None, cond, body, params, limit if bounded else None, 2)
        self.emit(2, f"return [{', '.join(params[:nvars])}]")
        return self.assemble(f"args, {limit}", params, start)

    def assemble(self, signature, params, start) -> str:
        """Wraps the lines emitted since ``start`` into the function (prologue, error handler)."""
        body = self.lines[start:]
        header = [f"def {self.function_name}({signature}):", "    try:"]
        if params:
            header.append(f"        {', '.join(params)}{',' if len(params) == 1 else ''} = args")
        header += ["        " + line for line in self.prologue]
        footer = ["    except Exception as e:", "        _fail(e)", "        raise"]
        self.line_ops = {n - start + len(header): op for n, op in self.line_ops.items()}
        return "\n".join(header + body + footer) + "\n"

    def block(self, graph, depth: int) -> list[str]:
        """Emits ``graph``'s needed ops (placeholders already named); returns output expressions."""
        needed = plan.needed_ops(graph)
        reuse = memory.donations(graph, needed)
        self.inlined |= _inlinable(graph, needed)
        for op in graph.operations:
            if id(op) not in needed or op.type == "Placeholder":
                continue
            rule = RULES.get(op.type, _default_rule)
            _guard(self, op, depth)
            rule(self, op, depth, reuse)
        return [self.expr(t) for t in graph.outputs]


def _spelled(op) -> str | None:
    """The Python operator template ``op`` is written with (``"{0} + {1}"``), or None."""
    if op.type in RULES:
        return None
    spelling = spellings.BY_OP_TYPE.get(op.type)
    if spelling is None or (spelling.kinds and not all(t.dtype.kind in spelling.kinds for t in op.inputs)):
        return None
    return spelling.template


def _scalar_operator(op) -> bool:
    return (
        _spelled(op) is not None and len(op.outputs) == 1 and op.outputs[0].shape == ()
        and all(t.shape == () for t in op.inputs)
    )


def _inlinable(graph, needed) -> set[int]:
    """ids of scalar operator results that are used once, by another scalar operator, as an
    ``If`` predicate or as an output of ``graph``: written as an expression at that use
    (``if var0 % const == const_1:``) instead of a variable, which in a scalar loop saves
    a quarter of the time per iteration.  (An error in an inlined operator is reported
    naming the op that uses it: scalars rarely fail.)"""
    uses: dict[int, list] = {}
    for op in graph.operations:
        if id(op) in needed:
            for index, t in enumerate(op.inputs):
                uses.setdefault(id(t), []).append((op, index))
    for t in graph.outputs:
        uses.setdefault(id(t), []).append((None, 0))
    found = set()
    nesting: dict[int, int] = {}  # id of an inlined tensor -> depth of its expression
    for op in graph.operations:
        if id(op) not in needed or not _scalar_operator(op):
            continue
        users = uses.get(id(op.outputs[0]), [])
        if len(users) != 1:
            continue
        user, index = users[0]
        if user is None or (user.type == "If" and index == 0) or _scalar_operator(user):
            level = 1 + max((nesting.get(id(t), 0) for t in op.inputs), default=0)
            if level <= MAX_INLINE_DEPTH:
                found.add(id(op.outputs[0]))
                nesting[id(op.outputs[0])] = level
    return found


# -- rules: op type -> emitter ------------------------------------------------


def _const(gen, op, depth, reuse):
    """Constants are bound once and copied into locals in the prologue (0-d as numpy scalars)."""
    value = op.attrs["value"]
    bound = gen.bind(value[()] if value.ndim == 0 else value, op.name)
    gen.prologue.append(f"{gen.define(op.outputs[0])} = {bound}")


def _identity(gen, op, depth, reuse):
    gen.names[id(op.outputs[0])] = gen.var(op.inputs[0])


def _call(gen, op, depth, reuse):
    """Calls the op's numpy kernel: identical to the interpreter."""
    found = KERNELS.get(op.type)
    if found is None:
        raise JitUnsupported(
            f"{op.type} op '{op.name}' created at {op.location or '<unknown>'} has no kernel and no "
            "code rule, so the graph cannot be compiled"
        )
    if op.attrs:  # the attributes are bound with the kernel: no key or value of them is in the source
        kernel = gen.bind(functools.partial(found, **op.attrs), "k_" + op.name)
    else:
        kernel = gen.kernels.get(op.type)
        if kernel is None:
            kernel = gen.kernels[op.type] = gen.bind(found, "k_" + op.type)
    call = f"{kernel}({', '.join(gen.var(t) for t in op.inputs)})"
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
    donor = reuse.get(id(op))
    if donor is not None:
        ufunc = _ufunc(op.type)
        args = [gen.var(t) for t in op.inputs]
        target = gen.var(donor)
        gen.names[id(op.outputs[0])] = target
        gen.emit(depth, f"np.{ufunc.__name__}({', '.join(args)}, out={target})", op)
        return
    template = _spelled(op)
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
    for placeholder, name in zip(cond.all_inputs, state):
        gen.names[id(placeholder)] = name
    (test,) = gen.block(cond, depth + 1)
    if len(gen.lines) == header + 1:  # the condition is one expression: ``while <test>:``
        gen.lines[header] = "    " * depth + f"while {test}:"
    else:
        gen.emit(depth + 1, f"if not {test}:", op)
        gen.emit(depth + 2, "break", op)
    budget = _budget(gen, body)
    if budget is not None:  # a loaded graph: every iteration spends the run's budget (exec/limits.py)
        loop = gen.bind(limits.describe_loop(None if op is None else op.name, cond, body), "loop")
        gen.emit(depth + 1, f"{budget}.spend({loop})", op)
    for placeholder, name in zip(body.all_inputs, state):
        gen.names[id(placeholder)] = name
    results = gen.block(body, depth + 1)
    if nvars:
        gen.emit(depth + 1, f"{', '.join(state[:nvars])} = {', '.join(results)}", op)
    if counter is not None:
        gen.emit(depth + 1, f"{counter} += 1", op)


def _budget(gen, body) -> str | None:
    """The local holding the run's iteration budget of a loaded graph (fetched once, in the
    prologue: the budget of the run under way, or a new one), or None for an unbounded graph."""
    if limits.limit_of(body) is None:
        return None
    if gen.budget is None:
        gen.budget = gen.fresh("budget")
        budget_of = gen.bind(functools.partial(limits.budget, body), "budget_of")
        gen.prologue.append(f"{gen.budget} = {budget_of}()")
    return gen.budget


def _guard(gen, op, depth) -> None:
    """An op of a loaded graph that could grow past ``max_elements`` checks its inputs first."""
    check = limits.guard(op)
    if check is not None:
        gen.emit(depth, f"{gen.bind(check, 'check_' + op.name)}({', '.join(gen.var(t) for t in op.inputs)})", op)


RULES = {
    "Const": _const,
    "Identity": _identity,
    "PyFunc": _pyfunc,
    "If": _if,
    "While": _while,
}
