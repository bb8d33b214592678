"""The conversion context: what every pass may know about the function being converted.

``Context`` carries the options, the file name (for error messages), the
namer for generated symbols, and -- when converting a live function -- its
globals and free variable names (used to resolve callees statically), with
the policy for resolved callees (``builtin_names``/``leave_alone``, which
``autograph.api`` takes from ``autograph.callees``), so converters need not
import the runtime.  The CLI converts without importing the file:
``namespace`` is then None.

This module imports neither the runtime nor numpy (the converters import it;
``tests/test_layering.py`` checks it): the runtime's ``ConversionError`` is
imported only when a conversion fails.
"""

from __future__ import annotations

import dataclasses

import gast

from autograph.pyct import naming

AG_NAME = "ag__"
"""The one name generated code reaches the operators through."""


@dataclasses.dataclass(frozen=True)
class Options:
    """Conversion options; part of the conversion cache key.

    ``recursive``: calls are routed through ``ag__.converted_call`` so user
    functions reached from the converted one are converted too.
    """

    recursive: bool = True


class Context:
    __slots__ = (
        "filename", "options", "namer", "names_pending", "namespace", "freevars", "function_name", "kinds",
        "builtin_names", "leave_alone", "roles", "decisions", "replay",
    )

    def __init__(
        self, filename, options, used_names=None, namespace=None, freevars=(), function_name="<function>", *,
        builtin_names=frozenset(), leave_alone=None,
    ):
        self.filename = filename
        self.options = options
        # Names generated code may not use; None: the unsupported pass (the first) adds every
        # identifier of the function as it walks it.
        self.namer = naming.Namer(used_names or ())
        self.names_pending = used_names is None
        self.namespace = namespace
        self.freevars = frozenset(freevars)
        self.function_name = function_name
        # The node types in the function (and markers: "not", "chain", "loop_else"), set by the
        # unsupported pass and added to by passes that emit others; None: not known.
        self.kinds = None
        # How call_trees treats statically resolved callees (see autograph.callees).
        self.builtin_names = builtin_names
        self.leave_alone = leave_alone if leave_alone is not None else (lambda value: False)
        # How call_trees lowered each call of a (dotted) name, in the order it met them; an iterator
        # over an earlier conversion's list in ``replay`` is followed instead of resolving names,
        # which makes that conversion again without its globals (``ag.to_code`` redoes one).
        self.decisions = []
        self.replay = None
        # Generated state variables with a role the runtime must know (the return lowering's value
        # and flag): name -> role ("return_value", "return_flag").  control_flow passes the roles
        # of a statement's state in the operator call (the runtime never guesses them from names).
        self.roles = {}

    @property
    def has_walrus(self) -> bool:
        """Whether the function may contain ``:=`` (True until the unsupported pass has looked)."""
        return not self.lacks(gast.NamedExpr)

    def lacks(self, *kinds) -> bool:
        """True if none of ``kinds`` is in the function: a pass that rewrites only those can skip it."""
        return self.kinds is not None and self.kinds.isdisjoint(kinds)

    def location(self, node) -> str:
        lineno = getattr(node, "lineno", None)
        if not self.filename:
            return "<unknown>"
        return self.filename if lineno is None else f"{self.filename}:{lineno}"

    def error(self, node, construct: str, fix: str):
        """A ConversionError naming ``construct`` at ``node``'s line, and how to fix it."""
        from autograph.runtime.errors import ConversionError  # only when a conversion fails

        return ConversionError(
            f"{construct} is not supported in converted code: found in function "
            f"'{self.function_name}' at {self.location(node)}. {fix}"
        )
