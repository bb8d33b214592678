"""Generated source as a live function: compiled under a fake file name, errors named by op.

``load(source, namespace, function_name, line_ops)`` compiles the code
generator's ``source`` under a file name of its own registered in
``linecache`` for as long as the function lives (tracebacks,
``inspect.getsource`` and pdb show the generated lines), runs it in
``namespace`` and returns ``namespace[function_name]``.  The generated
function's error handler calls ``_fail(e)``, bound here: it finds the
innermost generated line of the traceback, looks up the op that line
computes (``line_ops``) and re-raises the error as the interpreter reports
it (``interpreter.wrap_error``).  A source Python refuses to compile is
``JitUnsupported``.
"""

from __future__ import annotations

import itertools
import linecache
import weakref

from autograph.runtime.errors import AutoGraphError
from autograph.runtime.exec import fp_warnings, interpreter as executor

_counter = itertools.count()


class JitUnsupported(AutoGraphError):
    """``jit_compile=True`` met a graph it cannot compile into Python.

    The message names the op, its type and the user's ``file:line``.
    ``rt.function(jit_compile=True)`` catches it and runs the graph with the
    interpreter instead, after one ``AutoGraphWarning``.
    """


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


def load(source, namespace, function_name, line_ops):
    """The function ``function_name`` defined by ``source``, run in ``namespace`` (see above)."""
    filename = f"<autograph-jit {function_name} #{next(_counter)}>"
    try:
        code = compile(source, filename, "exec")
    except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError) as e:
        raise JitUnsupported(
            f"the code generated for graph {function_name!r} does not compile "
            f"({type(e).__name__}: {e}); this is a bug in autograph's code generator"
        ) from e
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace["_fail"] = _failure_reporter(filename, line_ops)
    exec(code, namespace)
    function = namespace[function_name]
    weakref.finalize(function, linecache.cache.pop, filename, None)
    fp_warnings.GENERATED[filename] = line_ops  # numpy's warnings name the op of the line
    weakref.finalize(function, fp_warnings.GENERATED.pop, filename, None)
    return function
