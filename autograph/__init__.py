"""autograph: ordinary Python control flow, turned into functional graph control flow.

``ag.convert(f)`` rewrites ``f``'s ``if``/``while``/``for``/``break``/
``continue``/``return`` (and ``and``/``or``/``not``, ternaries, calls,
asserts) into calls of the operators in ``autograph.runtime.operators``;
``ag.to_code(f)`` shows the result; ``ag.function`` traces it into a graph.

The public names load ``autograph.api`` (and with it the runtime and numpy)
on first use, so that importing a part of the package -- the AST-only
``autograph.converters`` -- does not load the runtime (PEP 562
``__getattr__``).  ``dir(ag)`` lists the public names only.
"""

import importlib
import importlib.util

if importlib.util.find_spec("autograph.runtime") is None:  # pragma: no cover - a checkout that is not installed
    raise ImportError(
        "autograph is imported from a source checkout that is not installed: its subpackages "
        "autograph.runtime and autograph.converters live in the checkout's runtime/ and converters/ "
        "folders, which only the installed package maps into autograph (pyproject.toml, package-dir). "
        "Run `pip install -e .` in the checkout (or `pip install -e .[test]` for the tests)."
    )

# public name -> the module that defines it
_PUBLIC = {
    "AutoGraphError": "autograph.runtime.errors",
    "AutoGraphWarning": "autograph.runtime.errors",
    "ConversionError": "autograph.runtime.errors",
    "ExecutionError": "autograph.runtime.errors",
    "TracingError": "autograph.runtime.errors",
    "TracingWarning": "autograph.runtime.errors",
    "set_unroll_warning_threshold": "autograph.runtime.operators.loop_statements",
    "convert": "autograph.api",
    "do_not_convert": "autograph.api",
    "function": "autograph.api",
    "grad": "autograph.api",
    "value_and_grad": "autograph.api",
    "to_code": "autograph.api",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    if name == "jax":  # ag.jax: AutoGraph for JAX (imports JAX, so only on first use)
        try:
            importlib.import_module("jax")
        except ImportError as e:
            from autograph.runtime.errors import AutoGraphError
            raise AutoGraphError(
                f"ag.jax needs JAX, which is not installed ({e}): install the extra with "
                "`pip install autograph[jax]` (or `pip install jax[cpu]`)"
            ) from None
        return importlib.import_module("autograph.jax")
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'autograph' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return list(__all__)
