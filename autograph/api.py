"""The public API: ``convert``, ``to_code``, ``do_not_convert``, ``function``.

``convert(f)`` = load the source -> run the pipeline -> compile -> bind to
``f``'s globals and closure.  Conversions are cached per code object and
options (converting the same function again is a dictionary lookup; the
caches are weak, so a dropped function frees its conversion; concurrent
first calls convert once, under a lock), and
every converted function is registered with the operators, so
``converted_call`` calls it as it is.
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
import weakref

from autograph import callees, compiling, loading, pipeline
from autograph.pyct import anno, context, gast_conversion
from autograph.runtime import errors
from autograph.runtime.core.location import warn_at_user
from autograph.runtime.operators import calls

_CO_GENERATOR = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE


class _Conversion:
    """The result of converting one code object with one set of options.

    It keeps what the conversion started from (the definition's ``ast`` node,
    which the file index holds anyway, and how its calls were lowered), not
    the converted tree: ``source`` converts again, the same way, when asked,
    so the hundreds of nodes a conversion makes are not kept alive (nor
    walked by every garbage collection) for each function converted.
    """

    __slots__ = ("code", "_origin", "_source", "__weakref__")

    def __init__(self, code, origin):
        self.code = code
        self._origin = origin  # (ast node, file name, options, freevars, name, Context.decisions)
        self._source = None

    @property
    def source(self) -> str:
        if self._source is None:
            node, filename, options, freevars, name, decisions = self._origin
            converted = convert_node(
                gast_conversion.to_gast(node), filename, options, freevars=freevars, name=name, replay=decisions
            )
            self._source = compiling.to_source(compiling.strip(converted))
        return self._source


# original code object -> {(options, file name, qualified name): its conversion}.  Weak:
# a function that is dropped (a notebook cell's lambda) frees its conversions and
# generated code.  Code objects compare by their contents, not by file or qualified
# name: the same function in two files is two conversions, each with its own file:line.
_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# generated code object -> its conversion, weakly (so to_code works on converted functions).
_CONVERSIONS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# Conversions happen under this lock: threads calling ag.convert on one function
# at once convert it once (the cache is checked again inside).
_LOCK = threading.RLock()


def convert_node(node, filename, options, namespace=None, freevars=(), name="<function>", stop_after=None,
                 decisions=None, replay=None):
    """Runs the pipeline on a ``gast`` function node (used by ``convert`` and the CLI).

    ``decisions``: a list that receives how each call was lowered (``Context.decisions``);
    ``replay``: such a list, followed instead of resolving callees in ``namespace``.
    """
    ctx = context.Context(
        filename, options, None, namespace=namespace, freevars=freevars, function_name=name,
        builtin_names=callees.BUILTIN_NAMES, leave_alone=callees.leave_alone,
    )
    if decisions is not None:
        ctx.decisions = decisions
    if replay is not None:
        ctx.replay = iter(replay)
    return pipeline.run(node, ctx, stop_after=stop_after)


def _conversion(function, options) -> _Conversion:
    code = function.__code__
    key = (options, code.co_filename, function.__qualname__)
    conversion = _CACHE.get(code, {}).get(key)
    if conversion is None:
        with _LOCK:
            conversion = _CACHE.get(code, {}).get(key)
            if conversion is None:
                conversion = _convert_code(function, code, options, key)
    return conversion


def _convert_code(function, code, options, key) -> _Conversion:
    """Converts ``function`` (whose code is ``code``) and caches the result under ``key``
    (the caller holds ``_LOCK``)."""
    origin = loading.find_node(function)
    decisions = []
    try:
        node = convert_node(
            gast_conversion.to_gast(origin), code.co_filename, options, namespace=function.__globals__,
            freevars=code.co_freevars, name=function.__qualname__, decisions=decisions,
        )
        compiled = compiling.compile_function(
            node, code.co_filename, code.co_freevars, flags=compiling.future_flags(code)
        )
    except errors.ConversionError:
        raise
    except Exception as e:  # a bug in autograph: say so, in one paragraph, with the cause chained
        raise errors.ConversionError(
            f"autograph failed to convert '{function.__qualname__}' defined at "
            f"{errors.at(code.co_filename, code.co_firstlineno)}: internal error "
            f"{type(e).__name__}: {e}. This is a bug in autograph; please report it with the function's "
            "source. Meanwhile, mark the function with @ag.do_not_convert to run it unconverted."
        ) from e
    # The converted tree is dropped now. Its root's annotations list the root itself
    # (ast_util.FUNCTIONS_CACHE): without them it is freed at once, not left to the garbage collector.
    anno.clear(node)
    calls.register_converted_code(compiled)
    conversion = _Conversion(
        compiled, (origin, code.co_filename, options, code.co_freevars, function.__qualname__, decisions)
    )
    _CACHE.setdefault(code, {})[key] = conversion
    _CONVERSIONS[compiled] = weakref.ref(conversion)
    return conversion


def _warn_unconverted(function, reason):
    warn_at_user(
        f"autograph could not convert '{getattr(function, '__qualname__', function)}' and will run it as is: "
        f"{reason}.",
        errors.AutoGraphWarning,
    )


def _convert_function(function, options, always_converted):
    generated = calls.generated_of(function)
    if generated is not None:  # already the result of ag.convert
        return generated if always_converted else function
    if calls.is_converted(function) or getattr(function, calls.DO_NOT_CONVERT_ATTR, False):
        return function
    try:
        conversion = _conversion(function, options)
    except loading.SourceUnavailable as e:
        _warn_unconverted(function, str(e))
        return function
    generated = compiling.instantiate(conversion.code, function)
    return generated if always_converted else calls.dispatching(function, generated)


def convert(func=None, *, recursive=True, always_converted=False):
    """Converts ``func``: its Python control flow becomes calls of the operators.

    Use as ``ag.convert(f)``, ``@ag.convert`` or ``@ag.convert(recursive=False)``
    (``recursive``: convert the user functions it calls, too).  The result
    behaves exactly like ``func`` on Python values: while no trace is active
    it runs ``func`` itself (at its own speed; nothing there can be
    symbolic), and the converted code while ``ag.function`` traces it.
    ``always_converted=True`` runs the converted code outside traces too (to
    step through it, or to test it).  Raises ``ag.ConversionError`` for
    syntax autograph cannot convert; warns with ``ag.AutoGraphWarning`` and
    returns ``func`` unchanged if its source is unavailable.
    """
    options = context.Options(recursive=recursive)
    if func is None:
        return functools.partial(convert, recursive=recursive, always_converted=always_converted)
    if not callable(func) and not isinstance(func, (staticmethod, classmethod)):
        raise TypeError(
            f"ag.convert expects a function, got {type(func).__name__} {func!r:.60}. Pass the function "
            "itself (`ag.convert(f)` or `@ag.convert` above its `def`), not the result of calling it."
        )
    again = functools.partial(convert, recursive=recursive, always_converted=always_converted)
    if type(func) is types.MethodType:
        return types.MethodType(again(func.__func__), func.__self__)
    if type(func) is types.FunctionType:
        return _convert_function(func, options, always_converted)
    if isinstance(func, (staticmethod, classmethod)):
        return type(func)(again(func.__func__))
    if callable(func) and not isinstance(func, type) and isinstance(getattr(type(func), "__call__", None), types.FunctionType):
        return types.MethodType(again(type(func).__call__), func)
    _warn_unconverted(func, f"it is a {type(func).__name__}, not a Python function with source")
    return func


def _hook(function):
    """The conversion hook ``converted_call`` uses: never raises, warns instead."""
    if function.__code__.co_flags & _CO_GENERATOR:
        return function
    try:
        return _convert_function(function, context.Options(), always_converted=True)
    except errors.ConversionError as e:
        warn_at_user(f"{e} It runs unconverted.", errors.AutoGraphWarning)
        return function


calls.set_conversion_hook(_hook)


def to_code(func, *, recursive=True) -> str:
    """The generated source of ``func`` (converted or not), deterministic and readable."""
    if type(func) is types.MethodType:
        func = func.__func__
    if isinstance(func, (staticmethod, classmethod)):
        func = func.__func__
    if type(func) is not types.FunctionType:
        raise TypeError(f"to_code expects a Python function, got {type(func).__name__}")
    func = calls.generated_of(func) or func
    ref = _CONVERSIONS.get(func.__code__)
    conversion = ref() if ref is not None else None
    if conversion is None:
        if calls.is_converted(func):
            raise errors.ConversionError(f"'{func.__qualname__}' is code generated by autograph, not a converted function")
        try:
            conversion = _conversion(func, context.Options(recursive=recursive))
        except loading.SourceUnavailable as e:
            raise errors.ConversionError(f"cannot show the code of '{func.__qualname__}': {e}.") from None
    return conversion.source + "\n"


def do_not_convert(func=None):
    """Decorator: leaves ``func`` unconverted, even when called from converted code."""
    if func is None:
        return do_not_convert
    target = func.__func__ if type(func) is types.MethodType else func
    try:
        setattr(target, calls.DO_NOT_CONVERT_ATTR, True)
    except (AttributeError, TypeError):
        pass
    return func


def function(func=None, *, input_signature=None, autograph=True, jit_compile=False, optimize=True, parallel=True, **options):
    """``rt.function`` over the converted function: convert, trace, run the graph.

    Use as ``@ag.function`` or ``@ag.function(input_signature=[...], ...)``.
    """
    if func is None:
        return functools.partial(
            function, input_signature=input_signature, autograph=autograph, jit_compile=jit_compile,
            optimize=optimize, parallel=parallel, **options,
        )
    from autograph.runtime.tracing.function import function as rt_function

    return rt_function(
        func,
        input_signature=input_signature,
        trace_transform=(lambda f: convert(f, always_converted=True)) if autograph else None,
        jit_compile=jit_compile,
        optimize=optimize,
        parallel=parallel,
        **options,
    )


def grad(func, argnums=0, has_aux=False, **options):
    """The gradient of the converted ``func`` (JAX-style, numpy in and out: ``runtime/autodiff/transforms.py``);
    ``options`` are ``ag.function``'s (``jit_compile``, ``optimize``, ``input_signature``, ...)."""
    from autograph.runtime.autodiff import transforms

    return transforms.grad(func, argnums, has_aux, trace_transform=_converted_always, **options)


def value_and_grad(func, argnums=0, has_aux=False, **options):
    """``(value, gradient)`` of the converted ``func``, as ``grad``."""
    from autograph.runtime.autodiff import transforms

    return transforms.value_and_grad(func, argnums, has_aux, trace_transform=_converted_always, **options)


def _converted_always(func):
    return convert(func, always_converted=True)


def clear_cache():
    """Forgets every conversion (for benchmarks and tests that time a cold conversion)."""
    _CACHE.clear()
