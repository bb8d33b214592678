"""autograph: ordinary Python control flow, turned into functional graph control flow.

``ag.convert(f)`` rewrites ``f``'s ``if``/``while``/``for``/``break``/
``continue``/``return`` (and ``and``/``or``/``not``, ternaries, calls,
asserts) into calls of the operators in ``autograph.runtime.operators``;
``ag.to_code(f)`` shows the result; ``ag.function`` traces it into a graph.
"""

from autograph.api import convert, do_not_convert, function, to_code
from autograph.runtime.errors import (
    AutoGraphError,
    AutoGraphWarning,
    ConversionError,
    TracingError,
)

__all__ = [
    "AutoGraphError",
    "AutoGraphWarning",
    "ConversionError",
    "TracingError",
    "convert",
    "do_not_convert",
    "function",
    "to_code",
]
