"""JAX's errors about a traced value used as a Python value, as ``TracingError``\\s naming the
construct and the user's ``file:line``.

Under ``jax.jit`` the user's code meets tracers where Python wants a
concrete value: ``xs[jnp.argmax(x)]`` on a Python list, ``np.sin(x)``,
``f"{x:.2f}"``, ``jnp.zeros(n)`` with a traced ``n``, ``if x > 0`` in a
function autograph did not convert.  JAX raises its own error
(``TracerIntegerConversionError``, ``TracerArrayConversionError``,
``ConcretizationTypeError``, a ``TypeError`` naming a tracer, ...), which
says what JAX could not do, but not which line of the user's asked for it
nor what to write instead.  ``translate`` gives the ``TracingError`` that
does, with JAX's error as its cause; an ``ag.convert``-ed function traced by
JAX raises it (``outside.run_converted``; ``ag.jax.jit`` included).

The line is the innermost frame of the traceback outside autograph and JAX:
in converted code the message quotes it; in code autograph did not convert
(a ``do_not_convert`` function, a library) it says that conversion would
stage the decision.

``refusing_raises`` is the other direction: a ``raise`` of the user's that
runs while JAX traces code under a decision the compiled program makes (a
branch of ``lax.cond``, a ``lax.while_loop``), which would be raised for
every input whether or not that code runs: refused, quoting the line.
"""

from __future__ import annotations

import linecache
import os

import jax

from autograph.runtime.core import location
from autograph.runtime.errors import AutoGraphError, TracingError
from autograph.runtime.operators import calls

_JAX_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, __import__("jaxlib")))
location.register_library_dirs(_JAX_DIRS)  # JAX's frames are never the line a message names

_COMPUTE = ("Under jax.jit a value computed from the arguments is known only when the compiled program runs: "
            "compute with it through jax.numpy/lax (index an array rather than a Python list, call jnp "
            "functions rather than numpy's, take shapes from static values), or mark the argument static "
            "(ag.jax.jit(f, static_argnums=...)).")
_UNCONVERTED = ("in code autograph did not convert (a do_not_convert function, a library, or a construct left "
                "as written): JAX needs that value while it traces. Let autograph convert the function, compute "
                "it with jnp/lax (jnp.where, lax.cond), or mark the argument static (ag.jax.jit(f, static_argnums=...)).")
_ESCAPED = ("(a function the body called stored it in an enclosing variable, a global or an object, which lax cannot "
            "carry out). Return it from the function, or assign it in the converted function itself.")

# JAX's error -> what the user's code did (the first match counts: TracerBoolConversionError is a
# ConcretizationTypeError)
_CONSTRUCTS = (
    (jax.errors.TracerBoolConversionError, "the truth value (bool(), if, while, and/or, assert) of a traced value"),
    (jax.errors.TracerIntegerConversionError, "a traced value used as a Python int (int(), an index, range())"),
    (jax.errors.TracerArrayConversionError, "a traced value converted to a numpy array (a numpy function, np.asarray)"),
    (jax.errors.ConcretizationTypeError, "a Python value computed from a traced value"),
    (jax.errors.UnexpectedTracerError, "a traced value used outside the branch or loop body that computed it"),
)


def translate(error):
    """The ``TracingError`` for ``error`` if it is JAX's about a tracer used as a Python value, else
    None.  It is an instance of ``error``'s class too, so ``except TypeError`` or
    ``except jax.errors.TracerArrayConversionError`` around the call still catches it."""
    if isinstance(error, AutoGraphError):
        return None
    construct = next((text for kind, text in _CONSTRUCTS if isinstance(error, kind)), None)
    if construct is None:
        # a TypeError JAX raised about a tracer (a traced shape), or Python's for a format string
        # applied to one; not the user's own
        text = str(error)
        if type(error) not in (TypeError, ValueError) or "Tracer" not in text or not (
                _raised_by_jax(error) or text.startswith("unsupported format string passed to")):
            return None
        construct = "a traced value where Python needs a concrete one"
    filename, lineno, converted = _user_frame(error.__traceback__)
    where = f"{filename}:{lineno}" if filename else "<unknown>"
    if isinstance(error, jax.errors.UnexpectedTracerError):
        return _tracing_error(error, f"{construct} at {where} {_ESCAPED}")
    if not converted:
        return _tracing_error(error, f"{construct} at {where}, {_UNCONVERTED}")
    source = linecache.getline(filename, lineno).strip()
    text = str(error).strip()
    detail = f"JAX's {type(error).__name__}: {text.splitlines()[0]}" if text else f"JAX's {type(error).__name__}"
    return _tracing_error(error, f"`{source}` at {where}: {construct} ({detail}). {_COMPUTE}")


def refusing_raises(fn, where):
    """``fn``, traced by JAX under a decision the compiled program makes (``where``: a branch of an
    if, a loop's test or body), with an exception the user's converted code raises there refused: a
    ``TracingError`` (an instance of the exception's class too) quoting the line.  Raised now, it
    would be raised for every input, whether or not that code runs, and XLA cannot raise later."""
    def run(*args):
        try:
            return fn(*args)
        except Exception as error:
            traceback = error.__traceback__
            while traceback is not None and traceback.tb_next is not None:
                traceback = traceback.tb_next
            if (isinstance(error, AutoGraphError) or traceback is None
                    or not calls.is_generated_from_user_code(traceback.tb_frame.f_code)):
                raise  # JAX's, autograph's, or a library's: as it is (``translate`` names JAX's)
            filename, lineno = traceback.tb_frame.f_code.co_filename, traceback.tb_lineno
            source = linecache.getline(filename, lineno).strip()
            raise _tracing_error(error, (
                f"`{source}` at {filename}:{lineno} raises {error!r} while JAX "
                f"traces {where}, which the compiled program decides when it runs: raised now, it would be "
                "raised for every input, and XLA cannot raise later. Check the condition on concrete values "
                "before jax.jit, or use jax.experimental.checkify."
            )) from error

    return run


_CLASSES: dict = {}  # JAX's error class -> TracingError subclassing it too


def _tracing_error(error, message):
    kind = type(error)
    cls = _CLASSES.get(kind)
    if cls is None:
        cls = _CLASSES[kind] = type("TracingError", (TracingError, kind), {
            "__module__": TracingError.__module__, "__init__": Exception.__init__, "__str__": Exception.__str__})
    new = cls.__new__(cls)
    Exception.__init__(new, message)
    return new


def _raised_by_jax(error) -> bool:
    """True if the innermost frame of ``error``'s traceback is JAX's code."""
    traceback = error.__traceback__
    if traceback is None:
        return False
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    return traceback.tb_frame.f_code.co_filename.startswith(_JAX_DIRS)


def _user_frame(traceback):
    """``(file, line, converted)`` of the innermost frame of ``traceback`` outside autograph and JAX,
    ``converted`` telling whether it runs code autograph generated; ``(None, None, False)`` if none."""
    found = None, None, False
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if location.is_user_line(code.co_filename):
            found = code.co_filename, traceback.tb_lineno, calls.is_generated_from_user_code(code)
        traceback = traceback.tb_next
    return found
